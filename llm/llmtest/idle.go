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
func RunIdleTimeoutTests(t *testing.T, newProvider func(srv *Server, policy llm.RetryPolicy) llm.Provider) {
	const idle = 150 * time.Millisecond
	text := []llm.Block{llm.Text("a reply in several pieces")}
	cases := []struct {
		name      string
		replies   []Reply
		consumer  time.Duration // time spent on each event
		wantErr   []error       // nil: success
		wantRetry int
	}{
		{name: "headers never come, every attempt", wantErr: []error{llm.ErrIdleTimeout, llm.ErrConnection}, wantRetry: 1,
			replies: []Reply{{Content: text, HeaderDelay: 5 * time.Second}, {Content: text, HeaderDelay: 5 * time.Second}}},
		{name: "headers late once, then retried", wantRetry: 1,
			replies: []Reply{{Content: text, HeaderDelay: 5 * time.Second}, {Content: text}}},
		{name: "stalls mid-stream", wantErr: []error{llm.ErrIdleTimeout, llm.ErrInterrupted},
			replies: []Reply{{Content: text, StallAfter: 4}}},
		{name: "slow but alive", replies: []Reply{{Content: text, ChunkDelay: idle / 3}}},
		{name: "slow consumer", consumer: idle * 2, replies: []Reply{{Content: text, ChunkSize: 12}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := NewServer(t, WithChunkSize(4))
			srv.Script(c.replies...)
			var mu sync.Mutex
			retries := 0
			p := newProvider(srv, llm.RetryPolicy{
				MaxAttempts: 2, IdleTimeout: idle, Jitter: func() float64 { return 0 },
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
			}
			if c.wantErr == nil {
				if err != nil || acc.Response().Message.Text() != "a reply in several pieces" {
					t.Fatalf("err %v, reply %q", err, acc.Response().Message.Text())
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
