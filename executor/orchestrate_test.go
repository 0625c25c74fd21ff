package executor

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gantry-dev/gantry/tool"
)

func TestSafeCallsRunInParallelInOrder(t *testing.T) {
	k := newKit(t)
	e := New(k.resolver(t), Options{Decider: allowAll()})
	// Five Gate calls can only all finish if they all run at once: each
	// waits for the release, which happens once five have started.
	go func() {
		for range 5 {
			<-k.gateIn
		}
		close(k.release)
	}()
	var calls []Call
	for i := range 5 {
		calls = append(calls, call(fmt.Sprint("g", i), "Gate", fmt.Sprintf(`{"id":"g%d"}`, i)))
	}
	b := run(t, e, calls...)
	for i, o := range b.Outcomes {
		if o.Kind != KindOK || text(o) != fmt.Sprint("released g", i) {
			t.Errorf("outcome %d: %s", i, text(o))
		}
	}
	if k.probe.maxSeen() != 5 {
		t.Errorf("max concurrency %d, want 5", k.probe.maxSeen())
	}
}

func TestConcurrencyCap(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
		want int
	}{
		{"option", Options{MaxConcurrency: 2}, 2},
		{"env", Options{Getenv: func(string) string { return "3" }}, 3},
		{"option beats env", Options{MaxConcurrency: 1, Getenv: func(string) string { return "3" }}, 1},
		{"bad env ignored", Options{Getenv: func(string) string { return "lots" }}, DefaultMaxConcurrency},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := newKit(t)
			o := tc.opts
			o.Decider = allowAll()
			e := New(k.resolver(t), o)
			if e.MaxConcurrency() != tc.want {
				t.Fatalf("MaxConcurrency %d, want %d", e.MaxConcurrency(), tc.want)
			}
			var calls []Call
			for i := range 12 {
				calls = append(calls, call(fmt.Sprint(i), "Sleep", `{"ms":5}`))
			}
			run(t, e, calls...)
			if got := k.probe.maxSeen(); got > tc.want {
				t.Errorf("max concurrency %d > cap %d", got, tc.want)
			}
		})
	}
}

func TestUnsafeCallsRunAloneInOrder(t *testing.T) {
	k := newKit(t)
	e := New(k.resolver(t), Options{Decider: allowAll()})
	b := run(t, e,
		call("s1", "Sleep", `{"ms":20,"id":"s1"}`),
		call("s2", "Sleep", `{"ms":20,"id":"s2"}`),
		call("w1", "Store", `{"ms":5,"id":"w1"}`),
		call("s3", "Sleep", `{"ms":1,"id":"s3"}`),
		call("w2", "Store", `{"ms":1,"id":"w2"}`),
		call("w3", "Store", `{"ms":1,"id":"w3"}`),
	)
	k.probe.mu.Lock()
	started := strings.Join(k.probe.started, ",")
	k.probe.mu.Unlock()
	// s1 and s2 may start in either order; everything after is ordered.
	if !strings.HasSuffix(started, ",w1,s3,w2,w3") {
		t.Errorf("start order %s", started)
	}
	for _, o := range b.Outcomes {
		if o.Kind != KindOK {
			t.Errorf("%s: %s", o.ID, text(o))
		}
	}
}

func TestContextModifiersApplyInOrder(t *testing.T) {
	k := newKit(t)
	e := New(k.resolver(t), Options{Decider: allowAll()})
	s := NewSharedEnv(&tool.Env{WorkDir: "/w"})
	b, err := e.Run(context.Background(), s, []Call{
		call("1", "Cd", `{"id":"a","ms":0}`),
		call("2", "Cd", `{"id":"b","ms":0}`),
		call("3", "Store", `{"id":"x","ms":0}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"cd a from /w", "cd b from /w/a", "wrote x in /w/a/b"}
	for i, o := range b.Outcomes {
		if text(o) != want[i] {
			t.Errorf("%d: %q, want %q", i, text(o), want[i])
		}
	}
	if got := s.Env().WorkDir; got != "/w/a/b" {
		t.Errorf("session WorkDir %q", got)
	}
}

func TestSiblingCancellation(t *testing.T) {
	k := newKit(t)
	e := New(k.resolver(t), Options{Decider: allowAll(), MaxConcurrency: 3})
	b := run(t, e,
		call("g1", "Gate", `{"id":"g1"}`),
		call("f", "Fail", `{"ms":20,"id":"f"}`),
		call("g2", "Gate", `{"id":"g2"}`),
		call("g3", "Gate", `{"id":"g3"}`), // queued by the cap: never starts
		call("w", "Store", `{"id":"w","ms":0}`),
	)
	kinds := []Kind{KindSiblingFailed, KindToolError, KindSiblingFailed, KindSiblingFailed, KindOK}
	for i, o := range b.Outcomes {
		if o.Kind != kinds[i] {
			t.Errorf("%s: kind %q, want %q: %s", o.ID, o.Kind, kinds[i], text(o))
		}
	}
	for _, i := range []int{0, 2, 3} {
		if msg := text(b.Outcomes[i]); !strings.Contains(msg, "parallel call (Fail, id f) failed") || !strings.Contains(msg, "exit status 1") {
			t.Errorf("sibling message %q", msg)
		}
	}
	if !strings.Contains(text(b.Outcomes[3]), "was not run") || !strings.Contains(text(b.Outcomes[0]), "was stopped") {
		t.Errorf("started/not started wording: %q / %q", text(b.Outcomes[0]), text(b.Outcomes[3]))
	}
}

func TestInterruptEveryCallGetsAResult(t *testing.T) {
	k := newKit(t)
	e := New(k.resolver(t), Options{Decider: allowAll()})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-k.gateIn
		cancel()
	}()
	b, err := e.Run(ctx, session(), []Call{
		call("b", "Block", `{"ms":30}`),
		call("g", "Gate", `{"id":"g"}`),
		call("w", "Store", `{"id":"w","ms":0}`),
		call("n", "Noop", `{}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	if !b.Interrupted {
		t.Error("batch not marked interrupted")
	}
	want := []Kind{KindOK, KindCancelled, KindCancelled, KindCancelled}
	for i, o := range b.Outcomes {
		if o.Kind != want[i] {
			t.Errorf("%s: kind %q, want %q: %s", o.ID, o.Kind, want[i], text(o))
		}
		if i > 0 && !strings.Contains(text(o), "cancelled by the user") {
			t.Errorf("%s: %q", o.ID, text(o))
		}
	}
	if !strings.Contains(text(b.Outcomes[2]), "was not run") {
		t.Errorf("queued call: %q", text(b.Outcomes[2]))
	}
}

// TestInterruptBlockToolRunsUntilItsDeadline runs in a synctest bubble: the timeouts and sleeps run on the
// fake clock.
func TestInterruptBlockToolRunsUntilItsDeadline(t *testing.T) {
	synctest.Test(t, testInterruptBlockToolRunsUntilItsDeadline)
}

func testInterruptBlockToolRunsUntilItsDeadline(t *testing.T) {
	k := newKit(t)
	e := New(k.resolver(t), Options{Decider: allowAll(), DefaultTimeout: 40 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	// Cancelled before it starts: never runs.
	b, _ := e.Run(ctx, session(), []Call{call("b", "Block", `{"ms":1}`)})
	if b.Outcomes[0].Kind != KindCancelled {
		t.Errorf("kind %q", b.Outcomes[0].Kind)
	}
	// Started, then interrupted: runs on, but still bounded by its deadline.
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	e = New(k.resolver(t), Options{Decider: allowAll(), DefaultTimeout: 40 * time.Millisecond, Status: func(s tool.Status) {
		if s.Phase == tool.PhaseDoing {
			cancel() // the user interrupts while it runs
		}
	}})
	st := e.Stream(ctx, session())
	st.Add(call("b", "Block", `{"ms":5000}`))
	b = st.Wait()
	if o := b.Outcomes[0]; o.Kind != KindTimeout {
		t.Errorf("kind %q: %s", o.Kind, text(o))
	}
}

func TestStopOnInterruptDecision(t *testing.T) {
	k := newKit(t)
	asked := 0
	e := New(k.resolver(t), Options{CanUseTool: func(ctx context.Context, req *permissionRequest, s permissionDecision) (permissionDecision, error) {
		asked++
		return permissionDecision{Behavior: tool.Deny, Interrupt: true, Reason: "stop now"}, nil
	}})
	b := run(t, e, call("w1", "Store", `{"id":"1","ms":0}`), call("w2", "Store", `{"id":"2","ms":0}`))
	if !b.Stop || b.StopReason != "stop now" || asked != 1 {
		t.Fatalf("stop %v %q asked %d", b.Stop, b.StopReason, asked)
	}
	if o := b.Outcomes[1]; o.Kind != KindCancelled || !strings.Contains(text(o), "the run was stopped") {
		t.Errorf("second call: %q %s", o.Kind, text(o))
	}
}

// TestStatsAndSignals runs in a synctest bubble: the timeouts and sleeps run on the
// fake clock.
func TestStatsAndSignals(t *testing.T) { synctest.Test(t, testStatsAndSignals) }

func testStatsAndSignals(t *testing.T) {
	k := newKit(t)
	var mu sync.Mutex
	var got []Signal
	e := New(k.resolver(t), Options{Decider: allowAll(), DefaultTimeout: 100 * time.Millisecond, OnSignal: func(s Signal) { mu.Lock(); got = append(got, s); mu.Unlock() }})
	// The same error three times (differing only in a number).
	var sigs []Signal
	for i := range 3 {
		b := run(t, e, call(fmt.Sprint("f", i), "Fail", fmt.Sprintf(`{"ms":0,"id":"%d"}`, i)))
		sigs = append(sigs, b.Signals...)
	}
	if len(sigs) != 1 || sigs[0].Kind != SignalRepeatedError || sigs[0].Tool != "Fail" || sigs[0].Count != 3 || sigs[0].ToolUseID != "f2" {
		t.Fatalf("signals %+v", sigs)
	}
	// Three consecutive timeouts.
	b := run(t, e, call("t1", "Sleep", `{"ms":1000}`), call("t2", "Sleep", `{"ms":1000}`), call("t3", "Sleep", `{"ms":1000}`))
	if len(b.Signals) != 1 || b.Signals[0].Kind != SignalRepeatedTimeout || b.Signals[0].Count != 3 {
		t.Fatalf("timeout signals %+v", b.Signals)
	}
	// A success in between resets the timeout count.
	run(t, e, call("t4", "Sleep", `{"ms":1000}`), call("ok", "Sleep", `{"ms":0}`), call("t5", "Sleep", `{"ms":1000}`))
	mu.Lock()
	if len(got) != 2 {
		t.Errorf("callback got %d signals", len(got))
	}
	mu.Unlock()

	e2 := New(k.resolver(t), Options{})
	run(t, e2, call("d", "Checked", `{"text":"secret"}`), call("c", "Checked", `{"text":"fine"}`))
	c := e2.Stats().Snapshot().Tools["Checked"]
	if c.Calls != 2 || c.Denials != 1 || c.Successes != 1 {
		t.Errorf("Checked stats %+v", c)
	}
	snap := e.Stats().Snapshot()
	f := snap.Tools["Fail"]
	if f.Calls != 3 || f.Errors != 3 || f.Successes != 0 || f.Timeouts != 0 {
		t.Errorf("Fail stats %+v", f)
	}
	s := snap.Tools["Sleep"]
	if s.Calls != 6 || s.Timeouts != 5 || s.Errors != 5 || s.Successes != 1 || s.P95 < s.P50 || s.Mean <= 0 || s.TotalDuration <= 0 {
		t.Errorf("Sleep stats %+v", s)
	}
}

func TestPercentiles(t *testing.T) {
	s := newStats(3, 3)
	for i := 1; i <= 100; i++ {
		s.record(&Outcome{Tool: "T", Result: tool.TextResult("x"), Start: time.Unix(1, 0), Duration: time.Duration(i) * time.Millisecond})
	}
	ts := s.Snapshot().Tools["T"]
	if ts.P50 != 50*time.Millisecond || ts.P95 != 95*time.Millisecond || ts.Mean != 50500*time.Microsecond {
		t.Errorf("%+v", ts)
	}
	// The reservoir keeps the latest durations.
	for range 300 {
		s.record(&Outcome{Tool: "T", Result: tool.TextResult("x"), Start: time.Unix(1, 0), Duration: time.Second})
	}
	if ts := s.Snapshot().Tools["T"]; ts.P50 != time.Second || ts.Calls != 400 {
		t.Errorf("%+v", ts)
	}
	// It grows with the calls, up to its size.
	if n := len(s.tools["T"].ring); n != reservoirSize {
		t.Errorf("reservoir of %d durations, want %d", n, reservoirSize)
	}
	s.record(&Outcome{Tool: "U", Result: tool.TextResult("x"), Start: time.Unix(1, 0), Duration: time.Second})
	if n := cap(s.tools["U"].ring); n > 8 {
		t.Errorf("one call reserved %d durations", n)
	}
}

func TestNormalizeError(t *testing.T) {
	a := normalizeError("open /tmp/x123: no such file (id 3f2a9c1b-77e0)")
	b := normalizeError("open  /tmp/x9:  No such file (id 0d1e2f3a-0000)")
	if a != b {
		t.Errorf("%q != %q", a, b)
	}
	if normalizeError("permission denied") == normalizeError("file not found") {
		t.Error("different errors share a signature")
	}
}

func TestRunNeedsSession(t *testing.T) {
	e := New(nil, Options{})
	if _, err := e.Run(context.Background(), nil, nil); err == nil {
		t.Fatal("no error for a nil session")
	}
	if _, err := NewMapResolver(tool.Must(tool.NewNoInput("A", "a", nil2)), tool.Must(tool.NewNoInput("A", "a", nil2))); err == nil {
		t.Fatal("duplicate names accepted")
	}
}

func nil2(context.Context, *tool.Env) (*tool.Result, error) { return nil, errors.New("x") }
