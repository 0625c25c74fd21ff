package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/runqueue"
	"github.com/gantry-dev/gantry/store"
)

// TestCronAddRules checks that `gantry cron add` reads --allowedTools and
// --disallowedTools as `gantry -p` does: one parser for rule lists, so a
// rule's specifier keeps the commas inside its parentheses.
func TestCronAddRules(t *testing.T) {
	home := t.TempDir()
	gh := filepath.Join(home, ".gantry")
	env := map[string]string{"HOME": home, "GANTRY_HOME": gh}
	out, errb := &strings.Builder{}, &strings.Builder{}
	a := &app{stdin: strings.NewReader(""), stdout: out, stderr: errb, getenv: func(k string) string { return env[k] }}
	code := run(context.Background(), a, []string{"cron", "add", "--cwd", t.TempDir(),
		"--allowedTools", "Read,Bash(git log --format=%h,%s)", "--allowedTools", "Grep",
		"--disallowedTools", "Bash(rm a, b)",
		"0 9 * * 1", "weekly summary"})
	if code != 0 {
		t.Fatalf("cron add exited %d: %s", code, errb)
	}
	st, err := store.OpenSQLite(context.Background(), filepath.Join(gh, store.DefaultFile), store.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	jobs, err := st.ListCronJobs(context.Background())
	if err != nil || len(jobs) != 1 {
		t.Fatalf("jobs %v, %v", jobs, err)
	}
	var o runqueue.Options
	if err := json.Unmarshal(jobs[0].Options, &o); err != nil {
		t.Fatal(err)
	}
	if want := []string{"Read", "Bash(git log --format=%h,%s)", "Grep"}; !slices.Equal(o.Allow, want) {
		t.Errorf("allow = %q, want %q", o.Allow, want)
	}
	if want := []string{"Bash(rm a, b)"}; !slices.Equal(o.Deny, want) {
		t.Errorf("deny = %q, want %q", o.Deny, want)
	}
}

// TestCronPauseResume: `gantry cron pause` and `resume` on the CLI's
// store; the list shows a paused job as paused.
func TestCronPauseResume(t *testing.T) {
	home := t.TempDir()
	gh := filepath.Join(home, ".gantry")
	env := map[string]string{"HOME": home, "GANTRY_HOME": gh}
	gantry := func(args ...string) (string, int) {
		out, errb := &strings.Builder{}, &strings.Builder{}
		a := &app{stdin: strings.NewReader(""), stdout: out, stderr: errb, getenv: func(k string) string { return env[k] }}
		code := run(context.Background(), a, args)
		return out.String() + errb.String(), code
	}
	if out, code := gantry("cron", "add", "--cwd", t.TempDir(), "0 9 * * 1", "weekly summary"); code != 0 {
		t.Fatalf("cron add exited %d: %s", code, out)
	}
	out, _ := gantry("cron", "list", "--json")
	var jl struct{ Jobs []store.CronJob }
	if err := json.Unmarshal([]byte(out), &jl); err != nil || len(jl.Jobs) != 1 {
		t.Fatalf("list %q: %v", out, err)
	}
	id := jl.Jobs[0].ID
	if out, code := gantry("cron", "pause", id); code != 0 || !strings.Contains(out, "Paused job "+id) {
		t.Fatalf("pause exited %d: %s", code, out)
	}
	if out, _ := gantry("cron", "list"); !strings.Contains(out, "paused") {
		t.Fatalf("list while paused:\n%s", out)
	}
	if out, code := gantry("cron", "resume", id); code != 0 || !strings.Contains(out, "Resumed job "+id+"; next run") {
		t.Fatalf("resume exited %d: %s", code, out)
	}
	if out, _ := gantry("cron", "list"); strings.Contains(out, "paused") {
		t.Fatalf("list after resume:\n%s", out)
	}
	if out, code := gantry("cron", "pause", "00000000"); code == 0 {
		t.Fatalf("pausing a missing job succeeded: %s", out)
	}
}
