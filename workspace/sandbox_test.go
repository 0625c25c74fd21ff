package workspace

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/gantry-dev/gantry/executor"
	"github.com/gantry-dev/gantry/sandbox"

	"github.com/gantry-dev/gantry/sandbox/sandboxtest"
)

// The settings' sandbox block contains the session's Bash: with
// autoAllowBashIfSandboxed a command runs unasked, writes inside the
// project, cannot write outside, and cannot read a Read-denied path.
func TestSandboxFromSettings(t *testing.T) {
	ctx := context.Background()
	if b, st := sandbox.Detect(""); b.Name() == sandbox.BackendNone {
		t.Skipf("no sandbox backend here: %s", st.Reason)
	}
	outside := sandboxtest.Outside(t, "ws-outside")
	writeFile(t, filepath.Join(outside, "secret.txt"), "TOP-SECRET")
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, ".gantry", "settings.json"), `{
		"sandbox": {"enabled": true, "autoAllowBashIfSandboxed": true},
		"permissions": {"deny": ["Read(/`+outside+`/secret.txt)"]}}`)
	ws, err := Open(ctx, Options{Dir: dir, Trusted: true, Getenv: fakeHome(t), PolicyPath: "-"})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	if !ws.Sandbox().Contained() {
		t.Fatalf("status %+v", ws.Sandbox().Status())
	}
	run := func(cmd string) *executor.Outcome {
		t.Helper()
		in, _ := json.Marshal(map[string]any{"command": cmd})
		o, err := ws.Executor().RunOne(ctx, ws.Session(), executor.Call{ID: "c", Name: "Bash", Input: in})
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	// Not read-only, no allow rule: runs because it is sandboxed.
	o := run("echo made > made.txt; echo x > " + filepath.Join(outside, "evil.txt") +
		"; python3 -c \"print(open('" + filepath.Join(outside, "secret.txt") + "').read())\"")
	text := o.Result.Content[0].Text
	if _, err := os.Stat(filepath.Join(dir, "made.txt")); err != nil {
		t.Fatalf("sandboxed command did not run (or not inside): %v %s", err, text)
	}
	if _, err := os.Stat(filepath.Join(outside, "evil.txt")); err == nil {
		t.Errorf("wrote outside the project: %s", text)
	}
	if strings.Contains(text, "TOP-SECRET") {
		t.Errorf("read a Read-denied file: %s", text)
	}
	// What the analysis sees reading outside still asks (here: denied,
	// nobody can be asked).
	if o := run("cat " + filepath.Join(outside, "secret.txt")); !o.Result.IsError || strings.Contains(o.Result.Content[0].Text, "TOP-SECRET") {
		t.Errorf("cat of a denied path: %+v", o.Result.Content)
	}
}

// A sandbox forced off says so once and tightens: acceptEdits no longer
// approves a changing command on its own.
func TestSandboxForcedOff(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, ".gantry", "settings.json"), `{"sandbox": {"enabled": true, "backend": "none"}}`)
	var mu sync.Mutex
	var warns []string
	ws, err := Open(ctx, Options{Dir: dir, Trusted: true, Getenv: fakeHome(t), PolicyPath: "-", Mode: "acceptEdits",
		Warn: func(m string) { mu.Lock(); warns = append(warns, m); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	st := ws.Sandbox().Status()
	if ws.Sandbox().Contained() || st.Backend != sandbox.BackendNone || !ws.Sandbox().Unavailable() {
		t.Fatalf("status %+v", st)
	}
	in := json.RawMessage(`{"command":"touch x"}`)
	o, err := ws.Executor().RunOne(ctx, ws.Session(), executor.Call{ID: "c", Name: "Bash", Input: in})
	if err != nil {
		t.Fatal(err)
	}
	if !o.Result.IsError || !strings.Contains(o.Result.Content[0].Text, "sandbox") {
		t.Errorf("acceptEdits approved a command without the sandbox: %+v", o.Result.Content)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(warns) != 1 || !strings.Contains(warns[0], "WITHOUT a sandbox") {
		t.Errorf("warnings %q", warns)
	}
}
