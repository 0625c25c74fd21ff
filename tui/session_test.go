package tui

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/agent"
	"github.com/gantry-dev/gantry/builtin/file"
	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/llm/anthropic"
	"github.com/gantry-dev/gantry/llm/llmtest"
	"github.com/gantry-dev/gantry/tool"
	"github.com/gantry-dev/gantry/toolset"
	"github.com/gantry-dev/gantry/transcript"
	"github.com/gantry-dev/gantry/workspace"
)

// TestSessionEndToEnd drives the model with a real agent over the fake
// model API: a write approved in its dialog, a turn interrupted with Esc
// (the finished call's result is kept), the conversation going on,
// /compact, /clear and /resume of the first session.
func TestSessionEndToEnd(t *testing.T) {
	srv := llmtest.NewServer(t)
	dir, home := t.TempDir(), t.TempDir()
	store := transcript.NewStore(home)
	var h *harness
	open := func(ctx context.Context, req OpenRequest) (*Session, error) {
		return openFileAgent(ctx, srv, dir, &channel{bus: h.m.bus}, func(wo *workspace.Options, o *agent.Options) {
			wo.Mode, wo.Transcripts, wo.ResumeID, o.KeepMessages = req.Mode, store, req.SessionID, 1
		})
	}
	h = newHarness(t, Options{Open: open, Sessions: StoreSessions(store, dir)}, true)
	h.m.Init()
	h.pump(func() bool { return h.m.sess != nil })
	first := h.m.session

	write, _ := json.Marshal(map[string]string{"file_path": filepath.Join(dir, "a.txt"), "content": "hello\n"})
	srv.Script(
		llmtest.Reply{Content: []llm.Block{llm.Text("Writing it."), llm.ToolUse("w1", "Write", write)}},
		llmtest.Reply{Content: []llm.Block{llm.Text("Now a long explanation")}, StallAfter: 3},
		llmtest.TextReply("Still here."),
		llmtest.TextReply("Summary: a.txt was written."),
	)
	h.typeText("write a.txt")
	h.keys("enter")
	h.pump(func() bool { return h.m.dlg != nil })
	h.wantView("Allow Write?", "+ hello")
	h.clock = h.clock.Add(dialogGrace) // the person reads the dialog
	h.keys("1")
	h.pump(func() bool { return len(srv.Requests()) == 2 })
	h.keys("esc") // the second reply stalls: interrupt it
	h.pump(func() bool { return !h.m.running })
	h.wantTranscript("> write a.txt", "Writing it.", "allowed once: Write", "✓ Write", "interrupted")
	if b, err := os.ReadFile(filepath.Join(dir, "a.txt")); err != nil || string(b) != "hello\n" {
		t.Fatalf("the approved write: %q, %v", b, err)
	}
	// The finished call's result is kept in the conversation.
	var kept bool
	for _, m := range h.m.sess.Agent.Messages() {
		for _, b := range m.Content {
			kept = kept || (b.Type == llm.TypeToolResult && b.ToolUseID == "w1")
		}
	}
	if !kept {
		t.Error("the interrupted turn lost the result of the finished call")
	}

	h.typeText("are you there?")
	h.keys("enter")
	h.pump(func() bool { return !h.m.running && strings.Contains(h.transcript(), "Still here.") })
	// /cost and /context report from the agent (package slash/local).
	h.typeText("/cost")
	h.keys("enter")
	h.typeText("/context")
	h.keys("enter")
	h.wantTranscript("Total cost:", "Model calls: ", "Context: ")

	h.typeText("/compact keep the file names")
	h.keys("enter")
	h.pump(func() bool { return !h.m.compacting })
	h.wantTranscript("compacted the conversation")
	if last := srv.Requests()[len(srv.Requests())-1]; !strings.Contains(lastUserText(last), "keep the file names") {
		t.Errorf("the instructions did not reach the summary request: %q", lastUserText(last))
	}

	h.typeText("/clear")
	h.keys("enter")
	h.pump(func() bool { return h.m.sess != nil && !h.m.opening })
	if h.m.session == first {
		t.Fatal("/clear kept the session")
	}

	h.send(h.m.command("/resume")())
	h.wantView("Resume a session", "write a.txt")
	h.keys("1")
	h.pump(func() bool { return h.m.sess != nil && !h.m.opening })
	if h.m.session != first {
		t.Errorf("resumed %s, want %s", h.m.session, first)
	}
	h.wantTranscript("resumed session "+first, "Write "+filepath.Join(dir, "a.txt"))

	// Shift-Tab reaches the open agent.
	h.keys("shift+tab")
	if got := h.m.sess.Agent.Env().Mode; got != tool.ModeAcceptEdits {
		t.Errorf("agent mode %s after shift+tab", got)
	}
}

func lastUserText(r llmtest.Request) string {
	var b strings.Builder
	for _, m := range r.Messages {
		for _, bl := range m.Content {
			b.WriteString(bl.Text)
		}
	}
	return b.String()
}

// openFileAgent opens a session on a real agent with the file tools in dir,
// talking to the fake model API srv; adjust sets the test's options.
func openFileAgent(ctx context.Context, srv *llmtest.Server, dir string, ch *channel, adjust func(*workspace.Options, *agent.Options)) (*Session, error) {
	wo := workspace.Options{
		Dir: dir, NoSettings: true, NoAgentFiles: true, NoAgentTool: true, Interaction: ch,
		Pool: &toolset.Options{Registry: toolset.NewRegistry(), Tools: file.Tools(file.Options{})},
	}
	o := agent.Options{
		Provider:   anthropic.New(anthropic.Options{BaseURL: srv.URL(), APIKey: "test"}),
		Model:      "claude-test",
		NoEnvFacts: true,
	}
	adjust(&wo, &o)
	ws, err := workspace.Open(ctx, wo)
	if err != nil {
		return nil, err
	}
	o.Workspace, o.Closers = ws, append(o.Closers, ws)
	ag, err := agent.New(ctx, o)
	if err != nil {
		ws.Close()
		return nil, err
	}
	return &Session{Agent: ag, Model: "claude-test"}, nil
}
