package llm

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// readAll reads body through every path net/http may take: Read with
// iotest's checks, WriteTo (io.Copy to a plain writer), one byte at a time.
func checkBody(t testing.TB, b *Body, want []byte) {
	t.Helper()
	if b.Len() != int64(len(want)) {
		t.Fatalf("Len = %d, want %d", b.Len(), len(want))
	}
	if got := b.Bytes(); !bytes.Equal(got, want) {
		t.Fatalf("Bytes\n got %q\nwant %q", got, want)
	}
	if err := iotest.TestReader(b.Reader(), want); err != nil {
		t.Fatal(err)
	}
	var w bytes.Buffer
	if n, err := io.Copy(struct{ io.Writer }{&w}, b.Reader()); err != nil || n != int64(len(want)) || !bytes.Equal(w.Bytes(), want) {
		t.Fatalf("WriteTo: %d bytes, %v: %q", n, err, w.Bytes())
	}
	if got, err := io.ReadAll(iotest.OneByteReader(b.Reader())); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("bytewise: %q, %v", got, err)
	}
}

func TestBodyList(t *testing.T) {
	b := stringPieces
	tests := []struct {
		name  string
		build func(*Body)
		want  string
	}{
		{"one item", func(x *Body) { x.AppendString("["); x.AppendList(b("a")); x.AppendString("]") }, "[a]"},
		{"items", func(x *Body) { x.AppendString("["); x.AppendList(b("a", "bb", "ccc")); x.AppendString("]") }, "[a,bb,ccc]"},
		{"empty list", func(x *Body) { x.AppendString("["); x.AppendList(nil); x.AppendString("]") }, "[]"},
		{"empty items", func(x *Body) { x.AppendList(b("", "", "")) }, ",,"},
		{"empty item between", func(x *Body) { x.AppendList(b("a", "", "c")) }, "a,,c"},
		{"lists back to back", func(x *Body) { x.AppendList(b("a", "b")); x.AppendList(b("c")); x.AppendList(b("d", "e")) }, "a,bcd,e"},
		{"large item", func(x *Body) { x.AppendList(b(strings.Repeat("x", 9000), "y")) }, strings.Repeat("x", 9000) + ",y"},
		{"nothing", func(*Body) {}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body Body
			tt.build(&body)
			for range 2 { // every reader starts from the whole body
				checkBody(t, &body, []byte(tt.want))
			}
		})
	}
}

// FuzzBody: a body made of pieces and lists reads as their
// concatenation through every reader path.
func FuzzBody(f *testing.F) {
	f.Add([]byte("a|b,c|d"), uint8(3))
	f.Add([]byte(",,|,||"), uint8(0))
	f.Add([]byte(""), uint8(1))
	f.Fuzz(func(t *testing.T, spec []byte, listMask uint8) {
		var body Body
		var want []byte
		for i, seg := range bytes.Split(spec, []byte("|")) {
			if listMask>>(i%8)&1 == 1 {
				items := bytes.Split(seg, []byte(","))
				if len(seg) == 0 {
					items = nil
				}
				body.AppendList(bytesPieces(items))
				want = append(want, bytes.Join(items, []byte(","))...)
			} else {
				body.Append(seg)
				want = append(want, seg...)
			}
		}
		checkBody(t, &body, want)
	})
}

// BenchmarkStreamBodyHeld reports what a request body of a 60-message
// conversation holds of its own (the pieces are shared): held-B.
func BenchmarkStreamBodyHeld(b *testing.B) {
	msgs := make([]Piece, 60)
	for i := range msgs {
		msgs[i] = BytesPiece([]byte(`{"role":"user","content":"x"}`))
	}
	head, tools := []byte(`{"model":"m","max_tokens":1}`), []byte(`[{"name":"t"}]`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := StreamBody(head, msgs, tools); err != nil {
			b.Fatal(err)
		}
	}
}
