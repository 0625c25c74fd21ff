package executor

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/tool"
)

// BenchmarkDispatchNoop measures the whole pipeline for a no-op tool with
// no hooks and an allow decision.
func BenchmarkDispatchNoop(b *testing.B) {
	k := newKit(b)
	e := New(k.resolver(b), Options{Decider: allowAll()})
	s := session()
	calls := []Call{call("toolu_1", "Noop", `{}`)}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		bt, _ := e.Run(ctx, s, calls)
		if bt.Outcomes[0].Kind != KindOK {
			b.Fatal(text(bt.Outcomes[0]))
		}
	}
}

// BenchmarkDispatchTyped is the same with a typed tool and a non-empty input
// that must be validated against its schema.
func BenchmarkDispatchTyped(b *testing.B) {
	k := newKit(b)
	e := New(k.resolver(b), Options{Decider: allowAll()})
	s := session()
	calls := []Call{call("toolu_1", "Echo", `{"text":"hello","flag":true,"count":3}`)}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		bt, _ := e.Run(ctx, s, calls)
		if bt.Outcomes[0].Kind != KindOK {
			b.Fatal(text(bt.Outcomes[0]))
		}
	}
}

// BenchmarkParallel10x100ms runs one message of 10 concurrency-safe calls
// of 100 ms each (goal: about 100 ms wall per op).
func BenchmarkParallel10x100ms(b *testing.B) {
	k := newKit(b)
	e := New(k.resolver(b), Options{Decider: allowAll()})
	s := session()
	var calls []Call
	for i := range 10 {
		calls = append(calls, call(fmt.Sprint("t", i), "Sleep", `{"ms":100}`))
	}
	ctx := context.Background()
	for b.Loop() {
		bt, _ := e.Run(ctx, s, calls)
		for _, o := range bt.Outcomes {
			if o.Kind != KindOK {
				b.Fatal(text(o))
			}
		}
	}
}

// BenchmarkStreamAddToStart measures the time from Add of a safe call (its
// block closed in the model's stream) to the tool starting, reported as the
// add-to-start-ns metric.
func BenchmarkStreamAddToStart(b *testing.B) {
	started := make(chan time.Time, 1)
	st := tool.Must(tool.NewNoInput("Mark", "marks its start", func(ctx context.Context, env *tool.Env) (*tool.Result, error) {
		started <- time.Now()
		return tool.TextResult("ok"), nil
	}, tool.ReadOnly()))
	r, _ := NewMapResolver(st)
	e := New(r, Options{Decider: allowAll()})
	s := session()
	ctx := context.Background()
	var total time.Duration
	n := 0
	for b.Loop() {
		stream := e.Stream(ctx, s)
		t0 := time.Now()
		stream.Add(call("m", "Mark", `{}`))
		total += (<-started).Sub(t0)
		n++
		stream.Wait()
	}
	b.ReportMetric(float64(total.Nanoseconds())/float64(n), "add-to-start-ns")
}

// BenchmarkPartialChunk measures what [Stream.Partial] adds per streamed
// chunk of a call's input (4 KB in 16-byte chunks) when no tool observes
// partial input: without a status receiver, and with one (a WAIT event
// every 512 bytes). One op is one chunk.
func BenchmarkPartialChunk(b *testing.B) {
	input := []byte(`{"text":"` + strings.Repeat("x", 4096) + `"}`)
	const chunk = 16
	for _, withStatus := range []bool{false, true} {
		b.Run(map[bool]string{false: "no-status", true: "status"}[withStatus], func(b *testing.B) {
			k := newKit(b)
			opts := Options{Decider: allowAll()}
			if withStatus {
				opts.Status = func(tool.Status) {}
			}
			e := New(k.resolver(b), opts)
			st := e.Stream(context.Background(), session())
			defer st.Discard()
			var id string
			calls, n := 0, 0
			b.ReportAllocs()
			for b.Loop() {
				if n == 0 {
					calls++
					id = fmt.Sprint("c", calls)
					st.Partial(id, "Echo", nil)
				}
				n = min(n+chunk, len(input))
				st.Partial(id, "Echo", input[:n])
				if n == len(input) {
					n = 0
				}
			}
		})
	}
}

// BenchmarkDispatchBackfill measures the pipeline for a tool that
// backfills an absolute path (hooks and permission see it), against the
// same tool without the backfill.
func BenchmarkDispatchBackfill(b *testing.B) {
	type in struct {
		Path string `json:"path"`
	}
	for _, backfill := range []bool{false, true} {
		b.Run(map[bool]string{false: "none", true: "backfill"}[backfill], func(b *testing.B) {
			var opts []tool.Option
			if backfill {
				opts = append(opts, tool.BackfillFunc(func(env *tool.Env, x *in) {
					if !strings.HasPrefix(x.Path, "/") {
						x.Path = env.WorkDir + "/" + x.Path
					}
				}))
			}
			open := tool.Must(tool.NewText("Open", "Opens.", func(context.Context, *tool.Env, in) (string, error) { return "ok", nil }, opts...))
			r, _ := NewMapResolver(open)
			e := New(r, Options{Decider: allowAll()})
			s := session()
			calls := []Call{call("toolu_1", "Open", `{"path":"main.go"}`)}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				bt, _ := e.Run(ctx, s, calls)
				if o := bt.Outcomes[0]; o.Kind != KindOK || (o.Observable != nil) != backfill {
					b.Fatal(text(o))
				}
			}
		})
	}
}
