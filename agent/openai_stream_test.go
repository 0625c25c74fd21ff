package agent

import (
	"context"
	"iter"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/llm/llmtest"
	"github.com/gantry-dev/gantry/tool"
	"github.com/gantry-dev/gantry/toolset"
)

// streamTimes records, on the consumer's side of the provider, when call
// "a"'s block ended on the wire (its last argument delta), when its end
// event arrived, and when the reply ended; and, from the tool, when the
// call started.
type streamTimes struct {
	mu                          sync.Mutex
	lastDelta, endEvent, msgEnd time.Time
	started                     time.Time
}

func (s *streamTimes) set(p *time.Time, v time.Time) {
	s.mu.Lock()
	*p = v
	s.mu.Unlock()
}

func (s *streamTimes) get() streamTimes {
	s.mu.Lock()
	defer s.mu.Unlock()
	return streamTimes{lastDelta: s.lastDelta, endEvent: s.endEvent, msgEnd: s.msgEnd, started: s.started}
}

// observe wraps p: it records the times of the events of call "a" and, if
// gate is set, holds back the first argument delta of call "b" until the
// probe has started (at most gateWait). With a provider that completed
// call "a" only at the finish reason, the gate would time out: "a" ends
// after every delta of "b".
func observe(p llm.Provider, times *streamTimes, gate <-chan struct{}, gateWait time.Duration, gateMissed *bool) llm.Provider {
	return llm.ProviderFunc(func(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
		return func(yield func(llm.Event, error) bool) {
			blocks := map[int]string{}
			gated := gate == nil
			for ev, err := range p.Stream(ctx, req) {
				if err == nil {
					switch ev.Type {
					case llm.EventToolUseStart:
						blocks[ev.Index] = ev.ID
					case llm.EventToolUseDelta:
						switch blocks[ev.Index] {
						case "a":
							times.set(&times.lastDelta, time.Now())
						case "b":
							if !gated {
								gated = true
								select {
								case <-gate:
								case <-time.After(gateWait):
									*gateMissed = true
								}
							}
						}
					case llm.EventToolUseEnd:
						if ev.ID == "a" {
							times.set(&times.endEvent, time.Now())
						}
					case llm.EventMessageEnd:
						times.set(&times.msgEnd, time.Now())
					}
				}
				if !yield(ev, err) {
					return
				}
			}
		}
	})
}

// TestOpenAIReadOnlyCallStartsWhileStreaming proves that with the OpenAI
// adapter a read-only call runs while the model is still streaming the
// calls after it, for servers that number parallel calls (OpenAI) and for
// servers that give them all index 0 (Ollama).
func TestOpenAIReadOnlyCallStartsWhileStreaming(t *testing.T) {
	for _, tt := range []struct {
		name string
		opts []llmtest.Option
	}{
		{"distinct indexes", nil},
		{"index zero", []llmtest.Option{llmtest.WithIndexZero()}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// Call "b" streams its input in 4-byte chunks 5 ms apart
			// (~150 ms), so "a" can run long before the reply ends.
			opts := append([]llmtest.Option{llmtest.WithChunkSize(4), llmtest.WithChunkDelay(5 * time.Millisecond)}, tt.opts...)
			f := newFixture(t, opts...)
			f.openai = true
			long := strings.Repeat("slow ", 20)
			f.srv.Script(
				llmtest.ToolReply(
					llmtest.ToolCall{ID: "a", Name: "Probe", Input: `{"text":"a"}`},
					llmtest.ToolCall{ID: "b", Name: "Echo", Input: `{"text":"` + long + `"}`},
				),
				llmtest.TextReply("done"),
			)
			var (
				times     streamTimes
				once      sync.Once
				startedCh = make(chan struct{})
				missed    bool
			)
			probe := tool.Must(tool.NewText("Probe", "Records when it runs.", func(ctx context.Context, env *tool.Env, in echoIn) (string, error) {
				times.set(&times.started, time.Now())
				once.Do(func() { close(startedCh) })
				return "probed " + in.Text, nil
			}, tool.ReadOnly()))
			a := f.agent(t, func(o *testOpts) {
				o.Provider = observe(o.Provider, &times, startedCh, 10*time.Second, &missed)
				o.Pool = toolset.Options{Tools: append(testTools(t, nil), probe)}
			})
			_, res, err := collect(t, context.Background(), a, "go")
			if err != nil || res.Subtype != SubtypeSuccess {
				t.Fatalf("res %+v err %v", res, err)
			}
			got := times.get()
			// The gate does not delay these figures: "a" ends before the
			// first delta of "b" is held (go test -v shows them).
			t.Logf(`call "a": block end on the wire → end event %v, → start %v; started %v before the reply ended`,
				got.endEvent.Sub(got.lastDelta), got.started.Sub(got.lastDelta), got.msgEnd.Sub(got.started))
			if missed {
				t.Fatal(`call "a" did not start while call "b" was streaming`)
			}
			if got.started.IsZero() || !got.started.Before(got.msgEnd) {
				t.Fatalf("probe started at %v, the reply ended at %v", got.started, got.msgEnd)
			}
			tr := f.srv.Requests()[1].ToolResults()
			if len(tr) != 2 || tr[0].ToolUseID != "a" || tool.JoinText(tr[0].Content) != "probed a" ||
				tr[1].ToolUseID != "b" || tool.JoinText(tr[1].Content) != "echo: "+long {
				t.Fatalf("tool results %+v", tr)
			}
		})
	}
}
