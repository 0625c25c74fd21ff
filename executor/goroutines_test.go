package executor

import (
	"bytes"
	"context"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// labelled counts the live goroutines that carry the pprof label
// gtest=label (goroutines inherit their creator's labels).
func labelled(t *testing.T, label string) int {
	t.Helper()
	var b bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&b, 1); err != nil {
		t.Fatal(err)
	}
	want := `"gtest":"` + label + `"`
	n := 0
	for _, group := range strings.Split(b.String(), "\n\n") {
		if !strings.Contains(group, want) {
			continue
		}
		head, _, _ := strings.Cut(group, " @ ")
		count := head[strings.LastIndexByte(head, '\n')+1:]
		c, err := strconv.Atoi(strings.TrimSpace(count))
		if err != nil {
			t.Fatalf("goroutine profile group %q: %v", group, err)
		}
		n += c
	}
	return n
}

// eventually polls cond for up to five seconds.
func eventually(cond func() bool) bool {
	for range 500 {
		if cond() {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return cond()
}

// The goroutine model: a running call costs one goroutine besides the
// caller's. A stream runs the pipeline and the tool's Call on the goroutine
// it starts for the call; Run runs the pipeline on the caller's goroutine
// and the tool on one of its own (so that the caller can leave a call that
// ignores cancellation). Nothing is left once the batch is done.
func TestGoroutinesPerRunningCall(t *testing.T) {
	tests := []struct {
		name  string
		calls int
		run   bool
		want  int // the caller's goroutine included
	}{
		{"stream, one call", 1, false, 2},
		{"stream, three parallel reads", 3, false, 4},
		{"run, one call", 1, true, 2},
		{"run, three parallel reads", 3, true, 4},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			k := newKit(t)
			e := New(k.resolver(t), Options{Decider: allowAll()})
			var calls []Call
			for c := range tc.calls {
				id := strconv.Itoa(c)
				calls = append(calls, call(id, "Gate", `{"id":"`+id+`"}`))
			}
			label := "per-call-" + strconv.Itoa(i)
			done := make(chan *Batch, 1)
			pprof.Do(context.Background(), pprof.Labels("gtest", label), func(ctx context.Context) {
				go func() {
					if tc.run {
						b, _ := e.Run(ctx, session(), calls)
						done <- b
						return
					}
					st := e.Stream(ctx, session())
					for _, c := range calls {
						st.Add(c)
					}
					done <- st.Wait()
				}()
			})
			for range tc.calls {
				<-k.gateIn
			}
			if got := labelled(t, label); got != tc.want {
				t.Errorf("%d goroutines while %d calls run, want %d", got, tc.calls, tc.want)
			}
			close(k.release)
			b := <-done
			for _, o := range b.Outcomes {
				if o.Kind != KindOK || !strings.HasPrefix(text(o), "released ") {
					t.Errorf("outcome %s: %s %s", o.ID, o.Kind, text(o))
				}
			}
			if !eventually(func() bool { return labelled(t, label) == 0 }) {
				t.Errorf("%d goroutines left after the batch", labelled(t, label))
			}
		})
	}
}

// A stream's call that ignores its cancellation is abandoned: its outcome
// is given, the next call runs and Wait returns while the tool still runs
// on the call's goroutine (which ends when the tool returns).
// TestStreamAbandonsStubbornCall runs in a synctest bubble: the timeouts
// and sleeps run on the fake clock, and the stubborn tool returns only
// when the test has stopped running.
func TestStreamAbandonsStubbornCall(t *testing.T) { synctest.Test(t, testStreamAbandonsStubbornCall) }

func testStreamAbandonsStubbornCall(t *testing.T) {
	k := newKit(t)
	e := New(k.resolver(t), Options{Decider: allowAll(), DefaultTimeout: 10 * time.Millisecond, AbandonAfter: 10 * time.Millisecond})
	st := e.Stream(context.Background(), session())
	st.Add(call("1", "Stubborn", `{"ms":1500}`))
	st.Add(call("2", "Store", `{"id":"w"}`)) // not concurrency-safe: waits for 1 to end
	b := st.Wait()
	if k.ignored.Load() != 0 {
		t.Fatal("Wait waited for the stubborn tool to return")
	}
	if o := b.Outcomes[0]; o.Kind != KindTimeout || !strings.Contains(text(o), "abandoned") {
		t.Errorf("stubborn call: %s %s", o.Kind, text(o))
	}
	if o := b.Outcomes[1]; o.Kind != KindOK || text(o) != "wrote w in /w" {
		t.Errorf("next call: %s %s", o.Kind, text(o))
	}
	// The stubborn tool returns when its own sleep ends, on the fake
	// clock: then, and only then, its goroutine is gone.
	time.Sleep(1500 * time.Millisecond)
	synctest.Wait()
	if k.ignored.Load() != 1 {
		t.Fatal("the stubborn tool did not return when its sleep ended")
	}
}
