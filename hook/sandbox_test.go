package hook

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/gantry-dev/gantry/sandbox"
	"github.com/gantry-dev/gantry/settings"

	"github.com/gantry-dev/gantry/sandbox/sandboxtest"
)

// A command hook with "sandbox": true runs in the session's sandbox: it
// can write in the working directory, not outside; without a sandbox in
// the session it cannot run at all (and a PreToolUse hook then blocks).
func TestSandboxedHook(t *testing.T) {
	outside := sandboxtest.Outside(t, "hook-outside")
	evil := filepath.Join(outside, "evil")
	h := settings.HookCommand{Type: "command", Command: "touch inside; touch " + evil + " || true", Sandbox: true}
	hooks := map[string][]settings.HookMatcher{"PreToolUse": {{Hooks: []settings.HookCommand{h}}}}

	m, err := NewManager(Options{Hooks: hooks})
	if err != nil {
		t.Fatal(err)
	}
	in := pre(t, "Bash", "ls")
	if _, err := m.Run(context.Background(), in); !errors.Is(err, ErrNoVerdict) {
		t.Fatalf("a sandboxed hook without a sandbox ran: %v", err)
	}
	if _, err := os.Stat(filepath.Join(in.CWD, "inside")); err == nil {
		t.Fatal("the hook ran uncontained")
	}

	if b, st := sandbox.Detect(""); b.Name() == sandbox.BackendNone {
		t.Skipf("no sandbox backend: %s", st.Reason)
	}
	sb, err := sandbox.New(sandbox.Options{Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	m, err = NewManager(Options{Hooks: hooks, Sandbox: func(cmd *exec.Cmd, dir string) (func(), error) {
		return sb.Wrap(cmd, sb.Policy(dir))
	}})
	if err != nil {
		t.Fatal(err)
	}
	in = pre(t, "Bash", "ls")
	if _, err := m.Run(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(in.CWD, "inside")); err != nil {
		t.Errorf("the hook could not write its working directory: %v", err)
	}
	if _, err := os.Stat(evil); err == nil {
		t.Error("a sandboxed hook wrote outside")
	}
}
