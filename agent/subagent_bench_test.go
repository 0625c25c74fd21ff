package agent

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gantry-dev/gantry/llm/llmtest"
	"github.com/gantry-dev/gantry/subagent"
	"github.com/gantry-dev/gantry/toolset"
	"github.com/gantry-dev/gantry/workspace"
)

// fanOutServer answers a parent that starts n subagents in one message,
// each of which makes three Echo calls (one per turn) and then replies.
// live counts the subagents between their first and last request, and
// peak the most at once.
func fanOutServer(b *testing.B, n int, live, peak *atomic.Int32) *llmtest.Server {
	return llmtest.NewServer(b, llmtest.WithResponder(func(r llmtest.Request) (llmtest.Reply, bool) {
		first, step := firstUser(r), assistants(r)
		if strings.HasPrefix(first, "job ") {
			switch step {
			case 0:
				if v := live.Add(1); v > peak.Load() {
					peak.Store(v)
				}
			case 3:
				live.Add(-1)
			}
		}
		if first == "fan out" {
			if step > 0 {
				return llmtest.TextReply("all done"), true
			}
			var calls []llmtest.ToolCall
			for i := range n {
				calls = append(calls, agentCall(fmt.Sprintf("c%d", i), map[string]any{"description": "job", "prompt": fmt.Sprintf("job %d", i)}))
			}
			return llmtest.ToolReply(calls...), true
		}
		if !strings.HasPrefix(first, "job ") {
			return llmtest.TextReply("?"), true
		}
		if step < 3 {
			return llmtest.ToolReply(llmtest.ToolCall{ID: fmt.Sprintf("e%d", step), Name: "Echo", Input: `{"text":"x"}`}), true
		}
		return llmtest.TextReply("job done"), true
	}))
}

// BenchmarkSubagentFanOut runs a parent that starts 1 or 10 subagents in
// one message, each doing 3 tool turns, against a zero-latency fake server
// through the Anthropic SDK over loopback. The target: agents=10 takes at
// most 1.5× the wall time of agents=1 (the subagents run in parallel) on a
// machine with cores to spare. "parallel" reports how many subagents were
// between their first and last request at once (10 = all overlapped),
// which holds whatever the machine's load.
func BenchmarkSubagentFanOut(b *testing.B) {
	for _, n := range []int{1, 10} {
		b.Run(fmt.Sprintf("agents=%d", n), func(b *testing.B) {
			var live, peak atomic.Int32
			f := &fixture{srv: fanOutServer(b, n, &live, &peak), dir: b.TempDir()}
			b.ReportAllocs()
			for b.Loop() {
				a, err := New(context.Background(), withWorkspace(b, testOpts{
					Options: Options{Provider: f.provider(), Model: "claude-sonnet-4-5", NoEnvFacts: true, NoMemoryFiles: true},
					WorkDir: f.dir, Pool: toolset.Options{Tools: testToolsB(b)},
					Agents: []subagent.Definition{{Name: "noop", Description: "unused", Prompt: "unused"}},
				}, nil))
				if err != nil {
					b.Fatal(err)
				}
				res, err := a.Prompt(context.Background(), "fan out")
				if err != nil || res.IsError || res.Text != "all done" {
					b.Fatalf("%+v %v", res, err)
				}
				a.Close()
			}
			b.ReportMetric(float64(peak.Load()), "parallel")
		})
	}
}

// BenchmarkIdleSubagent measures the memory one idle subagent holds (built,
// not running: its session, environment, derived pool and executor), as
// bytes of live heap per subagent. The target is at most 200 KB.
func BenchmarkIdleSubagent(b *testing.B) {
	f := &fixture{srv: llmtest.NewServer(b), dir: b.TempDir(), store: sessionStore(b)}
	a, err := New(context.Background(), withWorkspace(b, testOpts{
		Options: Options{Provider: f.provider(), Model: "claude-sonnet-4-5", NoEnvFacts: true, NoMemoryFiles: true},
		WorkDir: f.dir, Pool: toolset.Options{Tools: testToolsB(b)},
		Agents: []subagent.Definition{{Name: "noop", Description: "unused", Prompt: "unused"}},
	}, func(wo *workspace.Options) { wo.Transcripts = f.store }))
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	req, err := a.request(SubagentOptions{Prompt: "idle"})
	if err != nil {
		b.Fatal(err)
	}
	const batch = 100
	var ms runtime.MemStats
	var perAgent float64
	for b.Loop() {
		runtime.GC()
		runtime.ReadMemStats(&ms)
		before := ms.HeapAlloc
		kids := make([]*Agent, batch)
		for i := range kids {
			if kids[i], err = a.spawn(context.Background(), req, nil); err != nil {
				b.Fatal(err)
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&ms)
		perAgent = float64(ms.HeapAlloc-before) / batch
		for _, k := range kids {
			k.Close()
		}
	}
	b.ReportMetric(perAgent, "B/subagent")
}
