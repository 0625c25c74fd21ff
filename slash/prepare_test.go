package slash_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/executor"
	"github.com/gantry-dev/gantry/slash"
	"github.com/gantry-dev/gantry/workspace"
)

// TestPrepare runs a command's !`cmd` and @path through a real
// workspace's pipeline: allowed calls fill the prompt, a denied one fails
// the command, and nothing runs without a caller.
func TestPrepare(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("first note\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	getenv := func(k string) string {
		if k == "HOME" {
			return home
		}
		return ""
	}
	ctx := context.Background()
	ws, err := workspace.Open(ctx, workspace.Options{Dir: dir, NoSettings: true, Getenv: getenv, UserHome: home, PolicyPath: "-",
		Allow: []string{"Bash(echo *)"}})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()

	c := &slash.Command{Name: "notes", Body: "Tag !`echo tag-$1` then read @notes.txt and @missing/x.txt"}
	if _, err := c.Prepare(ctx, ws, "one"); err == nil || !strings.Contains(err.Error(), "/notes: Read") {
		t.Errorf("a missing file: err = %v, want the Read failure", err)
	}
	c.Body = "Tag !`echo tag-$1` then read @notes.txt."
	got, err := c.Prepare(ctx, ws, "one")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(got, "Tag tag-one then read @notes.txt.\n\n<file path=\"notes.txt\">\n") || !strings.Contains(got, "first note") {
		t.Errorf("prompt = %q", got)
	}

	// Writing outside the rules asks; nobody can approve here.
	c.Body = "!`touch made.txt`"
	if _, err := c.Prepare(ctx, ws, ""); err == nil || !strings.Contains(err.Error(), "/notes: Bash") {
		t.Errorf("an unapproved command: err = %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "made.txt")); err == nil {
		t.Error("the unapproved command ran")
	}
	if got, _ := c.Prepare(ctx, nil, ""); got != "!`touch made.txt`" {
		t.Errorf("without a caller: %q", got)
	}
}

// TestSlashCommandTool: a trusted project's commands the model may run
// are in the pool as SlashCommand; running one gives its prompt; a
// command that pre-executes, or disables model invocation, is refused.
func TestSlashCommandTool(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	for name, body := range map[string]string{
		"greet.md":   "---\ndescription: greet someone\nargument-hint: <name>\n---\nSay hello to $1.",
		"run.md":     "---\ndescription: runs a command first\n---\nStatus: !`git status`",
		"private.md": "---\ndescription: for people only\ndisable-model-invocation: true\n---\nSecret steps.",
	} {
		p := filepath.Join(dir, ".claude", "commands", name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	getenv := func(k string) string {
		if k == "HOME" {
			return home
		}
		return ""
	}
	ctx := context.Background()
	ws, err := workspace.Open(ctx, workspace.Options{Dir: dir, Trusted: true, Getenv: getenv, UserHome: home, PolicyPath: "-"})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	var desc string
	for _, s := range ws.Pool().Specs() {
		if s.Name == slash.ToolName {
			desc = s.Description
		}
	}
	if !strings.Contains(desc, "/greet <name>: greet someone") || strings.Contains(desc, "/run") || strings.Contains(desc, "/private") {
		t.Fatalf("SlashCommand's description = %q", desc)
	}
	call := func(command string) *executor.Outcome {
		b, err := ws.Executor().Run(ctx, executor.NewSharedEnv(ws.Env()), []executor.Call{{ID: "s", Name: slash.ToolName, Input: json.RawMessage(`{"command":"` + command + `"}`)}})
		if err != nil {
			t.Fatal(err)
		}
		return b.Outcomes[0]
	}
	if o := call("/greet Ada"); o.Kind != executor.KindOK || !strings.Contains(o.Result.TextContent(), "Say hello to Ada.") {
		t.Errorf("/greet: %q %q", o.Kind, o.Result.TextContent())
	}
	for _, c := range []string{"/run", "/private", "/compact", "/nope"} {
		if o := call(c); o.Kind == executor.KindOK {
			t.Errorf("%s ran: %q", c, o.Result.TextContent())
		}
	}
}
