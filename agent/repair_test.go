package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/llm/llmtest"
	"github.com/gantry-dev/gantry/tool"
	"github.com/gantry-dev/gantry/transcript"
	"github.com/gantry-dev/gantry/workspace"
)

// transcriptLines is a healthy transcript of two turns with tool calls, one
// JSONL line per record (u = user, a = assistant).
func transcriptLines(t *testing.T) map[string][]byte {
	t.Helper()
	res := func(id, text string) llm.Block { return llm.ToolResult(id, []tool.Content{tool.Text(text)}, false) }
	use := func(id string) llm.Block { return llm.ToolUse(id, "Echo", json.RawMessage(`{"text":"x"}`)) }
	recs := []struct {
		key, typ, parent string
		msg              llm.Message
	}{
		{"u1", transcript.TypeUser, "", llm.UserText("first question")},
		{"a1", transcript.TypeAssistant, "u1", llm.AssistantMessage(llm.Text("let me look"), use("t1"))},
		{"u2", transcript.TypeUser, "a1", llm.UserMessage(res("t1", "one"))},
		{"a2", transcript.TypeAssistant, "u2", llm.AssistantMessage(llm.Text("first answer"))},
		{"u3", transcript.TypeUser, "a2", llm.UserText("second question")},
		{"a3", transcript.TypeAssistant, "u3", llm.AssistantMessage(use("t2"), use("t3"))},
		{"u4", transcript.TypeUser, "a3", llm.UserMessage(res("t2", "two"), res("t3", "three"))},
		{"a4", transcript.TypeAssistant, "u4", llm.AssistantMessage(llm.Text("second answer"))},
	}
	out := map[string][]byte{}
	for _, r := range recs {
		b, err := json.Marshal(transcript.Record{Type: r.typ, UUID: r.key, ParentUUID: r.parent, SessionID: "s1", Message: mustJSON(r.msg)})
		if err != nil {
			t.Fatal(err)
		}
		out[r.key] = b
	}
	return out
}

// TestResumeRepairsTranscripts: a transcript damaged in any of the ways a
// crash, a disk or a bad copy damages it resumes into a request the fake
// API accepts under the real APIs' conversation rules (through the real
// SDKs), with a notice saying what was repaired. The damaged history itself
// would be refused.
func TestResumeRepairsTranscripts(t *testing.T) {
	order := []string{"u1", "a1", "u2", "a2", "u3", "a3", "u4", "a4"}
	cases := []struct {
		name    string
		damage  func(l map[string][]byte) []string // the keys, in file order; may edit lines
		tail    []byte                             // appended without a newline (a torn write)
		damaged bool                               // a notice is expected and the raw history is invalid
	}{
		{name: "intact", damage: func(map[string][]byte) []string { return order }},
		{name: "torn last line", damaged: true,
			damage: func(l map[string][]byte) []string { return order[:6] },
			tail:   []byte(`{"type":"user","uuid":"u4","message":{"role":"user","content":[{"type":"tool_res`)},
		{name: "corrupt line in the middle", damaged: true, damage: func(l map[string][]byte) []string {
			l["u2"] = []byte(`{"type":"user","uuid":"u2","message":{"role":"us`)
			return order
		}},
		{name: "NUL block in the middle", damaged: true, damage: func(l map[string][]byte) []string {
			l["u4"] = bytes.Repeat([]byte{0}, 512)
			return order
		}},
		{name: "duplicated record", damaged: true, damage: func(l map[string][]byte) []string {
			return []string{"u1", "a1", "a1", "u2", "u2", "a2", "u3", "a3", "u4", "a4"}
		}},
		{name: "duplicated tool call under a new uuid", damaged: true, damage: func(l map[string][]byte) []string {
			l["a3b"] = bytes.Replace(l["a3"], []byte(`"uuid":"a3"`), []byte(`"uuid":"a3b"`), 1)
			return []string{"u1", "a1", "u2", "a2", "u3", "a3", "u4", "a3b", "a4"}
		}},
		{name: "parent cycle", damage: func(l map[string][]byte) []string {
			l["u1"] = bytes.Replace(l["u1"], []byte(`"uuid":"u1"`), []byte(`"uuid":"u1","parentUuid":"a4"`), 1)
			l["a2"] = bytes.Replace(l["a2"], []byte(`"parentUuid":"u2"`), []byte(`"parentUuid":"a2"`), 1)
			return order
		}},
		{name: "lost tool call", damaged: true, damage: func(l map[string][]byte) []string {
			return []string{"u1", "a1", "u2", "a2", "u3", "u4", "a4"}
		}},
		{name: "lost start", damaged: true, damage: func(l map[string][]byte) []string { return order[1:] }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bothProviders(t, []llmtest.Option{llmtest.WithStrictMessages()}, func(t *testing.T, f *fixture) {
				lines := transcriptLines(t)
				var file []byte
				for _, k := range c.damage(lines) {
					file = append(append(file, lines[k]...), '\n')
				}
				file = append(file, c.tail...)
				const id = "damaged-session"
				p := f.store.Path(f.dir, id)
				os.MkdirAll(filepath.Dir(p), 0o700)
				if err := os.WriteFile(p, file, 0o600); err != nil {
					t.Fatal(err)
				}

				// Unrepaired, the history breaks the APIs' rules.
				recs, _ := transcript.ReadFile(p)
				var raw []llmtest.Message
				for _, r := range recs {
					var m llm.Message
					if json.Unmarshal(r.Message, &m) == nil {
						raw = append(raw, llmtest.Message{Role: string(m.Role), Content: m.Content})
					}
				}
				raw = append(raw, llmtest.Message{Role: "user", Content: []llm.Block{llm.Text("go on")}})
				if err := llmtest.CheckConversation(raw); (err != nil) != c.damaged {
					t.Fatalf("unrepaired history: check error %v, damaged %v", err, c.damaged)
				}

				f.srv.Script(llmtest.TextReply("resumed fine"))
				a := f.agentWS(t, func(o *workspace.Options) { o.ResumeID = id }, nil)
				evs, res, err := collect(t, context.Background(), a, "go on")
				if err != nil || res.IsError {
					t.Fatalf("resume failed: %v %+v", err, res)
				}
				if got := f.srv.LastRequest(); len(got.Messages) == 0 || !strings.Contains(res.Text, "resumed fine") {
					t.Fatalf("result %q", res.Text)
				}
				var notice string
				for _, ev := range evs {
					if n, ok := ev.(*NoticeEvent); ok && strings.Contains(n.Text, "transcript was damaged") {
						notice = n.Text
					}
				}
				if (notice != "") != c.damaged {
					t.Fatalf("notice %q, damaged %v", notice, c.damaged)
				}
			})
		})
	}
}

func TestCheckConversationRules(t *testing.T) {
	use := llm.ToolUse("x", "Echo", json.RawMessage(`{}`))
	res := llm.ToolResult("x", []tool.Content{tool.Text("r")}, false)
	m := func(role string, b ...llm.Block) llmtest.Message { return llmtest.Message{Role: role, Content: b} }
	cases := []struct {
		name string
		msgs []llmtest.Message
		want string // "" = valid
	}{
		{"valid", []llmtest.Message{m("system", llm.Text("s")), m("user", llm.Text("q")), m("assistant", use), m("user", res, llm.Text("more"))}, ""},
		{"openai tool messages", []llmtest.Message{m("user", llm.Text("q")), m("assistant", use), m("tool", res), m("user", llm.Text("next"))}, ""},
		{"assistant first", []llmtest.Message{m("assistant", llm.Text("a"))}, "first message"},
		{"empty", []llmtest.Message{m("user")}, "non-empty content"},
		{"empty text", []llmtest.Message{m("user", llm.Text(""))}, "non-empty"},
		{"unanswered", []llmtest.Message{m("user", llm.Text("q")), m("assistant", use), m("user", llm.Text("q2"))}, "without tool_result"},
		{"unanswered at the end", []llmtest.Message{m("user", llm.Text("q")), m("assistant", use)}, "without tool_result"},
		{"orphan result", []llmtest.Message{m("user", res)}, "unexpected tool_use_id"},
		{"result after text", []llmtest.Message{m("user", llm.Text("q")), m("assistant", use), m("user", llm.Text("t"), res)}, "come before"},
		{"repeated id", []llmtest.Message{m("user", llm.Text("q")), m("assistant", use), m("user", res), m("assistant", use), m("user", res)}, "unique"},
	}
	for _, c := range cases {
		err := llmtest.CheckConversation(c.msgs)
		if (err == nil) != (c.want == "") || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}
