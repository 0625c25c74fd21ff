package openai_test

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
	"github.com/gantry-dev/gantry/llm/llmtest"
	"github.com/gantry-dev/gantry/llm/openai"
	"github.com/gantry-dev/gantry/tool"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

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

func newProvider(t testing.TB, srv *llmtest.Server, sl *sleeps, mods ...func(*openai.Options)) *openai.Provider {
	t.Helper()
	o := openai.Options{
		BaseURL:    srv.OpenAIURL(),
		APIKey:     "test-key",
		HTTPClient: srv.Client(),
		LookupEnv:  func(string) (string, bool) { return "", false },
		Retry:      llm.RetryPolicy{Sleep: sl.sleep, Jitter: func() float64 { return 0 }},
	}
	for _, m := range mods {
		m(&o)
	}
	return openai.New(o)
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
	return &llm.Request{Model: "gpt-test", Messages: []llm.Message{llm.UserText(text)}}
}

func ends(evs []llm.Event) []llm.Event {
	var out []llm.Event
	for _, ev := range evs {
		if ev.Type == llm.EventToolUseEnd {
			out = append(out, ev)
		}
	}
	return out
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
	if len(evs) < 10 || evs[0].Type != llm.EventMessageStart || evs[0].ID != "chatcmpl-1" || evs[0].Model != "gpt-test" {
		t.Errorf("%d events, first %+v", len(evs), evs[0])
	}
	if resp.StopReason != llm.StopEndTurn || resp.Usage != (llm.Usage{InputTokens: 12, OutputTokens: 7}) {
		t.Errorf("stop %q usage %+v", resp.StopReason, resp.Usage)
	}
	r := srv.LastRequest()
	if !r.Stream || !r.IncludeUsage || r.Header.Get("Authorization") != "Bearer test-key" || r.MaxTokens != openai.DefaultMaxTokens {
		t.Errorf("request: stream=%v usage=%v auth=%q max=%d", r.Stream, r.IncludeUsage, r.Header.Get("Authorization"), r.MaxTokens)
	}
}

func TestReasoningAsThinking(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.WithChunkSize(5))
	srv.Script(llmtest.Reply{Content: []llm.Block{llm.Thinking("First, consider the question.", ""), llm.Text("42")}})
	req := userReq("q")
	req.ThinkingBudget = 8000
	_, resp, err := collect(t, newProvider(t, srv, &sleeps{}), req)
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.Block{llm.Thinking("First, consider the question.", ""), llm.Text("42")}
	if diff := cmp.Diff(want, resp.Message.Content); diff != "" {
		t.Errorf("message (-want +got):\n%s", diff)
	}
	if e := srv.LastRequest().ReasoningEffort; e != "medium" {
		t.Errorf("reasoning_effort = %q", e)
	}
}

func TestParallelToolCalls(t *testing.T) {
	for _, tt := range []struct {
		name string
		opts []llmtest.Option
	}{
		{"distinct indexes", nil},
		{"index zero reused", []llmtest.Option{llmtest.WithIndexZero()}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(t, append(tt.opts, llmtest.WithChunkSize(2))...)
			srv.Script(llmtest.Reply{
				Content: []llm.Block{
					llm.Text("Reading."),
					llm.ToolUse("call_a", "Read", json.RawMessage(`{"path":"a.go","limit":10}`)),
					llm.ToolUse("call_b", "Read", json.RawMessage(`{"path":"b.go"}`)),
					llm.ToolUse("call_c", "Grep", json.RawMessage(`{"pattern":"func \\w+"}`)),
				},
				Usage: llm.Usage{InputTokens: 10, OutputTokens: 30, CacheReadInputTokens: 2048},
			})
			evs, resp, err := collect(t, newProvider(t, srv, &sleeps{}), userReq("go"))
			if err != nil {
				t.Fatal(err)
			}
			got := ends(evs)
			want := []struct{ id, name, in string }{
				{"call_a", "Read", `{"path":"a.go","limit":10}`},
				{"call_b", "Read", `{"path":"b.go"}`},
				{"call_c", "Grep", `{"pattern":"func \\w+"}`},
			}
			if len(got) != len(want) {
				t.Fatalf("%d tool-use ends, want %d", len(got), len(want))
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
			if wantU := (llm.Usage{InputTokens: 10, OutputTokens: 30, CacheReadInputTokens: 2048}); resp.Usage != wantU {
				t.Errorf("usage = %+v, want %+v", resp.Usage, wantU)
			}
		})
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
	req := &llm.Request{
		Model:  "gpt-test",
		System: []llm.SystemBlock{{Text: "You are Gantry."}, {Text: "Notes."}},
		Messages: []llm.Message{
			llm.UserMessage(llm.Text("look at this"), llm.Image(png, "image/png")),
			llm.AssistantMessage(
				llm.Thinking("hmm", "sig"),
				llm.Text("Reading."),
				llm.ToolUse("call_1", "Read", json.RawMessage(`{"path":"a.go"}`)),
				llm.ToolUse("call_2", "Read", json.RawMessage(`{"path":"b.png"}`)),
				llm.ToolUse("call_3", "Read", nil),
			),
			llm.UserMessage(
				llm.ToolResult("call_1", []tool.Content{tool.Text("package a")}, false),
				llm.ToolResult("call_2", []tool.Content{tool.Text("an image:"), tool.Image(png, "image/png")}, false),
				llm.ToolResult("call_3", []tool.Content{tool.Text("path is required")}, true),
				llm.Text("continue"),
			),
		},
		Tools:         specs("Read", "Grep"),
		ToolChoice:    llm.ToolChoice{Mode: llm.ToolChoiceTool, Name: "Read", DisableParallel: true},
		StopSequences: []string{"STOP"},
		Cache:         llm.AllCacheHints, // ignored: OpenAI caches by itself
	}
	if _, _, err := collect(t, newProvider(t, srv, &sleeps{}), req); err != nil {
		t.Fatal(err)
	}
	r := srv.LastRequest()
	var roles []string
	for _, m := range r.Messages {
		roles = append(roles, m.Role)
	}
	if diff := cmp.Diff([]string{"system", "user", "assistant", "tool", "tool", "tool", "user", "user"}, roles); diff != "" {
		t.Fatalf("roles (-want +got):\n%s", diff)
	}
	if r.Messages[0].Content[0].Text != "You are Gantry.\n\nNotes." {
		t.Errorf("system = %q", r.Messages[0].Content[0].Text)
	}
	if diff := cmp.Diff([]llm.Block{llm.Text("look at this"), llm.Image(png, "image/png")}, r.Messages[1].Content); diff != "" {
		t.Errorf("user (-want +got):\n%s", diff)
	}
	wantAssistant := []llm.Block{
		llm.Text("Reading."),
		llm.ToolUse("call_1", "Read", json.RawMessage(`{"path":"a.go"}`)),
		llm.ToolUse("call_2", "Read", json.RawMessage(`{"path":"b.png"}`)),
		llm.ToolUse("call_3", "Read", json.RawMessage(`{}`)),
	}
	if diff := cmp.Diff(wantAssistant, r.Messages[2].Content); diff != "" {
		t.Errorf("assistant (-want +got):\n%s", diff)
	}
	wantResults := []llm.Block{
		llm.ToolResult("call_1", []tool.Content{tool.Text("package a")}, false),
		llm.ToolResult("call_2", []tool.Content{tool.Text("an image:\n[image 1 attached below]")}, false),
		llm.ToolResult("call_3", []tool.Content{tool.Text("Error: path is required")}, false),
	}
	if diff := cmp.Diff(wantResults, r.ToolResults()); diff != "" {
		t.Errorf("tool results (-want +got):\n%s", diff)
	}
	wantImages := []llm.Block{llm.Text("Images from the result of tool call call_2:"), llm.Image(png, "image/png")}
	if diff := cmp.Diff(wantImages, r.Messages[6].Content); diff != "" {
		t.Errorf("tool images (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]llm.Block{llm.Text("continue")}, r.Messages[7].Content); diff != "" {
		t.Errorf("trailing text (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"Read", "Grep"}, r.ToolNames()); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	var choice map[string]any
	if err := json.Unmarshal(r.ToolChoice, &choice); err != nil ||
		cmp.Diff(map[string]any{"type": "function", "function": map[string]any{"name": "Read"}}, choice) != "" {
		t.Errorf("tool choice = %s", r.ToolChoice)
	}
	var body struct {
		ParallelToolCalls *bool `json:"parallel_tool_calls"`
	}
	if err := json.Unmarshal(r.Body, &body); err != nil || body.ParallelToolCalls == nil || *body.ParallelToolCalls {
		t.Errorf("parallel_tool_calls = %v", body.ParallelToolCalls)
	}
	if len(r.CacheBreakpoints) != 0 || cmp.Diff([]string{"STOP"}, r.StopSequences) != "" {
		t.Errorf("breakpoints %v stop %v", r.CacheBreakpoints, r.StopSequences)
	}
}

func TestRetry(t *testing.T) {
	tests := []struct {
		name      string
		first     llmtest.Reply
		wantSleep time.Duration
	}{
		{"429 retry-after-ms", llmtest.Reply{Status: 429, RetryAfterMs: "750"}, 750 * time.Millisecond},
		{"503 retry-after", llmtest.Reply{Status: 503, RetryAfter: "3"}, 3 * time.Second},
		{"529", llmtest.Reply{Status: 529}, 250 * time.Millisecond},
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

func TestNoRetryOnClientErrors(t *testing.T) {
	tests := []struct {
		reply llmtest.Reply
		is    error
	}{
		{llmtest.ErrorReply(400, "invalid_request_error", "Invalid 'messages[2]': tool_call_id not found"), llm.ErrBadRequest},
		{llmtest.ErrorReply(401, "invalid_api_key", "Incorrect API key provided"), llm.ErrAuth},
		{llmtest.ErrorReply(404, "model_not_found", "The model `gpt-nope` does not exist"), llm.ErrBadRequest},
		{llmtest.ErrorReply(400, "context_length_exceeded", "This model's maximum context length is 128000 tokens"), llm.ErrContextLength},
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
			if ae.StatusCode != tt.reply.Status || ae.Message != tt.reply.ErrorMessage || ae.Type != tt.reply.ErrorType {
				t.Errorf("APIError = %+v", ae)
			}
			if !errors.Is(err, tt.is) || llm.Retryable(err) || !strings.Contains(err.Error(), tt.reply.ErrorMessage) {
				t.Errorf("err = %v: is %v = %v", err, tt.is, errors.Is(err, tt.is))
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
		Content:   []llm.Block{llm.Text("partial"), llm.ToolUse("call_1", "Read", json.RawMessage(`{"path":"a.go"}`))},
		DropAfter: 8,
	}, llmtest.TextReply("not requested"))
	evs, resp, err := collect(t, newProvider(t, srv, &sleeps{}), userReq("hi"))
	if !errors.Is(err, llm.ErrInterrupted) {
		t.Fatalf("err = %v, want ErrInterrupted", err)
	}
	if len(evs) == 0 || len(ends(evs)) != 0 || len(resp.Message.ToolUses()) != 0 {
		t.Errorf("%d events, %d tool ends: a partial call must not complete", len(evs), len(ends(evs)))
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

func TestCancelMidStream(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.WithChunkSize(1))
	srv.Script(llmtest.Reply{Content: []llm.Block{llm.Text("slow reply")}, StallAfter: 4})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var err error
	for _, e := range newProvider(t, srv, &sleeps{}).Stream(ctx, userReq("hi")) {
		if e != nil {
			err = e
			break
		}
		cancel()
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestEnvironmentAndLocalServer(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Script(llmtest.TextReply("from env"), llmtest.TextReply("local"))
	env := map[string]string{"OPENAI_BASE_URL": srv.OpenAIURL(), "OPENAI_API_KEY": "env-key"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	p := openai.New(openai.Options{LookupEnv: lookup, HTTPClient: srv.Client(), Model: "llama3"})
	if _, resp, err := collect(t, p, &llm.Request{Messages: []llm.Message{llm.UserText("x")}}); err != nil || resp.Message.Text() != "from env" {
		t.Fatalf("env: %v %v", resp, err)
	}
	if r := srv.LastRequest(); r.Header.Get("Authorization") != "Bearer env-key" || r.Model != "llama3" {
		t.Errorf("auth %q model %q", r.Header.Get("Authorization"), r.Model)
	}
	// A local server without a key: no Authorization header, max_tokens.
	noKey := func(k string) (string, bool) {
		if k == "OPENAI_API_KEY" {
			return "", false
		}
		return lookup(k)
	}
	p = openai.New(openai.Options{LookupEnv: noKey, HTTPClient: srv.Client(), BaseURL: srv.URL(), LegacyMaxTokens: true})
	if _, resp, err := collect(t, p, userReq("x")); err != nil || resp.Message.Text() != "local" {
		t.Fatalf("local: %v %v", resp, err)
	}
	r := srv.LastRequest()
	if h := r.Header.Get("Authorization"); h != "" {
		t.Errorf("Authorization = %q, want none", h)
	}
	if r.Path != "/chat/completions" || !strings.Contains(string(r.Body), `"max_tokens":8192`) {
		t.Errorf("path %s body %s", r.Path, r.Body)
	}
}

func TestNoModel(t *testing.T) {
	p := openai.New(openai.Options{LookupEnv: func(string) (string, bool) { return "", false }})
	_, err := llm.Collect(p.Stream(t.Context(), &llm.Request{Messages: []llm.Message{llm.UserText("x")}}))
	if err == nil || !strings.Contains(err.Error(), "no model") {
		t.Fatalf("err = %v", err)
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
	body, err := json.Marshal(map[string]any{"model": "gpt-test", "stream": true, "max_tokens": 10, "messages": []any{}, "stream_options": map[string]any{"include_usage": true}})
	if err != nil {
		b.Fatal(err)
	}
	resp, err := srv.Client().Post(srv.OpenAIURL()+"/chat/completions", "application/json", bytes.NewReader(body))
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
		run(b, newProvider(b, srv, &sleeps{}, func(o *openai.Options) { o.HTTPClient = &http.Client{Transport: cannedTransport{wire}} }), false)
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

// TestAudioInToolResult checks that audio in a tool result, which tool
// messages cannot carry, reaches the model as a note naming it, and that
// no audio part is sent anywhere.
func TestAudioInToolResult(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Script(llmtest.TextReply("heard"))
	wav := []byte("RIFF\x24\x00\x00\x00WAVEfmt ")
	req := &llm.Request{Model: "gpt-test", Messages: []llm.Message{
		llm.UserText("play it"),
		llm.AssistantMessage(llm.ToolUse("call_1", "Tone", nil), llm.ToolUse("call_2", "Tone", nil)),
		llm.UserMessage(
			llm.ToolResult("call_1", []tool.Content{tool.Text("a tone:"), tool.Audio(wav, "audio/wav")}, false),
			llm.ToolResult("call_2", []tool.Content{tool.Audio([]byte{1, 2}, ""), tool.Text("clipped")}, true),
		),
	}}
	if _, _, err := collect(t, newProvider(t, srv, &sleeps{}), req); err != nil {
		t.Fatal(err)
	}
	r := srv.LastRequest()
	var texts []string
	for _, b := range r.ToolResults() {
		texts = append(texts, tool.JoinText(b.Content))
	}
	want := []string{"a tone:\n[audio clip, 16 bytes, audio/wav]", "Error: [audio clip, 2 bytes, unknown type]\nclipped"}
	if diff := cmp.Diff(want, texts); diff != "" {
		t.Errorf("tool messages (-want +got):\n%s", diff)
	}
	var roles []string
	for _, m := range r.Messages {
		roles = append(roles, string(m.Role))
	}
	if diff := cmp.Diff([]string{"user", "assistant", "tool", "tool"}, roles); diff != "" {
		t.Errorf("roles (-want +got):\n%s", diff)
	}
	body := string(r.Body)
	if strings.Contains(body, "input_audio") || strings.Contains(body, base64.StdEncoding.EncodeToString(wav)) {
		t.Errorf("audio sent as data: %s", body)
	}
}
