package checkpoint

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/internal/benchcpu"
)

// project writes n files of about 1 KiB in directories of 50, dated an
// hour ago (a project's files are older than the agent's session).
func project(b *testing.B, n int) string {
	b.Helper()
	dir := b.TempDir()
	old := time.Now().Add(-time.Hour)
	write(b, dir, ".gitignore", "*.o\nbuild/\n")
	os.Chtimes(filepath.Join(dir, ".gitignore"), old, old)
	for i := range n {
		p := filepath.Join(dir, fmt.Sprintf("pkg%03d", i/50), fmt.Sprintf("file%04d.go", i))
		if i%50 == 0 {
			os.MkdirAll(filepath.Dir(p), 0o755)
		}
		content := fmt.Sprintf("package p\n// file %d\n%01000d\n", i, i)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			b.Fatal(err)
		}
		os.Chtimes(p, old, old)
	}
	return dir
}

// BenchmarkCheckpoint10k: a checkpoint of a 10,000-file project of which
// one file changed since the last one (target ≤ 50 ms).
func BenchmarkCheckpoint10k(b *testing.B) {
	dir := project(b, 10_000)
	s := open(b, dir, nil)
	ctx := context.Background()
	if _, err := s.Create(ctx, Meta{}); err != nil {
		b.Fatal(err)
	}
	changed := filepath.Join(dir, "pkg100", "file5000.go")
	b.ReportAllocs()
	i := 0
	var cpu time.Duration
	for b.Loop() {
		i++
		os.WriteFile(changed, []byte("package p // "+strconv.Itoa(i)), 0o644)
		c0, _ := benchcpu.Now()
		if _, err := s.Create(ctx, Meta{}); err != nil {
			b.Fatal(err)
		}
		c1, _ := benchcpu.Now()
		cpu += c1 - c0
	}
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
}

// BenchmarkRewind100: rewinding 100 changed files of a 1,000-file project
// (target ≤ 200 ms): the state before is recorded, the objects verified,
// the files written back.
func BenchmarkRewind100(b *testing.B) {
	dir := project(b, 1_000)
	s := open(b, dir, nil)
	ctx := context.Background()
	if _, err := s.Create(ctx, Meta{ID: "base"}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	i := 0
	var cpu time.Duration
	for b.Loop() {
		b.StopTimer()
		i++
		for j := range 100 {
			p := filepath.Join(dir, fmt.Sprintf("pkg%03d", j*10/50), fmt.Sprintf("file%04d.go", j*10))
			os.WriteFile(p, []byte("changed "+strconv.Itoa(i)), 0o644)
		}
		if err := s.Record(ctx); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		c0, _ := benchcpu.Now()
		rep, err := s.Rewind(ctx, "base", RewindOptions{})
		if err != nil || len(rep.Restored) != 100 {
			b.Fatal(err, rep)
		}
		c1, _ := benchcpu.Now()
		cpu += c1 - c0
	}
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
}

// BenchmarkEditFlow1k: the checkpoint before an edit in a 1,000-file
// project, one file changed since the previous checkpoint of the session
// (target ≤ 2 ms).
func BenchmarkEditFlow1k(b *testing.B) {
	dir := project(b, 1_000)
	s := open(b, dir, nil)
	ctx := context.Background()
	if _, err := s.Create(ctx, Meta{}); err != nil {
		b.Fatal(err)
	}
	changed := filepath.Join(dir, "pkg010", "file0500.go")
	b.ReportAllocs()
	i := 0
	var cpu time.Duration
	for b.Loop() {
		b.StopTimer()
		i++
		os.WriteFile(changed, []byte("package p // "+strconv.Itoa(i)), 0o644)
		b.StartTimer()
		c0, _ := benchcpu.Now()
		if _, err := s.Create(ctx, Meta{Kind: KindTool}); err != nil {
			b.Fatal(err)
		}
		c1, _ := benchcpu.Now()
		cpu += c1 - c0
	}
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
}

// BenchmarkReadOnlyRun200: what checkpoints cost a run that changes
// nothing in a 200-file project whose store holds the previous run's tip:
// open the store, the turn's checkpoint, the tip at the end.
func BenchmarkReadOnlyRun200(b *testing.B) {
	dir := project(b, 200)
	storeDir := filepath.Join(b.TempDir(), "store")
	ctx := context.Background()
	s0, _ := Open(Options{Dir: dir, StoreDir: storeDir})
	if _, err := s0.Create(ctx, Meta{}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	var cpu time.Duration
	for b.Loop() {
		c0, _ := benchcpu.Now()
		s, err := Open(Options{Dir: dir, StoreDir: storeDir})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.Create(ctx, Meta{}); err != nil {
			b.Fatal(err)
		}
		if err := s.Record(ctx); err != nil {
			b.Fatal(err)
		}
		c1, _ := benchcpu.Now()
		cpu += c1 - c0
	}
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
}
