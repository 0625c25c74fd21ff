package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/llm/llmtest"
)

// tmuxPane runs a command in a detached tmux session of its own server
// (80×24) and reads its screen.
type tmuxPane struct {
	t      *testing.T
	socket string
}

func newTmuxPane(t *testing.T, dir string, env []string, args ...string) *tmuxPane {
	t.Helper()
	p := &tmuxPane{t: t, socket: filepath.Join(t.TempDir(), "tmux.sock")}
	cmd := append([]string{"new-session", "-d", "-s", "e2e", "-x", "80", "-y", "24", "-c", dir}, "env")
	cmd = append(append(cmd, env...), args...)
	p.tmux(cmd...)
	p.tmux("set-option", "-t", "e2e", "remain-on-exit", "on")
	t.Cleanup(func() { exec.Command("tmux", "-S", p.socket, "kill-server").Run() })
	return p
}

func (p *tmuxPane) tmux(args ...string) string {
	p.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", p.socket}, args...)...).CombinedOutput()
	if err != nil {
		p.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// screen is what a person sees: the visible pane and its scrollback.
func (p *tmuxPane) screen() string {
	return p.tmux("capture-pane", "-p", "-J", "-S", "-200", "-t", "e2e")
}

// waitFor waits until the screen shows every one of want.
func (p *tmuxPane) waitFor(want ...string) string {
	p.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		s := p.screen()
		missing := ""
		for _, w := range want {
			if !strings.Contains(s, w) {
				missing = w
				break
			}
		}
		if missing == "" {
			return s
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("the screen never showed %q; it shows:\n%s", missing, s)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// read waits as long as a person takes to read a dialog: a granting
// dialog ignores keys that arrive sooner (they went to the prompt).
func (p *tmuxPane) read() { time.Sleep(500 * time.Millisecond) }

func (p *tmuxPane) keys(keys ...string) {
	p.t.Helper()
	p.tmux(append([]string{"send-keys", "-t", "e2e"}, keys...)...)
}
func (p *tmuxPane) text(s string) { p.t.Helper(); p.tmux("send-keys", "-t", "e2e", "-l", s) }

// TestInteractiveTerminal runs the real binary in tmux against the fake
// model API: a prompt, a Bash call approved, a question answered, a plan
// approved, a turn interrupted with Esc, and Ctrl-C twice to leave — and
// checks the screen as a person would read it.
func TestInteractiveTerminal(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed (scripts/setup --test installs it)")
	}
	bin, err := exec.LookPath("gantry")
	if err != nil {
		t.Fatalf("the gantry command of this test binary: %v", err)
	}
	srv := llmtest.NewServer(t)
	question := `{"questions":[{"question":"Which colour should the button be?","header":"Colour","options":[{"label":"Red","description":"warm and loud"},{"label":"Blue","description":"calm"}],"multiSelect":false}]}`
	srv.Script(
		llmtest.Reply{Content: []llm.Block{llm.Text("I will write the file first."),
			llm.ToolUse("toolu_bash", "Bash", []byte(`{"command":"printf 'tui-e2e-ok\\n' > e2e.txt && cat e2e.txt","description":"Write e2e.txt and show it"}`))}},
		llmtest.ToolReply(llmtest.ToolCall{ID: "toolu_q", Name: "AskUserQuestion", Input: question}),
		llmtest.ToolReply(llmtest.ToolCall{ID: "toolu_enter", Name: "EnterPlanMode", Input: `{}`}),
		llmtest.ToolReply(llmtest.ToolCall{ID: "toolu_plan", Name: "ExitPlanMode", Input: `{"plan":"## Button plan\n\n1. Paint the button **blue**\n2. Run the tests"}`}),
		llmtest.TextReply("Done: the button is **blue** now."),
		// The second prompt: the reply starts, then stalls until the
		// client goes away (the person presses Esc).
		llmtest.Reply{Content: []llm.Block{llm.Text("Starting a very long answer that will be interrupted")}, StallAfter: 3, ChunkSize: 12},
		llmtest.TextReply("Back again."),
	)
	dir, home := t.TempDir(), t.TempDir()
	env := []string{
		"HOME=" + home, "GANTRY_HOME=" + filepath.Join(home, ".gantry"), "TERM=xterm-256color", "NO_COLOR=",
		"ANTHROPIC_BASE_URL=" + srv.URL(), "ANTHROPIC_API_KEY=test-key", "OPENAI_API_KEY=", "OPENAI_BASE_URL=",
		"GORACE=atexit_sleep_ms=0", "PATH=" + os.Getenv("PATH"),
	}
	start := time.Now()
	p := newTmuxPane(t, dir, env, "sh", "-c", bin+` --model claude-sonnet-4-5; echo "gantry exited: $?"`)
	p.waitFor("›", "claude-sonnet-4-5", "default")
	t.Logf("first frame after %v (test binary built with -race)", time.Since(start))

	p.text("make the button nice")
	p.keys("Enter")
	s := p.waitFor("> make the button nice", "I will write the file first.", "Allow Bash?", "Write e2e.txt and show it", "1. Yes")
	if !strings.Contains(s, `$ printf 'tui-e2e-ok\n' > e2e.txt && cat e2e.txt`) {
		t.Errorf("the permission dialog does not show the whole command:\n%s", s)
	}
	p.read()
	p.keys("1") // Yes
	p.waitFor("✓ Bash", "tui-e2e-ok", "Which colour should the button be?", "2. Blue")
	if b, err := os.ReadFile(filepath.Join(dir, "e2e.txt")); err != nil || string(b) != "tui-e2e-ok\n" {
		t.Errorf("the approved command did not run: %q, %v", b, err)
	}
	p.read()
	p.keys("Down", "Enter") // Blue
	p.waitFor("→ Blue", "Button plan", "Paint the button blue", "Ready to carry out the plan?", "auto-accept edits")
	p.read()
	p.keys("1") // Yes, and auto-accept edits (Enter alone would keep planning)
	s = p.waitFor("plan approved", "Done: the button is blue now.", "acceptEdits")

	reqs := srv.Requests()
	if got := len(reqs); got != 5 {
		t.Fatalf("the model got %d requests, want 5", got)
	}
	var answer string
	for _, r := range reqs[2].ToolResults() {
		if r.ToolUseID == "toolu_q" && len(r.Content) > 0 {
			answer = r.Content[0].Text
		}
	}
	if !strings.Contains(answer, `"Which colour should the button be?" = "Blue"`) {
		t.Errorf("the question's answer did not reach the model: %q", answer)
	}

	p.text("now explain it all")
	p.keys("Enter")
	p.waitFor("> now explain it all", "esc to interrupt")
	p.keys("Escape")
	p.waitFor("interrupted")
	p.text("are you there?")
	p.keys("Enter")
	p.waitFor("Back again.")

	p.keys("C-c")
	p.waitFor("press Ctrl-C again to exit")
	p.keys("C-c")
	s = p.waitFor("gantry exited: 0")
	t.Logf("screen at the end:\n%s", s)
	if bytes.Contains([]byte(s), []byte("panic")) {
		t.Errorf("the screen shows a panic:\n%s", s)
	}
}

// e2eEnv is the environment of a gantry in a tmux pane against the fake
// model API at url.
func e2eEnv(home, url string) []string {
	return []string{
		"HOME=" + home, "GANTRY_HOME=" + filepath.Join(home, ".gantry"), "TERM=xterm-256color", "NO_COLOR=",
		"ANTHROPIC_BASE_URL=" + url, "ANTHROPIC_API_KEY=test-key", "OPENAI_API_KEY=", "OPENAI_BASE_URL=",
		"GORACE=atexit_sleep_ms=0", "PATH=" + os.Getenv("PATH"),
	}
}

func e2eBinary(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed (scripts/setup --test installs it)")
	}
	bin, err := exec.LookPath("gantry")
	if err != nil {
		t.Fatalf("the gantry command of this test binary: %v", err)
	}
	return bin
}

// TestTerminalTypeAheadTrust: a prompt typed and sent the moment gantry
// starts in a folder with project settings neither accepts the trust
// dialog nor gets lost: the dialog stays until answered, then the prompt
// runs.
func TestTerminalTypeAheadTrust(t *testing.T) {
	bin := e2eBinary(t)
	srv := llmtest.NewServer(t)
	srv.Script(llmtest.TextReply("Typed-ahead prompt answered."), llmtest.TextReply("The second one too."))
	dir, home := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".gantry"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".gantry", "settings.json"), []byte(`{"permissions":{"allow":["Bash(ls *)"]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	p := newTmuxPane(t, dir, e2eEnv(home, srv.URL()), "sh", "-c", bin+` --model claude-sonnet-4-5; echo "gantry exited: $?"`)
	// At once, before anything is drawn: the prompt, Enter, and a "1"
	// with Enter (the trust dialog's "Yes" were it listening).
	p.text("hello there")
	p.keys("Enter")
	p.text("1")
	p.keys("Enter")
	s := p.waitFor("Trust the folder", "❯ 2. No")
	if strings.Contains(s, "  trusted") {
		t.Fatalf("typed-ahead keys trusted the folder:\n%s", s)
	}
	if len(srv.Requests()) != 0 {
		t.Fatalf("a prompt ran before the trust dialog was answered")
	}
	p.read()
	p.keys("Enter") // the default: No
	// Both typed-ahead prompts run, in order: "1" was a prompt, not a
	// choice.
	s = p.waitFor("not trusted", "> hello there", "Typed-ahead prompt answered.", "> 1", "The second one too.")
	if b, err := os.ReadFile(filepath.Join(home, ".gantry", "trusted-folders.json")); err == nil && strings.Contains(string(b), dir) {
		t.Errorf("the folder was recorded as trusted: %s", b)
	}
	p.keys("C-c")
	p.keys("C-c")
	p.waitFor("gantry exited: 0")
}

// TestTerminalRetriesStayInStatusLine: a model API that fails twice and
// then answers: the retries show in the status area, never over the
// frame, and nothing of them stays on the screen; an error that ends a
// turn is shown once.
func TestTerminalRetriesStayInStatusLine(t *testing.T) {
	bin := e2eBinary(t)
	srv := llmtest.NewServer(t)
	srv.Script(
		llmtest.ErrorReply(529, "", ""), llmtest.ErrorReply(529, "", ""),
		llmtest.TextReply("Answer after two retries."),
		llmtest.ErrorReply(400, "invalid_request_error", "finalerr"),
	)
	dir, home := t.TempDir(), t.TempDir()
	p := newTmuxPane(t, dir, e2eEnv(home, srv.URL()), "sh", "-c", bin+` --model claude-sonnet-4-5; echo "gantry exited: $?"`)
	p.waitFor("›", "claude-sonnet-4-5")
	p.text("first question")
	p.keys("Enter")
	p.waitFor("Answer after two retries.")
	s := p.screen()
	for _, bad := range []string{"retrying in", "working… 0"} {
		if strings.Contains(s, bad) {
			t.Errorf("the screen still shows %q after the turn:\n%s", bad, s)
		}
	}
	if n := strings.Count(s, "Answer after two retries."); n != 1 {
		t.Errorf("the reply shows %d times:\n%s", n, s)
	}
	p.text("second question")
	p.keys("Enter")
	s = p.waitFor("finalerr")
	time.Sleep(300 * time.Millisecond) // a second copy would follow at once
	s = p.screen()
	if n := strings.Count(s, "finalerr"); n != 1 {
		t.Errorf("the final error shows %d times:\n%s", n, s)
	}
	if got := len(srv.Requests()); got != 4 {
		t.Errorf("the model API got %d requests, want 4", got)
	}
	p.keys("C-c")
	p.keys("C-c")
	p.waitFor("gantry exited: 0")
}

// TestHeadlessPromptShowsCommand: gantry -p at a terminal asks on the
// terminal, and the question shows the exact command (the whole pipe, not
// the model's description of it) and an Edit's change.
func TestHeadlessPromptShowsCommand(t *testing.T) {
	bin := e2eBinary(t)
	srv := llmtest.NewServer(t)
	srv.Script(
		llmtest.ToolReply(llmtest.ToolCall{ID: "toolu_sh", Name: "Bash",
			Input: `{"command":"sh greet.sh | tee out.txt","description":"Run greet.sh and save its output"}`}),
		llmtest.ToolReply(llmtest.ToolCall{ID: "toolu_ed", Name: "Edit",
			Input: `{"file_path":"greet.sh","old_string":"echo hello","new_string":"echo goodbye"}`}),
		llmtest.TextReply("All done."),
	)
	dir, home := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "greet.sh"), []byte("echo hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := newTmuxPane(t, dir, e2eEnv(home, srv.URL()), "sh", "-c", bin+` -p 'greet and change it'; echo "gantry exited: $?"`)
	s := p.waitFor("wants to run this command (Bash):", "Choose 1-")
	for _, want := range []string{"  $ sh greet.sh | tee out.txt", "the model says: Run greet.sh and save its output"} {
		if !strings.Contains(s, want) {
			t.Errorf("the prompt lacks %q:\n%s", want, s)
		}
	}
	p.text("1")
	p.keys("Enter")
	p.waitFor("greet.sh (Edit):", "  - echo hello", "  + echo goodbye")
	p.text("1")
	p.keys("Enter")
	p.waitFor("All done.", "gantry exited: 0")
	if b, err := os.ReadFile(filepath.Join(dir, "out.txt")); err != nil || string(b) != "hello\n" {
		t.Errorf("out.txt = %q, %v", b, err)
	}
}
