package openai_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/llm/openai"
	"github.com/gantry-dev/gantry/tool"
)

// TestBodyMatchesParams: the body Stream sends, spliced from pre-encoded
// pieces, is the JSON of Params plus "stream": true.
func TestBodyMatchesParams(t *testing.T) {
	temp := 0.2
	conv := []llm.Message{
		{Role: llm.RoleSystem, Content: []llm.Block{llm.Text("Late instruction.")}},
		llm.UserText("read"),
		llm.AssistantMessage(llm.Text("ok"), llm.ToolUse("t1", "Read", json.RawMessage(`{"path":"a"}`))),
		llm.UserMessage(llm.ToolResult("t1", []tool.Content{tool.Text("x"), tool.Image([]byte("png"), "image/png")}, true)),
	}
	tests := []struct {
		name string
		req  llm.Request
	}{
		{"minimal", llm.Request{Model: "m", Messages: []llm.Message{llm.UserText("hi")}}},
		{"tools", llm.Request{Model: "m", Messages: conv, Tools: specs("Read", "Grep"), System: llm.System("sys")}},
		{"options", llm.Request{Model: "m", Messages: conv, Tools: specs("Read"), ThinkingBudget: 8000, MaxTokens: 1000, Temperature: &temp,
			StopSequences: []string{"STOP"}, ToolChoice: llm.ToolChoice{Mode: llm.ToolChoiceTool, Name: "Read", DisableParallel: true}}},
	}
	p := openai.New(openai.Options{APIKey: "k", LookupEnv: func(string) (string, bool) { return "", false }})
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

// TestToolArrayShared: sessions that send the same tool list share one
// tools array, whatever spec values they were built from.
func TestToolArrayShared(t *testing.T) {
	p := openai.New(openai.Options{APIKey: "k", LookupEnv: func(string) (string, bool) { return "", false }})
	for i := range 4 {
		req := &llm.Request{Model: "m", Messages: []llm.Message{llm.UserText(fmt.Sprint("hi ", i))}, Tools: specs("Read", "Grep")}
		if _, err := p.Body(req); err != nil {
			t.Fatal(err)
		}
	}
	if n := openai.ToolArrays(p); n != 1 {
		t.Errorf("%d tools arrays for one list, want 1", n)
	}
	if _, err := p.Body(&llm.Request{Model: "m", Messages: []llm.Message{llm.UserText("hi")}, Tools: specs("Grep")}); err != nil {
		t.Fatal(err)
	}
	if n := openai.ToolArrays(p); n != 2 {
		t.Errorf("%d tools arrays for two lists, want 2", n)
	}
}
