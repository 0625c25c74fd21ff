package serve_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/llm/llmtest"
	"github.com/gantry-dev/gantry/runqueue"
	"github.com/gantry-dev/gantry/serve"
)

// TestRunsShareProvider: runs with the same model option share one
// provider (one HTTP client, one copy of each encoded tool definition);
// another model option gets its own.
func TestRunsShareProvider(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.WithResponder(func(llmtest.Request) (llmtest.Reply, bool) { return llmtest.TextReply("ok"), true }))
	r := agentRunner(t, srv)
	var calls atomic.Int32
	inner := r.NewProvider
	r.NewProvider = func(ctx context.Context, model string) (llm.Provider, string, error) {
		calls.Add(1)
		return inner(ctx, model)
	}
	f := start(t, serve.Options{Runner: r})
	ctx := context.Background()
	for _, model := range []string{"", "", "claude-haiku-4-5", ""} {
		run, err := f.client.Start(ctx, runqueue.Request{Prompt: "hi", Dir: f.dir, Options: runqueue.Options{Model: model}})
		if err != nil {
			t.Fatal(err)
		}
		for _, err := range f.client.Events(ctx, run.ID, 0) {
			if err != nil {
				t.Fatal(err)
			}
		}
		if got, err := f.client.Get(ctx, run.ID); err != nil || got.Status != runqueue.StatusSucceeded {
			t.Fatalf("run %+v %v", got, err)
		}
	}
	if n := calls.Load(); n != 2 {
		t.Fatalf("NewProvider called %d times for 2 distinct model options", n)
	}
}
