package sse

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

type event struct{ Name, Data, ID string }

// readAll reads every event of wire, then the error that ended the stream.
func readAll(body io.Reader) ([]event, error) {
	r := NewReader(io.NopCloser(body))
	defer r.Close()
	var evs []event
	for {
		ev, err := r.Next()
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return evs, err
		}
		evs = append(evs, event{string(ev.Name), string(ev.Data), string(ev.ID)})
	}
}

func TestReader(t *testing.T) {
	long := strings.Repeat("x", 3*readSize+17)
	for _, tc := range []struct {
		name, wire string
		want       []event
	}{
		{"one event", "event: a\ndata: {}\n\n", []event{{"a", "{}\n", ""}}},
		{"CRLF", "event: a\r\ndata: 1\r\n\r\n", []event{{"a", "1\n", ""}}},
		{"no space after the colon, two spaces", "event:a\ndata:  x\n\n", []event{{"a", " x\n", ""}}},
		{"data lines joined", "data: a\ndata:\ndata: b\n\n", []event{{"", "a\n\nb\n", ""}}},
		{"last name wins", "event: a\nevent: b\ndata: x\n\n", []event{{"b", "x\n", ""}}},
		{"comments, retry, unknown fields", ": hi\nretry: 10\nfoo: bar\nevent: a\n\n", []event{{"a", "", ""}}},
		{"an id stays until changed", "id: 7\nevent: a\n\nevent: b\n\nid:8\ndata: x\n\nid\nevent: c\n\n", []event{{"a", "", "7"}, {"b", "", "7"}, {"", "x\n", "8"}, {"c", "", ""}}},
		{"an id alone is no event but is kept", "id: 3\n\nevent: a\n\n", []event{{"a", "", "3"}}},
		{"an id with a NUL is ignored", "id: 1\nevent: a\n\nid: 2\x003\nevent: b\n\n", []event{{"a", "", "1"}, {"b", "", "1"}}},
		{"the last id of an event wins", "id: 1\nid: 2\ndata: x\n\n", []event{{"", "x\n", "2"}}},
		{"blank lines between events", "\n\n\nevent: a\n\n\n\nevent: b\n\n", []event{{"a", "", ""}, {"b", "", ""}}},
		{"an emptied name and no data is no event", "event: a\nevent:\n\nevent: b\n\n", []event{{"b", "", ""}}},
		{"a field without a colon", "event\ndata\n\n", []event{{"", "\n", ""}}},
		{"a line longer than the buffer", "event: a\ndata: " + long + "\n\n", []event{{"a", long + "\n", ""}}},
		{"a last event without an empty line is dropped", "event: a\n\nevent: b\ndata: 1", []event{{"a", "", ""}}},
		{"lone CR is not a line end", "event: a\rdata: 1\n\n", []event{{"a\rdata: 1", "", ""}}},
		{"empty", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, r := range []struct {
				name string
				r    io.Reader
			}{{"whole", strings.NewReader(tc.wire)}, {"byte by byte", iotest.OneByteReader(strings.NewReader(tc.wire))}} {
				got, err := readAll(r.r)
				if err != nil {
					t.Fatalf("%s: %v", r.name, err)
				}
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("%s: events (-want +got):\n%s", r.name, diff)
				}
			}
		})
	}
}

func TestReaderErrors(t *testing.T) {
	boom := errors.New("boom")
	evs, err := readAll(io.MultiReader(strings.NewReader("event: a\n\nevent: b\n"), iotest.ErrReader(boom)))
	if !errors.Is(err, boom) || len(evs) != 1 {
		t.Fatalf("events %v, err %v: want one event, then the read error", evs, err)
	}
	_, err = readAll(strings.NewReader("data: " + strings.Repeat("y", MaxLine+1) + "\n\n"))
	if !errors.Is(err, ErrLineTooLong) {
		t.Fatalf("err = %v, want ErrLineTooLong", err)
	}
	if _, err := readAll(strings.NewReader("data: " + strings.Repeat("y", MaxLine-6) + "\n\n")); err != nil {
		t.Fatalf("a line of MaxLine bytes: %v", err)
	}
	r := NewReader(io.NopCloser(strings.NewReader("event: a\n\n")))
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal("second Close:", err)
	}
	if _, err := r.Next(); err == nil {
		t.Fatal("Next after Close: no error")
	}
}

func TestSetMaxLine(t *testing.T) {
	for _, tc := range []struct {
		limit, line int
		ok          bool
	}{{100, 100, true}, {100, 101, false}, {5000, 4999, true}, {5000, 5001, false}, {0, MaxLine, true}} {
		r := NewReader(io.NopCloser(strings.NewReader("data:" + strings.Repeat("z", tc.line-5) + "\n\n")))
		r.SetMaxLine(tc.limit)
		ev, err := r.Next()
		r.Close()
		if ok := err == nil; ok != tc.ok || (ok && len(ev.Data) != tc.line-4) {
			t.Errorf("limit %d, line %d: %d bytes of data, %v; want ok = %v", tc.limit, tc.line, len(ev.Data), err, tc.ok)
		}
		if err != nil && !errors.Is(err, ErrLineTooLong) {
			t.Errorf("limit %d, line %d: %v, want ErrLineTooLong", tc.limit, tc.line, err)
		}
	}
}

func TestEventText(t *testing.T) {
	for data, want := range map[string]string{"a\n": "a", "a\n\nb\n": "a\n\nb", "": "", "\n": ""} {
		ev := Event{Data: []byte(data)}
		if got := string(ev.Text()); got != want {
			t.Errorf("Text of %q = %q, want %q", data, got, want)
		}
	}
}

// reference reads wire by the package's rules, written as plainly as
// possible: whole lines split first, fields applied in order.
func reference(wire string) []event {
	var evs []event
	var name, data, id string
	lines := strings.Split(wire, "\n")
	lines = lines[:len(lines)-1] // the text after the last "\n" never ends an event
	for _, line := range lines {
		line = strings.TrimSuffix(line, "\r")
		if line == "" {
			if name != "" || data != "" {
				evs = append(evs, event{name, data, id})
			}
			name, data = "", ""
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			name = value
		case "data":
			data += value + "\n"
		case "id":
			if !strings.Contains(value, "\x00") {
				id = value
			}
		}
	}
	return evs
}

// FuzzReader: the reader never panics, reading whole or byte by byte
// gives the same events, and they are the events of the plain reference.
func FuzzReader(f *testing.F) {
	f.Add("event: a\r\ndata: 1\r\n\r\n: c\n\ndata\n\n")
	f.Add("event: a\ndata: x\n\nevent: b")
	f.Add("id: 1\nevent: a\n\nid\x00: 2\ndata: x\n\nid: 3\x00\n\n\r\n")
	f.Fuzz(func(t *testing.T, wire string) {
		a, errA := readAll(strings.NewReader(wire))
		b, errB := readAll(iotest.OneByteReader(strings.NewReader(wire)))
		if errA != nil || errB != nil {
			t.Fatalf("errors: %v, %v", errA, errB)
		}
		if diff := cmp.Diff(a, b); diff != "" {
			t.Fatalf("whole vs byte by byte (-whole +bytes):\n%s", diff)
		}
		if diff := cmp.Diff(reference(wire), a); diff != "" {
			t.Fatalf("reader vs reference (-reference +reader):\n%s", diff)
		}
	})
}

// BenchmarkReader reads 200 events of ~100 bytes.
func BenchmarkReader(b *testing.B) {
	wire := strings.Repeat("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"some words\"}}\n\n", 200)
	b.SetBytes(int64(len(wire)))
	b.ReportAllocs()
	for b.Loop() {
		r := NewReader(io.NopCloser(strings.NewReader(wire)))
		for {
			if _, err := r.Next(); err != nil {
				break
			}
		}
		r.Close()
	}
}

func TestDrain(t *testing.T) {
	for _, tc := range []struct {
		wire string
		max  int
		want bool
	}{
		{"", 0, true},
		{": bye\n\n", 0, true},
		{"event: ping\n\nevent: ping\n\n", 2, true},
		{"event: ping\n\nevent: ping\n\nevent: ping\n\n", 2, false},
		{"event: a\ndata: 1", 0, true}, // an unfinished event is dropped at the end
	} {
		r := NewReader(io.NopCloser(strings.NewReader(tc.wire)))
		if got := Drain(r, tc.max); got != tc.want {
			t.Errorf("Drain(%q, %d) = %v, want %v", tc.wire, tc.max, got, tc.want)
		}
		r.Close()
	}
	boom := errors.New("boom")
	r := NewReader(io.NopCloser(iotest.ErrReader(boom)))
	defer r.Close()
	if Drain(r, 3) {
		t.Error("Drain of a failing body: true, want false")
	}
}
