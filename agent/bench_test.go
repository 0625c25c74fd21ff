package agent

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

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

// BenchmarkTurnAt30 is the loop's cost of one turn late in a conversation
// (budget: ≤ 1 ms at turn 30, docs/scale.md): each op runs a 31-turn
// conversation (a read-only tool call per turn, each result ~600 bytes)
// against the zero-latency fake server through the real SDK over loopback,
// and the time from the end of turn 29 to the end of turn 30 (request
// build, the server's reply, stream decode, dispatch, transcript append) is
// reported as turn30-ms; turn2-ms is the same for turn 2, so that the two
// show whether a turn's cost grows with the conversation. The fake server
// runs in this process and decodes every request, so both figures include
// its work too.
func BenchmarkTurnAt30(b *testing.B) {
	f := &fixture{srv: llmtest.NewServer(b), dir: b.TempDir()}
	var t2, t30 time.Duration
	for range b.N {
		for i := range 30 {
			f.srv.Script(llmtest.ToolReply(llmtest.ToolCall{ID: fmt.Sprintf("t%d", i), Name: "Echo", Input: fmt.Sprintf(`{"text":%q}`, strings.Repeat("x", 600))}))
		}
		f.srv.Script(llmtest.TextReply("done"))
		a, err := New(context.Background(), Options{
			Provider: f.provider(), Model: "claude-sonnet-4-5", WorkDir: f.dir,
			Pool: toolset.Options{Tools: testToolsB(b)}, NoEnvFacts: true, NoMemoryFiles: true, CompactThreshold: -1,
		})
		if err != nil {
			b.Fatal(err)
		}
		ends := map[int]time.Time{}
		for ev, err := range a.Run(context.Background(), "go") {
			if err != nil {
				b.Fatal(err)
			}
			if te, ok := ev.(*TurnEnd); ok {
				ends[te.Turn] = time.Now()
			}
		}
		a.Close()
		if len(ends) != 31 {
			b.Fatalf("%d turns", len(ends))
		}
		t2 += ends[2].Sub(ends[1])
		t30 += ends[30].Sub(ends[29])
	}
	b.ReportMetric(float64(t2.Microseconds())/1000/float64(b.N), "turn2-ms")
	b.ReportMetric(float64(t30.Microseconds())/1000/float64(b.N), "turn30-ms")
}
