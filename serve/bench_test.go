package serve_test

import (
	"context"
	"testing"

	"github.com/gantry-dev/gantry/internal/benchcpu"
	"github.com/gantry-dev/gantry/runqueue"
	"github.com/gantry-dev/gantry/serve"
)

// benchFirstEvent measures POST /v1/runs → the first SSE event of the run
// received by the client, with the given runner.
func benchFirstEvent(b *testing.B, runner runqueue.Runner, prompt string) {
	f := start(b, serve.Options{Runner: runner, MaxRunning: 64})
	ctx := context.Background()
	b.ReportAllocs()
	defer benchcpu.Start(b)()
	b.ResetTimer()
	for range b.N {
		run, err := f.client.Start(ctx, runqueue.Request{Prompt: prompt, Dir: f.dir})
		if err != nil {
			b.Fatal(err)
		}
		for _, err := range f.client.Events(ctx, run.ID, 0) {
			if err != nil {
				b.Fatal(err)
			}
			break // the first event
		}
		b.StopTimer()
		for range f.client.Events(ctx, run.ID, 0) {
		}
		b.StartTimer()
	}
}

// BenchmarkStartToFirstEventScripted is the API's own share: a runner that
// emits at once.
func BenchmarkStartToFirstEventScripted(b *testing.B) {
	benchFirstEvent(b, script, "hello")
}
