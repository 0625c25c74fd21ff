package grep

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
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
		for _, pair := range []bool{false, true} {
			got := finderScan([]byte(c.lit), pair).index([]byte(c.hay))
			if want := strings.Index(c.hay, c.lit); got != want {
				t.Errorf("pair %v: index(%q in %.20q…) = %d, want %d", pair, c.lit, c.hay, got, want)
			}
		}
	}
}

// finderScan is newFinder with the pair scan on or off.
func finderScan(lit []byte, pair bool) *finder {
	f := newFinder(lit)
	*f = finder{lit: f.lit, rare: f.rare, c: f.c}
	f.setPair(pair)
	return f
}

func TestFinderPairBytes(t *testing.T) {
	for _, c := range []struct {
		lit    string
		fold   bool
		i1, i2 int
	}{
		{"errors.New", false, 7, 9}, // "N", then "w"
		{"xx", false, 0, 1},         // one byte value: another offset
		{"a", true, 0, 0},           // a one-letter folded literal
		{"ab", true, 1, 0},
	} {
		var f *finder
		if c.fold {
			f = foldFindersScan([]byte(c.lit), true)[0]
		} else {
			f = finderScan([]byte(c.lit), true)
		}
		if !f.pair || f.i1 != c.i1 || f.i2 != c.i2 {
			t.Errorf("%q (fold %v): pair %v at %d, %d; want %d, %d", c.lit, c.fold, f.pair, f.i1, f.i2, c.i1, c.i2)
		}
	}
}

// TestPairBlocks checks the vectorised pair test against a plain loop at
// every block position and alignment.
func TestPairBlocks(t *testing.T) {
	buf := make([]byte, 200)
	for i := range buf {
		buf[i] = byte('a' + i%7)
	}
	for _, c := range []struct{ c1, m1, c2, m2 byte }{{'X', 0, 'Y', 0}, {'x', 0x20, 'y', 0x20}, {'X', 0, 'X', 0}} {
		for pos := range 100 {
			for off := 1; off < 20; off++ {
				b := bytes.Clone(buf)
				b[pos], b[pos+off] = c.c1&^c.m1, c.c2&^c.m2
				for start := range 3 {
					for _, n := range []int{16, 32, 48, 64, (len(b) - 20 - start) &^ 15} {
						want := -1
						for k := range n {
							if b[start+k]|c.m1 == c.c1 && b[start+k+off]|c.m2 == c.c2 {
								want = k
								break
							}
						}
						for _, impl := range pairBlocksImpls() {
							if got := impl.f(&b[start], &b[start+off], n, c.c1, c.m1, c.c2, c.m2); got != want {
								t.Fatalf("%s %+v pos %d off %d start %d n %d: %d, want %d", impl.name, c, pos, off, start, n, got, want)
							}
						}
					}
				}
			}
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
		{"@", "`@", 1},    // 0x60 | 0x20 is not "@"
		{"a[", "A{a[", 2}, // "{" is "[" | 0x20: a non-letter is compared exactly
		{"xyz", strings.Repeat("XYy", 40) + "xYZ", 120},
	} {
		for _, pair := range []bool{false, true} {
			fs := foldFindersScan([]byte(c.lit), pair)
			if got := foldIndex(fs, []byte(c.hay)); got != c.want {
				t.Errorf("pair %v: fold %q in %q = %d, want %d (%d finders)", pair, c.lit, c.hay, got, c.want, len(fs))
			}
		}
	}
}

func FuzzFinder(f *testing.F) {
	f.Add([]byte("errors.New"), []byte("return errors.New(\"x\")"))
	f.Add([]byte("aab"), []byte("aaaaaaaaaaaaaaaaaaaaaaaab"))
	f.Add([]byte("  "), []byte("a  b"))
	f.Add([]byte("ToDo"), []byte("a TODO b todo"))
	f.Add([]byte("xq"), []byte(strings.Repeat("abcdefgh", 9)+"XQ xq"))
	f.Fuzz(func(t *testing.T, lit, hay []byte) {
		want := bytes.Index(hay, lit)
		// Folding: the literal lower-cased, the text lower-cased for the
		// reference.
		low := lowerASCII(nil, lit)
		foldWant := bytes.Index(lowerASCII(nil, hay), low)
		for _, pair := range []bool{false, true} {
			if got := finderScan(lit, pair).index(hay); got != want {
				t.Fatalf("pair %v: index(%q, %q) = %d, want %d", pair, lit, hay, got, want)
			}
			if got := foldIndex(foldFindersScan(low, pair), hay); got != foldWant {
				t.Fatalf("pair %v: fold index(%q, %q) = %d, want %d", pair, low, hay, got, foldWant)
			}
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

// corpus returns up to max bytes of the .go files of Go's source tree, in
// memory (a search without the file system).
func corpus(b *testing.B, max int) []byte {
	b.Helper()
	var buf []byte
	filepath.WalkDir(goroot(b), func(p string, d fs.DirEntry, err error) error {
		if err != nil || len(buf) >= max || !d.Type().IsRegular() || !strings.HasSuffix(p, ".go") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err == nil {
			buf = append(buf, data...)
		}
		return nil
	})
	return buf
}

// BenchmarkFinderGoroot is the literal search alone over 32 MB of Go
// source, with the pair scan and the byte scan.
func BenchmarkFinderGoroot(b *testing.B) {
	hay := corpus(b, 32<<20)
	for _, lit := range []string{"errors.New", "errors", "New", "Error(", "Errorf", "func", "TODO", "(", "zzzzzz"} {
		for _, fold := range []bool{false, true} {
			for _, pair := range []bool{false, true} {
				name := fmt.Sprintf("%s/fold=%v/pair=%v", lit, fold, pair)
				b.Run(name, func(b *testing.B) {
					var fs []*finder
					if fold {
						fs = foldFindersScan(lowerASCII(nil, []byte(lit)), pair)
					} else {
						fs = []*finder{finderScan([]byte(lit), pair)}
					}
					b.SetBytes(int64(len(hay)))
					for b.Loop() {
						for _, f := range fs {
							for i := 0; i < len(hay); {
								j := f.index(hay[i:])
								if j < 0 {
									break
								}
								i += j + 1
							}
						}
					}
				})
			}
		}
	}
}

// TestPrefilter checks which required literals a pattern's prefilter looks
// for: the ones found least often, among literals of 3 bytes or more.
func TestPrefilter(t *testing.T) {
	for _, c := range []struct {
		pattern string
		want    []string
	}{
		{`errors.New`, []string{"New"}},         // "N"…"w" is rarer than anything in "errors"
		{`func \w+Error\(`, []string{"Error("}}, //
		{`TODO|FIXME`, []string{"TODO", "FIXME"}},
		{`(abc)+x{2}defg.(hij|klm)`, []string{"defg"}},
		{`hello.QZ`, []string{"hello"}}, // a 2-byte literal would make the pattern slow in Go (fastInGo)
		{`x\d+`, []string{"x"}},
	} {
		m, err := compilePattern(c.pattern, false, false)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range m.pre {
			got = append(got, string(f.lit))
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%q: prefilter %q, want %q", c.pattern, got, c.want)
		}
	}
}

// TestRequiredLiterals checks the literals a candidate line must hold before
// the regexp runs on it.
func TestRequiredLiterals(t *testing.T) {
	for _, c := range []struct {
		pattern string
		want    []string
	}{
		{`errors.New`, []string{"errors"}}, // the prefilter looks for "New"
		{`func \w+Error\(`, []string{"func "}},
		{`(abc)+x{2}defg.(hij|klm)`, []string{"abc"}}, // the prefilter looks for "defg"
		{`TODO|FIXME`, nil},
		{`(?i)errors.new`, nil},
		{`ab.cd`, nil},  // too short
		{`needle`, nil}, // a plain literal needs no regexp
	} {
		m, err := compilePattern(c.pattern, false, false)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range m.req {
			got = append(got, string(r))
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%q: required %q, want %q", c.pattern, got, c.want)
		}
	}
}
