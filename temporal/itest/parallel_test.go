package itest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.temporal.io/sdk/worker"

	"github.com/gantry-dev/gantry/executor"
	"github.com/gantry-dev/gantry/temporal/durable"
	"github.com/gantry-dev/gantry/temporal/internal/fakemodel"
)

// BenchmarkReadOnlyBatch is one message of 5 read-only calls (each a Bash
// `sleep 0.2; cat`) run at once, as the workflow runs them, and one at a
// time (a worker whose executor allows one call at a time).
func BenchmarkReadOnlyBatch(b *testing.B) {
	for _, tc := range []struct {
		name string
		conc int
	}{{"parallel", 0}, {"serial", 1}} {
		b.Run(tc.name, func(b *testing.B) {
			c := newCluster(b)
			home := b.TempDir()
			xo := executor.Options{MaxConcurrency: tc.conc}
			a, err := durable.NewActivities(durable.WorkerOptions{Provider: c.prov, Getenv: fakemodel.Getenv(home), UserHome: home, SessionHome: home, ExecutorOptions: xo})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { a.Close() })
			c.ts.NewWorkerWithOptions(c.queue, func(r worker.Registry) { durable.Register(r, a) }, worker.Options{StickyScheduleToStartTimeout: time.Second})
			dir := b.TempDir()
			for i := 1; i <= 5; i++ {
				os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d.txt", i)), []byte("x\n"), 0o644)
			}
			var total time.Duration
			for b.Loop() {
				start := time.Now()
				id := c.start(testSpec(dir), "calls=5 per=5 cmd=sleep 0.2; cat f{i}.txt")
				if res := c.wait(id, time.Minute); res.Subtype != "success" || res.NumTurns != 2 {
					b.Fatalf("result = %+v", res)
				}
				total += time.Since(start)
			}
			b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/run")
		})
	}
}
