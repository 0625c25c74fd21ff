package memory

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/tool/tooltest"

	"github.com/gantry-dev/gantry/tool"
)

func setup(t testing.TB, opts Options) (tool.Tool, *tool.Env, string) {
	t.Helper()
	home := t.TempDir()
	opts.GantryHome = home
	project := filepath.Join(t.TempDir(), "my project")
	os.MkdirAll(project, 0o755)
	return New(opts), &tool.Env{WorkDir: project}, filepath.Join(home, "memory", ProjectKey(project))
}

func ip(n int) *int { return &n }

func TestCommands(t *testing.T) {
	tl, env, dir := setup(t, Options{})
	steps := []struct {
		in      Input
		want    string
		wantErr bool
	}{
		{Input{Command: "view", Path: "/memories"}, "The contents of /memories", false},
		{Input{Command: "create", Path: "/memories/notes/progress.md", FileText: "step 1 done\nstep 2 open\n"}, "File created successfully at: /memories/notes/progress.md", false},
		{Input{Command: "view", Path: "/memories/notes/progress.md"}, "     1\tstep 1 done\n     2\tstep 2 open", false},
		{Input{Command: "view", Path: "/memories/notes/progress.md", ViewRange: []int{2, -1}}, "     2\tstep 2 open", false},
		{Input{Command: "view", Path: "/memories/notes/progress.md", ViewRange: []int{3, 4}}, "outside the file's 2 lines", true},
		{Input{Command: "str_replace", Path: "/memories/notes/progress.md", OldStr: "step 2 open", NewStr: "step 2 done"}, "has been edited", false},
		{Input{Command: "str_replace", Path: "/memories/notes/progress.md", OldStr: "step", NewStr: "x"}, "occurs 2 times", true},
		{Input{Command: "str_replace", Path: "/memories/notes/progress.md", OldStr: "nope", NewStr: "x"}, "does not occur", true},
		{Input{Command: "insert", Path: "/memories/notes/progress.md", InsertLine: ip(0), InsertText: "# Progress"}, "after line 0", false},
		{Input{Command: "insert", Path: "/memories/notes/progress.md", InsertLine: ip(9), InsertText: "x"}, "outside [0, 3]", true},
		{Input{Command: "view", Path: "/memories"}, "/memories/notes/progress.md", false},
		{Input{Command: "rename", OldPath: "/memories/notes/progress.md", NewPath: "/memories/archive/2026.md"}, "Renamed /memories/notes/progress.md to /memories/archive/2026.md", false},
		{Input{Command: "view", Path: "/memories/archive/2026.md"}, "     1\t# Progress\n     2\tstep 1 done\n     3\tstep 2 done", false},
		{Input{Command: "view", Path: "/memories/notes/progress.md"}, "does not exist", true},
		{Input{Command: "create", Path: "/memories/archive/2026.md", FileText: "replaced"}, "created", false},
		{Input{Command: "delete", Path: "/memories/archive"}, "Deleted /memories/archive.", false},
		{Input{Command: "delete", Path: "/memories"}, "cannot be deleted", true},
		{Input{Command: "fly", Path: "/memories"}, "unknown command", true},
	}
	for i, s := range steps {
		r := tooltest.Call(t, tl, env, s.in)
		got, isErr := r.TextContent(), r.IsError
		if isErr != s.wantErr || !strings.Contains(got, s.want) {
			t.Fatalf("step %d %+v: got (error %v)\n%s\nwant %q", i, s.in, isErr, got, s.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "archive")); !os.IsNotExist(err) {
		t.Fatalf("archive not deleted: %v", err)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("memory dir: %v %v", fi.Mode(), err)
	}
}

// Traversal attempts fail, and nothing outside the memory directory is
// read, written or deleted.
func TestTraversal(t *testing.T) {
	paths := []string{
		"/memories/../secret.txt", "/memories/a/../../secret.txt", "/etc/passwd", "memories/x", "/memoriesx/y",
		"/memories/x\x00y", `/memories/..\secret.txt`, "/memories/link.md", "/memories/up/secret.txt", "",
		"/memories/\x1b[31mred", "/memories/up",
	}
	for _, p := range paths {
		for _, c := range []Input{
			{Command: "view", Path: p},
			{Command: "create", Path: p, FileText: "pwned"},
			{Command: "str_replace", Path: p, OldStr: "secret", NewStr: "pwned"},
			{Command: "insert", Path: p, InsertLine: ip(0), InsertText: "pwned"},
			{Command: "delete", Path: p},
			{Command: "rename", OldPath: p, NewPath: "/memories/stolen.md"},
			{Command: "rename", OldPath: "/memories/plain.md", NewPath: p},
		} {
			// A fresh memory per attempt, with a secret next to it and
			// symlinks planted inside (by a Bash command, say) pointing out.
			tl, env, dir := setup(t, Options{})
			os.MkdirAll(dir, 0o700)
			outside := filepath.Join(filepath.Dir(dir), "secret.txt")
			os.WriteFile(outside, []byte("secret"), 0o600)
			os.Symlink(outside, filepath.Join(dir, "link.md"))
			os.Symlink(filepath.Dir(dir), filepath.Join(dir, "up"))
			os.WriteFile(filepath.Join(dir, "plain.md"), []byte("plain"), 0o600)

			r := tooltest.Call(t, tl, env, c)
			got, isErr := r.TextContent(), r.IsError
			switch c.Command {
			case "view", "str_replace", "insert":
				if !isErr {
					t.Errorf("%s %q succeeded: %s", c.Command, p, got)
				}
			}
			if strings.Contains(got, "secret") && !strings.Contains(got, "secret.txt") {
				t.Errorf("%s %q leaked the outside file: %s", c.Command, p, got)
			}
			if b, err := os.ReadFile(outside); err != nil || string(b) != "secret" {
				t.Fatalf("%s %q: the outside file is now %q, %v", c.Command, p, b, err)
			}
			entries, _ := os.ReadDir(filepath.Dir(dir))
			if len(entries) != 2 {
				t.Fatalf("%s %q: something was created next to the memory directory: %v", c.Command, p, entries)
			}
		}
	}
}

func TestCaps(t *testing.T) {
	tl, env, _ := setup(t, Options{MaxFileBytes: 10, MaxTotalBytes: 25, MaxFiles: 3})
	for i, s := range []struct {
		in   Input
		want string
		err  bool
	}{
		{Input{Command: "create", Path: "/memories/big", FileText: strings.Repeat("x", 11)}, "over the 10-byte file limit", true},
		{Input{Command: "create", Path: "/memories/a", FileText: "0123456789"}, "created", false},
		{Input{Command: "create", Path: "/memories/b", FileText: "0123456789"}, "created", false},
		{Input{Command: "create", Path: "/memories/c", FileText: "0123456789"}, "over its 25-byte limit", true},
		{Input{Command: "create", Path: "/memories/c", FileText: "01234"}, "created", false},
		{Input{Command: "create", Path: "/memories/d", FileText: ""}, "3 files, the limit", true},
		{Input{Command: "create", Path: "/memories/a", FileText: "short"}, "created", false},
		{Input{Command: "create", Path: "/memories/bin", FileText: "a\x00b"}, "without NUL", true},
	} {
		r := tooltest.Call(t, tl, env, s.in)
		got, isErr := r.TextContent(), r.IsError
		if isErr != s.err || !strings.Contains(got, s.want) {
			t.Fatalf("step %d: got (error %v) %s, want %q", i, isErr, got, s.want)
		}
	}
}

// FuzzClean: every accepted path is a clean relative path that stays inside.
func FuzzClean(f *testing.F) {
	for _, s := range []string{"/memories", "/memories/a/b.md", "/memories/../x", "/memories//a/./b", "/etc", "/memories/a/..", "/memories/\\x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		rel, err := clean(p)
		if err != nil {
			return
		}
		if rel != "." && (strings.HasPrefix(rel, "/") || !filepath.IsLocal(rel)) {
			t.Fatalf("clean(%q) = %q escapes", p, rel)
		}
		if strings.Contains(rel, "..") && strings.Contains("/"+rel+"/", "/../") {
			t.Fatalf("clean(%q) = %q has ..", p, rel)
		}
		if !strings.HasPrefix(p, Prefix) {
			t.Fatalf("accepted %q outside %s", p, Prefix)
		}
	})
}
