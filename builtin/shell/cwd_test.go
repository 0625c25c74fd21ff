package shell

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/tool/tooltest"

	"github.com/gantry-dev/gantry/sandbox"
	"github.com/gantry-dev/gantry/sandbox/sandboxtest"
	"github.com/gantry-dev/gantry/tool"
)

// TestBashCwdReportCannotWiden runs, under each backend that works here, a
// scripted two-call session: the first call tries to move the session out
// of its project — a real cd, a forged report on the reporting descriptor
// before the shell is killed, a forged line before a normal exit — and the
// second writes through a relative path. The session must stay in the
// project and nothing may appear outside it.
func TestBashCwdReportCannotWiden(t *testing.T) {
	bash := NewBash(Options{Grace: 200 * time.Millisecond})
	cases := []struct {
		name, first string
		wantNote    bool // the refusal is said to the model
	}{
		{"cd outside", "cd OUT", true},
		{"forged then killed", "echo OUT >&63; kill -9 $$", false},
		{"forged line then normal exit", "echo OUT >&63; true", false},
		{"forged by a child", "sh -c 'echo OUT >&63'; kill -KILL $$", false},
		{"cd outside in a subshell pipeline", "cd OUT && pwd | cat", true},
	}
	for _, backend := range []string{sandbox.BackendBubblewrap, sandbox.BackendLandlock} {
		for _, tc := range cases {
			t.Run(backend+"/"+tc.name, func(t *testing.T) {
				project := t.TempDir()
				outside := outsideDir(t)
				before := sandboxtest.Snapshot(t, outside)
				sbs := sandboxes(t, sandbox.Options{Roots: []string{project}})
				sb, ok := sbs[backend]
				if !ok {
					t.Skipf("%s does not work here", backend)
				}
				env := testEnv(t, nil)
				env.WorkDir = project
				tool.Provide(env.Services, sb)

				r := tooltest.Call(t, bash, env, map[string]any{"command": strings.ReplaceAll(tc.first, "OUT", outside)})
				if r.ContextModifier != nil {
					e := env.Clone()
					r.ContextModifier(e)
					t.Fatalf("the session moved to %s: %s", e.WorkDir, r.TextContent())
				}
				if tc.wantNote && !strings.Contains(r.TextContent(), "working directory stays") {
					t.Errorf("no note for the model: %s", r.TextContent())
				}
				r = tooltest.Call(t, bash, env, map[string]any{"command": "echo pwned > pwned.txt; echo also > " + filepath.Join(outside, "abs.txt")})
				if _, err := os.Stat(filepath.Join(project, "pwned.txt")); err != nil {
					t.Errorf("the relative write did not land in the project: %v (%s)", err, r.TextContent())
				}
				if after := sandboxtest.Snapshot(t, outside); after != before {
					t.Errorf("outside changed:\n%s\nwas\n%s", after, before)
				}
			})
		}
	}
}

// TestBashCwdInsideRootsTracked: a cd inside the session's roots still
// moves the sandboxed session, and the next command runs there.
func TestBashCwdInsideRootsTracked(t *testing.T) {
	bash := NewBash(Options{Grace: 200 * time.Millisecond})
	for name, sb := range sandboxes(t, sandbox.Options{}) {
		if name == sandbox.BackendNone {
			continue
		}
		t.Run(name, func(t *testing.T) {
			project := t.TempDir()
			sb2, err := sandbox.New(sandbox.Options{Enabled: true, Backend: name, Roots: []string{project}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { sb2.Close() })
			_ = sb
			env := testEnv(t, nil)
			env.WorkDir = project
			tool.Provide(env.Services, sb2)
			r := tooltest.Call(t, bash, env, map[string]any{"command": "mkdir -p a/b && cd a/b"})
			if r.ContextModifier == nil {
				t.Fatalf("cd inside the project not tracked: %s", r.TextContent())
			}
			r.ContextModifier(env)
			want, _ := filepath.EvalSymlinks(filepath.Join(project, "a", "b"))
			if env.WorkDir != want {
				t.Fatalf("WorkDir %q, want %q", env.WorkDir, want)
			}
			tooltest.Call(t, bash, env, map[string]any{"command": "echo x > here.txt"})
			if _, err := os.Stat(filepath.Join(want, "here.txt")); err != nil {
				t.Errorf("next command did not run in the new directory: %v", err)
			}
		})
	}
}

// TestBashCwdScriptDescriptors: scripts that use their own descriptors
// (3–9, the flock idiom) neither see nor break the report.
func TestBashCwdScriptDescriptors(t *testing.T) {
	bash := NewBash(Options{Grace: 200 * time.Millisecond})
	env := testEnv(t, nil)
	os.Mkdir(filepath.Join(env.WorkDir, "sub"), 0o755)
	r := tooltest.Call(t, bash, env, map[string]any{"command": "exec 3>three.txt 9>lock; echo data >&3; cd sub"})
	if r.ContextModifier == nil {
		t.Fatalf("cd not tracked: %s", r.TextContent())
	}
	if data, _ := os.ReadFile(filepath.Join(env.WorkDir, "three.txt")); string(data) != "data\n" {
		t.Errorf("fd 3 content %q", data)
	}
	if data, _ := os.ReadFile(filepath.Join(env.WorkDir, "lock")); len(data) != 0 {
		t.Errorf("the report leaked into the script's fd 9: %q", data)
	}
}
