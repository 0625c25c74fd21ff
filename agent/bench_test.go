package agent

import (
	"context"
	"fmt"
	"testing"

	"github.com/gantry-dev/gantry/llm/llmtest"
	"github.com/gantry-dev/gantry/toolset"
)

// BenchmarkTurn measures the loop's per-turn cost against a zero-latency
// fake server through the real Anthropic SDK over loopback HTTP: each op is
// one model turn with one read-only tool call (request, streamed reply,
// executor, transcript append). Report: ns/op = per-turn overhead.
func BenchmarkTurn(b *testing.B) {
	for _, store := range []bool{false, true} {
		b.Run(fmt.Sprintf("transcript=%v", store), func(b *testing.B) {
			f := &fixture{srv: llmtest.NewServer(b), dir: b.TempDir()}
			o := Options{
				Provider: f.provider(), Model: "claude-sonnet-4-5", WorkDir: f.dir,
				Pool: toolset.Options{Tools: testToolsB(b)}, NoEnvFacts: true, NoMemoryFiles: true,
				MaxTurns: b.N + 1, CompactThreshold: -1,
			}
			if store {
				o.Store = sessionStore(b)
			}
			for i := range b.N {
				f.srv.Script(llmtest.ToolReply(llmtest.ToolCall{ID: fmt.Sprintf("t%d", i), Name: "Echo", Input: `{"text":"x"}`}))
			}
			f.srv.Script(llmtest.TextReply("done"))
			a, err := New(context.Background(), o)
			if err != nil {
				b.Fatal(err)
			}
			defer a.Close()
			b.ReportAllocs()
			b.ResetTimer()
			res, err := a.Prompt(context.Background(), "go")
			b.StopTimer()
			if err != nil || res.IsError || res.NumTurns != b.N+1 {
				b.Fatalf("res %+v err %v", res, err)
			}
		})
	}
}
