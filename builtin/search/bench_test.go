package search

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// goroot returns $GOROOT/src, the benchmark corpus (about 11k files).
func goroot(b *testing.B) string {
	b.Helper()
	src := filepath.Join(runtime.GOROOT(), "src")
	if _, err := os.Stat(src); err != nil {
		b.Skipf("GOROOT/src not found: %v", err)
	}
	return src
}

// BenchmarkGrepGoroot searches Go's source tree with both engines; compare
// with bench.sh's timings of rg and grep on the same tree.
func BenchmarkGrepGoroot(b *testing.B) {
	root := goroot(b)
	cases := []struct{ name, pattern, mode string }{
		{"files/literal", "errors.New", ModeFiles},
		{"files/regex", `func \w+Error\(`, ModeFiles},
		{"content/literal", "errors.New", ModeContent},
		{"content/regex", `func \w+Error\(`, ModeContent},
	}
	for _, e := range []Engine{EngineGo, EngineRipgrep} {
		for _, c := range cases {
			b.Run(string(e)+"/"+c.name, func(b *testing.B) {
				if e == EngineRipgrep {
					if _, err := findRipgrep(Options{}); err != nil {
						b.Skip("rg not on PATH")
					}
				}
				for b.Loop() {
					q := &Query{Root: root, Pattern: c.pattern, Mode: c.mode, LineNumbers: true}
					r, err := Search(context.Background(), q, Options{Engine: e})
					if err != nil {
						b.Fatal(err)
					}
					if len(r.Files) == 0 {
						b.Fatal("no match")
					}
				}
			})
		}
	}
}

// BenchmarkGlobGoroot is Glob("**/*.go") on Go's source tree; compare with
// `rg --files -g '*.go'` in bench.sh.
func BenchmarkGlobGoroot(b *testing.B) {
	root := goroot(b)
	for b.Loop() {
		m, err := Glob(context.Background(), root, "**/*.go", Options{})
		if err != nil {
			b.Fatal(err)
		}
		if len(m) == 0 {
			b.Fatal("no match")
		}
	}
}
