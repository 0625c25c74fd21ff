package shell_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/builtin/shell"
	"github.com/gantry-dev/gantry/executor"
	"github.com/gantry-dev/gantry/tool"
)

// TestBashChdirNeverInParallelBatch runs model turns through the real
// executor and a real shell: a read-only line that changes directory runs
// alone and moves the session, so a relative write in a later call of the
// same turn lands where the model's cd put it, exactly as it would had the
// line written something.
func TestBashChdirNeverInParallelBatch(t *testing.T) {
	bash := shell.NewBash(shell.Options{})
	res, err := executor.NewMapResolver(bash)
	if err != nil {
		t.Fatal(err)
	}
	ex := executor.New(res, executor.Options{})
	type step struct {
		cmd       string
		safe      bool // concurrency-safe: may share a parallel batch
		wantShell string
	}
	cases := []struct {
		name  string
		calls []step
		// wantFile is where y must land, relative to the project.
		wantFile string
		// wantDir is the session's directory after the turn.
		wantDir string
	}{
		{"cd then ls then touch", []step{
			{cmd: "cd sub && ls", wantShell: "inner"},
			{cmd: "ls", safe: true, wantShell: "inner"},
			{cmd: "touch y"},
		}, "sub/y", "sub"},
		{"ls in parallel then cd", []step{
			{cmd: "ls", safe: true, wantShell: "sub"},
			{cmd: "pwd", safe: true},
			{cmd: "cd sub", wantShell: ""},
			{cmd: "touch y"},
		}, "sub/y", "sub"},
		{"pushd", []step{{cmd: "pushd sub >/dev/null && ls"}, {cmd: "touch y"}}, "sub/y", "sub"},
		{"cd in a subshell stays", []step{{cmd: "(cd sub && ls)"}, {cmd: "touch y"}}, "y", ""},
		{"no cd", []step{{cmd: "ls sub", safe: true}, {cmd: "cat sub/inner", safe: true}, {cmd: "touch y"}}, "y", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			project := t.TempDir()
			if err := os.MkdirAll(filepath.Join(project, "sub"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(project, "sub", "inner"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			sess := executor.NewSharedEnv(&tool.Env{WorkDir: project, ToolResultsDir: t.TempDir(),
				Mode: tool.ModeBypassPermissions, Services: &tool.Services{}})
			var calls []executor.Call
			for i, s := range tc.calls {
				raw, _ := json.Marshal(map[string]any{"command": s.cmd})
				calls = append(calls, executor.Call{ID: "c" + string(rune('0'+i)), Name: "Bash", Input: raw})
			}
			b, err := ex.Run(context.Background(), sess, calls)
			if err != nil {
				t.Fatal(err)
			}
			for i, o := range b.Outcomes {
				s := tc.calls[i]
				if o.Result.IsError {
					t.Fatalf("%q failed: %s", s.cmd, o.Result.TextContent())
				}
				if o.Traits.ConcurrencySafe != s.safe {
					t.Errorf("%q: concurrency-safe %v, want %v", s.cmd, o.Traits.ConcurrencySafe, s.safe)
				}
				if s.wantShell != "" && !strings.Contains(o.Result.TextContent(), s.wantShell) {
					t.Errorf("%q ran elsewhere: %q", s.cmd, o.Result.TextContent())
				}
			}
			if _, err := os.Stat(filepath.Join(project, tc.wantFile)); err != nil {
				t.Errorf("y did not land in %s: %v", tc.wantFile, err)
			}
			want := filepath.Join(project, tc.wantDir)
			if got := sess.Env().WorkDir; filepath.Clean(got) != filepath.Clean(want) {
				t.Errorf("session in %s, want %s", got, want)
			}
		})
	}
}
