package openai_test

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/llm/llmtest"
	"github.com/gantry-dev/gantry/llm/openai"
	"github.com/gantry-dev/gantry/tool"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newProvider(t testing.TB, srv *llmtest.Server, sl *llmtest.SleepRecorder, mods ...func(*openai.Options)) *openai.Provider {
	t.Helper()
	o := openai.Options{
		BaseURL:    srv.OpenAIURL(),
		APIKey:     "test-key",
		HTTPClient: srv.Client(),
		LookupEnv:  func(string) (string, bool) { return "", false },
		Retry:      llm.RetryPolicy{Sleep: sl.Sleep, Jitter: func() float64 { return 0 }},
	}
	for _, m := range mods {
		m(&o)
	}
	return openai.New(o)
}

func userReq(text string) *llm.Request {
	return &llm.Request{Model: "gpt-test", Messages: []llm.Message{llm.UserText(text)}}
}

func TestReasoningAsThinking(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.WithChunkSize(5))
	srv.Script(llmtest.Reply{Content: []llm.Block{llm.Thinking("First, consider the question.", ""), llm.Text("42")}})
	req := userReq("q")
	req.ThinkingBudget = 8000
	_, resp, err := llmtest.Stream(t, newProvider(t, srv, &llmtest.SleepRecorder{}), req)
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
	if _, _, err := llmtest.Stream(t, newProvider(t, srv, &llmtest.SleepRecorder{}), req); err != nil {
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

func TestEnvironmentAndLocalServer(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Script(llmtest.TextReply("from env"), llmtest.TextReply("local"))
	env := map[string]string{"OPENAI_BASE_URL": srv.OpenAIURL(), "OPENAI_API_KEY": "env-key"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	p := openai.New(openai.Options{LookupEnv: lookup, HTTPClient: srv.Client(), Model: "llama3"})
	if _, resp, err := llmtest.Stream(t, p, &llm.Request{Messages: []llm.Message{llm.UserText("x")}}); err != nil || resp.Message.Text() != "from env" {
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
	if _, resp, err := llmtest.Stream(t, p, userReq("x")); err != nil || resp.Message.Text() != "local" {
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
	if _, _, err := llmtest.Stream(t, newProvider(t, srv, &llmtest.SleepRecorder{}), req); err != nil {
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
