package sse

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

type event struct{ Name, Data string }

// readAll reads every event of wire, then the error that ended the stream.
func readAll(body io.Reader) ([]event, error) {
	r := NewReader(io.NopCloser(body))
	defer r.Close()
	var evs []event
	for {
		name, data, err := r.Next()
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return evs, err
		}
		evs = append(evs, event{string(name), string(data)})
	}
}

func TestReader(t *testing.T) {
	long := strings.Repeat("x", 3*readSize+17)
	for _, tc := range []struct {
		name, wire string
		want       []event
	}{
		{"one event", "event: a\ndata: {}\n\n", []event{{"a", "{}\n"}}},
		{"CRLF", "event: a\r\ndata: 1\r\n\r\n", []event{{"a", "1\n"}}},
		{"no space after the colon, two spaces", "event:a\ndata:  x\n\n", []event{{"a", " x\n"}}},
		{"data lines joined", "data: a\ndata:\ndata: b\n\n", []event{{"", "a\n\nb\n"}}},
		{"last name wins", "event: a\nevent: b\ndata: x\n\n", []event{{"b", "x\n"}}},
		{"comments, ids, retry, unknown fields", ": hi\nid: 7\nretry: 10\nfoo: bar\nevent: a\n\n", []event{{"a", ""}}},
		{"blank lines between events", "\n\n\nevent: a\n\n\n\nevent: b\n\n", []event{{"a", ""}, {"b", ""}}},
		{"an emptied name and no data is no event", "event: a\nevent:\n\nevent: b\n\n", []event{{"b", ""}}},
		{"a field without a colon", "event\ndata\n\n", []event{{"", "\n"}}},
		{"a line longer than the buffer", "event: a\ndata: " + long + "\n\n", []event{{"a", long + "\n"}}},
		{"a last event without an empty line is dropped", "event: a\n\nevent: b\ndata: 1", []event{{"a", ""}}},
		{"lone CR is not a line end", "event: a\rdata: 1\n\n", []event{{"a\rdata: 1", ""}}},
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
	if _, _, err := r.Next(); err == nil {
		t.Fatal("Next after Close: no error")
	}
}

// FuzzReader: the reader never panics, and reading whole or byte by byte
// gives the same events.
func FuzzReader(f *testing.F) {
	f.Add("event: a\r\ndata: 1\r\n\r\n: c\n\ndata\n\n")
	f.Add("event: a\ndata: x\n\nevent: b")
	f.Fuzz(func(t *testing.T, wire string) {
		a, errA := readAll(strings.NewReader(wire))
		b, errB := readAll(iotest.OneByteReader(strings.NewReader(wire)))
		if errA != nil || errB != nil {
			t.Fatalf("errors: %v, %v", errA, errB)
		}
		if diff := cmp.Diff(a, b); diff != "" {
			t.Fatalf("whole vs byte by byte (-whole +bytes):\n%s", diff)
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
			if _, _, err := r.Next(); err != nil {
				break
			}
		}
		r.Close()
	}
}
