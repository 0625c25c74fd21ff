package texttools_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/llm/anthropic"
	"github.com/gantry-dev/gantry/llm/llmtest"
	"github.com/gantry-dev/gantry/llm/openai"
	"github.com/gantry-dev/gantry/llm/texttools"
	"github.com/gantry-dev/gantry/tool"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var specs = []*tool.Spec{
	{Name: "Read", Description: "Reads a file.", InputSchema: json.RawMessage(`{"type":"object","properties":{"file_path":{"type":"string","description":"The file"},"limit":{"type":"number"}},"required":["file_path"]}`)},
	{Name: "Write", Description: "Writes a file.", InputSchema: json.RawMessage(`{"type":"object","properties":{"file_path":{"type":"string"},"content":{"type":"string"}},"required":["file_path","content"]}`)},
}

type provCase struct {
	name string
	new  func(srv *llmtest.Server) llm.Provider
}

var providers = []provCase{
	{"anthropic", func(srv *llmtest.Server) llm.Provider {
		return anthropic.New(anthropic.Options{BaseURL: srv.URL(), APIKey: "k", HTTPClient: srv.Client(), LookupEnv: func(string) (string, bool) { return "", false }, Model: "m"})
	}},
	{"openai", func(srv *llmtest.Server) llm.Provider {
		return openai.New(openai.Options{BaseURL: srv.OpenAIURL(), APIKey: "k", HTTPClient: srv.Client(), LookupEnv: func(string) (string, bool) { return "", false }, Model: "m"})
	}},
}

const code = "package main\n\nfunc f(a, b int) bool { return a < b && b > 0 } // <Read> & </file_path>\n"

// reply is a text-only model reply with two calls, code with < and & in a
// parameter, and text around them.
var reply = "I'll read it first.\n<Read>\n<file_path>/src/a.go</file_path>\n<limit>20</limit>\n</Read>\nThen write:\n<Write>\n<file_path>/src/b.go</file_path>\n<content>\n" + code + "</content>\n</Write>\n"

func TestTextProtocolOverProviders(t *testing.T) {
	for _, pc := range providers {
		for _, chunk := range []int{0, 1, 2, 3, 7, 64} {
			t.Run(pc.name+"/chunk"+itoa(chunk), func(t *testing.T) {
				srv := llmtest.NewServer(t, llmtest.WithChunkSize(chunk))
				srv.Script(llmtest.TextReply(reply))
				p := texttools.New(pc.new(srv))
				var starts, ends []llm.Event
				deltas := map[int]string{}
				var acc llm.Accumulator
				for ev, err := range p.Stream(context.Background(), &llm.Request{
					System: llm.System("Be brief."), Tools: specs,
					Messages: []llm.Message{llm.UserText("go")},
				}) {
					if err != nil {
						t.Fatal(err)
					}
					acc.Add(ev)
					switch ev.Type {
					case llm.EventToolUseStart:
						starts = append(starts, ev)
					case llm.EventToolUseDelta:
						deltas[ev.Index] += ev.Text
					case llm.EventToolUseEnd:
						ends = append(ends, ev)
					}
				}
				resp := acc.Response()
				if resp.StopReason != llm.StopToolUse {
					t.Errorf("stop reason %q", resp.StopReason)
				}
				if len(starts) != 2 || len(ends) != 2 {
					t.Fatalf("starts %d ends %d", len(starts), len(ends))
				}
				wantIn := []string{
					`{"file_path":"/src/a.go","limit":"20"}`,
					`{"file_path":"/src/b.go","content":` + jsonStr(code[:len(code)-1]) + `}`,
				}
				for i, e := range ends {
					if e.InputErr != nil || !texttools.JSONEqual(string(e.Input), wantIn[i]) {
						t.Fatalf("call %d: %s (%v), want %s", i, e.Input, e.InputErr, wantIn[i])
					}
					if e.ID != starts[i].ID || e.Name != starts[i].Name || !strings.HasPrefix(e.ID, "toolu_") {
						t.Fatalf("call %d: start %+v end %+v", i, starts[i], e)
					}
					if !texttools.JSONEqual(deltas[e.Index], string(e.Input)) {
						t.Fatalf("partial input %q does not build %s", deltas[e.Index], e.Input)
					}
				}
				if ends[0].ID == ends[1].ID {
					t.Fatal("two calls share an id")
				}
				if got := resp.Message.Text(); got != "I'll read it first.\n\nThen write:\n\n" {
					t.Fatalf("text %q", got)
				}
				if n := len(resp.Message.ToolUses()); n != 2 {
					t.Fatalf("tool uses %d", n)
				}
				// What was sent: no native tools, the Markdown description and
				// the syntax in the system prompt.
				req := srv.LastRequest()
				if len(req.Tools) != 0 || req.ToolChoice != nil {
					t.Fatalf("native tools sent: %+v %s", req.Tools, req.ToolChoice)
				}
				sys := systemText(req)
				for _, want := range []string{"Be brief.", "# Available tools", "## Read", "`file_path` (string, required): The file", texttools.Syntax} {
					if !strings.Contains(sys, want) {
						t.Fatalf("system prompt lacks %q:\n%s", want, sys)
					}
				}
			})
		}
	}
}

func TestHistoryAndResults(t *testing.T) {
	for _, pc := range providers {
		t.Run(pc.name, func(t *testing.T) {
			srv := llmtest.NewServer(t, llmtest.WithStrictMessages())
			srv.Script(llmtest.TextReply("done"))
			p := texttools.New(pc.new(srv))
			msgs := []llm.Message{
				llm.UserText("go"),
				llm.AssistantMessage(llm.Text("Reading."), llm.ToolUse("toolu_1", "Read", json.RawMessage(`{"file_path":"/a"}`)),
					llm.ToolUse("toolu_2", "Read", json.RawMessage(`{"file_path":"/b"}`))),
				llm.UserMessage(llm.ToolResult("toolu_1", []tool.Content{tool.Text("a < b & c")}, false),
					llm.ToolResult("toolu_2", []tool.Content{tool.Text("no such file")}, true)),
			}
			resp, err := llm.Collect(p.Stream(context.Background(), &llm.Request{Tools: specs, Messages: msgs}))
			if err != nil || resp.Message.Text() != "done" || resp.StopReason != llm.StopEndTurn {
				t.Fatalf("%v %+v", err, resp)
			}
			req := srv.LastRequest()
			var conv []string
			for _, m := range req.Messages {
				if m.Role == "system" {
					continue
				}
				for _, b := range m.Content {
					if b.Type != llm.TypeText {
						t.Fatalf("non-text block sent: %+v", b)
					}
					conv = append(conv, m.Role+": "+b.Text)
				}
			}
			want := []string{
				"user: go",
				"assistant: Reading.\n<Read>\n<file_path>/a</file_path>\n</Read>\n<Read>\n<file_path>/b</file_path>\n</Read>\n",
				"user: <tool_result tool=\"Read\" id=\"toolu_1\">\na < b & c\n</tool_result>\n<tool_result tool=\"Read\" id=\"toolu_2\" status=\"error\">\nno such file\n</tool_result>\n",
			}
			if strings.Join(conv, "|") != strings.Join(want, "|") {
				t.Fatalf("conversation:\n%q\nwant\n%q", conv, want)
			}
		})
	}
}

func TestMalformedAndUnknown(t *testing.T) {
	for _, pc := range providers {
		t.Run(pc.name, func(t *testing.T) {
			srv := llmtest.NewServer(t, llmtest.WithChunkSize(1))
			srv.Script(llmtest.TextReply("<Frob><x>1</x></Frob>\n<Read>\nfile: /a\n</Read>ok"))
			p := texttools.New(pc.new(srv))
			resp, err := llm.Collect(p.Stream(context.Background(), &llm.Request{Tools: specs, Messages: []llm.Message{llm.UserText("go")}}))
			if err != nil {
				t.Fatal(err)
			}
			// The unknown tool is text; the malformed call ends with an
			// error quoting the syntax (the agent sends it back as the
			// call's error result).
			if got := resp.Message.Text(); got != "<Frob><x>1</x></Frob>\nok" {
				t.Fatalf("text %q", got)
			}
			uses := resp.Message.ToolUses()
			if len(uses) != 1 || string(uses[0].Input) != "{}" || resp.StopReason != llm.StopToolUse {
				t.Fatalf("a malformed call is a tool use with input {} (%+v) that stops for its result (%q)", uses, resp.StopReason)
			}
		})
	}
}

func TestMalformedCallError(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.WithChunkSize(3))
	srv.Script(llmtest.TextReply("<Read>\nfile: /a\n</Read>"))
	p := texttools.New(providers[1].new(srv))
	var end *llm.Event
	for ev, err := range p.Stream(context.Background(), &llm.Request{Tools: specs, Messages: []llm.Message{llm.UserText("go")}}) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == llm.EventToolUseEnd {
			end = &ev
		}
	}
	if end == nil || end.InputErr == nil || !strings.Contains(end.InputErr.Error(), texttools.Syntax) || string(end.Input) != "{}" {
		t.Fatalf("end %+v", end)
	}
}

func TestNoToolsPassesThrough(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Script(llmtest.TextReply("<Read><file_path>x</file_path></Read>"))
	p := texttools.New(providers[0].new(srv))
	resp, err := llm.Collect(p.Stream(context.Background(), &llm.Request{System: llm.System("s"), Messages: []llm.Message{llm.UserText("go")}}))
	if err != nil || len(resp.Message.ToolUses()) != 0 || len(srv.LastRequest().System) != 1 {
		t.Fatalf("%v %+v %+v", err, resp, srv.LastRequest().System)
	}
}

func TestAuto(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Script(
		llmtest.ErrorReply(400, "invalid_request_error", "registry.ollama.ai/library/mymodel does not support tools"),
		llmtest.TextReply("<Read><file_path>x</file_path></Read>"),
		llmtest.TextReply("again"),
	)
	p, err := texttools.Wrap(providers[1].new(srv), texttools.Auto)
	if err != nil {
		t.Fatal(err)
	}
	req := &llm.Request{Model: "mymodel", Tools: specs, Messages: []llm.Message{llm.UserText("go")}}
	resp, err := llm.Collect(p.Stream(context.Background(), req))
	if err != nil || len(resp.Message.ToolUses()) != 1 {
		t.Fatalf("%v %+v", err, resp)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || len(reqs[0].Tools) != 2 || len(reqs[1].Tools) != 0 {
		t.Fatalf("requests: %d", len(reqs))
	}
	// The model is remembered: the next request goes straight to text.
	if _, err := llm.Collect(p.Stream(context.Background(), req)); err != nil {
		t.Fatal(err)
	}
	if reqs = srv.Requests(); len(reqs) != 3 || len(reqs[2].Tools) != 0 {
		t.Fatalf("third request sent native tools")
	}
	if !texttools.LacksNativeTools("gemma3:4b") || texttools.LacksNativeTools("qwen2.5-coder") {
		t.Fatal("LacksNativeTools")
	}
	// Other errors are not a reason to switch.
	srv.Script(llmtest.ErrorReply(400, "invalid_request_error", "max_tokens too large"))
	_, err = llm.Collect(p.Stream(context.Background(), &llm.Request{Model: "other", Tools: specs, Messages: []llm.Message{llm.UserText("go")}}))
	if !errors.Is(err, llm.ErrBadRequest) {
		t.Fatalf("err %v", err)
	}
}

func TestParseProtocol(t *testing.T) {
	for in, want := range map[string]texttools.Protocol{"": texttools.Native, "native": texttools.Native, "TEXT": texttools.Text, "auto": texttools.Auto} {
		if got, err := texttools.ParseProtocol(in); err != nil || got != want {
			t.Errorf("%q: %v %v", in, got, err)
		}
	}
	if _, err := texttools.ParseProtocol("xml"); err == nil {
		t.Error("xml accepted")
	}
}

func systemText(r llmtest.Request) string {
	var b strings.Builder
	for _, s := range r.System {
		b.WriteString(s.Text)
		b.WriteString("\n")
	}
	return b.String()
}

func jsonStr(s string) string { b, _ := json.Marshal(s); return string(b) }

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestRewriteKeepsPlainMessages: messages without tool blocks are passed
// on as they are (the same blocks), so that a conversation's cached
// encodings of them are reused; the others are rewritten as text.
func TestRewriteKeepsPlainMessages(t *testing.T) {
	in := []llm.Message{
		llm.UserText("hi"),
		llm.AssistantMessage(llm.ToolUse("t1", "Read", json.RawMessage(`{"file_path":"a"}`))),
		llm.UserMessage(llm.ToolResult("t1", []tool.Content{tool.Text("x")}, false)),
		llm.AssistantMessage(llm.Text("done")),
	}
	out, _ := texttools.Rewrite(&llm.Request{Messages: in, Tools: specs})
	if len(out.Messages) != len(in) {
		t.Fatalf("%d messages, want %d", len(out.Messages), len(in))
	}
	for _, i := range []int{0, 3} {
		if &out.Messages[i].Content[0] != &in[i].Content[0] {
			t.Errorf("message %d was copied", i)
		}
	}
	for _, i := range []int{1, 2} {
		if b := out.Messages[i].Content; len(b) != 1 || b[0].Type != llm.TypeText {
			t.Errorf("message %d not rewritten as text: %+v", i, b)
		}
	}
}

// TestGrepAliasesOverProviders: Grep's "-i", "-A", "-n" are written as
// <i>, <A>, <n> (the prompt says so), reach the tool under their names,
// and an earlier call is written back with the aliases — through both SDK
// clients, streamed byte by byte.
func TestGrepAliasesOverProviders(t *testing.T) {
	grep := &tool.Spec{Name: "Grep", Description: "Searches.", InputSchema: json.RawMessage(`{"type":"object","properties":{
		"pattern":{"type":"string"},"-i":{"type":"boolean","description":"Case insensitive"},"-A":{"type":"number"},"-n":{"type":"boolean"}},"required":["pattern"]}`)}
	for _, pc := range providers {
		t.Run(pc.name, func(t *testing.T) {
			srv := llmtest.NewServer(t, llmtest.WithChunkSize(1))
			srv.Script(llmtest.TextReply("<Grep>\n<pattern>func a<b</pattern>\n<i>true</i>\n<A>2</A>\n<-n>true</-n>\n</Grep>\n"))
			p := texttools.New(pc.new(srv))
			msgs := []llm.Message{
				llm.UserText("go"),
				llm.AssistantMessage(llm.ToolUse("toolu_1", "Grep", json.RawMessage(`{"pattern":"x","-i":true,"-A":3}`))),
				llm.UserMessage(llm.ToolResult("toolu_1", []tool.Content{tool.Text("a.go:1")}, false)),
			}
			resp, err := llm.Collect(p.Stream(context.Background(), &llm.Request{Tools: []*tool.Spec{grep}, Messages: msgs}))
			if err != nil {
				t.Fatal(err)
			}
			uses := resp.Message.ToolUses()
			if len(uses) != 1 || !jsonEq(string(uses[0].Input), `{"pattern":"func a<b","-i":"true","-A":"2","-n":"true"}`) {
				t.Fatalf("calls %+v", uses)
			}
			req := srv.LastRequest()
			if sys := systemText(req); !strings.Contains(sys, "- `-i` (write it as <i>…</i>; boolean, optional): Case insensitive") {
				t.Fatalf("prompt:\n%s", sys)
			}
			var sent strings.Builder
			for _, m := range req.Messages {
				for _, b := range m.Content {
					sent.WriteString(b.Text)
				}
			}
			if s := sent.String(); !strings.Contains(s, "<Grep>\n<pattern>x</pattern>\n<i>true</i>\n<A>3</A>\n</Grep>") {
				t.Fatalf("history:\n%s", s)
			}
		})
	}
}

func jsonEq(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return string(xb) == string(yb)
}
