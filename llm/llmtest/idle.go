package llmtest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/llm"
)

// RunIdleTimeoutTests checks an adapter's use of [llm.RetryPolicy.IdleTimeout]
// through its real SDK: a stream that goes silent is abandoned after the
// timeout — before any event it is retried (and fails with a clear error
// when every attempt stalls), after some events it fails as interrupted —
// while a slow but living stream and a slow consumer are not cut.
// newProvider builds the adapter under test for srv with policy.
//
// The watchdog runs on the wall clock, and so do these cases: a case in
// which nothing ever arrives is cut after idle whatever the machine's
// load, but a case in which something must get through depends on how
// late a loaded machine delivers it — with two saturated cores and -race,
// the first event of a stream and paced events came more than twice the
// former margin late (see docs/design.md, llm). Those cases get liveIdle,
// a margin of about three times what was seen, and the cases
// run in parallel so that the test does not take longer for it. A slow
// but living stream still lasts longer than its timeout (checked), so a
// watchdog timing the whole stream rather than each silence would cut it.
func RunIdleTimeoutTests(t *testing.T, newProvider func(srv *Server, policy llm.RetryPolicy) llm.Provider) {
	const (
		idle     = 150 * time.Millisecond
		liveIdle = time.Second
	)
	text := []llm.Block{llm.Text("a reply in several pieces")}
	cases := []struct {
		name      string
		idle      time.Duration
		replies   []Reply
		consumer  time.Duration // time spent on the first event
		wantErr   []error       // nil: success
		wantRetry int
		outlive   bool // the stream must last longer than the idle timeout
	}{
		{name: "headers never come, every attempt", idle: idle, wantErr: []error{llm.ErrIdleTimeout, llm.ErrConnection}, wantRetry: 1,
			replies: []Reply{{Content: text, HeaderDelay: 5 * time.Second}, {Content: text, HeaderDelay: 5 * time.Second}}},
		{name: "headers late once, then retried", idle: liveIdle, wantRetry: 1,
			replies: []Reply{{Content: text, HeaderDelay: 5 * time.Second}, {Content: text}}},
		{name: "stalls mid-stream", idle: liveIdle, wantErr: []error{llm.ErrIdleTimeout, llm.ErrInterrupted},
			replies: []Reply{{Content: text, StallAfter: 4}}},
		{name: "slow but alive", idle: liveIdle, outlive: true, replies: []Reply{{Content: text, ChunkDelay: liveIdle / 8}}},
		{name: "slow consumer", idle: liveIdle, consumer: liveIdle + liveIdle/4, replies: []Reply{{Content: text, ChunkSize: 12}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := NewServer(t, WithChunkSize(4))
			srv.Script(c.replies...)
			var mu sync.Mutex
			retries := 0
			p := newProvider(srv, llm.RetryPolicy{
				MaxAttempts: 2, IdleTimeout: c.idle, Jitter: func() float64 { return 0 },
				Sleep: func(ctx context.Context, d time.Duration) error {
					mu.Lock()
					retries++
					mu.Unlock()
					return ctx.Err()
				},
			})
			start := time.Now()
			var err error
			var acc llm.Accumulator
			for ev, e := range p.Stream(t.Context(), &llm.Request{Model: "test-model", Messages: []llm.Message{llm.UserText("hi")}}) {
				if e != nil {
					err = e
					break
				}
				acc.Add(ev)
				time.Sleep(c.consumer)
				c.consumer = 0
			}
			if c.wantErr == nil {
				if err != nil || acc.Response().Message.Text() != "a reply in several pieces" {
					t.Fatalf("err %v, reply %q", err, acc.Response().Message.Text())
				}
				if el := time.Since(start); c.outlive && el <= c.idle {
					t.Fatalf("the stream took %v, not longer than the idle timeout %v: the case tests nothing", el, c.idle)
				}
			} else {
				for _, w := range c.wantErr {
					if !errors.Is(err, w) {
						t.Fatalf("err %v, want %v", err, w)
					}
				}
				if el := time.Since(start); el > 3*time.Second {
					t.Fatalf("took %v: the watchdog did not cut the stall", el)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if retries != c.wantRetry {
				t.Fatalf("%d retries, want %d", retries, c.wantRetry)
			}
		})
	}
}
