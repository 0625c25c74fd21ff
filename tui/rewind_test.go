package tui

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/agent"
	"github.com/gantry-dev/gantry/checkpoint"
	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/llm/llmtest"
	"github.com/gantry-dev/gantry/tool"
	"github.com/gantry-dev/gantry/transcript"
	"github.com/gantry-dev/gantry/workspace"
)

// TestRewind drives /rewind against a real agent, a real checkpoint store
// and real files: the agent writes over the fake model API, /rewind picks
// the prompt, shows the dry run and restores the files; a person's later
// edit is a conflict kept unless confirmed twice; the conversation rewind
// continues in a fork that ends before the prompt.
func TestRewind(t *testing.T) {
	srv := llmtest.NewServer(t)
	dir, home := t.TempDir(), t.TempDir()
	store := transcript.NewStore(home)
	cps, err := checkpoint.Open(checkpoint.Options{Dir: dir, Home: home})
	if err != nil {
		t.Fatal(err)
	}
	var h *harness
	open := func(ctx context.Context, req OpenRequest) (*Session, error) {
		return openFileAgent(ctx, srv, dir, &channel{bus: h.m.bus}, func(wo *workspace.Options, _ *agent.Options) {
			wo.Mode, wo.Transcripts, wo.Checkpoints, wo.ResumeID = tool.ModeAcceptEdits, store, cps, req.SessionID
		})
	}
	h = newHarness(t, Options{Open: open}, false)
	h.m.Init()
	h.pump(func() bool { return h.m.sess != nil })
	first := h.m.session

	a, b := filepath.Join(dir, "a.txt"), filepath.Join(dir, "b.txt")
	if err := os.WriteFile(b, []byte("original\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	writeCall := func(id, path, content string) llmtest.Reply {
		in, _ := json.Marshal(map[string]string{"file_path": path, "content": content})
		return llmtest.Reply{Content: []llm.Block{llm.ToolUse(id, "Write", in)}}
	}
	turn := func(prompt string, replies ...llmtest.Reply) {
		t.Helper()
		srv.Script(replies...)
		h.typeText(prompt)
		h.keys("enter")
		h.pump(func() bool { return !h.m.running && strings.Contains(h.transcript(), "Done: "+prompt) })
	}
	read := func(p string) string {
		t.Helper()
		c, err := os.ReadFile(p)
		if errors.Is(err, os.ErrNotExist) {
			return "<none>"
		} else if err != nil {
			t.Fatal(err)
		}
		return string(c)
	}
	rewindTo := func(choice string) {
		t.Helper()
		h.typeText("/rewind")
		h.keys("enter")
		h.pump(func() bool { return h.m.picker != nil })
		h.wantView("Rewind to before a prompt")
		h.keys(choice)
		h.pump(func() bool { return h.m.picker != nil && h.m.picker.title == "Rewind" })
	}

	readB, _ := json.Marshal(map[string]string{"file_path": b})
	turn("write the files", llmtest.Reply{Content: []llm.Block{llm.ToolUse("r1", "Read", readB)}},
		writeCall("w1", a, "new\n"), writeCall("w2", b, "changed\n"), llmtest.TextReply("Done: write the files"))
	if read(a) != "new\n" || read(b) != "changed\n" {
		t.Fatalf("the agent's writes: a=%q b=%q", read(a), read(b))
	}

	// The picker lists the prompt; the confirmation shows the dry run and
	// changes nothing until confirmed.
	rewindTo("1")
	h.wantView("write the files", "restore b.txt", "remove  a.txt", "Rewind the files and the conversation")
	if read(a) != "new\n" {
		t.Fatal("the dry run changed the files")
	}
	h.keys("1")
	h.pump(func() bool { return !h.m.rewinding && h.m.picker == nil })
	h.wantTranscript("rewound the files", "restored b.txt", "removed  a.txt", "undoes it")
	if read(a) != "<none>" || read(b) != "original\n" {
		t.Fatalf("after /rewind: a=%q b=%q", read(a), read(b))
	}

	// A person edits a file the rewind would change: shown, kept on the
	// first "no", overwritten only after the second confirmation.
	turn("write again", writeCall("w3", a, "again\n"), llmtest.TextReply("Done: write again"))
	if err := os.WriteFile(a, []byte("a person's edit\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rewindTo("1") // newest first: "write again"
	h.wantView("write again", "changed by someone else", "changed a.txt")
	h.keys("1")
	h.wantView("Overwrite changes made by someone else?", "No, keep them")
	h.keys("1")
	h.pump(func() bool { return h.m.picker == nil && !h.m.rewinding })
	h.wantTranscript("the changes are kept")
	if read(a) != "a person's edit\n" {
		t.Fatalf("declined force overwrote: a=%q", read(a))
	}
	rewindTo("1")
	h.keys("1", "2")
	h.pump(func() bool { return !h.m.rewinding && h.m.picker == nil })
	h.wantTranscript("overwrote a.txt")
	if read(a) != "<none>" {
		t.Fatalf("forced rewind: a=%q", read(a))
	}

	// Esc closes the picker without rewinding.
	h.typeText("/rewind")
	h.keys("enter")
	h.pump(func() bool { return h.m.picker != nil })
	h.keys("esc")
	if h.m.picker != nil {
		t.Error("esc left the picker open")
	}

	// Files and conversation: the session goes on in a fork that ends
	// before the prompt, which is back in the input.
	turn("third prompt", writeCall("w4", a, "third\n"), llmtest.TextReply("Done: third prompt"))
	rewindTo("1")
	h.keys("2")
	h.pump(func() bool { return h.m.sess != nil && !h.m.opening && !h.m.rewinding })
	if h.m.session == first {
		t.Fatal("the conversation rewind kept the session")
	}
	if read(a) != "<none>" {
		t.Fatalf("conversation rewind: a=%q", read(a))
	}
	if got := h.m.input.Value(); got != "third prompt" {
		t.Errorf("input after the conversation rewind: %q", got)
	}
	var prompts []string
	for _, msg := range h.m.sess.Agent.Messages() {
		if msg.Role == llm.RoleUser {
			for _, bl := range msg.Content {
				if bl.Type == llm.TypeText {
					prompts = append(prompts, bl.Text)
				}
			}
		}
	}
	all := strings.Join(prompts, "|")
	if !strings.Contains(all, "write again") || strings.Contains(all, "third prompt") {
		t.Errorf("the forked conversation's prompts: %q", all)
	}

}

// TestRewindWithoutCheckpoints: an agent without a checkpoint store says
// so instead of offering a picker.
func TestRewindWithoutCheckpoints(t *testing.T) {
	srv := llmtest.NewServer(t)
	dir := t.TempDir()
	var h *harness
	open := func(ctx context.Context, req OpenRequest) (*Session, error) {
		return openFileAgent(ctx, srv, dir, &channel{bus: h.m.bus}, func(*workspace.Options, *agent.Options) {})
	}
	h = newHarness(t, Options{Open: open}, false)
	h.m.Init()
	h.pump(func() bool { return h.m.sess != nil })
	h.m.command("/rewind")
	h.pump(func() bool { return !h.m.rewinding })
	h.wantTranscript("checkpoints are off")
	if h.m.picker != nil {
		t.Error("a picker without checkpoints")
	}
}
