package worktree

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/tool/tooltest"

	"github.com/gantry-dev/gantry/tool"
)

func repo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	dir, _ = filepath.EvalSymlinks(dir)
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"}, {"config", "user.email", "t@example.com"}, {"config", "user.name", "T"},
	} {
		run(t, dir, args...)
	}
	os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
	os.WriteFile(filepath.Join(dir, "sub", "a.txt"), []byte("a\n"), 0o644)
	run(t, dir, "add", ".")
	run(t, dir, "commit", "-q", "-m", "init")
	return dir
}

func run(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v %s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func TestCreateFinish(t *testing.T) {
	ctx := context.Background()
	dir := repo(t)
	if _, err := Create(ctx, t.TempDir(), "x"); err == nil {
		t.Fatal("Create outside a repository succeeded")
	}
	w, err := Create(ctx, filepath.Join(dir, "sub"), "fix bug/#1")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(w.Branch, "gantry/fix-bug-1-") || w.Sub != filepath.Join(w.Path, "sub") {
		t.Fatalf("%+v", w)
	}
	if got, ok := Find(w.Sub); !ok || got.Path != w.Path {
		t.Fatalf("Find(%s) = %+v %v", w.Sub, got, ok)
	}
	if st := run(t, dir, "status", "--porcelain"); st != "" {
		t.Fatalf("main checkout not clean: %q", st)
	}
	if kept, err := w.Finish(ctx); err != nil || kept {
		t.Fatalf("unchanged worktree kept=%v err=%v", kept, err)
	}
	if _, err := os.Stat(w.Path); err == nil {
		t.Fatal("unchanged worktree still there")
	}
	if b := run(t, dir, "branch", "--list", w.Branch); b != "" {
		t.Fatalf("branch left: %q", b)
	}

	// A commit keeps it.
	w2, _ := Create(ctx, dir, "commit")
	os.WriteFile(filepath.Join(w2.Path, "b.txt"), []byte("b"), 0o644)
	run(t, w2.Path, "add", ".")
	run(t, w2.Path, "commit", "-q", "-m", "b")
	if kept, err := w2.Finish(ctx); err != nil || !kept {
		t.Fatalf("changed worktree kept=%v err=%v", kept, err)
	}
}

// A forged record (a committed .gantry/worktrees/.x.json pointing
// elsewhere) is not a worktree.
func TestFindRejectsForgedRecord(t *testing.T) {
	dir := repo(t)
	wd := filepath.Join(dir, Dir, "x")
	os.MkdirAll(wd, 0o755)
	b, _ := json.Marshal(Worktree{Path: wd, Root: "/elsewhere", Branch: "main"})
	os.WriteFile(metaPath(wd), b, 0o644)
	if _, ok := Find(wd); ok {
		t.Fatal("forged record accepted")
	}
}

func TestEnterExit(t *testing.T) {
	dir := repo(t)
	env := &tool.Env{WorkDir: filepath.Join(dir, "sub")}
	enter, exit := NewEnter(), NewExit()
	if r := callApplying(t, exit, env, `{"action":"keep"}`); !r.IsError {
		t.Fatal("ExitWorktree outside a worktree succeeded")
	}
	r := callApplying(t, enter, env, `{"name":"feature"}`)
	if r.IsError || !strings.Contains(env.WorkDir, filepath.Join(Dir, "feature-")) || filepath.Base(env.WorkDir) != "sub" {
		t.Fatalf("enter: %q → %s", r.TextContent(), env.WorkDir)
	}
	if r := callApplying(t, enter, env, `{}`); !r.IsError || !strings.Contains(r.TextContent(), "already") {
		t.Fatalf("nested enter: %q", r.TextContent())
	}
	wtDir := env.WorkDir
	os.WriteFile(filepath.Join(wtDir, "new.txt"), []byte("x"), 0o644)
	if r := callApplying(t, exit, env, `{"action":"remove"}`); !r.IsError || !strings.Contains(r.TextContent(), "uncommitted") {
		t.Fatalf("remove with changes: %q", r.TextContent())
	}
	if env.WorkDir != wtDir {
		t.Fatal("a refused exit moved the session")
	}
	// keep, then enter it again by path, then discard.
	w, _ := Find(wtDir)
	r = callApplying(t, exit, env, `{"action":"keep"}`)
	if r.IsError || env.WorkDir != filepath.Join(dir, "sub") {
		t.Fatalf("keep: %q → %s", r.TextContent(), env.WorkDir)
	}
	r = callApplying(t, enter, env, `{"path":"`+w.Path+`"}`)
	if r.IsError || env.WorkDir != wtDir {
		t.Fatalf("enter by path: %q → %s", r.TextContent(), env.WorkDir)
	}
	r = callApplying(t, exit, env, `{"action":"remove","discard_changes":true}`)
	if r.IsError || env.WorkDir != filepath.Join(dir, "sub") {
		t.Fatalf("discard: %q", r.TextContent())
	}
	if _, err := os.Stat(w.Path); err == nil {
		t.Fatal("worktree not removed")
	}
}

// callApplying runs tl and applies the result's ContextModifier to env, as
// the executor does for the session: entering a worktree moves the calls
// that follow into it.
func callApplying(t *testing.T, tl tool.Tool, env *tool.Env, in string) *tool.Result {
	t.Helper()
	r := tooltest.Call(t, tl, env, in)
	if r.ContextModifier != nil {
		r.ContextModifier(env)
	}
	return r
}
