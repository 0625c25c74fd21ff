package search

import (
	"bytes"
	"strings"
	"testing"
)

func TestFinder(t *testing.T) {
	long := strings.Repeat("e", 5000) + "errors.New"
	cases := []struct{ lit, hay string }{
		{"errors.New", "x := errors.New(\"a\")"},
		{"errors.New", "errors.Nex errors.New"},
		{"errors.New", "errors.Ne"},
		{"errors.New", ""},
		{"errors.New", long},
		{"ab", "ab"},
		{"ab", "ba"},
		{"a", "bbba"},
		{"", "abc"},
		{"    ", strings.Repeat("   x", 2000) + "    "},   // common bytes only: the cutover
		{"Nxx", "N" + strings.Repeat("Nx", 3000) + "Nxx"}, // the rare byte everywhere
		{"x.N", "abc.N x.N"},
	}
	for _, c := range cases {
		got := newFinder([]byte(c.lit)).index([]byte(c.hay))
		if want := strings.Index(c.hay, c.lit); got != want {
			t.Errorf("index(%q in %.20q…) = %d, want %d", c.lit, c.hay, got, want)
		}
	}
}

// foldIndex is the first match of any of fs (one case-folded literal).
func foldIndex(fs []*finder, hay []byte) int {
	at := -1
	for _, f := range fs {
		if i := f.index(hay); i >= 0 && (at < 0 || i < at) {
			at = i
		}
	}
	return at
}

func TestFoldFinders(t *testing.T) {
	for _, c := range []struct {
		lit, hay string
		want     int
	}{
		{"todo", "x ToDo y", 2},
		{"todo", "TODO", 0},
		{"todo", "tod", -1},
		{"fix.me", "a FIX.ME", 2}, // the non-letter is scanned for
		{"q", "aQ", 1},            // a one-letter literal, both cases
		{"zzz", "zzZzzz", 0},
		{"hello world", "say HELLO WORLD", 4},
	} {
		fs := foldFinders([]byte(c.lit))
		if got := foldIndex(fs, []byte(c.hay)); got != c.want {
			t.Errorf("fold %q in %q = %d, want %d (%d finders)", c.lit, c.hay, got, c.want, len(fs))
		}
	}
}

func FuzzFinder(f *testing.F) {
	f.Add([]byte("errors.New"), []byte("return errors.New(\"x\")"))
	f.Add([]byte("aab"), []byte("aaaaaaaaaaaaaaaaaaaaaaaab"))
	f.Add([]byte("  "), []byte("a  b"))
	f.Add([]byte("ToDo"), []byte("a TODO b todo"))
	f.Fuzz(func(t *testing.T, lit, hay []byte) {
		if got, want := newFinder(lit).index(hay), bytes.Index(hay, lit); got != want {
			t.Fatalf("index(%q, %q) = %d, want %d", lit, hay, got, want)
		}
		// Folding: the literal lower-cased, the text lower-cased for the
		// reference.
		low := lowerASCII(nil, lit)
		if got, want := foldIndex(foldFinders(low), hay), bytes.Index(lowerASCII(nil, hay), low); got != want {
			t.Fatalf("fold index(%q, %q) = %d, want %d", low, hay, got, want)
		}
	})
}

func BenchmarkFinder(b *testing.B) {
	hay := bytes.Repeat([]byte("\tif err != nil {\n\t\treturn fmt.Errorf(\"open %s: %w\", name, err)\n\t}\n"), 4096)
	lit := []byte("errors.New")
	b.Run("rare-byte", func(b *testing.B) {
		f := newFinder(lit)
		b.SetBytes(int64(len(hay)))
		for b.Loop() {
			if f.index(hay) >= 0 {
				b.Fatal("match")
			}
		}
	})
	b.Run("bytes.Index", func(b *testing.B) {
		b.SetBytes(int64(len(hay)))
		for b.Loop() {
			if bytes.Index(hay, lit) >= 0 {
				b.Fatal("match")
			}
		}
	})
}
