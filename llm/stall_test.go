package llm_test

import (
	"context"
	"errors"
	"iter"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/llm"
)

// TestStallRetriedOnce: an attempt that hears nothing (no headers, or a
// stream gone quiet before any event) is retried once, then reported as
// an idle timeout, whatever MaxAttempts allows; StallRetries changes it.
func TestStallRetriedOnce(t *testing.T) {
	for _, tc := range []struct {
		stallRetries, wantAttempts int
	}{{0, 2}, {2, 3}, {-1, 1}} {
		calls := 0
		stall := func(ctx context.Context) iter.Seq2[llm.Event, error] {
			return func(yield func(llm.Event, error) bool) {
				calls++
				<-ctx.Done()
				yield(llm.Event{}, llm.ErrConnection)
			}
		}
		p := llm.RetryPolicy{MaxAttempts: 10, IdleTimeout: 30 * time.Millisecond, StallRetries: tc.stallRetries,
			Sleep: func(context.Context, time.Duration) error { return nil }}
		_, err := llm.Collect(llm.Retry(t.Context(), p, stall))
		if !errors.Is(err, llm.ErrIdleTimeout) || calls != tc.wantAttempts {
			t.Errorf("StallRetries %d: %d attempts (want %d), err %v", tc.stallRetries, calls, tc.wantAttempts, err)
		}
	}
	if llm.DefaultIdleTimeout != 60*time.Second {
		t.Errorf("DefaultIdleTimeout %v", llm.DefaultIdleTimeout)
	}
}
