package openai_test

import (
	"errors"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/llm/llmtest"
	"github.com/gantry-dev/gantry/llm/openai"
)

// TestIdleTimeout: a stream that goes silent is abandoned after the
// policy's IdleTimeout, through the real SDK: before any event it is
// retried (and fails with a clear error when every attempt stalls), after
// some events it fails as interrupted. A slow but living stream and a slow
// consumer are not cut.
func TestIdleTimeout(t *testing.T) {
	const idle = 150 * time.Millisecond
	text := []llm.Block{llm.Text("a reply in several pieces")}
	cases := []struct {
		name      string
		replies   []llmtest.Reply
		consumer  time.Duration // time spent on each event
		wantErr   []error       // nil: success
		wantSleep int           // retries
	}{
		{name: "headers never come, every attempt", wantErr: []error{llm.ErrIdleTimeout, llm.ErrConnection}, wantSleep: 1,
			replies: []llmtest.Reply{{Content: text, HeaderDelay: 5 * time.Second}, {Content: text, HeaderDelay: 5 * time.Second}}},
		{name: "headers late once, then retried", wantSleep: 1,
			replies: []llmtest.Reply{{Content: text, HeaderDelay: 5 * time.Second}, {Content: text}}},
		{name: "stalls mid-stream", wantErr: []error{llm.ErrIdleTimeout, llm.ErrInterrupted},
			replies: []llmtest.Reply{{Content: text, StallAfter: 4}}},
		{name: "slow but alive", replies: []llmtest.Reply{{Content: text, ChunkDelay: idle / 3}}},
		{name: "slow consumer", consumer: idle * 2, replies: []llmtest.Reply{{Content: text, ChunkSize: 12}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := llmtest.NewServer(t, llmtest.WithChunkSize(4))
			srv.Script(c.replies...)
			sl := &sleeps{}
			p := newProvider(t, srv, sl, openai.WithRetry(llm.RetryPolicy{
				MaxAttempts: 2, IdleTimeout: idle, Sleep: sl.sleep, Jitter: func() float64 { return 0 },
			}))
			start := time.Now()
			var err error
			var acc llm.Accumulator
			for ev, e := range p.Stream(t.Context(), userReq("hi")) {
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
			if got := len(sl.got()); got != c.wantSleep {
				t.Fatalf("%d retries, want %d", got, c.wantSleep)
			}
		})
	}
}
