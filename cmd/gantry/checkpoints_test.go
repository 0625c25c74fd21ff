package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/checkpoint"
)

// checkpointProject records, in a real store, the checkpoints of two
// sessions of one project: an older session s0, then s1 whose first prompt
// wrote a.txt (tool checkpoint c1), whose second call was denied (c2, the
// tree unchanged) and whose follow-up prompt (t2) changed nothing but for
// a denied call (c3).
func checkpointProject(t *testing.T) (home, proj string) {
	t.Helper()
	root := t.TempDir()
	home, proj = filepath.Join(root, "gantry"), filepath.Join(root, "proj")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	clock := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	st, err := checkpoint.Open(checkpoint.Options{Dir: proj, Home: home, Now: func() time.Time { clock = clock.Add(time.Second); return clock }})
	if err != nil {
		t.Fatal(err)
	}
	write := func(s string) {
		if err := os.WriteFile(filepath.Join(proj, "a.txt"), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	create := func(id, session string, kind checkpoint.Kind) {
		if _, err := st.Create(context.Background(), checkpoint.Meta{ID: id, Session: session, Kind: kind, Label: id}); err != nil {
			t.Fatal(err)
		}
	}
	write("0")
	create("t0", "s0", checkpoint.KindTurn)
	write("1")
	create("t1", "s1", checkpoint.KindTurn)
	create("c1", "s1", checkpoint.KindTool)
	write("two")
	create("c2", "s1", checkpoint.KindTool) // denied: nothing written
	create("t2", "s1", checkpoint.KindTurn) // "thanks": nothing written
	create("c3", "s1", checkpoint.KindTool) // denied, the last call: judged against the tip
	if err := st.Record(context.Background()); err != nil {
		t.Fatal(err)
	}
	return home, proj
}

func runCheckpointCmd(t *testing.T, home string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	env := map[string]string{"HOME": filepath.Dir(home), "GANTRY_HOME": home}
	a := &app{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(k string) string { return env[k] }}
	code := run(context.Background(), a, args)
	return out.String(), errb.String(), code
}

func TestCheckpointsListLatestSessionWithoutDeniedCalls(t *testing.T) {
	home, proj := checkpointProject(t)
	ids := func(args ...string) []string {
		out, errOut, code := runCheckpointCmd(t, home, append([]string{"checkpoints", "list", "--cwd", proj, "--json"}, args...)...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		var infos []checkpoint.Info
		if err := json.Unmarshal([]byte(out), &infos); err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, in := range infos {
			ids = append(ids, in.ID)
		}
		return ids
	}
	if got := strings.Join(ids(), " "); got != "t1 c1 t2" {
		t.Errorf("default list = %q; want the latest session without the denied call: t1 c1 t2", got)
	}
	if got := strings.Join(ids("--all"), " "); got != "t0 t1 c1 t2" {
		t.Errorf("--all = %q; want t0 t1 c1 t2", got)
	}
	if got := strings.Join(ids("--session", "s0"), " "); got != "t0" {
		t.Errorf("--session s0 = %q; want t0", got)
	}
	out, _, _ := runCheckpointCmd(t, home, "checkpoints", "list", "--cwd", proj)
	if !strings.Contains(out, "session s1 (the latest; --all lists every session)") || strings.Contains(out, "c2") {
		t.Errorf("text list:\n%s", out)
	}
}

func TestRewindSkipsPromptsThatChangedNothing(t *testing.T) {
	home, proj := checkpointProject(t)
	out, errOut, code := runCheckpointCmd(t, home, "rewind", "--cwd", proj)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"the latest prompt changed nothing", "rewound to t1", "restored a.txt"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(proj, "a.txt")); string(b) != "1" {
		t.Errorf("a.txt = %q; want the state before the prompt that wrote it", b)
	}
	// Rewinding again: the state is t1's now, so the newest turn that
	// changes something is t2 (undoing the rewind's effect is `gantry
	// rewind BEFORE`, printed above).
	if !strings.Contains(out, "to undo: gantry rewind ") {
		t.Errorf("no undo line:\n%s", out)
	}
}
