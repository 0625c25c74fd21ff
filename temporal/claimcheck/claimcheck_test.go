package claimcheck

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/internal/benchcpu"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/proto"
)

type message struct {
	Role    string   `json:"role"`
	Content []string `json:"content"`
	Input   any      `json:"input,omitempty"`
	Bytes   []byte   `json:"bytes,omitempty"`
	N       float64  `json:"n"`
}

func newDir(t testing.TB) *Dir {
	d, err := OpenDir(filepath.Join(t.TempDir(), "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func blobCount(t testing.TB, d *Dir) int {
	n := 0
	for _, err := range d.Blobs(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	return n
}

func roundTrip(t *testing.T, dc converter.DataConverter, in any, out any) *commonpb.Payload {
	t.Helper()
	p, err := dc.ToPayload(in)
	if err != nil {
		t.Fatal(err)
	}
	if err := dc.FromPayload(p, out); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCodecRoundTrip(t *testing.T) {
	big := strings.Repeat("0123456789abcdef", 1<<16) // 1 MiB
	tests := []struct {
		name     string
		in       message
		encoding string
		blobs    int
		maxSize  int
	}{
		{"small stays inline", message{Role: "user", Content: []string{"hi"}, N: 1.5}, "json/plain", 0, 1000},
		{"large string to a blob", message{Role: "user", Content: []string{"a", big}, N: 3}, EncodingStrings, 1, 1000},
		{"same string twice, one blob", message{Role: "user", Content: []string{big, big}, Input: map[string]any{"content": big}}, EncodingStrings, 1, 1000},
		{"bytes (base64) to a blob", message{Bytes: []byte(big)}, EncodingStrings, 1, 1000},
		{"a string that looks like a reference", message{Content: []string{RefPrefix + strings.Repeat("0", 64), big}}, EncodingStrings, 2, 1000},
		{"many small strings: the payload to a blob", message{Content: strings.Split(strings.Repeat("x,", 50000), ",")}, EncodingPayload, 1, 200},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := newDir(t)
			dc := DataConverter(d, Options{})
			var got message
			p := roundTrip(t, dc, tc.in, &got)
			if !reflect.DeepEqual(got, tc.in) {
				t.Errorf("round trip changed the value")
			}
			if enc := string(p.Metadata["encoding"]); enc != tc.encoding {
				t.Errorf("encoding = %s, want %s", enc, tc.encoding)
			}
			if n := proto.Size(p); n > tc.maxSize {
				t.Errorf("encoded payload is %d bytes, want <= %d", n, tc.maxSize)
			}
			if n := blobCount(t, d); n != tc.blobs {
				t.Errorf("%d blobs stored, want %d", n, tc.blobs)
			}
		})
	}
}

func TestCodecThresholdOff(t *testing.T) {
	d := newDir(t)
	big := strings.Repeat("z", 1<<20)
	p, err := DataConverter(d, Options{Threshold: -1}).ToPayload(message{Content: []string{big}})
	if err != nil {
		t.Fatal(err)
	}
	if string(p.Metadata["encoding"]) != "json/plain" || blobCount(t, d) != 0 {
		t.Errorf("threshold -1 still offloaded")
	}
	// A decode-only codec still reads what others wrote.
	on, err := DataConverter(d, Options{}).ToPayload(message{Content: []string{big}})
	if err != nil {
		t.Fatal(err)
	}
	var got message
	if err := DataConverter(d, Options{Threshold: -1}).FromPayload(on, &got); err != nil || got.Content[0] != big {
		t.Errorf("decode with threshold -1: %v", err)
	}
}

// A missing or altered blob is an error naming the hash, never an empty
// value.
func TestCodecMissingOrCorrupt(t *testing.T) {
	big := strings.Repeat("q", 100_000)
	sum := SumOf([]byte(big))
	for _, tc := range []struct {
		name  string
		spoil func(path string)
		want  error
	}{
		{"missing", func(path string) { os.Remove(path) }, ErrNotFound},
		{"corrupt", func(path string) { os.WriteFile(path, []byte(strings.Repeat("r", 100_000)), 0o600) }, ErrCorrupt},
		{"truncated", func(path string) { os.WriteFile(path, []byte(big[:10]), 0o600) }, ErrCorrupt},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newDir(t)
			dc := DataConverter(d, Options{})
			p, err := dc.ToPayload(message{Content: []string{big}})
			if err != nil {
				t.Fatal(err)
			}
			tc.spoil(d.file(sum))
			var got message
			err = dc.FromPayload(p, &got)
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), sum.String()) {
				t.Fatalf("err = %v, want %v naming the hash", err, tc.want)
			}
			if len(got.Content) != 0 {
				t.Errorf("a value was decoded despite the error: %d strings", len(got.Content))
			}
		})
	}
}

func TestDirPutGet(t *testing.T) {
	ctx := context.Background()
	d := newDir(t)
	clock := time.Unix(1_000_000, 0)
	d.now = func() time.Time { return clock }
	data := []byte("hello")
	sum := SumOf(data)
	if _, err := d.Get(ctx, sum); !errors.Is(err, ErrNotFound) {
		t.Fatalf("get before put: %v", err)
	}
	if err := d.Put(ctx, sum, data); err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(time.Hour)
	if err := d.Put(ctx, sum, data); err != nil { // present: refreshed
		t.Fatal(err)
	}
	b, err := Load(ctx, d, sum)
	if err != nil || string(b) != "hello" {
		t.Fatalf("load = %q, %v", b, err)
	}
	fi, err := os.Stat(d.file(sum))
	if err != nil || !fi.ModTime().Equal(clock) || fi.Mode().Perm() != 0o600 {
		t.Errorf("blob file: %v, %v (want refreshed mtime, mode 0600)", fi.ModTime(), fi.Mode())
	}
	ents, _ := os.ReadDir(filepath.Dir(d.file(sum)))
	if len(ents) != 1 {
		t.Errorf("temporary files left: %v", ents)
	}
	if err := d.Delete(ctx, sum); err != nil {
		t.Fatal(err)
	}
	if err := d.Delete(ctx, sum); err != nil {
		t.Errorf("deleting a missing blob: %v", err)
	}
}

func TestPrune(t *testing.T) {
	ctx := context.Background()
	d := newDir(t)
	old := time.Now().Add(-48 * time.Hour)
	put := func(s string) Sum {
		sum := SumOf([]byte(s))
		if err := d.Put(ctx, sum, []byte(s)); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(d.file(sum), old, old)
		return sum
	}
	live := put("live")
	dead := put("dead")
	// A payload blob referring to a string blob keeps it.
	inner := put("inner")
	outer := put(payloadMagic + "xx" + RefPrefix + inner.String() + "yy")
	recent := SumOf([]byte("recent"))
	d.Put(ctx, recent, []byte("recent"))
	// A crashed write's temporary file, old enough to go.
	tmp := filepath.Join(filepath.Dir(d.file(dead)), ".tmp-123")
	os.WriteFile(tmp, []byte("partial"), 0o600)
	os.Chtimes(tmp, old, old)

	refs := map[Sum]bool{}
	FindRefs([]byte(`{"a":"`+RefPrefix+live.String()+`","b":"`+RefPrefix+outer.String()+`"} `+RefPrefix+"short"), refs)
	if len(refs) != 2 {
		t.Fatalf("FindRefs = %v", refs)
	}
	st, err := Prune(ctx, d, refs, PruneOptions{DryRun: true})
	if err != nil || st.Deleted != 1 || blobCount(t, d) != 5 {
		t.Fatalf("dry run: %+v %v", st, err)
	}
	st, err = Prune(ctx, d, refs, PruneOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := PruneStats{Blobs: 5, Referenced: 3, Recent: 1, Deleted: 1, Bytes: 4, Temp: 1}
	if st != want {
		t.Errorf("stats = %+v, want %+v", st, want)
	}
	for sum, keep := range map[Sum]bool{live: true, inner: true, outer: true, recent: true, dead: false} {
		if _, err := d.Get(ctx, sum); (err == nil) != keep {
			t.Errorf("blob %s: kept=%v, want %v", sum, err == nil, keep)
		}
	}
}

func FuzzCodecRoundTrip(f *testing.F) {
	f.Add("hello", "world", 8)
	f.Add(RefPrefix+strings.Repeat("a", 64), "x", 1)
	f.Add(strings.Repeat("é", 40), "\x00\xff", 3)
	f.Fuzz(func(t *testing.T, a, b string, min int) {
		d := newDir(t)
		dc := DataConverter(d, Options{Threshold: 16, MinString: 1 + min%64})
		in := message{Role: a, Content: []string{b, a + b}, Input: map[string]any{a: b}}
		p, err := dc.ToPayload(in)
		if err != nil {
			t.Fatal(err)
		}
		// What the plain converter makes of the input is the reference.
		want, err := converter.GetDefaultDataConverter().ToPayload(in)
		if err != nil {
			t.Fatal(err)
		}
		var wantV, got message
		converter.GetDefaultDataConverter().FromPayload(want, &wantV)
		if err := dc.FromPayload(p, &got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, wantV) {
			t.Errorf("round trip: got %+v, want %+v", got, wantV)
		}
		// Byte for byte.
		dec, err := NewCodec(d, Options{}).Decode([]*commonpb.Payload{p})
		if err != nil {
			t.Fatal(err)
		}
		if !proto.Equal(dec[0], want) {
			t.Errorf("decoded payload differs from the original:\n%s\n%s", dec[0].Data, want.Data)
		}
	})
}

func BenchmarkCodec1MB(b *testing.B) {
	d := newDir(b)
	dc := DataConverter(d, Options{})
	in := message{Role: "user", Content: []string{strings.Repeat("0123456789abcdef", 1<<16), "small"}}
	b.SetBytes(1 << 20)
	defer benchcpu.Start(b)()
	for b.Loop() {
		p, err := dc.ToPayload(in)
		if err != nil {
			b.Fatal(err)
		}
		var out message
		if err := dc.FromPayload(p, &out); err != nil {
			b.Fatal(err)
		}
	}
}
