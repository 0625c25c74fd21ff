package anthropic_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/llm/anthropic"
	"github.com/gantry-dev/gantry/llm/llmtest"
	"github.com/gantry-dev/gantry/tool"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// sleeps records the retry delays instead of waiting.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleeps) got() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.d...)
}

func newProvider(t testing.TB, srv *llmtest.Server, sl *sleeps, mods ...func(*anthropic.Options)) *anthropic.Provider {
	t.Helper()
	o := anthropic.Options{
		BaseURL:    srv.URL(),
		APIKey:     "test-key",
		HTTPClient: srv.Client(),
		LookupEnv:  func(string) (string, bool) { return "", false },
		Retry:      llm.RetryPolicy{Sleep: sl.sleep, Jitter: func() float64 { return 0 }},
	}
	for _, m := range mods {
		m(&o)
	}
	return anthropic.New(o)
}

func collect(t *testing.T, p llm.Provider, req *llm.Request) ([]llm.Event, *llm.Response, error) {
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

func userReq(text string) *llm.Request {
	return &llm.Request{Model: "claude-test", Messages: []llm.Message{llm.UserText(text)}}
}

func TestStreamText(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.WithChunkSize(3))
	srv.Script(llmtest.Reply{
		Content: []llm.Block{llm.Text("Hello, wörld! How are you?")},
		Usage:   llm.Usage{InputTokens: 12, OutputTokens: 7},
	})
	evs, resp, err := collect(t, newProvider(t, srv, &sleeps{}), userReq("hi"))
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
	if evs[0].Type != llm.EventMessageStart || evs[0].ID != "msg_1" || evs[0].Model != "claude-test" {
		t.Errorf("first event = %+v", evs[0])
	}
	last := evs[len(evs)-1]
	if last.Type != llm.EventMessageEnd || last.StopReason != llm.StopEndTurn {
		t.Errorf("last event = %+v", last)
	}
	if want := (llm.Usage{InputTokens: 12, OutputTokens: 7}); resp.Usage != want {
		t.Errorf("usage = %+v, want %+v", resp.Usage, want)
	}
	r := srv.LastRequest()
	if !r.Stream || r.Header.Get("x-api-key") != "test-key" || r.MaxTokens != anthropic.DefaultMaxTokens {
		t.Errorf("request: stream=%v key=%q max_tokens=%d", r.Stream, r.Header.Get("x-api-key"), r.MaxTokens)
	}
}

func TestThinkingRoundTrip(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.WithChunkSize(4))
	srv.Script(
		llmtest.Reply{Content: []llm.Block{
			llm.Thinking("Let me think about this carefully.", "sig-abc"),
			llm.RedactedThinking("opaque=="),
			llm.Text("42"),
		}},
		llmtest.TextReply("ok"),
	)
	p := newProvider(t, srv, &sleeps{})
	req := userReq("question")
	req.ThinkingBudget = 2048
	req.MaxTokens = 1000 // below the budget: raised
	_, resp, err := collect(t, p, req)
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.Block{
		llm.Thinking("Let me think about this carefully.", "sig-abc"),
		llm.RedactedThinking("opaque=="),
		llm.Text("42"),
	}
	if diff := cmp.Diff(want, resp.Message.Content); diff != "" {
		t.Errorf("message (-want +got):\n%s", diff)
	}
	r := srv.LastRequest()
	if r.ThinkingBudget != 2048 || r.MaxTokens <= 2048 {
		t.Errorf("thinking budget %d, max tokens %d", r.ThinkingBudget, r.MaxTokens)
	}
	// The thinking goes back unchanged on the next turn.
	req.Messages = append(req.Messages, resp.Message, llm.UserText("and?"))
	if _, _, err := collect(t, p, req); err != nil {
		t.Fatal(err)
	}
	sent := srv.LastRequest().Messages[1]
	if sent.Role != "assistant" || cmp.Diff(want, sent.Content) != "" {
		t.Errorf("assistant turn sent back as %+v", sent)
	}
}

func TestParallelToolCallsSplitInput(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.WithChunkSize(2))
	srv.Script(llmtest.Reply{
		Content: []llm.Block{
			llm.Text("Reading both."),
			llm.ToolUse("toolu_1", "Read", json.RawMessage(`{"path":"a.go","limit":10}`)),
			llm.ToolUse("toolu_2", "Grep", json.RawMessage(`{"pattern":"func \\w+","glob":"*.go"}`)),
		},
		Usage: llm.Usage{InputTokens: 100, OutputTokens: 40},
	})
	evs, resp, err := collect(t, newProvider(t, srv, &sleeps{}), userReq("go"))
	if err != nil {
		t.Fatal(err)
	}
	var ends []llm.Event
	deltas := map[int]int{}
	for _, ev := range evs {
		switch ev.Type {
		case llm.EventToolUseEnd:
			ends = append(ends, ev)
		case llm.EventToolUseDelta:
			deltas[ev.Index]++
		}
	}
	if len(ends) != 2 {
		t.Fatalf("got %d tool-use ends", len(ends))
	}
	for i, w := range []struct{ id, name, input string }{
		{"toolu_1", "Read", `{"path":"a.go","limit":10}`},
		{"toolu_2", "Grep", `{"pattern":"func \\w+","glob":"*.go"}`},
	} {
		e := ends[i]
		if e.ID != w.id || e.Name != w.name || string(e.Input) != w.input || e.InputErr != nil {
			t.Errorf("end %d = %s %s %s %v", i, e.ID, e.Name, e.Input, e.InputErr)
		}
		if deltas[e.Index] < 10 {
			t.Errorf("tool %d: %d input deltas, want many", i, deltas[e.Index])
		}
	}
	if resp.StopReason != llm.StopToolUse || len(resp.Message.ToolUses()) != 2 || resp.Message.Text() != "Reading both." {
		t.Errorf("response = %+v", resp)
	}
}

func TestInvalidToolInput(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Script(llmtest.Reply{Content: []llm.Block{llm.ToolUse("toolu_1", "Read", json.RawMessage(`{"path":`))}})
	evs, _, err := collect(t, newProvider(t, srv, &sleeps{}), userReq("go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		if ev.Type == llm.EventToolUseEnd {
			if ev.InputErr == nil || string(ev.Input) != "{}" {
				t.Errorf("end = %s, %v; want {} and an error", ev.Input, ev.InputErr)
			}
			return
		}
	}
	t.Error("no tool-use end")
}

func TestUsageWithCache(t *testing.T) {
	srv := llmtest.NewServer(t)
	u := llm.Usage{InputTokens: 5, OutputTokens: 9, CacheCreationInputTokens: 1200, CacheReadInputTokens: 3400}
	srv.Script(llmtest.Reply{Content: []llm.Block{llm.Text("x")}, Usage: u})
	evs, resp, err := collect(t, newProvider(t, srv, &sleeps{}), userReq("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Usage != u {
		t.Errorf("usage = %+v, want %+v", resp.Usage, u)
	}
	if s := evs[0].Usage; s.CacheReadInputTokens != 3400 || s.CacheCreationInputTokens != 1200 {
		t.Errorf("message_start usage = %+v", s)
	}
}

func specs(names ...string) []*tool.Spec {
	var out []*tool.Spec
	for _, n := range names {
		out = append(out, &tool.Spec{
			Name:        n,
			Description: n + " things",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`),
		})
	}
	return out
}

func TestRequestMapping(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Script(llmtest.TextReply("done"))
	png := []byte("\x89PNG\r\n\x1a\nfake")
	temp := 0.5
	req := &llm.Request{
		Model:  "claude-test",
		System: []llm.SystemBlock{{Text: "You are Gantry."}, {Text: "Project notes."}},
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: []llm.Block{llm.Text("Late instruction.")}},
			llm.UserText("read two files"),
			llm.AssistantMessage(
				llm.Text(""), // dropped: the API rejects empty text
				llm.ToolUse("toolu_1", "Read", json.RawMessage(`{"path":"a.go"}`)),
				llm.ToolUse("toolu_2", "Read", json.RawMessage(`{"path":"b.png"}`)),
				llm.ToolUse("toolu_3", "Read", nil),
			),
			llm.UserMessage(
				llm.ToolResult("toolu_1", []tool.Content{tool.Text("package a")}, false),
				llm.ToolResult("toolu_2", []tool.Content{tool.Text("an image:"), tool.Image(png, "image/png")}, false),
				llm.ToolResult("toolu_3", []tool.Content{tool.Text("path is required")}, true),
			),
		},
		Tools:         specs("Read", "Grep", "Glob"),
		ToolChoice:    llm.ToolChoice{Mode: llm.ToolChoiceAny, DisableParallel: true},
		Temperature:   &temp,
		StopSequences: []string{"STOP"},
		Cache:         llm.AllCacheHints,
	}
	if _, _, err := collect(t, newProvider(t, srv, &sleeps{}), req); err != nil {
		t.Fatal(err)
	}
	r := srv.LastRequest()
	wantSystem := []llm.SystemBlock{{Text: "You are Gantry."}, {Text: "Project notes."}, {Text: "Late instruction.", Cache: true}}
	if diff := cmp.Diff(wantSystem, r.System); diff != "" {
		t.Errorf("system (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"system[2]", "tools[2]", "messages[2].content[2]"}, r.CacheBreakpoints); diff != "" {
		t.Errorf("cache breakpoints (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"Read", "Grep", "Glob"}, r.ToolNames()); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	if string(r.Tools[0].InputSchema) != string(specs("x")[0].InputSchema) {
		t.Errorf("schema sent as %s", r.Tools[0].InputSchema)
	}
	if len(r.Messages) != 3 || r.Messages[0].Role != "user" || r.Messages[1].Role != "assistant" {
		t.Fatalf("messages = %+v", r.Messages)
	}
	wantAssistant := []llm.Block{
		llm.ToolUse("toolu_1", "Read", json.RawMessage(`{"path":"a.go"}`)),
		llm.ToolUse("toolu_2", "Read", json.RawMessage(`{"path":"b.png"}`)),
		llm.ToolUse("toolu_3", "Read", json.RawMessage(`{}`)),
	}
	if diff := cmp.Diff(wantAssistant, r.Messages[1].Content); diff != "" {
		t.Errorf("assistant (-want +got):\n%s", diff)
	}
	wantResults := []llm.Block{
		llm.ToolResult("toolu_1", []tool.Content{tool.Text("package a")}, false),
		llm.ToolResult("toolu_2", []tool.Content{tool.Text("an image:"), tool.Image(png, "image/png")}, false),
		llm.ToolResult("toolu_3", []tool.Content{tool.Text("path is required")}, true),
	}
	if diff := cmp.Diff(wantResults, r.ToolResults()); diff != "" {
		t.Errorf("tool results (-want +got):\n%s", diff)
	}
	var choice map[string]any
	if err := json.Unmarshal(r.ToolChoice, &choice); err != nil ||
		cmp.Diff(map[string]any{"type": "any", "disable_parallel_tool_use": true}, choice) != "" {
		t.Errorf("tool choice = %s", r.ToolChoice)
	}
	if r.Temperature == nil || *r.Temperature != 0.5 || cmp.Diff([]string{"STOP"}, r.StopSequences) != "" {
		t.Errorf("temperature %v stop %v", r.Temperature, r.StopSequences)
	}
}

func TestRetry(t *testing.T) {
	tests := []struct {
		name      string
		first     llmtest.Reply
		wantSleep time.Duration
	}{
		{"529 retry-after-ms", llmtest.Reply{Status: 529, RetryAfterMs: "1500"}, 1500 * time.Millisecond},
		{"429 retry-after", llmtest.Reply{Status: 429, RetryAfter: "2"}, 2 * time.Second},
		{"500 backoff", llmtest.Reply{Status: 500}, 250 * time.Millisecond}, // half of 500ms with zero jitter
		{"connection reset", llmtest.Reply{DropBeforeHeaders: true}, 250 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(t)
			srv.Script(tt.first, llmtest.TextReply("recovered"))
			sl := &sleeps{}
			_, resp, err := collect(t, newProvider(t, srv, sl), userReq("hi"))
			if err != nil {
				t.Fatal(err)
			}
			if resp.Message.Text() != "recovered" || len(srv.Requests()) != 2 {
				t.Errorf("text %q after %d requests", resp.Message.Text(), len(srv.Requests()))
			}
			if diff := cmp.Diff([]time.Duration{tt.wantSleep}, sl.got()); diff != "" {
				t.Errorf("sleeps (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRetryGivesUp(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Script(llmtest.Reply{Status: 529}, llmtest.Reply{Status: 529}, llmtest.Reply{Status: 529})
	sl := &sleeps{}
	_, _, err := collect(t, newProvider(t, srv, sl, func(o *anthropic.Options) { o.Retry.MaxAttempts = 2 }), userReq("hi"))
	if !errors.Is(err, llm.ErrOverloaded) || !llm.Retryable(err) {
		t.Fatalf("err = %v, want overloaded", err)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
	if got := sl.got(); len(got) != 1 || got[0] != 250*time.Millisecond {
		t.Errorf("sleeps = %v", got)
	}
}

func TestNoRetryOnClientErrors(t *testing.T) {
	tests := []struct {
		reply   llmtest.Reply
		is      error
		message string
	}{
		{llmtest.ErrorReply(400, "invalid_request_error", "messages.1: tool_use ids must be unique"), llm.ErrBadRequest, "tool_use ids must be unique"},
		{llmtest.ErrorReply(401, "authentication_error", "invalid x-api-key"), llm.ErrAuth, "invalid x-api-key"},
		{llmtest.ErrorReply(403, "permission_error", "no access to model"), llm.ErrAuth, "no access to model"},
		{llmtest.ErrorReply(404, "not_found_error", "model: claude-nope"), llm.ErrBadRequest, "claude-nope"},
		{llmtest.ErrorReply(400, "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum"), llm.ErrContextLength, "prompt is too long"},
	}
	for _, tt := range tests {
		t.Run(tt.reply.ErrorType, func(t *testing.T) {
			srv := llmtest.NewServer(t)
			srv.Script(tt.reply, llmtest.TextReply("never"))
			sl := &sleeps{}
			_, _, err := collect(t, newProvider(t, srv, sl), userReq("hi"))
			var ae *llm.APIError
			if !errors.As(err, &ae) {
				t.Fatalf("err = %v, want *llm.APIError", err)
			}
			if ae.StatusCode != tt.reply.Status || ae.Type != tt.reply.ErrorType || ae.Message != tt.reply.ErrorMessage || ae.RequestID != "req_1" {
				t.Errorf("APIError = %+v", ae)
			}
			if !errors.Is(err, tt.is) || llm.Retryable(err) || !strings.Contains(err.Error(), tt.message) {
				t.Errorf("err = %v: is %v = %v, retryable = %v", err, tt.is, errors.Is(err, tt.is), llm.Retryable(err))
			}
			if len(srv.Requests()) != 1 || len(sl.got()) != 0 {
				t.Errorf("%d requests, sleeps %v: want no retry", len(srv.Requests()), sl.got())
			}
		})
	}
}

func TestDroppedMidStream(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.WithChunkSize(2))
	srv.Script(llmtest.Reply{
		Content:   []llm.Block{llm.Text("partial answer"), llm.ToolUse("toolu_1", "Read", json.RawMessage(`{"path":"a.go"}`))},
		DropAfter: 12,
	}, llmtest.TextReply("not requested"))
	evs, resp, err := collect(t, newProvider(t, srv, &sleeps{}), userReq("hi"))
	if !errors.Is(err, llm.ErrInterrupted) || !llm.Retryable(err) {
		t.Fatalf("err = %v, want ErrInterrupted", err)
	}
	if len(evs) == 0 {
		t.Error("no events before the drop")
	}
	if len(resp.Message.ToolUses()) != 0 {
		t.Error("a partial tool use survived (orphan rule)")
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests: a stream that yielded events must not be retried", n)
	}
}

func TestCancelMidStream(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.WithChunkSize(1))
	srv.Script(llmtest.Reply{Content: []llm.Block{llm.Text("slow reply")}, StallAfter: 5})
	p := newProvider(t, srv, &sleeps{})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var err error
	n := 0
	for _, e := range p.Stream(ctx, userReq("hi")) {
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

func TestBreakStopsStream(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.WithChunkSize(1))
	srv.Script(llmtest.Reply{Content: []llm.Block{llm.Text("slow reply")}, StallAfter: 5})
	for range newProvider(t, srv, &sleeps{}).Stream(t.Context(), userReq("hi")) {
		break // must release the connection without waiting for the server
	}
}

func TestEnvironment(t *testing.T) {
	srv := llmtest.NewServer(t)
	other := llmtest.NewServer(t)
	srv.Script(llmtest.TextReply("from env"))
	other.Script(llmtest.TextReply("from option"))
	env := map[string]string{"ANTHROPIC_BASE_URL": srv.URL(), "ANTHROPIC_API_KEY": "env-key"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }

	p := anthropic.New(anthropic.Options{LookupEnv: lookup, HTTPClient: srv.Client()})
	if _, resp, err := collect(t, p, userReq("hi")); err != nil || resp.Message.Text() != "from env" {
		t.Fatalf("env: %v %v", resp, err)
	}
	if k := srv.LastRequest().Header.Get("x-api-key"); k != "env-key" {
		t.Errorf("x-api-key = %q", k)
	}
	if m := srv.LastRequest().Model; m != "claude-test" {
		t.Errorf("model = %q", m)
	}

	p = anthropic.New(anthropic.Options{LookupEnv: lookup, HTTPClient: other.Client(), BaseURL: other.URL(), APIKey: "opt-key"})
	if _, resp, err := collect(t, p, &llm.Request{Messages: []llm.Message{llm.UserText("x")}}); err != nil || resp.Message.Text() != "from option" {
		t.Fatalf("option: %v %v", resp, err)
	}
	r := other.LastRequest()
	if r.Header.Get("x-api-key") != "opt-key" || r.Model != anthropic.DefaultModel {
		t.Errorf("key %q model %q", r.Header.Get("x-api-key"), r.Model)
	}
}

func TestCollect(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Script(llmtest.TextReply("whole"))
	resp, err := llm.Collect(newProvider(t, srv, &sleeps{}).Stream(t.Context(), userReq("hi")))
	if err != nil || resp.Message.Text() != "whole" || resp.StopReason != llm.StopEndTurn {
		t.Fatalf("Collect = %+v, %v", resp, err)
	}
}

// benchReply streams as about 200 server-sent events: 100 text pieces and
// 92 pieces of tool input (4 bytes each), plus the envelope events.
func benchReply() llmtest.Reply {
	in := `{"path":"` + strings.Repeat("a/b/", 84) + `x.go"}`
	return llmtest.Reply{
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

// BenchmarkStream200 measures one streamed reply of about 200 events
// through the real SDK: "parse" from memory (decoding and event
// assembly only), "loopback" over HTTP from llmtest.
func BenchmarkStream200(b *testing.B) {
	srv := llmtest.NewServer(b, llmtest.WithChunkSize(4))
	req := userReq("go")
	req.Tools = specs("Read")

	// Capture the wire bytes of one reply for the in-memory case.
	srv.Script(benchReply())
	body, err := json.Marshal(map[string]any{"model": "claude-test", "stream": true, "max_tokens": 10, "messages": []any{}, "stream_options": map[string]any{"include_usage": true}})
	if err != nil {
		b.Fatal(err)
	}
	resp, err := srv.Client().Post(srv.URL()+"/v1/messages", "application/json", bytes.NewReader(body))
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
	b.Run("parse", func(b *testing.B) {
		run(b, newProvider(b, srv, &sleeps{}, func(o *anthropic.Options) { o.HTTPClient = &http.Client{Transport: cannedTransport{wire}} }), false)
	})
	b.Run("loopback", func(b *testing.B) {
		run(b, newProvider(b, srv, &sleeps{}), true)
	})
}

func TestStreamErrorEvent(t *testing.T) {
	// An overloaded error inside a 200 stream: retried when it comes before
	// any content, reported as interrupted after content.
	srv := llmtest.NewServer(t, llmtest.WithChunkSize(2))
	srv.Script(
		llmtest.Reply{Content: []llm.Block{llm.Text("lost")}, StreamErrorAfter: 1},
		llmtest.TextReply("second"),
		llmtest.Reply{Content: []llm.Block{llm.Text("partial text")}, StreamErrorAfter: 5},
	)
	p := newProvider(t, srv, &sleeps{})
	if _, resp, err := collect(t, p, userReq("hi")); err != nil || resp.Message.Text() != "second" {
		t.Fatalf("first turn: %v, %v", resp, err)
	}
	_, _, err := collect(t, p, userReq("again"))
	if !errors.Is(err, llm.ErrInterrupted) || !errors.Is(err, llm.ErrOverloaded) {
		t.Fatalf("err = %v, want interrupted + overloaded", err)
	}
	if n := len(srv.Requests()); n != 3 {
		t.Errorf("%d requests, want 3", n)
	}
}

// TestAudioInToolResult checks that audio in a tool result, which the API
// does not take, reaches the model as a text block naming it.
func TestAudioInToolResult(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Script(llmtest.TextReply("heard"))
	wav := []byte("RIFF\x24\x00\x00\x00WAVEfmt ")
	req := &llm.Request{Model: "claude-test", Messages: []llm.Message{
		llm.UserText("play it"),
		llm.AssistantMessage(llm.ToolUse("toolu_1", "Tone", nil), llm.ToolUse("toolu_2", "Tone", nil)),
		llm.UserMessage(
			llm.ToolResult("toolu_1", []tool.Content{tool.Text("a tone:"), tool.Audio(wav, "audio/wav")}, false),
			llm.ToolResult("toolu_2", []tool.Content{tool.Audio([]byte{1, 2}, "")}, true),
		),
	}}
	if _, _, err := collect(t, newProvider(t, srv, &sleeps{}), req); err != nil {
		t.Fatal(err)
	}
	r := srv.LastRequest()
	want := []llm.Block{
		llm.ToolResult("toolu_1", []tool.Content{tool.Text("a tone:"), tool.Text("[audio clip, 16 bytes, audio/wav]")}, false),
		llm.ToolResult("toolu_2", []tool.Content{tool.Text("[audio clip, 2 bytes, unknown type]")}, true),
	}
	if diff := cmp.Diff(want, r.ToolResults()); diff != "" {
		t.Errorf("tool results (-want +got):\n%s", diff)
	}
	if body := string(r.Body); strings.Contains(body, base64.StdEncoding.EncodeToString(wav)) {
		t.Errorf("audio sent as data: %s", body)
	}
}
