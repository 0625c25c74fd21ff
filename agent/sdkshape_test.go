package agent

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/llm/llmtest"
)

// TestTranscriptResultNames: the transcript's result record uses the
// stream-json names, not Go's field names.
func TestTranscriptResultNames(t *testing.T) {
	f := newFixture(t)
	f.srv.Script(llmtest.TextReply("hi"))
	a := f.agent(t, nil)
	if _, err := a.Prompt(context.Background(), "hello"); err != nil {
		t.Fatal(err)
	}
	a.Close()
	b, err := os.ReadFile(f.store.Path(f.dir, a.SessionID()))
	if err != nil {
		t.Fatal(err)
	}
	var data json.RawMessage
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var rec struct {
			Subtype string          `json:"subtype"`
			Data    json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err == nil && rec.Subtype == "result" {
			data = rec.Data
		}
	}
	var got map[string]any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatalf("result record: %v (%s)", err, data)
	}
	for _, k := range []string{"subtype", "is_error", "result", "session_id", "num_turns", "usage", "total_cost_usd"} {
		if _, ok := got[k]; !ok {
			t.Errorf("result record lacks %q: %s", k, data)
		}
	}
	if _, ok := got["Subtype"]; ok {
		t.Errorf("result record uses Go names: %s", data)
	}
}

// TestReplyBeforeResults: the assistant message with a tool call comes
// before the call's result, with the provider's id, model and usage.
func TestReplyBeforeResults(t *testing.T) {
	f := newFixture(t)
	f.srv.Script(llmtest.Reply{Content: []llm.Block{llm.ToolUse("c1", "echo", json.RawMessage(`{"text":"x"}`))}, ID: "msg_a", Usage: llm.Usage{InputTokens: 7, OutputTokens: 3}},
		llmtest.TextReply("done"))
	a := f.agent(t, func(o *testOpts) { o.StreamEvents = true })
	var order []string
	streamed := 0
	for ev, err := range a.Run(context.Background(), "go") {
		if err != nil {
			t.Fatal(err)
		}
		switch e := ev.(type) {
		case *StreamEvent:
			streamed++
		case *ToolResultEvent:
			order = append(order, "result:"+e.Outcome.ID)
		case *MessageEvent:
			if e.Message.Role == llm.RoleAssistant {
				if e.Reply == nil || e.Reply.ID == "" || e.Reply.Model == "" {
					t.Errorf("reply without provider facts: %+v", e.Reply)
				}
				order = append(order, "reply:"+e.Reply.ID)
			}
		}
	}
	if strings.Join(order, " ") != "reply:msg_a result:c1 reply:msg_2" {
		t.Errorf("order = %v", order)
	}
	if streamed == 0 {
		t.Error("no StreamEvent with Options.StreamEvents")
	}
}
