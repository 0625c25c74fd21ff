package slash_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
