package outbuf

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// reference keeps the whole stream, to compare with what a Buffer keeps.
func check(t *testing.T, b *Buffer, all []byte, headN, tailN int) {
	t.Helper()
	s := b.Snapshot()
	if s.Total != int64(len(all)) {
		t.Fatalf("total %d, want %d", s.Total, len(all))
	}
	wantHead := all[:min(headN, len(all))]
	if !bytes.Equal(s.Head, wantHead) {
		t.Fatalf("head %q, want %q", s.Head, wantHead)
	}
	rest := all[len(wantHead):]
	wantTail := rest[max(0, len(rest)-tailN):]
	if !bytes.Equal(s.Tail, wantTail) {
		t.Fatalf("tail %q, want %q", s.Tail, wantTail)
	}
	if s.Elided != int64(len(all)-len(wantHead)-len(wantTail)) {
		t.Fatalf("elided %d", s.Elided)
	}
}

func TestHeadTail(t *testing.T) {
	for _, sizes := range [][]int{{1}, {3, 4, 5}, {10}, {11}, {7, 7, 7, 7}, {100}, {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, {9, 1, 25, 3}} {
		b, err := New(Options{HeadBytes: 5, TailBytes: 6})
		if err != nil {
			t.Fatal(err)
		}
		var all []byte
		n := 0
		for _, k := range sizes {
			p := make([]byte, k)
			for i := range p {
				p[i] = byte('a' + (n % 26))
				n++
			}
			all = append(all, p...)
			if w, err := b.Write(p); w != k || err != nil {
				t.Fatalf("Write = %d, %v", w, err)
			}
			check(t, b, all, 5, 6)
		}
	}
}

func TestRandomWrites(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for iter := 0; iter < 200; iter++ {
		h, tl := 1+r.IntN(20), 1+r.IntN(20)
		b, _ := New(Options{HeadBytes: h, TailBytes: tl})
		var all []byte
		for w := 0; w < 20; w++ {
			p := make([]byte, r.IntN(30))
			for i := range p {
				p[i] = byte(r.IntN(256))
			}
			all = append(all, p...)
			b.Write(p)
		}
		check(t, b, all, h, tl)
	}
}

func TestSpillAndLimit(t *testing.T) {
	dir := t.TempDir()
	calls := 0
	b, err := New(Options{HeadBytes: 10, TailBytes: 10, Dir: dir, Pattern: "x-*.txt", Limit: 1000, OnLimit: func() { calls++ }})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var all []byte
	for i := 0; i < 15; i++ {
		p := []byte(strings.Repeat(string(rune('a'+i)), 7))
		all = append(all, p...)
		b.Write(p)
	}
	if b.Path() != "" {
		// 105 bytes > 20: spilled.
	} else {
		t.Fatal("no spill file")
	}
	got, _ := os.ReadFile(b.Path())
	if !bytes.Equal(got, all) {
		t.Fatalf("spill file %q, want %q", got, all)
	}
	if filepath.Dir(b.Path()) != dir || !strings.HasPrefix(filepath.Base(b.Path()), "x-") {
		t.Errorf("path %s", b.Path())
	}
	// Past the limit: truncated at exactly 1000 bytes, OnLimit once.
	big := bytes.Repeat([]byte("z"), 2000)
	if n, err := b.Write(big); n != 2000 || err != nil {
		t.Fatalf("Write = %d, %v", n, err)
	}
	b.Write(big)
	s := b.Snapshot()
	if s.Total != 1000 || !s.Limited || s.Dropped != 105+4000-1000 || calls != 1 {
		t.Fatalf("snapshot total=%d limited=%v dropped=%d calls=%d", s.Total, s.Limited, s.Dropped, calls)
	}
	got, _ = os.ReadFile(b.Path())
	if len(got) != 1000 {
		t.Fatalf("file has %d bytes", len(got))
	}
}

func TestNoSpillWhenSmall(t *testing.T) {
	dir := t.TempDir()
	b, _ := New(Options{HeadBytes: 10, TailBytes: 10, Dir: dir})
	b.Write([]byte("0123456789012345678")) // 19 bytes fit
	if b.Path() != "" {
		t.Fatal("spilled small output")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("files: %v", ents)
	}
}

func TestPathFromStart(t *testing.T) {
	p := filepath.Join(t.TempDir(), "out.txt")
	b, err := New(Options{Path: p})
	if err != nil {
		t.Fatal(err)
	}
	b.Write([]byte("hi\n"))
	b.Close()
	if got, _ := os.ReadFile(p); string(got) != "hi\n" {
		t.Fatalf("file %q", got)
	}
	if _, err := New(Options{Path: filepath.Join(t.TempDir(), "no", "such", "x")}); err == nil {
		t.Fatal("New with an impossible path succeeded")
	}
}

func TestLast(t *testing.T) {
	b, _ := New(Options{HeadBytes: 4, TailBytes: 4})
	b.Write([]byte("ab"))
	if got := string(b.Last(10)); got != "ab" {
		t.Fatalf("Last = %q", got)
	}
	b.Write([]byte("cdef"))
	if got := string(b.Last(3)); got != "def" {
		t.Fatalf("Last = %q", got)
	}
	b.Write([]byte("ghijkl"))
	if got := string(b.Last(10)); got != "ijkl" {
		t.Fatalf("Last = %q", got)
	}
}

func TestTrimPartialRunes(t *testing.T) {
	s := []byte("aé€😀b")
	for cut := 0; cut <= len(s); cut++ {
		h, tl := TrimPartialRunes(s[:cut], s[cut:])
		if !utf8.Valid(h) || !utf8.Valid(tl) {
			t.Errorf("cut %d: %q %q", cut, h, tl)
		}
	}
}

func TestStripEscapes(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain\ttext\n", "plain\ttext\n"},
		{"\x1b[31mred\x1b[0m", "red"},
		{"\x1b[1;32;40mbold\x1b[K", "bold"},
		{"\x1b]0;title\x07after", "after"},
		{"\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\", "link"},
		{"a\r\nb\r\n", "a\nb\n"},
		{"10%\r50%\r100%\ndone", "100%\ndone"},
		{"x\x08y\x00z\x07", "xyz"},
		{"safe\u202Eevil\u200B", `safe\u{202E}evil\u{200B}`},
		{"tag\U000E0041", `tag\u{E0041}`},
		{"bad\xffutf", "bad\uFFFDutf"},
		{"c1\u009b31mx", "c131mx"},
		{"end\x1b", "end"},
		{"\x1bcreset", "reset"},
		{"\x1b(Bcharset", "charset"},
	}
	for _, tt := range tests {
		if got := StripEscapes(tt.in); got != tt.want {
			t.Errorf("StripEscapes(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestEscapeDisplay(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain\ttext\n", "plain\ttext\n"},
		{"\x1b[31mred", `\x1b[31mred`},
		{"\x1b]0;t\x07", `\x1b]0;t\x07`},
		{"a\rb", `a\rb`},
		{"x\u202Ey", `x\u{202E}y`},
		{"\u009b", `\u{9B}`},
		{"\xff", `\xff`},
		{"héllo", "héllo"},
	}
	for _, tt := range tests {
		if got := EscapeDisplay(tt.in); got != tt.want {
			t.Errorf("EscapeDisplay(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func FuzzText(f *testing.F) {
	for _, s := range []string{"\x1b[31mx", "\x1b]8;;u\x1b\\l", "a\rb\r\nc", "\u202E", "\xff\xfe", "\x1b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, out := range []string{StripEscapes(s), EscapeDisplay(s)} {
			if !utf8.ValidString(out) {
				t.Fatalf("invalid UTF-8 from %q", s)
			}
			for _, r := range out {
				if r == 0x1b || r == '\r' || (r < 0x20 && r != '\n' && r != '\t') || (r >= 0x80 && r < 0xa0) || Invisible(r) {
					t.Fatalf("%q: output %q keeps control %U", s, out, r)
				}
			}
		}
	})
}

func BenchmarkWrite(b *testing.B) {
	buf, _ := New(Options{Limit: -1})
	p := bytes.Repeat([]byte("y\n"), 16<<10)
	b.SetBytes(int64(len(p)))
	for b.Loop() {
		buf.Write(p)
	}
}

func BenchmarkStripEscapes(b *testing.B) {
	s := strings.Repeat("\x1b[32mok\x1b[0m  some output line with text\n", 1000)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		StripEscapes(s)
	}
}
