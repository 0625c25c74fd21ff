package executor

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/tool"
)

// BenchmarkDispatchNoop measures the whole pipeline for a no-op tool with
// no hooks and an allow decision.
func BenchmarkDispatchNoop(b *testing.B) {
	k := newKit(b)
	e := New(k.resolver(b), WithDecider(allowAll()))
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
	e := New(k.resolver(b), WithDecider(allowAll()))
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
	e := New(k.resolver(b), WithDecider(allowAll()))
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
	e := New(r, WithDecider(allowAll()))
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
