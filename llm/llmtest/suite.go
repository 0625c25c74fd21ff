package llmtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/tool"
)

// TestAPIKey is the API key a [ProviderFactory] gives the adapter; the
// suite checks that requests carry it.
const TestAPIKey = "test-key"

// ProviderConfig is what a [ProviderFactory] builds the adapter under test
// from. Every field is set by the suite.
type ProviderConfig struct {
	// BaseURL is the fake server's address for the adapter's API
	// ([Server.URL] for Anthropic, [Server.OpenAIURL] for OpenAI).
	BaseURL string
	// APIKey is [TestAPIKey].
	APIKey string
	// Client is the HTTP client to send with: the server's client, or one
	// whose transport replays a recorded stream in a benchmark.
	Client *http.Client
	// Retry is the retry policy; its Sleep records the delays instead of
	// waiting and its Jitter is zero, so no test waits for a retry.
	Retry llm.RetryPolicy
}

// ProviderFactory builds the adapter under test. It must give the adapter
// every field of c and an environment look-up that finds nothing, and set
// nothing else, so that the adapter's defaults are what the suite checks.
type ProviderFactory func(c ProviderConfig) llm.Provider

// ClientErrorCase is one error reply that must not be retried: the
// adapter must return an [*llm.APIError] with the reply's status, type and
// message that is Is.
type ClientErrorCase struct {
	Reply Reply
	Is    error
}

// ProviderSuite describes an adapter for [RunProviderSuite] and
// [RunStreamBenchmark].
type ProviderSuite struct {
	// API is the wire API the adapter speaks, as in [Request.API]:
	// "anthropic" or "openai".
	API string
	// New builds the adapter.
	New ProviderFactory
	// DefaultMaxTokens is the max_tokens the adapter sends for a request
	// that sets none.
	DefaultMaxTokens int
	// ClientErrors are the API's ways of saying no (bad request, auth,
	// unknown model, context too long): none may be retried. Each is
	// checked with the shared assertions; the table is the adapter's
	// because each API spells its errors its own way.
	ClientErrors []ClientErrorCase
}

// RunProviderSuite runs the behaviour both adapters share through the
// adapter's real SDK client over HTTP against a [Server]: streaming text
// in many pieces, parallel tool calls (each complete before the next
// starts), invalid tool input, retries and their delays, giving up,
// client errors not retried, a stream dropped or failing mid-way, context
// cancellation, breaking out of the stream, [llm.Collect], and the idle
// timeout (see [RunIdleTimeoutTests]). What an API maps differently (the
// request body, thinking, the environment variables) stays in the
// adapter's own tests.
func RunProviderSuite(t *testing.T, s ProviderSuite) {
	switch s.API {
	case "anthropic", "openai":
	default:
		t.Fatalf("ProviderSuite.API = %q, want anthropic or openai", s.API)
	}
	t.Run("StreamText", func(t *testing.T) { suiteStreamText(t, s) })
	t.Run("ParallelToolCalls", func(t *testing.T) { suiteParallelToolCalls(t, s) })
	t.Run("InvalidToolInput", func(t *testing.T) { suiteInvalidToolInput(t, s) })
	t.Run("Retry", func(t *testing.T) { suiteRetry(t, s) })
	t.Run("RetryGivesUp", func(t *testing.T) { suiteRetryGivesUp(t, s) })
	t.Run("NoRetryOnClientErrors", func(t *testing.T) { suiteClientErrors(t, s) })
	t.Run("DroppedMidStream", func(t *testing.T) { suiteDroppedMidStream(t, s) })
	t.Run("StreamErrorEvent", func(t *testing.T) { suiteStreamErrorEvent(t, s) })
	t.Run("CancelMidStream", func(t *testing.T) { suiteCancelMidStream(t, s) })
	t.Run("BreakStopsStream", func(t *testing.T) { suiteBreakStopsStream(t, s) })
	t.Run("Collect", func(t *testing.T) { suiteCollect(t, s) })
	t.Run("IdleTimeout", func(t *testing.T) {
		RunIdleTimeoutTests(t, func(srv *Server, p llm.RetryPolicy) llm.Provider {
			return s.New(ProviderConfig{BaseURL: s.baseURL(srv), APIKey: TestAPIKey, Client: srv.Client(), Retry: p})
		})
	})
}

func (s ProviderSuite) baseURL(srv *Server) string {
	if s.API == "openai" {
		return srv.OpenAIURL()
	}
	return srv.URL()
}

// SleepRecorder records the delays a [llm.RetryPolicy] asks for instead
// of waiting: its Sleep is a RetryPolicy.Sleep. Safe for concurrent use.
type SleepRecorder struct {
	mu sync.Mutex
	d  []time.Duration
}

// Sleep records d and returns ctx.Err() at once.
func (s *SleepRecorder) Sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

// Got returns the delays recorded so far.
func (s *SleepRecorder) Got() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.d...)
}

// provider builds the adapter for srv with a policy whose sleeps sl
// records; maxAttempts 0 is the policy's default.
func (s ProviderSuite) provider(srv *Server, sl *SleepRecorder, maxAttempts int) llm.Provider {
	return s.New(ProviderConfig{
		BaseURL: s.baseURL(srv),
		APIKey:  TestAPIKey,
		Client:  srv.Client(),
		Retry:   llm.RetryPolicy{MaxAttempts: maxAttempts, Sleep: sl.Sleep, Jitter: func() float64 { return 0 }},
	})
}

// Stream runs req through p and returns the events before the first
// error, the response they accumulate to, and that error.
func Stream(t testing.TB, p llm.Provider, req *llm.Request) ([]llm.Event, *llm.Response, error) {
	t.Helper()
	var evs []llm.Event
	var acc llm.Accumulator
	for ev, err := range p.Stream(t.Context(), req) {
		if err != nil {
			return evs, acc.Response(), err
		}
		evs = append(evs, ev)
		acc.Add(ev)
	}
	return evs, acc.Response(), nil
}

func suiteReq(text string) *llm.Request {
	return &llm.Request{Model: "test-model", Messages: []llm.Message{llm.UserText(text)}}
}

func suiteStreamText(t *testing.T, s ProviderSuite) {
	srv := NewServer(t, WithChunkSize(3))
	srv.Script(Reply{
		Content: []llm.Block{llm.Text("Hello, wörld! How are you?")},
		Usage:   llm.Usage{InputTokens: 12, OutputTokens: 7},
	})
	evs, resp, err := Stream(t, s.provider(srv, &SleepRecorder{}, 0), suiteReq("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Message.Text(); got != "Hello, wörld! How are you?" {
		t.Errorf("text = %q", got)
	}
	deltas := 0
	for _, ev := range evs {
		if ev.Type == llm.EventTextDelta && ev.Text != "" {
			deltas++
		}
	}
	if deltas < 8 {
		t.Errorf("got %d text deltas, want the text in many pieces", deltas)
	}
	wantID := map[string]string{"anthropic": "msg_1", "openai": "chatcmpl-1"}[s.API]
	if evs[0].Type != llm.EventMessageStart || evs[0].ID != wantID || evs[0].Model != "test-model" {
		t.Errorf("first event = %+v", evs[0])
	}
	if last := evs[len(evs)-1]; last.Type != llm.EventMessageEnd || last.StopReason != llm.StopEndTurn {
		t.Errorf("last event = %+v", last)
	}
	if want := (llm.Usage{InputTokens: 12, OutputTokens: 7}); resp.Usage != want || resp.StopReason != llm.StopEndTurn {
		t.Errorf("usage = %+v, want %+v; stop %q", resp.Usage, want, resp.StopReason)
	}
	r := srv.LastRequest()
	key := r.Header.Get("x-api-key")
	if s.API == "openai" {
		key = strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !r.IncludeUsage {
			t.Error("stream_options.include_usage not set: the usage would be lost")
		}
	}
	if !r.Stream || key != TestAPIKey || r.MaxTokens != s.DefaultMaxTokens {
		t.Errorf("request: stream=%v key=%q max_tokens=%d (want %d)", r.Stream, key, r.MaxTokens, s.DefaultMaxTokens)
	}
}

func toolEnds(evs []llm.Event) []llm.Event {
	var out []llm.Event
	for _, ev := range evs {
		if ev.Type == llm.EventToolUseEnd {
			out = append(out, ev)
		}
	}
	return out
}

func suiteParallelToolCalls(t *testing.T, s ProviderSuite) {
	variants := []struct {
		name string
		opts []Option
	}{{"distinct indexes", nil}}
	if s.API == "openai" {
		variants = append(variants, struct {
			name string
			opts []Option
		}{"index zero reused", []Option{WithIndexZero()}})
	}
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			srv := NewServer(t, append(v.opts, WithChunkSize(2))...)
			usage := llm.Usage{InputTokens: 10, OutputTokens: 30, CacheReadInputTokens: 2048}
			srv.Script(Reply{
				Content: []llm.Block{
					llm.Text("Reading."),
					llm.ToolUse("call_a", "Read", json.RawMessage(`{"path":"a.go","limit":10}`)),
					llm.ToolUse("call_b", "Read", json.RawMessage(`{"path":"b.go"}`)),
					llm.ToolUse("call_c", "Grep", json.RawMessage(`{"pattern":"func \\w+","glob":"*.go"}`)),
				},
				Usage: usage,
			})
			evs, resp, err := Stream(t, s.provider(srv, &SleepRecorder{}, 0), suiteReq("go"))
			if err != nil {
				t.Fatal(err)
			}
			got := toolEnds(evs)
			want := []struct{ id, name, in string }{
				{"call_a", "Read", `{"path":"a.go","limit":10}`},
				{"call_b", "Read", `{"path":"b.go"}`},
				{"call_c", "Grep", `{"pattern":"func \\w+","glob":"*.go"}`},
			}
			if len(got) != len(want) {
				t.Fatalf("%d tool-use ends, want %d", len(got), len(want))
			}
			deltas := map[int]int{}
			for _, ev := range evs {
				if ev.Type == llm.EventToolUseDelta {
					deltas[ev.Index]++
				}
			}
			seen := map[int]bool{}
			for i, w := range want {
				e := got[i]
				if e.ID != w.id || e.Name != w.name || string(e.Input) != w.in || e.InputErr != nil {
					t.Errorf("call %d = %s %s %s %v", i, e.ID, e.Name, e.Input, e.InputErr)
				}
				if seen[e.Index] {
					t.Errorf("block index %d reused", e.Index)
				}
				seen[e.Index] = true
				if deltas[e.Index] < 5 {
					t.Errorf("call %d: %d input deltas, want the input in many pieces", i, deltas[e.Index])
				}
			}
			// Each call is complete before the next one starts, so that an
			// executor can run it while the model streams the rest.
			pos := map[string]int{}
			for i, e := range evs {
				switch e.Type {
				case llm.EventToolUseStart:
					pos["start "+e.ID] = i
				case llm.EventToolUseEnd:
					pos["end "+e.ID] = i
				}
			}
			if pos["end call_a"] > pos["start call_b"] || pos["end call_b"] > pos["start call_c"] {
				t.Errorf("calls not completed when the next started: %v", pos)
			}
			if resp.StopReason != llm.StopToolUse || len(resp.Message.ToolUses()) != 3 || resp.Message.Text() != "Reading." {
				t.Errorf("response = %+v", resp)
			}
			if resp.Usage != usage {
				t.Errorf("usage = %+v, want %+v", resp.Usage, usage)
			}
		})
	}
}

func suiteInvalidToolInput(t *testing.T, s ProviderSuite) {
	srv := NewServer(t)
	srv.Script(Reply{Content: []llm.Block{llm.ToolUse("call_1", "Read", json.RawMessage(`{"path":`))}})
	evs, _, err := Stream(t, s.provider(srv, &SleepRecorder{}, 0), suiteReq("go"))
	if err != nil {
		t.Fatal(err)
	}
	ends := toolEnds(evs)
	if len(ends) != 1 {
		t.Fatalf("%d tool-use ends, want 1", len(ends))
	}
	if e := ends[0]; e.InputErr == nil || string(e.Input) != "{}" {
		t.Errorf("end = %s, %v; want {} and an error", e.Input, e.InputErr)
	}
}

func suiteRetry(t *testing.T, s ProviderSuite) {
	tests := []struct {
		name      string
		first     Reply
		wantSleep time.Duration
	}{
		{"529 retry-after-ms", Reply{Status: 529, RetryAfterMs: "1500"}, 1500 * time.Millisecond},
		{"429 retry-after-ms", Reply{Status: 429, RetryAfterMs: "750"}, 750 * time.Millisecond},
		{"429 retry-after", Reply{Status: 429, RetryAfter: "2"}, 2 * time.Second},
		{"503 retry-after", Reply{Status: 503, RetryAfter: "3"}, 3 * time.Second},
		{"529 backoff", Reply{Status: 529}, 250 * time.Millisecond}, // half of 500ms with zero jitter
		{"500 backoff", Reply{Status: 500}, 250 * time.Millisecond},
		{"connection reset", Reply{DropBeforeHeaders: true}, 250 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := NewServer(t)
			srv.Script(tt.first, TextReply("recovered"))
			sl := &SleepRecorder{}
			_, resp, err := Stream(t, s.provider(srv, sl, 0), suiteReq("hi"))
			if err != nil {
				t.Fatal(err)
			}
			if resp.Message.Text() != "recovered" || len(srv.Requests()) != 2 {
				t.Errorf("text %q after %d requests", resp.Message.Text(), len(srv.Requests()))
			}
			if got := sl.Got(); !slices.Equal(got, []time.Duration{tt.wantSleep}) {
				t.Errorf("sleeps %v, want [%v]", got, tt.wantSleep)
			}
		})
	}
}

func suiteRetryGivesUp(t *testing.T, s ProviderSuite) {
	srv := NewServer(t)
	srv.Script(Reply{Status: 529}, Reply{Status: 529}, Reply{Status: 529})
	sl := &SleepRecorder{}
	_, _, err := Stream(t, s.provider(srv, sl, 2), suiteReq("hi"))
	if !errors.Is(err, llm.ErrOverloaded) || !llm.Retryable(err) {
		t.Fatalf("err = %v, want overloaded", err)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
	if got := sl.Got(); len(got) != 1 || got[0] != 250*time.Millisecond {
		t.Errorf("sleeps = %v", got)
	}
}

func suiteClientErrors(t *testing.T, s ProviderSuite) {
	if len(s.ClientErrors) == 0 {
		t.Fatal("ProviderSuite.ClientErrors is empty: the adapter's error mapping goes untested")
	}
	for _, tt := range s.ClientErrors {
		t.Run(tt.Reply.ErrorType, func(t *testing.T) {
			srv := NewServer(t)
			srv.Script(tt.Reply, TextReply("never"))
			sl := &SleepRecorder{}
			_, _, err := Stream(t, s.provider(srv, sl, 0), suiteReq("hi"))
			var ae *llm.APIError
			if !errors.As(err, &ae) {
				t.Fatalf("err = %v, want *llm.APIError", err)
			}
			if ae.StatusCode != tt.Reply.Status || ae.Type != tt.Reply.ErrorType || ae.Message != tt.Reply.ErrorMessage {
				t.Errorf("APIError = %+v", ae)
			}
			if s.API == "anthropic" && ae.RequestID != "req_1" {
				t.Errorf("request id %q, want the request-id header's req_1", ae.RequestID)
			}
			if !errors.Is(err, tt.Is) || llm.Retryable(err) || !strings.Contains(err.Error(), tt.Reply.ErrorMessage) {
				t.Errorf("err = %v: is %v = %v, retryable = %v", err, tt.Is, errors.Is(err, tt.Is), llm.Retryable(err))
			}
			if len(srv.Requests()) != 1 || len(sl.Got()) != 0 {
				t.Errorf("%d requests, sleeps %v: want no retry", len(srv.Requests()), sl.Got())
			}
		})
	}
}

func suiteDroppedMidStream(t *testing.T, s ProviderSuite) {
	srv := NewServer(t, WithChunkSize(2))
	srv.Script(Reply{
		Content:   []llm.Block{llm.Text("partial answer"), llm.ToolUse("call_1", "Read", json.RawMessage(`{"path":"a.go"}`))},
		DropAfter: 8,
	}, TextReply("not requested"))
	evs, resp, err := Stream(t, s.provider(srv, &SleepRecorder{}, 0), suiteReq("hi"))
	if !errors.Is(err, llm.ErrInterrupted) || !llm.Retryable(err) {
		t.Fatalf("err = %v, want ErrInterrupted", err)
	}
	if len(evs) == 0 {
		t.Error("no events before the drop")
	}
	if len(toolEnds(evs)) != 0 || len(resp.Message.ToolUses()) != 0 {
		t.Error("a partial tool use completed (orphan rule)")
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests: a stream that yielded events must not be retried", n)
	}
}

func suiteStreamErrorEvent(t *testing.T, s ProviderSuite) {
	// An overloaded error inside a 200 stream: retried when it comes before
	// any content, reported as interrupted after content.
	srv := NewServer(t, WithChunkSize(2))
	srv.Script(
		Reply{Content: []llm.Block{llm.Text("lost")}, StreamErrorAfter: 1},
		TextReply("second"),
		Reply{Content: []llm.Block{llm.Text("partial text")}, StreamErrorAfter: 5},
	)
	p := s.provider(srv, &SleepRecorder{}, 0)
	if _, resp, err := Stream(t, p, suiteReq("hi")); err != nil || resp.Message.Text() != "second" {
		t.Fatalf("first turn: %v, %v", resp, err)
	}
	_, _, err := Stream(t, p, suiteReq("again"))
	if !errors.Is(err, llm.ErrInterrupted) || !errors.Is(err, llm.ErrOverloaded) {
		t.Fatalf("err = %v, want interrupted + overloaded", err)
	}
	if n := len(srv.Requests()); n != 3 {
		t.Errorf("%d requests, want 3", n)
	}
}

func suiteCancelMidStream(t *testing.T, s ProviderSuite) {
	srv := NewServer(t, WithChunkSize(1))
	srv.Script(Reply{Content: []llm.Block{llm.Text("slow reply")}, StallAfter: 4})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var err error
	n := 0
	for _, e := range s.provider(srv, &SleepRecorder{}, 0).Stream(ctx, suiteReq("hi")) {
		if e != nil {
			err = e
			break
		}
		n++
		cancel() // the server stalls after a few events
	}
	if !errors.Is(err, context.Canceled) || llm.Retryable(err) {
		t.Fatalf("err = %v after %d events, want context.Canceled", err, n)
	}
}

// breakDeadline bounds how long breaking out of a stalled stream may take
// before the suite calls it a hang: far above what a loaded machine needs
// to close a loopback connection, far below the test binary's timeout.
const breakDeadline = 10 * time.Second

func suiteBreakStopsStream(t *testing.T, s ProviderSuite) {
	srv := NewServer(t, WithChunkSize(1))
	srv.Script(Reply{Content: []llm.Block{llm.Text("slow reply")}, StallAfter: 5})
	p := s.provider(srv, &SleepRecorder{}, 0)
	// The server stalls after a few events and never ends the stream: the
	// loop's break must release the connection without waiting for it.
	// Run in a goroutine so that a hang is a failure, not a timeout of
	// the whole binary.
	done := make(chan int, 1)
	go func() {
		n := 0
		for range p.Stream(t.Context(), suiteReq("hi")) {
			n++
			break
		}
		done <- n
	}()
	select {
	case n := <-done:
		if n != 1 {
			t.Fatalf("the loop saw %d events before its break, want 1", n)
		}
	case <-time.After(breakDeadline):
		t.Fatalf("breaking out of a stalled stream did not return within %v", breakDeadline)
	}
}

func suiteCollect(t *testing.T, s ProviderSuite) {
	srv := NewServer(t)
	srv.Script(TextReply("whole"))
	resp, err := llm.Collect(s.provider(srv, &SleepRecorder{}, 0).Stream(t.Context(), suiteReq("hi")))
	if err != nil || resp.Message.Text() != "whole" || resp.StopReason != llm.StopEndTurn {
		t.Fatalf("Collect = %+v, %v", resp, err)
	}
}

// benchReply streams as about 200 server-sent events: 100 text pieces and
// 92 pieces of tool input (4 bytes each), plus the envelope events.
func benchReply() Reply {
	in := `{"path":"` + strings.Repeat("a/b/", 84) + `x.go"}`
	return Reply{
		Content: []llm.Block{llm.Text(strings.Repeat("word", 100)), llm.ToolUse("call_1", "Read", json.RawMessage(in))},
		Usage:   llm.Usage{InputTokens: 1000, OutputTokens: 200, CacheReadInputTokens: 5000},
	}
}

// cannedTransport answers every request with the same streamed body.
type cannedTransport struct{ body []byte }

func (c cannedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		_ = r.Body.Close()
	}
	return &http.Response{
		StatusCode: 200, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": []string{"text/event-stream"}},
		Body:   io.NopCloser(bytes.NewReader(c.body)), ContentLength: -1, Request: r,
	}, nil
}

// RunStreamBenchmark measures one streamed reply of about 200 events
// through the adapter's real SDK: "parse" replays the reply's recorded
// bytes from memory (decoding and event assembly only), "loopback" streams
// it over HTTP from a [Server]. It reports events/op beside the usual
// figures.
func RunStreamBenchmark(b *testing.B, s ProviderSuite) {
	srv := NewServer(b, WithChunkSize(4))
	req := suiteReq("go")
	req.Tools = []*tool.Spec{{
		Name:        "Read",
		Description: "Read things",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`),
	}}

	// Record the wire bytes of one reply for the in-memory case.
	srv.Script(benchReply())
	body, err := json.Marshal(map[string]any{"model": "test-model", "stream": true, "max_tokens": 10, "messages": []any{}, "stream_options": map[string]any{"include_usage": true}})
	if err != nil {
		b.Fatal(err)
	}
	url := srv.URL() + "/v1/messages"
	if s.API == "openai" {
		url = srv.OpenAIURL() + "/chat/completions"
	}
	resp, err := srv.Client().Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	wire, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		b.Fatal(err)
	}

	run := func(b *testing.B, p llm.Provider, script bool) {
		b.ReportAllocs()
		events := 0
		for b.Loop() {
			if script {
				srv.Script(benchReply())
			}
			events = 0
			for _, err := range p.Stream(b.Context(), req) {
				if err != nil {
					b.Fatal(err)
				}
				events++
			}
		}
		b.ReportMetric(float64(events), "events/op")
	}
	sl := &SleepRecorder{}
	retry := llm.RetryPolicy{Sleep: sl.Sleep, Jitter: func() float64 { return 0 }}
	b.Run("parse", func(b *testing.B) {
		client := &http.Client{Transport: cannedTransport{wire}}
		run(b, s.New(ProviderConfig{BaseURL: s.baseURL(srv), APIKey: TestAPIKey, Client: client, Retry: retry}), false)
	})
	b.Run("loopback", func(b *testing.B) {
		run(b, s.New(ProviderConfig{BaseURL: s.baseURL(srv), APIKey: TestAPIKey, Client: srv.Client(), Retry: retry}), true)
	})
}
