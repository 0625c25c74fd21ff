package durable

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"

	"github.com/gantry-dev/gantry/internal/benchcpu"
	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/llm/anthropic"
	"github.com/gantry-dev/gantry/llm/llmtest"
	"github.com/gantry-dev/gantry/llm/openai"
	"github.com/gantry-dev/gantry/llm/texttools"
	"github.com/gantry-dev/gantry/temporal/internal/fakemodel"
	"github.com/gantry-dev/gantry/tool"
)

// conversation is a durable run's conversation of turns tool calls, each
// reply and result of a different shape.
func conversation(turns int) []llm.Message {
	png := []byte("\x89PNG\r\n\x1a\nfake")
	msgs := []llm.Message{llm.UserText("Read the files <and> fix \"it\" — é")}
	for i := range turns {
		id := fmt.Sprintf("toolu_%d", i)
		input := json.RawMessage(fmt.Sprintf(`{"file_path":"/src/f%d.go"}`, i))
		var a llm.Message
		switch i % 3 {
		case 0:
			a = llm.AssistantMessage(llm.Text(fmt.Sprintf("Reading %d.", i)), llm.ToolUse(id, "Read", input))
		case 1:
			a = llm.AssistantMessage(llm.Thinking("Next file.", "sig=="), llm.ToolUse(id, "Read", input))
		default:
			a = llm.AssistantMessage(llm.ToolUse(id, "Bash", json.RawMessage(`{"command":"echo hi"}`)))
		}
		var r llm.Message
		switch i % 4 {
		case 0:
			r = llm.UserMessage(llm.ToolResult(id, []tool.Content{tool.Text(strings.Repeat("line of code\n", 40))}, false))
		case 1:
			r = llm.UserMessage(llm.ToolResult(id, []tool.Content{tool.Text("exit status 1")}, true), llm.Text("<system-reminder>x</system-reminder>"))
		case 2:
			r = llm.UserMessage(llm.ToolResult(id, []tool.Content{tool.Image(png, "image/png"), tool.Text("a picture")}, false))
		default:
			r = llm.UserMessage(llm.ToolResult(id, nil, false))
		}
		msgs = append(msgs, a, r)
	}
	return msgs
}

// modelWorker is one worker's model activity in a test environment: each
// call goes through the data converter, so the activity decodes its
// conversation afresh, as on a real worker.
type modelWorker struct {
	a   *Activities
	env *testsuite.TestActivityEnvironment
}

func newModelWorker(t testing.TB, p llm.Provider, cacheBytes int64) *modelWorker {
	home := t.TempDir()
	a, err := NewActivities(WorkerOptions{Provider: p, Getenv: fakemodel.Getenv(home), UserHome: home, SessionHome: home, EncodingCacheBytes: cacheBytes})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	var s testsuite.WorkflowTestSuite
	s.SetLogger(log.NewStructuredLogger(slog.New(slog.DiscardHandler)))
	env := s.NewTestActivityEnvironment()
	env.RegisterActivityWithOptions(a.Model, activity.RegisterOptions{Name: activityModel})
	return &modelWorker{a: a, env: env}
}

func (w *modelWorker) call(t testing.TB, in modelInput) {
	t.Helper()
	if _, err := w.env.ExecuteActivity(activityModel, in); err != nil {
		t.Fatal(err)
	}
}

// TestModelEncodings: a worker that keeps the run's message encodings
// sends, call after call, the body a worker without them sends, byte for
// byte — turn by turn, on a worker that joins mid-run, after compaction
// and a rewind, with a message changed at its position, with a compaction
// summary request, under the text tool protocol, and with a bound so
// small that the caches are emptied.
func TestModelEncodings(t *testing.T) {
	type provider struct {
		name string
		make func(*llmtest.Server) llm.Provider
	}
	ant := func(s *llmtest.Server) llm.Provider {
		return anthropic.New(anthropic.Options{BaseURL: s.URL(), APIKey: "k", Model: "claude-test"})
	}
	oai := func(s *llmtest.Server) llm.Provider {
		return openai.New(openai.Options{BaseURL: s.OpenAIURL(), APIKey: "k", Model: "gpt-test"})
	}
	for _, pv := range []provider{
		{"anthropic", ant},
		{"openai", oai},
		{"anthropic/text", func(s *llmtest.Server) llm.Provider { return texttools.New(ant(s)) }},
		{"openai/text", func(s *llmtest.Server) llm.Provider { return texttools.New(oai(s)) }},
	} {
		t.Run(pv.name, func(t *testing.T) {
			srv := llmtest.NewServer(t, llmtest.WithResponder(func(llmtest.Request) (llmtest.Reply, bool) {
				return llmtest.TextReply("ok"), true
			}))
			p := pv.make(srv)
			plain := newModelWorker(t, p, -1)
			cached := newModelWorker(t, p, 0)
			small := newModelWorker(t, p, 4<<10) // a few messages' worth
			spec := testSpec(t.TempDir())
			var joined *modelWorker // a worker that joins the run late
			check := func(step string, msgs []llm.Message, summary bool, workers ...*modelWorker) {
				t.Helper()
				in := modelInput{RunID: "run-1", Spec: spec, System: "You are a test.", Messages: msgs, Summary: summary}
				plain.call(t, in)
				want := srv.LastRequest().Body
				for k, w := range workers {
					w.call(t, in)
					if got := srv.LastRequest().Body; !bytes.Equal(got, want) {
						t.Fatalf("%s: worker %d sent another body than the worker without the cache:\n%s", step, k, firstDiff(got, want))
					}
				}
			}
			conv := conversation(12)
			for k := 1; k <= len(conv); k += 2 {
				if k == 9 {
					joined = newModelWorker(t, p, 0)
				}
				ws := []*modelWorker{cached, small}
				if joined != nil {
					ws = append(ws, joined)
				}
				check(fmt.Sprintf("turn %d", k/2), conv[:k], false, ws...)
			}
			if n := cached.a.HeldEncodingBytes(); n == 0 {
				t.Error("the worker keeps no encodings")
			}
			if n := small.a.HeldEncodingBytes(); n > 4<<10 {
				t.Errorf("the bounded worker holds %d bytes, over its 4 KiB bound", n)
			}
			// The compaction summary request: the conversation and a
			// request for the summary.
			sum := append(slices.Clone(conv), llm.UserText(fakemodel.CompactMarker))
			check("summary request", sum, true, cached, joined)
			// After compaction: the summary, then the last messages.
			compacted := append([]llm.Message{llm.UserText("Summary: files read.")}, conv[len(conv)-4:]...)
			check("compacted", compacted, false, cached, joined)
			// A rewind, then a different message at a position the cache held.
			check("rewind", conv[:5], false, cached, joined)
			changed := slices.Clone(conv[:7])
			changed[5] = llm.AssistantMessage(llm.ToolUse("toolu_2", "Read", json.RawMessage(`{"file_path":"/other"}`)))
			check("changed at its position", changed, false, cached, joined)
			changed[6] = llm.UserMessage(llm.ToolResult("toolu_2", []tool.Content{tool.Text("other")}, false))
			check("changed result", changed, false, cached, joined)
			// Two messages of one role in a row are merged, every call anew.
			merged := append(slices.Clone(conv[:5]), llm.UserText("and one more thing"))
			check("merged", merged, false, cached, joined)
			check("merged again", merged, false, cached, joined)
			// The run ends: its runtime and cache go.
			if err := cached.a.Release(t.Context(), "run-1", nil); err != nil {
				t.Fatal(err)
			}
			if n := cached.a.HeldEncodingBytes(); n != 0 {
				t.Errorf("%d bytes held after Release", n)
			}
		})
	}
}

// firstDiff shows where got and want part, with some context.
func firstDiff(got, want []byte) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	from := max(0, i-200)
	return fmt.Sprintf("at byte %d:\n got …%s…\nwant …%s…", i, got[from:min(len(got), i+200)], want[from:min(len(want), i+200)])
}

// TestEncodingCacheLRU: over the bound, the runs whose model calls are
// oldest lose their caches first.
func TestEncodingCacheLRU(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.WithoutDecoding())
	p := anthropic.New(anthropic.Options{BaseURL: srv.URL(), APIKey: "k", Model: "claude-test"})
	conv := conversation(6)
	// Measure one run's holding, then bound the worker at two and a half.
	probe := newModelWorker(t, p, 0)
	srv.Script(llmtest.TextReply("ok"))
	probe.call(t, modelInput{RunID: "probe", Spec: testSpec(t.TempDir()), System: "s", Messages: conv})
	one := probe.a.HeldEncodingBytes()
	w := newModelWorker(t, p, one*5/2)
	for _, run := range []string{"a", "b", "c", "a"} {
		srv.Script(llmtest.TextReply("ok"))
		w.call(t, modelInput{RunID: run, Spec: testSpec(t.TempDir()), System: "s", Messages: conv})
	}
	held := map[string]int64{}
	w.a.mu.Lock()
	for id, rt := range w.a.runtimes {
		held[id] = rt.enc.Size()
	}
	w.a.mu.Unlock()
	if held["a"] == 0 || held["c"] == 0 || held["b"] != 0 {
		t.Errorf("held %v: want a and c kept, b (least recently used) emptied", held)
	}
	if n := w.a.HeldEncodingBytes(); n > one*5/2 {
		t.Errorf("%d bytes held, over the bound %d", n, one*5/2)
	}
}

// BenchmarkModelTurn is a durable run's model call at turn 30 — the model
// activity on a worker, its input through the data converter as Temporal
// delivers it, the request built and sent to the zero-latency fake server
// through the real SDK, the reply streamed — with the worker's message
// cache (cache=on, the default) and without it (cache=off). Each op runs
// the call of turn 29, then times the call of turn 30, which adds a reply
// and its tool result: turn30-cpu-ms is the process's CPU time over that
// call (every goroutine, the collector's included), turn30-ms its wall
// time. What is left with the cache grows with the conversation by
// nature: decoding the activity's input and sending the request's bytes.
func BenchmarkModelTurn(b *testing.B) {
	for _, v := range []struct {
		name string
		text bool
	}{{"api=anthropic", false}, {"api=anthropic/tools=text", true}} {
		for _, cache := range []bool{true, false} {
			b.Run(fmt.Sprintf("%s/cache=%s", v.name, map[bool]string{true: "on", false: "off"}[cache]), func(b *testing.B) {
				srv := llmtest.NewServer(b, llmtest.WithoutDecoding())
				var p llm.Provider = anthropic.New(anthropic.Options{BaseURL: srv.URL(), APIKey: "k", Model: "claude-test"})
				if v.text {
					p = texttools.New(p)
				}
				bound := int64(0)
				if !cache {
					bound = -1
				}
				w := newModelWorker(b, p, bound)
				spec := testSpec(b.TempDir())
				conv := conversation(30)
				in := func(turn int) modelInput {
					return modelInput{RunID: "run", Spec: spec, System: "You are a test.", Messages: conv[:2*turn+1]}
				}
				srv.Script(llmtest.TextReply("ok"))
				w.call(b, in(29)) // the runtime opened
				var wall, cpu time.Duration
				b.ResetTimer()
				for range b.N {
					srv.Script(llmtest.TextReply("ok"), llmtest.TextReply("ok"))
					w.call(b, in(29))
					c0, _ := benchcpu.Now()
					t0 := time.Now()
					w.call(b, in(30))
					wall += time.Since(t0)
					c1, _ := benchcpu.Now()
					cpu += c1 - c0
				}
				b.ReportMetric(float64(wall.Microseconds())/1000/float64(b.N), "turn30-ms")
				b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "turn30-cpu-ms")
			})
		}
	}
}
