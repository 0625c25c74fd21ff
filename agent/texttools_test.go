package agent

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/llm/llmtest"
	"github.com/gantry-dev/gantry/llm/texttools"
	"github.com/gantry-dev/gantry/tool"
)

// TestTextToolProtocol runs the agent loop over the text tool protocol:
// text-only replies whose calls are tags, results sent back as text, a
// malformed call answered with an error quoting the syntax, and partial
// input reaching the status events (never the tool).
func TestTextToolProtocol(t *testing.T) {
	bothProviders(t, []llmtest.Option{llmtest.WithChunkSize(5)}, func(t *testing.T, f *fixture) {
		long := strings.Repeat("x < y && z; ", 60) // over 512 bytes: shown partially
		f.srv.Script(
			llmtest.TextReply("Echoing.\n<Echo>\n<text>"+long+"</text>\n</Echo>\n<Fail>\noops\n</Fail>\n"),
			llmtest.TextReply("done"),
		)
		a := f.agent(t, func(o *testOpts) { o.ToolProtocol = texttools.Text })
		evs, res, err := collect(t, context.Background(), a, "go")
		if err != nil || res == nil || res.Subtype != SubtypeSuccess || res.Text != "done" {
			t.Fatalf("res %+v err %v", res, err)
		}
		reqs := f.srv.Requests()
		if len(reqs) != 2 || len(reqs[0].Tools) != 0 || len(reqs[1].Tools) != 0 {
			t.Fatalf("native tools were sent")
		}
		var sys strings.Builder
		for _, s := range reqs[0].System {
			sys.WriteString(s.Text)
		}
		if !strings.Contains(sys.String(), "## Echo") || !strings.Contains(sys.String(), texttools.Syntax) {
			t.Fatalf("system prompt lacks the tools: %s", sys.String())
		}
		last := reqs[1].Messages[len(reqs[1].Messages)-1]
		var text strings.Builder
		for _, b := range last.Content {
			if b.Type != llm.TypeText {
				t.Fatalf("a %s block was sent", b.Type)
			}
			text.WriteString(b.Text)
		}
		got := text.String()
		for _, want := range []string{
			`<tool_result tool="Echo"`, "echo: " + long + "\n</tool_result>",
			`<tool_result tool="Fail"`, `status="error"`, texttools.Syntax,
		} {
			if !strings.Contains(got, want) {
				t.Fatalf("results lack %q:\n%s", want, got)
			}
		}
		var partial bool
		for _, ev := range evs {
			st, ok := ev.(*ToolStatus)
			if !ok || st.Status.Name != "Echo" || st.Status.Phase != tool.PhaseWait || st.Status.Input == nil {
				continue
			}
			var in echoIn
			if json.Unmarshal(st.Status.Input, &in) == nil && in.Text != long && strings.HasPrefix(long, in.Text) && in.Text != "" {
				partial = true
			}
		}
		if !partial {
			t.Fatal("no status event with the partial input")
		}
	})
}

// TestTextProtocolUnknownTool: a text-protocol call of a tool that is not in
// the pool (a snake_case name other agents use) comes back to the model as
// the executor's unknown-tool error, and the run goes on.
func TestTextProtocolUnknownTool(t *testing.T) {
	bothProviders(t, nil, func(t *testing.T, f *fixture) {
		f.srv.Script(
			llmtest.TextReply("<echo_text>\n<text>hi</text>\n</echo_text>"),
			llmtest.TextReply("done"),
		)
		a := f.agent(t, func(o *testOpts) { o.ToolProtocol = texttools.Text })
		_, res, err := collect(t, context.Background(), a, "go")
		if err != nil || res == nil || res.Subtype != SubtypeSuccess || res.Text != "done" {
			t.Fatalf("res %+v err %v", res, err)
		}
		reqs := f.srv.Requests()
		if len(reqs) != 2 {
			t.Fatalf("%d requests, want 2", len(reqs))
		}
		last := reqs[1].Messages[len(reqs[1].Messages)-1]
		var got strings.Builder
		for _, b := range last.Content {
			got.WriteString(b.Text)
		}
		if !strings.Contains(got.String(), `tool="echo_text"`) || !strings.Contains(got.String(), `Unknown tool "echo_text"`) {
			t.Fatalf("no unknown-tool result:\n%s", got.String())
		}
	})
}
