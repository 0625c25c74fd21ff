package tui

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/gantry-dev/gantry/builtin/sleep"
	"github.com/gantry-dev/gantry/interaction"
	"github.com/gantry-dev/gantry/tool"
	"github.com/gantry-dev/gantry/workspace"
)

// TestNotification: a notification is answered at once, without a dialog;
// the UI prints it, rings and raises an OSC 9 notification whose text can
// neither end the sequence nor start another.
func TestNotification(t *testing.T) {
	msgs := make(chan tea.Msg, 4)
	b := newBus(func(m tea.Msg) { msgs <- m })
	var desk []string
	c := &channel{bus: b, desktop: func(_ context.Context, title, msg string) error {
		desk = append(desk, title+"|"+msg)
		return nil
	}}
	req := &interaction.NotificationRequest{Title: "Build", Message: "done\x1b]0;evil\x07 \u009d now", Who: interaction.Who{Agent: "reviewer"}}
	a, err := interaction.Notify(context.Background(), c, req)
	if err != nil || strings.Join(a.Delivered, ",") != "terminal,desktop" {
		t.Fatalf("%+v %v", a, err)
	}
	if len(desk) != 1 || desk[0] != "Build|"+req.Message {
		t.Errorf("desktop %q", desk)
	}
	nm := (<-msgs).(notifyMsg)

	// No desktop notifier: the terminal still told the person.
	c.desktop = func(context.Context, string, string) error { return errors.New("none") }
	if a, err := interaction.Notify(context.Background(), c, req); err != nil || strings.Join(a.Delivered, ",") != "terminal" {
		t.Fatalf("%+v %v", a, err)
	}
	<-msgs

	h := newHarness(t, Options{}, false)
	cmd := h.m.notified(nm.r)
	raw, ok := cmd().(tea.RawMsg)
	if !ok {
		t.Fatalf("cmd gave %T", cmd())
	}
	s := raw.Msg.(string)
	if !strings.HasPrefix(s, "\a\x1b]9;") || !strings.HasSuffix(s, "\a") || strings.Count(s, "\a") != 2 || strings.Count(s, "\x1b") != 1 || strings.ContainsRune(s, 0x9d) {
		t.Errorf("raw %q", s)
	}
	h.m.Update(nil) // flush the transcript
	if tr := strings.Join(h.m.outbox, "\n") + strings.Join(h.out, "\n"); !strings.Contains(tr, "🔔 [reviewer] Build: done") || strings.ContainsRune(tr, 0x1b) {
		t.Errorf("transcript %q", tr)
	}

	b.close()
	if _, err := interaction.Notify(context.Background(), c, req); !errors.Is(err, interaction.ErrNobody) {
		t.Errorf("after close: %v", err)
	}
}

// TestCardShowsDisplayName: a tool with a name for people is shown by it.
func TestCardShowsDisplayName(t *testing.T) {
	st := newStyles(false)
	c := &card{name: "mcp__gh__create_issue", display: "Create issue", desc: "bug: crash\x1b[31m"}
	if got := ansi.Strip(c.title(st)); got != `Create issue bug: crash\x1b[31m` {
		t.Errorf("title %q", got)
	}
	c = &card{name: "Read", desc: "Read main.go"}
	if got := ansi.Strip(c.title(st)); got != "Read main.go" {
		t.Errorf("title %q", got)
	}
}

// TestQueuedPromptWakesSleep: a prompt typed while a turn runs ends the
// turn's Sleep call, through the session's sleep.Waker.
func TestQueuedPromptWakesSleep(t *testing.T) {
	ws, err := workspace.Open(context.Background(), workspace.Options{Dir: t.TempDir(), Getenv: func(string) string { return "" },
		PolicyPath: "-", NoSettings: true, NoMCP: true, NoAgentFiles: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	h := newHarness(t, Options{}, false)
	h.m.sess = &Session{Workspace: ws}
	t.Cleanup(func() { h.m.sess = nil }) // no agent for the harness to close
	done := make(chan sleep.Output, 1)
	go func() {
		r, err := sleep.New(sleep.Options{}).Call(context.Background(), &tool.Env{Services: ws.Services()}, json.RawMessage(`{"duration_seconds":600}`))
		if err != nil {
			t.Error(err)
		}
		done <- r.Structured.(sleep.Output)
	}()
	// The Sleep call may not be waiting yet: wake until it returns.
	for {
		h.m.wakeSleep()
		select {
		case out := <-done:
			if out.Woke != sleep.WokeUser || !strings.Contains(out.Reason, "user sent a message") {
				t.Fatalf("%+v", out)
			}
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
}
