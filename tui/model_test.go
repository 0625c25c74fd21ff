package tui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"go.uber.org/goleak"

	"github.com/gantry-dev/gantry/agent"
	"github.com/gantry-dev/gantry/builtin/shell"
	"github.com/gantry-dev/gantry/builtin/todo"
	"github.com/gantry-dev/gantry/executor"
	"github.com/gantry-dev/gantry/interaction"
	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/settings"
	"github.com/gantry-dev/gantry/store"
	"github.com/gantry-dev/gantry/tool"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// harness drives a model as the event loop would: messages in, the
// transcript and the live view out. Messages the model's goroutines post
// arrive on msgs.
type harness struct {
	t     *testing.T
	m     *model
	msgs  chan tea.Msg
	out   []string
	clock time.Time
}

func newHarness(t *testing.T, opts Options, color bool) *harness {
	t.Helper()
	h := &harness{t: t, msgs: make(chan tea.Msg, 256), clock: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	if opts.Open == nil {
		opts.Open = func(context.Context, OpenRequest) (*Session, error) {
			return nil, errors.New("no session in this test")
		}
	}
	if opts.Now == nil {
		opts.Now = func() time.Time { return h.clock }
	}
	b := newBus(func(m tea.Msg) { h.msgs <- m })
	h.m = newModel(context.Background(), &opts, b, color)
	h.m.printed = func(s string) { h.out = append(h.out, s) }
	t.Cleanup(h.m.shutdown)
	return h
}

// send delivers one message.
func (h *harness) send(msg tea.Msg) { h.t.Helper(); h.m.Update(msg) }

func (h *harness) keys(ks ...string) {
	h.t.Helper()
	for _, k := range ks {
		h.send(keyMsg(k))
	}
}

func (h *harness) typeText(s string) {
	for _, r := range s {
		h.send(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

func keyMsg(k string) tea.KeyPressMsg {
	switch k {
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	case "space":
		return tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
	case "shift+tab":
		return tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift}
	case "ctrl+c":
		return tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	case "ctrl+d":
		return tea.KeyPressMsg{Code: 'd', Mod: tea.ModCtrl}
	}
	r := []rune(k)
	return tea.KeyPressMsg{Code: r[0], Text: k}
}

// pump handles posted messages until done reports true.
func (h *harness) pump(done func() bool) {
	h.t.Helper()
	deadline := time.After(20 * time.Second)
	poll := time.NewTicker(10 * time.Millisecond)
	defer poll.Stop()
	for !done() {
		select {
		case msg := <-h.msgs:
			h.send(msg)
		case <-poll.C:
		case <-deadline:
			h.t.Fatalf("timed out; transcript:\n%s\nview:\n%s", h.transcript(), h.view())
		}
	}
}

func (h *harness) transcript() string { return ansi.Strip(strings.Join(h.out, "\n")) }
func (h *harness) view() string       { return ansi.Strip(h.m.View().Content) }

func (h *harness) wantTranscript(subs ...string) {
	h.t.Helper()
	tr := h.transcript()
	for _, s := range subs {
		if !strings.Contains(tr, s) {
			h.t.Errorf("transcript lacks %q:\n%s", s, tr)
		}
	}
}

func (h *harness) wantView(subs ...string) {
	h.t.Helper()
	v := h.view()
	for _, s := range subs {
		if !strings.Contains(v, s) {
			h.t.Errorf("view lacks %q:\n%s", s, v)
		}
	}
}

// ask shows a request as the channel would and returns its reply channel.
func (h *harness) ask(req interaction.Request) chan result {
	p := &pending{id: int64(len(h.m.asks) + 100), req: req, reply: make(chan result, 1)}
	h.send(askMsg{p})
	h.clock = h.clock.Add(dialogGrace) // the person reads the dialog
	return p.reply
}

func reply(t *testing.T, ch chan result) result {
	t.Helper()
	select {
	case r := <-ch:
		return r
	default:
		t.Fatal("the request was not answered")
		return result{}
	}
}

func TestStreamingReplyAndToolCards(t *testing.T) {
	h := newHarness(t, Options{}, true)
	h.m.running = true
	h.send(evMsg{ev: &agent.InitEvent{SessionID: "s1", Model: "m-1", Mode: tool.ModeDefault}})
	h.send(evMsg{ev: &agent.TextDelta{Text: "Let me **run** the `tests`"}})
	h.wantView("Let me run the tests", "m-1", "default")
	start := h.clock
	h.send(evMsg{ev: &agent.ToolStatus{Status: tool.Status{ToolUseID: "b1", Name: "Bash", Phase: tool.PhaseWait, Input: json.RawMessage(`{"command":"go test ./..."}`)}}})
	h.wantView("◌ Bash go test ./...")
	h.clock = start.Add(1500 * time.Millisecond)
	h.send(evMsg{ev: &agent.ToolStatus{Status: tool.Status{ToolUseID: "b1", Name: "Bash", Phase: tool.PhaseDoing, Description: "Run the tests", Start: start,
		Progress: &tool.Progress{Message: "ok pkg/b", Data: shell.Progress{Output: "ok pkg/a\nok pkg/b", Bytes: 16}}}}})
	h.wantView("Bash Run the tests 1.5s", "│ ok pkg/a", "│ ok pkg/b")
	h.send(evMsg{ev: &agent.MessageEvent{Message: llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.Text("Let me **run** the `tests`")}}}})
	h.wantTranscript("Let me run the tests")
	h.send(evMsg{ev: &agent.ToolResultEvent{Outcome: &executor.Outcome{ID: "b1", Name: "Bash", Duration: 2 * time.Second,
		Result: tool.TextResult("ok pkg/a\nok pkg/b\nok pkg/c\nok pkg/d")}}})
	h.wantTranscript("✓ Bash Run the tests (2.0s)", "⎿ ok pkg/a", "ok pkg/c … +1 lines")
	if strings.Contains(h.view(), "Run the tests") {
		t.Errorf("a finished card stays live:\n%s", h.view())
	}
	// An error result.
	h.send(evMsg{ev: &agent.ToolResultEvent{Outcome: &executor.Outcome{ID: "r1", Name: "Read", Input: json.RawMessage(`{"file_path":"/x/missing.go"}`),
		Result: &tool.Result{Content: []tool.Content{tool.Text("no such file: /x/missing.go")}, IsError: true}}}})
	h.wantTranscript("✗ Read /x/missing.go", "⎿ no such file: /x/missing.go")
	// Usage and cost reach the status line.
	h.send(evMsg{ev: &agent.TurnEnd{Usage: llm.Usage{InputTokens: 1200, OutputTokens: 300}, CostUSD: 0.0123}})
	h.wantView("1.5k tokens", "$0.0123")
}

func TestEditShowsColouredDiff(t *testing.T) {
	h := newHarness(t, Options{}, true)
	diff := "--- a/main.go\n+++ b/main.go\n@@ -1,3 +1,3 @@\n package main\n-var x = 1\n+var x = 2\n"
	res := &tool.Result{Content: []tool.Content{tool.Text("ok")}, Display: []tool.Content{tool.Text("Edited main.go (1 replacement)\n" + diff)}}
	h.send(evMsg{ev: &agent.ToolStatus{Status: tool.Status{ToolUseID: "e1", Name: "Edit", Phase: tool.PhaseDoing, Description: "Edit main.go"}}})
	h.send(evMsg{ev: &agent.ToolResultEvent{Outcome: &executor.Outcome{ID: "e1", Name: "Edit", Result: res}}})
	h.wantTranscript("✓ Edit main.go", "⎿ Edited main.go (+1 -1)", "-var x = 1", "+var x = 2")
	raw := strings.Join(h.out, "\n")
	green, red := "\x1b[32m", "\x1b[31m"
	if !strings.Contains(raw, green) || !strings.Contains(raw, red) {
		t.Errorf("the diff is not coloured: %q", raw)
	}
}

// TestEditCardIsCompact: the Edit card shows a one-line summary with the
// path relative to the working directory and the diff's hunks, not the
// model-facing text nor an a//abs/path header.
func TestEditCardIsCompact(t *testing.T) {
	h := newHarness(t, Options{}, true)
	h.send(evMsg{ev: &agent.InitEvent{SessionID: "s1", Model: "m-1", WorkDir: "/home/u/proj", Mode: tool.ModeDefault}})
	msg := "Edited /home/u/proj/src/button.css: replaced 1 occurrence. The edited region now reads:\n  3\t  background: blue;"
	diff := "--- a//home/u/proj/src/button.css\n+++ b//home/u/proj/src/button.css\n@@ -3,1 +3,1 @@\n-  background: red;\n+  background: blue;\n"
	res := &tool.Result{Content: []tool.Content{tool.Text(msg)}, Display: []tool.Content{tool.Text(msg + "\n" + diff)}}
	h.send(evMsg{ev: &agent.ToolStatus{Status: tool.Status{ToolUseID: "e1", Name: "Edit", Phase: tool.PhaseDoing, Description: "Edit src/button.css"}}})
	h.send(evMsg{ev: &agent.ToolResultEvent{Outcome: &executor.Outcome{ID: "e1", Name: "Edit", Result: res}}})
	h.wantTranscript("✓ Edit src/button.css", "⎿ Edited src/button.css (+1 -1)", "@@ -3,1 +3,1 @@", "-  background: red;", "+  background: blue;")
	got := strings.Join(h.out, "\n")
	for _, bad := range []string{"edited region", "a//home", "/home/u/proj", "+++", "---"} {
		if strings.Contains(got, bad) {
			t.Errorf("the card shows %q:\n%s", bad, got)
		}
	}
}

// TestInterruptedBashKeepsOutput: a Bash card that never finished keeps
// the output it was showing when the turn was interrupted.
func TestInterruptedBashKeepsOutput(t *testing.T) {
	h := newHarness(t, Options{}, true)
	h.m.running = true
	h.send(evMsg{ev: &agent.ToolStatus{Status: tool.Status{ToolUseID: "b1", Name: "Bash", Phase: tool.PhaseDoing, Description: "Run the tests", Start: h.clock,
		Progress: &tool.Progress{Data: shell.Progress{Output: "ok pkg/a\nFAIL pkg/b", Bytes: 20}}}}})
	h.wantView("│ ok pkg/a", "│ FAIL pkg/b")
	h.m.flushLeftovers()
	h.wantTranscript("■ Bash Run the tests", "│ ok pkg/a", "│ FAIL pkg/b", "⎿ interrupted")
}

func TestNoColor(t *testing.T) {
	h := newHarness(t, Options{}, false)
	res := &tool.Result{Content: []tool.Content{tool.Text("ok")}, Display: []tool.Content{tool.Text("Edited a.go\n-old\n+new")}}
	h.send(evMsg{ev: &agent.ToolResultEvent{Outcome: &executor.Outcome{ID: "e1", Name: "Edit", Result: res}}})
	h.send(evMsg{ev: &agent.MessageEvent{Message: llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.Text("# Title\n`code` and [a link](http://x)")}}}})
	raw := strings.Join(h.out, "\n") + h.m.View().Content
	for _, c := range []string{"\x1b[31m", "\x1b[32m", "\x1b[35m", "\x1b[36m", "\x1b[38;", "\x1b[3"} {
		if strings.Contains(raw, c) {
			t.Errorf("NO_COLOR output holds colour %q: %q", c, raw)
		}
	}
	h.wantTranscript("+new", "Title", "code", "a link (http://x)")
}

func TestPermissionDialog(t *testing.T) {
	req := func() *interaction.PermissionRequest {
		return &interaction.PermissionRequest{ToolName: "Bash", Input: json.RawMessage(`{"command":"npm test"}`), Description: "Run the tests",
			Reason: "npm runs scripts", Suggestions: []string{"Bash(npm test *)"}, Scopes: []settings.Scope{settings.ScopeLocal, settings.ScopeUser}}
	}
	for _, tc := range []struct {
		name string
		keys []string
		text string
		want interaction.PermissionAnswer
	}{
		{"yes by number", []string{"1"}, "", interaction.PermissionAnswer{Choice: interaction.AllowOnce}},
		{"yes by enter on it", []string{"up", "up", "up", "enter"}, "", interaction.PermissionAnswer{Choice: interaction.AllowOnce}},
		{"enter alone is no", []string{"enter", "enter"}, "", interaction.PermissionAnswer{Choice: interaction.Deny}},
		{"session", []string{"2"}, "", interaction.PermissionAnswer{Choice: interaction.AllowSession}},
		{"always", []string{"3"}, "", interaction.PermissionAnswer{Choice: interaction.AllowAlways, Scope: settings.ScopeLocal}},
		{"no with words", []string{"4"}, "use make test", interaction.PermissionAnswer{Choice: interaction.Deny, Message: "use make test"}},
		{"esc interrupts", []string{"esc"}, "", interaction.PermissionAnswer{Choice: interaction.Deny, Interrupt: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Options{}, true)
			ch := h.ask(req())
			h.wantView("Allow Bash?", "Run the tests", "$ npm test", "npm runs scripts", "1. Yes",
				"2. Yes, and don't ask again this session for Bash(npm test *)", "3. Yes, and always allow", "4. No, and tell the model")
			h.keys(tc.keys...)
			if tc.text != "" {
				h.typeText(tc.text)
				h.keys("enter")
			}
			r := reply(t, ch)
			a, ok := r.ans.(*interaction.PermissionAnswer)
			if !ok || r.err != nil {
				t.Fatalf("answer %#v, %v", r.ans, r.err)
			}
			if a.Choice != tc.want.Choice || a.Scope != tc.want.Scope || a.Interrupt != tc.want.Interrupt ||
				(tc.want.Message != "" && a.Message != tc.want.Message) {
				t.Errorf("answer %+v, want %+v", *a, tc.want)
			}
			if h.m.dlg != nil {
				t.Error("the dialog stays open")
			}
		})
	}
}

func TestPermissionDialogOffersOnlyWhatCanBeDone(t *testing.T) {
	h := newHarness(t, Options{}, true)
	h.ask(&interaction.PermissionRequest{ToolName: "Write", Input: json.RawMessage(`{"file_path":"/w/a.txt","content":"one\ntwo"}`),
		Who: interaction.Who{Agent: "Explore"}})
	v := h.view()
	h.wantView("Allow Write?", "(subagent Explore)", "/w/a.txt", "+ one", "+ two", "1. Yes", "2. No, and tell the model")
	if strings.Contains(v, "this session") || strings.Contains(v, "always") {
		t.Errorf("choices offered without suggestions or scopes:\n%s", v)
	}
}

func TestHostileTextIsEscaped(t *testing.T) {
	h := newHarness(t, Options{}, true)
	evil := "rm -rf / \x1b]0;pwned\x07\x1b[2J\u202e"
	h.ask(&interaction.PermissionRequest{ToolName: "Bash", Input: json.RawMessage(`{"command":` + mustJSON(evil) + `}`), Description: evil, Reason: evil})
	h.send(evMsg{ev: &agent.TextDelta{Text: evil}})
	h.send(evMsg{ev: &agent.NoticeEvent{Text: evil}})
	out := h.m.View().Content + strings.Join(h.out, "\n")
	for _, bad := range []string{"\x1b]0;", "\x07", "\x1b[2J", "\u202e"} {
		if strings.Contains(out, bad) {
			t.Errorf("raw %q reached the terminal", bad)
		}
	}
	if !strings.Contains(ansi.Strip(out), `\x1b]0;pwned\x07`) {
		t.Errorf("the escaped form is not shown:\n%s", ansi.Strip(out))
	}
}

func mustJSON(s string) string { b, _ := json.Marshal(s); return string(b) }

func TestQuestionDialog(t *testing.T) {
	qs := []interaction.Question{
		{Question: "Which database?", Header: "DB", Options: []interaction.Option{{Label: "Postgres", Description: "the usual"}, {Label: "SQLite", Description: "embedded", Preview: "db, _ := sql.Open(\"sqlite\", path)"}}},
		{Question: "Which features?", Header: "Features", MultiSelect: true, Options: []interaction.Option{{Label: "Auth"}, {Label: "Search"}, {Label: "Billing"}}},
		{Question: "Anything else?", Header: "Notes", Options: []interaction.Option{{Label: "No"}, {Label: "Yes"}}},
	}
	h := newHarness(t, Options{}, true)
	ch := h.ask(&interaction.QuestionRequest{Questions: qs})
	h.wantView("DB", "Which database?", "1. Postgres", "the usual", "2. SQLite", "3. Something else")
	h.keys("down")
	h.wantView(`sql.Open("sqlite", path)`) // the focused option's preview
	h.keys("enter")
	h.wantView("✓ DB", "Which features?", "[ ] Auth")
	h.keys("1", "3") // toggle Auth and Billing
	h.wantView("[x] Auth", "[ ] Search", "[x] Billing")
	h.keys("enter")
	h.keys("3") // something else
	h.typeText("keep it small")
	h.keys("enter")
	r := reply(t, ch)
	a := r.ans.(*interaction.QuestionAnswer)
	want := map[string]string{"Which database?": "SQLite", "Which features?": "Auth, Billing", "Anything else?": "keep it small"}
	for q, v := range want {
		if a.Answers[q] != v {
			t.Errorf("answer to %q = %q, want %q", q, a.Answers[q], v)
		}
	}
	h.wantTranscript("Which database? → SQLite", "Which features? → Auth, Billing", "Anything else? → keep it small")
	if _, err := interaction.AskQuestions(context.Background(), interaction.ChannelFunc(func(context.Context, interaction.Request) (interaction.Answer, error) { return a, nil }),
		&interaction.QuestionRequest{Questions: qs}); err != nil {
		t.Errorf("the answer does not validate: %v", err)
	}
}

func TestQuestionEscInterrupts(t *testing.T) {
	h := newHarness(t, Options{}, true)
	ctx, cancel := context.WithCancel(context.Background())
	h.m.running, h.m.cancel = true, cancel
	ch := h.ask(&interaction.QuestionRequest{Questions: []interaction.Question{{Question: "A or B?", Options: []interaction.Option{{Label: "A"}, {Label: "B"}}}}})
	h.keys("esc")
	a := reply(t, ch).ans.(*interaction.QuestionAnswer)
	if len(a.Answers) != 0 {
		t.Errorf("answers %v, want none", a.Answers)
	}
	if ctx.Err() == nil {
		t.Error("Esc on a question did not interrupt the turn")
	}
	h.wantTranscript("A or B? → (not answered)")
}

func TestPlanDialog(t *testing.T) {
	plan := "# Plan\n\n1. Write the parser\n2. Test it"
	for _, tc := range []struct {
		name   string
		ret    tool.Mode
		keys   []string
		text   string
		want   interaction.PlanAnswer
		offers []string
	}{
		{"accept edits", tool.ModeDefault, []string{"1"}, "", interaction.PlanAnswer{Approved: true, Mode: tool.ModeAcceptEdits}, []string{"auto-accept edits", "default mode"}},
		{"back to default", tool.ModeDefault, []string{"2"}, "", interaction.PlanAnswer{Approved: true, Mode: tool.ModeDefault}, nil},
		{"keep planning", "", []string{"3"}, "split step 1", interaction.PlanAnswer{Feedback: "split step 1"}, []string{"No, keep planning"}},
		{"from acceptEdits", tool.ModeAcceptEdits, []string{"2"}, "no tests", interaction.PlanAnswer{Feedback: "no tests"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Options{}, true)
			ch := h.ask(&interaction.PlanRequest{Plan: plan, PlanFile: "/s/plan.md", ReturnMode: tc.ret})
			h.wantTranscript("Plan", "Write the parser")
			h.wantView(append([]string{"Ready to carry out the plan?", "/s/plan.md"}, tc.offers...)...)
			h.keys(tc.keys...)
			if tc.text != "" {
				h.typeText(tc.text)
				h.keys("enter")
			}
			a := reply(t, ch).ans.(*interaction.PlanAnswer)
			if *a != tc.want {
				t.Errorf("answer %+v, want %+v", *a, tc.want)
			}
		})
	}
}

func TestElicitationForm(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","title":"Name"},"age":{"type":"integer"},"tier":{"type":"string","enum":["free","pro"]},"ok":{"type":"boolean"}},"required":["name","age"]}`)
	h := newHarness(t, Options{}, true)
	ch := h.ask(&interaction.ElicitationRequest{Server: "crm", Message: "Who are you?", Schema: schema})
	h.wantView("MCP server crm asks", "Who are you?", "1. Fill in the form", "2. Decline")
	h.keys("1")
	h.wantView("age (1 of 4)")
	h.typeText("forty")
	h.keys("enter")
	h.wantView("give a whole number")
	h.typeText("40")
	h.keys("enter")
	h.typeText("Ada")
	h.keys("enter")
	h.keys("enter") // ok: optional, skipped
	h.keys("2")     // tier: pro
	a := reply(t, ch).ans.(*interaction.ElicitationAnswer)
	if a.Action != interaction.ElicitAccept || a.Content["name"] != "Ada" || a.Content["age"] != int64(40) || a.Content["tier"] != "pro" {
		t.Errorf("answer %+v", a)
	}
	if _, ok := a.Content["ok"]; ok {
		t.Errorf("a skipped optional field was sent: %+v", a.Content)
	}
	h2 := newHarness(t, Options{}, true)
	ch = h2.ask(&interaction.ElicitationRequest{Server: "crm", Message: "m"})
	h2.keys("2")
	if a := reply(t, ch).ans.(*interaction.ElicitationAnswer); a.Action != interaction.ElicitDecline {
		t.Errorf("decline gave %+v", a)
	}
}

func TestTrustDialog(t *testing.T) {
	h := newHarness(t, Options{}, true)
	ch := h.ask(&interaction.TrustRequest{Dir: "/p", Ignored: map[string][]string{"/p/.gantry/settings.json": {"hooks", "allow rules"}}})
	h.wantView("Trust the folder /p?", "hooks, allow rules", "1. Yes, trust this folder", "❯ 2. No")
	h.keys("2")
	if a := reply(t, ch).ans.(*interaction.TrustAnswer); a.Trust {
		t.Error("no gave trust")
	}
	ch = h.ask(&interaction.TrustRequest{Dir: "/p/.mcp.json", Servers: []string{"fs (new): npx fs-server"}})
	h.wantView("Start the MCP servers of /p/.mcp.json?", "fs (new): npx fs-server")
	h.keys("1")
	if a := reply(t, ch).ans.(*interaction.TrustAnswer); !a.Trust {
		t.Error("yes did not approve")
	}
}

// TestGrantingDialogsIgnoreTypedAhead: keys that reach a granting dialog
// before the person could read it go to the prompt (Enter queues it), and
// Enter alone on a granting dialog refuses.
func TestGrantingDialogsIgnoreTypedAhead(t *testing.T) {
	for _, tc := range []struct {
		name string
		req  interaction.Request
		no   func(interaction.Answer) bool
	}{
		{"trust", &interaction.TrustRequest{Dir: "/p", Ignored: map[string][]string{"/p/.gantry/settings.json": {"hooks"}}},
			func(a interaction.Answer) bool { return !a.(*interaction.TrustAnswer).Trust }},
		{"servers", &interaction.TrustRequest{Dir: "/p/.mcp.json", Servers: []string{"fs (new): srv"}},
			func(a interaction.Answer) bool { return !a.(*interaction.TrustAnswer).Trust }},
		{"permission", &interaction.PermissionRequest{ToolName: "Bash", Input: json.RawMessage(`{"command":"rm -rf x"}`),
			Suggestions: []string{"Bash(rm *)"}, Scopes: []settings.Scope{settings.ScopeLocal}},
			func(a interaction.Answer) bool { return a.(*interaction.PermissionAnswer).Choice == interaction.Deny }},
		{"plan", &interaction.PlanRequest{Plan: "p", ReturnMode: tool.ModeDefault},
			func(a interaction.Answer) bool { return !a.(*interaction.PlanAnswer).Approved }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Options{}, true)
			p := &pending{id: 1, req: tc.req, reply: make(chan result, 1)}
			h.send(askMsg{p}) // shown now: the clock does not move
			h.typeText("1fix the bug")
			h.keys("enter", "1", "enter")
			select {
			case r := <-p.reply:
				t.Fatalf("typed-ahead keys answered the dialog: %#v", r.ans)
			default:
			}
			if h.m.dlg == nil {
				t.Fatal("the dialog went away")
			}
			if len(h.m.queue) != 2 || h.m.queue[0] != "1fix the bug" || h.m.queue[1] != "1" {
				t.Errorf("queue = %q, want the typed-ahead prompts", h.m.queue)
			}
			// Read, then Enter alone: the refusing choice (a text item
			// takes a second Enter).
			h.clock = h.clock.Add(dialogGrace)
			h.keys("enter")
			if h.m.dlg != nil {
				h.keys("enter")
			}
			if r := reply(t, p.reply); r.err != nil || !tc.no(r.ans) {
				t.Errorf("Enter alone answered %#v, %v; want the refusal", r.ans, r.err)
			}
		})
	}
}

// TestPermissionDialogLongCommand: a command longer than the dialog shows
// its start and how much more; ctrl+o prints all of it to the transcript.
func TestPermissionDialogLongCommand(t *testing.T) {
	var lines []string
	for i := range 40 {
		lines = append(lines, fmt.Sprintf("echo step-%02d", i))
	}
	cmd := strings.Join(lines, " &&\n") + " | tee out.txt"
	h := newHarness(t, Options{}, true)
	h.ask(&interaction.PermissionRequest{ToolName: "Bash", Input: json.RawMessage(`{"command":` + mustJSON(cmd) + `}`)})
	h.wantView("$ echo step-00", "more lines · ctrl+o prints it all above")
	h.send(tea.KeyPressMsg{Code: 'o', Mod: tea.ModCtrl})
	h.wantTranscript("$ echo step-00", "echo step-39 | tee out.txt")
	h.wantView("printed in full above")
	if h.m.dlg == nil {
		t.Error("ctrl+o closed the dialog")
	}
}

func TestRequestsQueueAndWithdraw(t *testing.T) {
	h := newHarness(t, Options{}, true)
	q := func(s string) *interaction.QuestionRequest {
		return &interaction.QuestionRequest{Questions: []interaction.Question{{Question: s, Options: []interaction.Option{{Label: "x"}, {Label: "y"}}}}}
	}
	first := &pending{id: 1, req: q("first?"), reply: make(chan result, 1)}
	second := &pending{id: 2, req: q("second?"), reply: make(chan result, 1)}
	third := &pending{id: 3, req: q("third?"), reply: make(chan result, 1)}
	h.send(askMsg{first})
	h.send(askMsg{second})
	h.send(askMsg{third})
	h.wantView("first?")
	h.send(askGoneMsg{id: 2}) // a waiting one withdrawn
	h.send(askGoneMsg{id: 1}) // the shown one withdrawn
	h.wantView("third?")
	h.keys("1")
	if a := reply(t, third.reply).ans.(*interaction.QuestionAnswer); a.Answers["third?"] != "x" {
		t.Errorf("answer %+v", a)
	}
	if len(first.reply)+len(second.reply) != 0 {
		t.Error("a withdrawn request was answered")
	}
	if h.m.dlg != nil || !h.m.input.Focused() {
		t.Error("the input does not have the focus back")
	}
}

func TestChannelContract(t *testing.T) {
	msgs := make(chan tea.Msg, 4)
	b := newBus(func(m tea.Msg) { msgs <- m })
	c := &channel{bus: b}
	if _, err := c.Ask(context.Background(), nil); err == nil {
		t.Error("a nil request was accepted")
	}
	// ctx ends: Ask returns promptly and withdraws the dialog.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := c.Ask(ctx, &interaction.TrustRequest{Dir: "/x"}); done <- err }()
	am := (<-msgs).(askMsg)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Ask after cancel: %v", err)
	}
	if g := (<-msgs).(askGoneMsg); g.id != am.p.id {
		t.Errorf("withdrew %d, want %d", g.id, am.p.id)
	}
	// An answer comes back.
	go func() {
		m := (<-msgs).(askMsg)
		m.p.reply <- result{ans: &interaction.TrustAnswer{Trust: true}}
	}()
	ans, err := interaction.AskTrust(context.Background(), c, &interaction.TrustRequest{Dir: "/y"})
	if err != nil || !ans.Trust {
		t.Errorf("AskTrust: %+v, %v", ans, err)
	}
	// The UI ended: nobody answers, at once.
	b.close()
	if _, err := c.Ask(context.Background(), &interaction.TrustRequest{Dir: "/z"}); !errors.Is(err, interaction.ErrNobody) {
		t.Errorf("Ask after the UI ended: %v", err)
	}
}

func TestKeys(t *testing.T) {
	t.Run("ctrl+c twice exits", func(t *testing.T) {
		h := newHarness(t, Options{}, true)
		h.typeText("half a thought")
		h.keys("ctrl+c")
		if h.m.input.Value() != "" || h.m.quitting {
			t.Fatalf("first ctrl+c: input %q quitting %v", h.m.input.Value(), h.m.quitting)
		}
		h.wantView("press Ctrl-C again to exit")
		h.clock = h.clock.Add(500 * time.Millisecond)
		h.keys("ctrl+c")
		if !h.m.quitting {
			t.Error("second ctrl+c did not exit")
		}
	})
	t.Run("ctrl+c too late asks again", func(t *testing.T) {
		h := newHarness(t, Options{}, true)
		h.keys("ctrl+c")
		h.clock = h.clock.Add(3 * time.Second)
		h.keys("ctrl+c")
		if h.m.quitting {
			t.Error("two ctrl+c far apart exited")
		}
	})
	t.Run("ctrl+c interrupts a run and answers its dialog", func(t *testing.T) {
		h := newHarness(t, Options{}, true)
		ctx, cancel := context.WithCancel(context.Background())
		h.m.running, h.m.cancel = true, cancel
		ch := h.ask(&interaction.PermissionRequest{ToolName: "Bash", Input: json.RawMessage(`{"command":"ls"}`)})
		h.keys("ctrl+c")
		if a := reply(t, ch).ans.(*interaction.PermissionAnswer); a.Choice != interaction.Deny || !a.Interrupt {
			t.Errorf("answer %+v", a)
		}
		if ctx.Err() == nil {
			t.Error("the run goes on")
		}
	})
	t.Run("shift+tab cycles modes", func(t *testing.T) {
		h := newHarness(t, Options{}, true)
		var seen []tool.Mode
		for range 4 {
			h.keys("shift+tab")
			seen = append(seen, h.m.mode)
		}
		want := []tool.Mode{tool.ModeAcceptEdits, tool.ModePlan, tool.ModeDefault, tool.ModeAcceptEdits}
		for i := range want {
			if seen[i] != want[i] {
				t.Fatalf("modes %v, want %v", seen, want)
			}
		}
		h.wantView("acceptEdits")
		h.m.startIn = tool.ModeBypassPermissions
		h.keys("shift+tab", "shift+tab")
		if h.m.mode != tool.ModeBypassPermissions {
			t.Errorf("a bypass session cannot cycle back to bypass: %s", h.m.mode)
		}
	})
	t.Run("history, multi-line and queue", func(t *testing.T) {
		h := newHarness(t, Options{}, true)
		h.typeText("first prompt")
		h.keys("enter")
		h.typeText("second line one\\")
		h.keys("enter")
		h.typeText("line two")
		if got := h.m.input.Value(); got != "second line one\nline two" {
			t.Fatalf("multi-line input %q", got)
		}
		h.keys("enter")
		if len(h.m.queue) != 2 || h.m.queue[1] != "second line one\nline two" {
			t.Fatalf("queue %q", h.m.queue)
		}
		h.wantView("2 prompt(s) queued")
		h.typeText("draft")
		h.keys("up")
		if h.m.input.Value() != "second line one\nline two" {
			t.Fatalf("up: %q", h.m.input.Value())
		}
		h.m.input.MoveToBegin()
		h.keys("up")
		if h.m.input.Value() != "first prompt" {
			t.Fatalf("up again: %q", h.m.input.Value())
		}
		h.keys("down")
		h.m.input.MoveToEnd()
		h.keys("down")
		if h.m.input.Value() != "draft" {
			t.Fatalf("down back to the draft: %q", h.m.input.Value())
		}
		h.keys("esc")
		if len(h.m.queue) != 0 {
			t.Errorf("esc kept the queue %q", h.m.queue)
		}
	})
	t.Run("large paste", func(t *testing.T) {
		h := newHarness(t, Options{}, true)
		big := strings.Repeat("log line\n", 40)
		h.typeText("look at this: ")
		h.send(tea.PasteMsg{Content: big})
		if v := h.m.input.Value(); v != "look at this: [pasted text #1: 41 lines]" {
			t.Fatalf("input %q", v)
		}
		h.keys("enter")
		if len(h.m.queue) != 1 || h.m.queue[0] != strings.TrimSpace("look at this: "+big) {
			t.Errorf("queued %q", h.m.queue)
		}
		h.send(tea.PasteMsg{Content: "small"})
		if h.m.input.Value() != "small" {
			t.Errorf("small paste: %q", h.m.input.Value())
		}
	})
	t.Run("ctrl+d exits on empty input", func(t *testing.T) {
		h := newHarness(t, Options{}, true)
		h.keys("ctrl+d")
		if !h.m.quitting {
			t.Error("ctrl+d did not exit")
		}
	})
}

func TestSlashCommands(t *testing.T) {
	h := newHarness(t, Options{}, true)
	h.typeText("/re")
	h.wantView("/resume [id]")
	h.keys("tab")
	if h.m.input.Value() != "/resume " {
		t.Errorf("completion: %q", h.m.input.Value())
	}
	h.m.input.Reset()
	h.typeText("/help")
	h.keys("enter")
	h.wantTranscript("shift+tab", "esc", "/clear", "/compact [instructions]", "/model [name]", "/permissions", "/mcp", "/agents", "/context", "/cost", "/memory", "/init", "/review [pr-number]")
	h.typeText("/frobnicate")
	h.keys("enter")
	h.wantTranscript("unknown command /frobnicate")
	h.typeText("/mcp")
	h.keys("enter")
	h.wantTranscript("no MCP servers are configured")
	h.typeText("/model")
	h.keys("enter")
	h.wantTranscript("model: the provider's default")
	h.typeText("/cost")
	h.keys("enter")
	h.wantTranscript("/cost: no session is open")
}

func TestResumePicker(t *testing.T) {
	var opened []OpenRequest
	list := []SessionInfo{{ID: "s-new", Time: time.Unix(1700000000, 0), Title: "fix the parser"}, {ID: "s-old", Time: time.Unix(1600000000, 0), Title: "write docs"}}
	h := newHarness(t, Options{
		Sessions: func() ([]SessionInfo, error) { return list, nil },
		Open: func(_ context.Context, r OpenRequest) (*Session, error) {
			opened = append(opened, r)
			return nil, errors.New("not in this test")
		},
	}, true)
	h.send(sessionsMsg{list: list})
	h.wantView("Resume a session", "1. fix the parser", "s-new", "2. write docs")
	h.keys("2")
	h.pump(func() bool { return !h.m.opening })
	if len(opened) == 0 || opened[0].SessionID != "s-old" {
		t.Errorf("opened %+v", opened)
	}
	h.wantTranscript("could not open the session")
}

func TestTodosAndView80x24(t *testing.T) {
	h := newHarness(t, Options{}, true)
	h.send(tea.WindowSizeMsg{Width: 80, Height: 24})
	todos := []store.Todo{{Content: "Read the code", Status: store.TodoCompleted, ActiveForm: "Reading"},
		{Content: "Fix the bug", Status: store.TodoInProgress, ActiveForm: "Fixing the bug"},
		{Content: "Run the tests", Status: store.TodoPending, ActiveForm: "Running the tests"}}
	h.send(evMsg{ev: &agent.ToolResultEvent{Outcome: &executor.Outcome{ID: "t1", Name: todo.Name,
		Result: &tool.Result{Content: []tool.Content{tool.Text("ok")}, Structured: todo.Result{NewTodos: todos}}}}})
	h.wantView("todos 1/3 done", "▸ Fixing the bug", "☐ Run the tests")
	// A long streaming reply and a dialog still fit 80×24.
	h.m.running = true
	h.send(evMsg{ev: &agent.TextDelta{Text: strings.Repeat("A rather long line of streamed text that wraps. ", 80)}})
	h.ask(&interaction.PermissionRequest{ToolName: "Bash", Input: json.RawMessage(`{"command":"make"}`), Suggestions: []string{"Bash(make *)"}, Scopes: []settings.Scope{settings.ScopeLocal}})
	v := h.m.View().Content
	lines := strings.Split(v, "\n")
	if len(lines) > 24 {
		t.Errorf("the view has %d lines for a 24-line terminal", len(lines))
	}
	for _, l := range lines {
		if w := ansi.StringWidth(l); w > 80 {
			t.Errorf("a line is %d cells wide: %q", w, ansi.Strip(l))
		}
	}
	h.wantView("Allow Bash?", "4. No")
}

func TestHistoryFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gantry", "prompt-history.jsonl")
	h := newHarness(t, Options{HistoryFile: path}, true)
	h.typeText("first\\")
	h.keys("enter")
	h.typeText("second line")
	h.keys("enter")
	h.typeText("/help")
	h.keys("enter")
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("history file: %v, %v", fi, err)
	}
	// A new UI brings them back with ↑, newest first.
	h2 := newHarness(t, Options{HistoryFile: path}, true)
	h2.keys("up")
	if got := h2.m.input.Value(); got != "/help" {
		t.Errorf("up: %q", got)
	}
	h2.keys("up")
	h2.m.input.MoveToBegin()
	h2.keys("up")
	if got := h2.m.input.Value(); got != "first" && got != "first\nsecond line" {
		t.Errorf("up, up: %q", got)
	}
	// The file is cut back when it grows past twice the limit.
	var b strings.Builder
	for i := range 2*maxHistory + 10 {
		fmt.Fprintf(&b, "%q\n", fmt.Sprint("p", i))
	}
	b.WriteString("not json\n")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	got := loadHistory(path)
	if len(got) != maxHistory || got[len(got)-1] != fmt.Sprint("p", 2*maxHistory+9) {
		t.Errorf("loaded %d entries, last %q", len(got), got[len(got)-1])
	}
	data, _ := os.ReadFile(path)
	if n := strings.Count(string(data), "\n"); n != maxHistory {
		t.Errorf("the file has %d lines after the cut", n)
	}
}

// TestLogLinesInStatusArea: log output during a run is one status line,
// never the transcript; it clears when the turn ends. Before the UI runs
// it goes to the fallback.
func TestLogLinesInStatusArea(t *testing.T) {
	h := newHarness(t, Options{}, false)
	w := &logWriter{bus: h.m.bus}
	fmt.Fprintf(w, "gantry: 529 overloaded; retrying in 600ms (attempt 2)\n")
	fmt.Fprintf(w, "gantry: 529 overloaded; retrying in 1.2s ")
	fmt.Fprintf(w, "(attempt 3)\n")
	h.pump(func() bool { return strings.Contains(h.m.logLine, "attempt 3") })
	h.wantView("… gantry: 529 overloaded; retrying in 1.2s (attempt 3)")
	if strings.Contains(h.view(), "attempt 2") || strings.Contains(h.transcript(), "retrying") {
		t.Errorf("an older log line stays:\nview:\n%s\ntranscript:\n%s", h.view(), h.transcript())
	}
	h.m.running = true
	h.send(runDoneMsg{})
	if strings.Contains(h.view(), "retrying") {
		t.Errorf("the log line outlives the turn:\n%s", h.view())
	}

	var fallback strings.Builder
	u := New(Options{})
	fmt.Fprintln(u.Log(&fallback), "gantry: warning: before the UI")
	if fallback.String() != "gantry: warning: before the UI\n" {
		t.Errorf("fallback got %q", fallback.String())
	}
}
