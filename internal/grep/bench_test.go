package grep

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

// BenchmarkGrepGoroot searches Go's source tree with both engines, in this
// process: wall time and CPU time (rg's included) per search. The whole
// process against rg is cmd/gantry's BenchmarkGrepProcess.
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
				c0, s0, ok := processCPU()
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
				if c1, s1, ok1 := processCPU(); ok && ok1 {
					b.ReportMetric(float64((c1-c0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
					b.ReportMetric(float64((s1-s0).Microseconds())/1000/float64(b.N), "sys-ms/op")
				}
			})
		}
	}
}

// BenchmarkGlobGoroot is Glob("**/*.go") on Go's source tree (compare with
// `rg --files -g '*.go'`).
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
