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

func FuzzFinder(f *testing.F) {
	f.Add([]byte("errors.New"), []byte("return errors.New(\"x\")"))
	f.Add([]byte("aab"), []byte("aaaaaaaaaaaaaaaaaaaaaaaab"))
	f.Add([]byte("  "), []byte("a  b"))
	f.Fuzz(func(t *testing.T, lit, hay []byte) {
		if got, want := newFinder(lit).index(hay), bytes.Index(hay, lit); got != want {
			t.Fatalf("index(%q, %q) = %d, want %d", lit, hay, got, want)
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
