package agent

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/builtin"
	"github.com/gantry-dev/gantry/internal/benchcpu"
	"github.com/gantry-dev/gantry/llm/llmtest"
	"github.com/gantry-dev/gantry/llm/texttools"
	"github.com/gantry-dev/gantry/toolset"
	"github.com/gantry-dev/gantry/workspace"
)

// BenchmarkTurn measures the loop's per-turn cost against a zero-latency
// fake server through the real Anthropic SDK over loopback HTTP: each op is
// one model turn with one read-only tool call (request, streamed reply,
// executor, transcript append). Report: ns/op = per-turn overhead, and
// cpu-ns/op the process's CPU time per turn (the fake server's decoding
// of the requests included: it grows with the conversation, which here is
// b.N turns long — see BenchmarkTurnAt30 for the loop's own cost).
func BenchmarkTurn(b *testing.B) {
	for _, store := range []bool{false, true} {
		b.Run(fmt.Sprintf("transcript=%v", store), func(b *testing.B) {
			f := &fixture{srv: llmtest.NewServer(b), dir: b.TempDir()}
			to := testOpts{
				Options: Options{Provider: f.provider(), Model: "claude-sonnet-4-5", NoEnvFacts: true, NoMemoryFiles: true,
					MaxTurns: b.N + 1, CompactThreshold: -1},
				WorkDir: f.dir, Pool: toolset.Options{Tools: testToolsB(b)},
			}
			o := withWorkspace(b, to, func(wo *workspace.Options) {
				if store {
					wo.Transcripts = sessionStore(b)
				}
			})
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
			stop := benchcpu.Start(b)
			res, err := a.Prompt(context.Background(), "go")
			b.StopTimer()
			stop()
			if err != nil || res.IsError || res.NumTurns != b.N+1 {
				b.Fatalf("res %+v err %v", res, err)
			}
		})
	}
}

// BenchmarkTurnAt30 is the loop's cost of one turn late in a conversation
// (budget: ≤ 1 ms at turn 30, docs/scale.md): each op runs a conversation
// of 31 turns (a read-only tool call per turn, each result ~600 bytes)
// against the zero-latency fake server through the real SDK over
// loopback, and reports for turn 2 and turn 30 the time from the end of
// the turn before to the end of that turn (sending the tool results,
// transcript append, request build, the server's reply, stream decode,
// dispatch, the tool call): turnN-ms is wall time, turnN-cpu-ms the CPU
// time the whole process spent in it (every goroutine and the GC, the
// fake server's included). Equal turn2 and turn30 figures mean a turn
// costs what it adds, not what the conversation holds.
//
// The variants:
//   - server=decode: the fake server decodes every request into its
//     record, work that grows with the conversation and blurs the loop's
//     own cost (the figure before the server=discard variant existed);
//   - server=discard: the server reads each body to its end and answers
//     without decoding it — what is left is the loop's cost plus sending
//     the request's bytes over loopback, which the stateless APIs make
//     grow with the conversation;
//   - transcript: with a session store, as the CLI runs;
//   - turns=100: a 101-turn conversation, reporting turn 100 too;
//   - tools=text: the text tool protocol (llm/texttools): the tools
//     described in the system prompt, calls written as tags in the reply's
//     text, results sent back as text envelopes;
//   - builtins: the built-in tools (one registry, as a program shares it)
//     in the pool beside the test's tool, so that every request carries
//     ~40 tool definitions (or, with tools=text, their ~21 KB description).
func BenchmarkTurnAt30(b *testing.B) {
	for _, v := range []struct {
		name       string
		openai     bool
		decode     bool
		transcript bool
		turns      int
		text       bool // the text tool protocol (llm/texttools)
		builtins   bool // the built-in tools in the pool too (~40)
	}{
		{"api=anthropic/server=decode", false, true, false, 30, false, false},
		{"api=anthropic/server=discard", false, false, false, 30, false, false},
		{"api=anthropic/server=discard/transcript", false, false, true, 30, false, false},
		{"api=openai/server=discard", true, false, false, 30, false, false},
		{"api=anthropic/server=discard/transcript/turns=100", false, false, true, 100, false, false},
		{"api=anthropic/server=discard/tools=text", false, false, false, 30, true, false},
		{"api=openai/server=discard/tools=text", true, false, false, 30, true, false},
		{"api=anthropic/server=discard/tools=text/turns=100", false, false, false, 100, true, false},
		{"api=openai/server=discard/turns=100", true, false, false, 100, false, false},
		{"api=openai/server=discard/tools=text/turns=100", true, false, false, 100, true, false},
		{"api=anthropic/server=discard/builtins", false, false, false, 30, false, true},
		{"api=anthropic/server=discard/tools=text/builtins", false, false, false, 30, true, true},
	} {
		b.Run(v.name, func(b *testing.B) {
			var opts []llmtest.Option
			if !v.decode {
				opts = append(opts, llmtest.WithoutDecoding())
			}
			f := &fixture{srv: llmtest.NewServer(b, opts...), dir: b.TempDir(), openai: v.openai}
			reg, err := builtin.Registry(builtin.Options{})
			if err != nil {
				b.Fatal(err)
			}
			marks := []int{2, 30}
			if v.turns > 30 {
				marks = append(marks, v.turns)
			}
			wall := make([]time.Duration, len(marks))
			cpu := make([]time.Duration, len(marks))
			for range b.N {
				for i := range v.turns {
					if v.text {
						f.srv.Script(llmtest.TextReply(fmt.Sprintf("Call %d.\n<Echo>\n<text>%s</text>\n</Echo>\n", i, strings.Repeat("x", 600))))
						continue
					}
					f.srv.Script(llmtest.ToolReply(llmtest.ToolCall{ID: fmt.Sprintf("t%d", i), Name: "Echo", Input: fmt.Sprintf(`{"text":%q}`, strings.Repeat("x", 600))}))
				}
				f.srv.Script(llmtest.TextReply("done"))
				to := testOpts{
					Options: Options{Provider: f.provider(), Model: "claude-sonnet-4-5", NoEnvFacts: true, NoMemoryFiles: true, CompactThreshold: -1,
						MaxTurns: v.turns + 1},
					WorkDir: f.dir, Pool: toolset.Options{Tools: testToolsB(b)},
				}
				if v.text {
					to.ToolProtocol = texttools.Text
				}
				if v.builtins {
					to.Pool.Registry = reg
				}
				o := withWorkspace(b, to, func(wo *workspace.Options) {
					if v.transcript {
						wo.Transcripts = sessionStore(b)
					}
				})
				a, err := New(context.Background(), o)
				if err != nil {
					b.Fatal(err)
				}
				type mark struct{ wall, cpu time.Duration }
				ends := map[int]mark{}
				start := time.Now()
				for ev, err := range a.Run(context.Background(), "go") {
					if err != nil {
						b.Fatal(err)
					}
					if te, ok := ev.(*TurnEnd); ok {
						c, _ := benchcpu.Now()
						ends[te.Turn] = mark{time.Since(start), c}
					}
				}
				a.Close()
				if len(ends) != v.turns+1 {
					b.Fatalf("%d turns", len(ends))
				}
				for i, t := range marks {
					wall[i] += ends[t].wall - ends[t-1].wall
					cpu[i] += ends[t].cpu - ends[t-1].cpu
				}
			}
			for i, t := range marks {
				b.ReportMetric(float64(wall[i].Microseconds())/1000/float64(b.N), fmt.Sprintf("turn%d-ms", t))
				b.ReportMetric(float64(cpu[i].Microseconds())/1000/float64(b.N), fmt.Sprintf("turn%d-cpu-ms", t))
			}
		})
	}
}
