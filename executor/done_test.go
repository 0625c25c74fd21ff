package executor

import (
	"context"
	"testing"
	"time"
)

// TestStreamDone: Done is closed only once the stream is closed and every
// call has its outcome; it is closed at once for an empty closed stream and
// after Discard.
func TestStreamDone(t *testing.T) {
	closedWithin := func(ch <-chan struct{}, d time.Duration) bool {
		select {
		case <-ch:
			return true
		case <-time.After(d):
			return false
		}
	}
	t.Run("waits for running calls", func(t *testing.T) {
		k := newKit(t)
		e := New(k.resolver(t), Options{Decider: allowAll()})
		st := e.Stream(context.Background(), session())
		done := st.Done()
		st.Add(call("g", "Gate", `{"id":"g"}`))
		<-k.gateIn
		if closedWithin(done, 10*time.Millisecond) {
			t.Fatal("Done closed before Close")
		}
		st.Close()
		if closedWithin(done, 10*time.Millisecond) {
			t.Fatal("Done closed while a call runs")
		}
		close(k.release)
		if !closedWithin(done, 5*time.Second) {
			t.Fatal("Done not closed after the last outcome")
		}
		if b := st.Wait(); len(b.Outcomes) != 1 || text(b.Outcomes[0]) != "released g" {
			t.Fatalf("outcomes %+v", b.Outcomes)
		}
	})
	t.Run("empty", func(t *testing.T) {
		k := newKit(t)
		st := New(k.resolver(t), Options{Decider: allowAll()}).Stream(context.Background(), session())
		st.Close()
		if !closedWithin(st.Done(), time.Second) {
			t.Fatal("Done not closed for an empty closed stream")
		}
		st.Wait()
	})
	t.Run("discard", func(t *testing.T) {
		k := newKit(t)
		st := New(k.resolver(t), Options{Decider: allowAll()}).Stream(context.Background(), session())
		done := st.Done()
		st.Add(call("n", "Noop", `{}`))
		st.Discard()
		if !closedWithin(done, 5*time.Second) {
			t.Fatal("Done not closed after Discard")
		}
	})
}
