package builtin

import (
	"context"
	"runtime"
	"testing"

	"github.com/gantry-dev/gantry/internal/benchcpu"
	"github.com/gantry-dev/gantry/tool"
	"github.com/gantry-dev/gantry/toolset"
)

// BenchmarkRegistry builds the built-in tools and their registry, as a
// workspace opened without a registry does (`gantry serve` per run before
// it kept one per directory): schema inference and compilation are memoised
// per process, so this is the tools' construction alone.
func BenchmarkRegistry(b *testing.B) {
	b.ReportAllocs()
	defer benchcpu.Start(b)()
	for b.Loop() {
		if _, err := Registry(Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSessionPool is the per-session cost of the tool pool in the
// many-sessions pattern: one registry for the process, a pool per session
// (its own environment) up to the specs of its first request. The
// registry's pool core is shared, so what remains is the session's own
// state and its per-session tools (Skill, which lists the project's
// skills).
func BenchmarkSessionPool(b *testing.B) {
	reg, err := Registry(Options{})
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	b.ReportAllocs()
	defer benchcpu.Start(b)()
	for b.Loop() {
		p, err := toolset.NewPool(context.Background(), toolset.Options{Registry: reg, Defer: true, Env: &tool.Env{WorkDir: dir}})
		if err != nil {
			b.Fatal(err)
		}
		if len(p.Specs()) == 0 {
			b.Fatal("no specs")
		}
	}
}

// BenchmarkPoolView is the pool's share of every request: the model's view
// of a session's pool (each tool's enabled check, deferral, ToolSearch's
// listing) up to the specs.
func BenchmarkPoolView(b *testing.B) {
	reg, err := Registry(Options{})
	if err != nil {
		b.Fatal(err)
	}
	p, err := toolset.NewPool(context.Background(), toolset.Options{Registry: reg, Defer: true, Env: &tool.Env{WorkDir: b.TempDir()}})
	if err != nil {
		b.Fatal(err)
	}
	if err := p.Build(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	defer benchcpu.Start(b)()
	for b.Loop() {
		if len(p.Specs()) == 0 {
			b.Fatal("no specs")
		}
	}
}

// BenchmarkSessionPoolRetained reports what one session's pool keeps on the
// heap (after a collection) while the session lives: the pools built in
// the loop are all kept until the end.
func BenchmarkSessionPoolRetained(b *testing.B) {
	reg, err := Registry(Options{})
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	pool := func() *toolset.Pool {
		p, err := toolset.NewPool(context.Background(), toolset.Options{Registry: reg, Defer: true, Env: &tool.Env{WorkDir: dir}})
		if err != nil {
			b.Fatal(err)
		}
		p.Specs()
		return p
	}
	pool() // the registry's core
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	var keep []*toolset.Pool
	for b.Loop() {
		keep = append(keep, pool())
	}
	runtime.GC()
	runtime.ReadMemStats(&m1)
	b.ReportMetric(float64(int64(m1.HeapAlloc)-int64(m0.HeapAlloc))/float64(len(keep)), "retained-B/pool")
	runtime.KeepAlive(keep)
}
