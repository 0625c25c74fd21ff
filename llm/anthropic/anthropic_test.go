package anthropic_test

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/llm/anthropic"
	"github.com/gantry-dev/gantry/llm/llmtest"
	"github.com/gantry-dev/gantry/tool"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newProvider(t testing.TB, srv *llmtest.Server, sl *llmtest.SleepRecorder, mods ...func(*anthropic.Options)) *anthropic.Provider {
	t.Helper()
	o := anthropic.Options{
		BaseURL:    srv.URL(),
		APIKey:     "test-key",
		HTTPClient: srv.Client(),
		LookupEnv:  func(string) (string, bool) { return "", false },
		Retry:      llm.RetryPolicy{Sleep: sl.Sleep, Jitter: func() float64 { return 0 }},
	}
	for _, m := range mods {
		m(&o)
	}
	return anthropic.New(o)
}

func userReq(text string) *llm.Request {
	return &llm.Request{Model: "claude-test", Messages: []llm.Message{llm.UserText(text)}}
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
	p := newProvider(t, srv, &llmtest.SleepRecorder{})
	req := userReq("question")
	req.ThinkingBudget = 2048
	req.MaxTokens = 1000 // below the budget: raised
	_, resp, err := llmtest.Stream(t, p, req)
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
	if _, _, err := llmtest.Stream(t, p, req); err != nil {
		t.Fatal(err)
	}
	sent := srv.LastRequest().Messages[1]
	if sent.Role != "assistant" || cmp.Diff(want, sent.Content) != "" {
		t.Errorf("assistant turn sent back as %+v", sent)
	}
}

func TestUsageWithCache(t *testing.T) {
	srv := llmtest.NewServer(t)
	u := llm.Usage{InputTokens: 5, OutputTokens: 9, CacheCreationInputTokens: 1200, CacheReadInputTokens: 3400}
	srv.Script(llmtest.Reply{Content: []llm.Block{llm.Text("x")}, Usage: u})
	evs, resp, err := llmtest.Stream(t, newProvider(t, srv, &llmtest.SleepRecorder{}), userReq("hi"))
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
	if _, _, err := llmtest.Stream(t, newProvider(t, srv, &llmtest.SleepRecorder{}), req); err != nil {
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

func TestEnvironment(t *testing.T) {
	srv := llmtest.NewServer(t)
	other := llmtest.NewServer(t)
	srv.Script(llmtest.TextReply("from env"))
	other.Script(llmtest.TextReply("from option"))
	env := map[string]string{"ANTHROPIC_BASE_URL": srv.URL(), "ANTHROPIC_API_KEY": "env-key"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }

	p := anthropic.New(anthropic.Options{LookupEnv: lookup, HTTPClient: srv.Client()})
	if _, resp, err := llmtest.Stream(t, p, userReq("hi")); err != nil || resp.Message.Text() != "from env" {
		t.Fatalf("env: %v %v", resp, err)
	}
	if k := srv.LastRequest().Header.Get("x-api-key"); k != "env-key" {
		t.Errorf("x-api-key = %q", k)
	}
	if m := srv.LastRequest().Model; m != "claude-test" {
		t.Errorf("model = %q", m)
	}

	p = anthropic.New(anthropic.Options{LookupEnv: lookup, HTTPClient: other.Client(), BaseURL: other.URL(), APIKey: "opt-key"})
	if _, resp, err := llmtest.Stream(t, p, &llm.Request{Messages: []llm.Message{llm.UserText("x")}}); err != nil || resp.Message.Text() != "from option" {
		t.Fatalf("option: %v %v", resp, err)
	}
	r := other.LastRequest()
	if r.Header.Get("x-api-key") != "opt-key" || r.Model != anthropic.DefaultModel {
		t.Errorf("key %q model %q", r.Header.Get("x-api-key"), r.Model)
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
	if _, _, err := llmtest.Stream(t, newProvider(t, srv, &llmtest.SleepRecorder{}), req); err != nil {
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
