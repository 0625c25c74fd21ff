package anthropic_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/llm/anthropic"
	"github.com/gantry-dev/gantry/tool"
)

// TestBodyMatchesParams: the body Stream sends, spliced from pre-encoded
// pieces, is the JSON of Params plus "stream": true.
func TestBodyMatchesParams(t *testing.T) {
	temp := 0.2
	conv := []llm.Message{
		{Role: llm.RoleSystem, Content: []llm.Block{llm.Text("Late instruction.")}},
		llm.UserText("read"),
		llm.AssistantMessage(llm.Thinking("hmm", "sig"), llm.ToolUse("t1", "Read", json.RawMessage(`{"path":"a"}`))),
		llm.UserMessage(llm.ToolResult("t1", []tool.Content{tool.Text("x"), tool.Image([]byte("png"), "image/png")}, true)),
	}
	tests := []struct {
		name string
		req  llm.Request
	}{
		{"minimal", llm.Request{Messages: []llm.Message{llm.UserText("hi")}}},
		{"tools and cache", llm.Request{Model: "m", Messages: conv, Tools: specs("Read", "Grep"), Cache: llm.AllCacheHints, System: llm.System("sys")}},
		{"web search last", llm.Request{Messages: conv, Tools: specs("Read"), Cache: llm.AllCacheHints, WebSearch: &llm.WebSearchTool{MaxUses: 2, AllowedDomains: []string{"go.dev"}}}},
		{"thinking and choice", llm.Request{Messages: conv, Tools: specs("Read"), ThinkingBudget: 2048, MaxTokens: 1000, Temperature: &temp,
			StopSequences: []string{"STOP"}, ToolChoice: llm.ToolChoice{Mode: llm.ToolChoiceTool, Name: "Read", DisableParallel: true}}},
		{"no tools, choice none", llm.Request{Messages: conv, ToolChoice: llm.ToolChoice{Mode: llm.ToolChoiceNone}}},
	}
	p := anthropic.New(anthropic.Options{APIKey: "k", LookupEnv: func(string) (string, bool) { return "", false }})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for range 2 { // the second time from the tool cache
				body, err := p.Body(&tc.req)
				if err != nil {
					t.Fatal(err)
				}
				params, err := p.Params(&tc.req)
				if err != nil {
					t.Fatal(err)
				}
				pb, err := params.MarshalJSON()
				if err != nil {
					t.Fatal(err)
				}
				var got, want map[string]any
				if err := json.Unmarshal(body, &got); err != nil {
					t.Fatalf("body is not JSON: %v\n%s", err, body)
				}
				if err := json.Unmarshal(pb, &want); err != nil {
					t.Fatal(err)
				}
				want["stream"] = true
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("body (-params +body):\n%s", diff)
				}
			}
		})
	}
}

// TestToolsEncodedOnce: equal definitions share one encoding across
// requests (new spec values with the same content hit), a changed one is
// encoded again, the cache-breakpoint variant is kept apart.
func TestToolsEncodedOnce(t *testing.T) {
	p := anthropic.New(anthropic.Options{APIKey: "k", LookupEnv: func(string) (string, bool) { return "", false }})
	req := func(tools []*tool.Spec) *llm.Request {
		return &llm.Request{Messages: []llm.Message{llm.UserText("hi")}, Tools: tools, Cache: llm.CacheHints{Tools: true}}
	}
	for range 3 {
		if _, err := p.Body(req(specs("A", "B", "C"))); err != nil {
			t.Fatal(err)
		}
	}
	if n := anthropic.EncodedTools(p); n != 3 {
		t.Fatalf("after three requests of the same three tools: %d encodings, want 3", n)
	}
	if n := anthropic.ToolArrays(p); n != 1 {
		t.Fatalf("after three requests of the same three tools: %d tools arrays, want 1", n)
	}
	changed := specs("A", "B", "C")
	changed[0].Description = "changed"
	body, err := p.Body(req(changed))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(body), `"description":"changed"`) {
		t.Errorf("changed description not sent: %s", body)
	}
	// A, changed A, B and C as sent last (C with the breakpoint).
	if _, err := p.Body(req(specs("C", "B", "A"))); err != nil {
		t.Fatal(err)
	}
	if n := anthropic.EncodedTools(p); n != 6 {
		t.Errorf("%d encodings, want 6 (A, B, C-cached, changed A, C, A-cached)", n)
	}
	if n := anthropic.ToolArrays(p); n != 3 {
		t.Errorf("%d tools arrays, want 3 (ABC, changed ABC, CBA)", n)
	}
	// The web search tool is encoded for each request: its array is found
	// by content, not made again.
	ws := req(specs("A"))
	ws.WebSearch = &llm.WebSearchTool{MaxUses: 1}
	for range 3 {
		if _, err := p.Body(ws); err != nil {
			t.Fatal(err)
		}
	}
	if n := anthropic.ToolArrays(p); n != 4 {
		t.Errorf("%d tools arrays after three web-search requests, want 4", n)
	}
}

// BenchmarkBody is the request encoding of turn 30 of a conversation with
// the built-in-sized tool list: the tools come from the cache, the
// messages are encoded.
func BenchmarkBody(b *testing.B) {
	var msgs []llm.Message
	msgs = append(msgs, llm.UserText("work"))
	for i := range 30 {
		id := fmt.Sprintf("t%d", i)
		msgs = append(msgs, llm.AssistantMessage(llm.ToolUse(id, "Read", json.RawMessage(`{"file_path":"f.txt"}`))),
			llm.UserMessage(llm.ToolResult(id, []tool.Content{tool.Text(strings.Repeat("a line of text\n", 40))}, false)))
	}
	tools := specs("Read", "Write", "Edit", "Glob", "Grep", "Bash", "WebFetch", "WebSearch", "TodoWrite", "Task", "Skill", "LSP")
	for _, s := range tools {
		s.Prompt = strings.Repeat("Usage notes for the model. ", 60)
	}
	req := &llm.Request{Model: "m", System: llm.System("system"), Messages: msgs, Tools: tools, Cache: llm.AllCacheHints}
	p := anthropic.New(anthropic.Options{APIKey: "k", LookupEnv: func(string) (string, bool) { return "", false }})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Body(req); err != nil {
			b.Fatal(err)
		}
	}
}
