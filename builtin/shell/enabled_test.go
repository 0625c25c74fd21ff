package shell

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/gantry-dev/gantry/tool"
)

// TestBashEnabledFollowsTheShell: Bash is enabled only when its shell is
// found; a shell installed later is found by the next check, and once
// found the answer is kept (the check runs on every request).
func TestBashEnabledFollowsTheShell(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("PATH", dir)
	b := NewBash(Options{Shell: "gantry-test-shell"})
	ctx, env := context.Background(), &tool.Env{}
	if tool.IsEnabled(ctx, b, env) {
		t.Fatal("enabled without its shell")
	}
	sh := filepath.Join(dir, "gantry-test-shell")
	if err := os.WriteFile(sh, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if !tool.IsEnabled(ctx, b, env) {
		t.Fatal("not enabled once the shell is installed")
	}
	if err := os.Remove(sh); err != nil {
		t.Fatal(err)
	}
	if !tool.IsEnabled(ctx, b, env) {
		t.Fatal("a found shell is looked up again")
	}
}
