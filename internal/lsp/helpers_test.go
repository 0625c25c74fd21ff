package lsp

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/gantry-dev/gantry/tool"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if fakeDir != "" {
		os.RemoveAll(fakeDir)
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			os.Stderr.WriteString("goleak: " + err.Error() + "\n")
			code = 1
		}
	}
	os.Exit(code)
}

var (
	fakeOnce sync.Once
	fakeDir  string
	fakeBin  string
	fakeErr  error
)

// fakeServer builds testdata/fakels once per test binary.
func fakeServer(t testing.TB) string {
	t.Helper()
	fakeOnce.Do(func() {
		fakeDir, fakeErr = os.MkdirTemp("", "fakels")
		if fakeErr != nil {
			return
		}
		fakeBin = filepath.Join(fakeDir, "fakels")
		out, err := exec.Command("go", "build", "-o", fakeBin, "./testdata/fakels").CombinedOutput()
		if err != nil {
			fakeErr = &buildError{string(out), err}
		}
	})
	if fakeErr != nil {
		t.Fatalf("build fakels: %v", fakeErr)
	}
	return fakeBin
}

type buildError struct {
	out string
	err error
}

func (e *buildError) Error() string { return e.err.Error() + ": " + e.out }

// gopls returns the gopls binary or skips: scripts/setup installs it.
func gopls(t testing.TB) string {
	t.Helper()
	p, err := resolveCommand("gopls", os.Getenv)
	if err != nil {
		t.Skipf("gopls is not installed (%v): run scripts/setup --lsp, which runs go install golang.org/x/tools/gopls@v0.23.0", err)
	}
	return p
}

// fixture copies testdata/gomod into a fresh directory and returns it.
func fixture(t testing.TB) string {
	t.Helper()
	dst := t.TempDir()
	src := filepath.Join("testdata", "gomod")
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	// Resolve symlinks (macOS /var → /private/var) so paths compare.
	if r, err := filepath.EvalSymlinks(dst); err == nil {
		dst = r
	}
	return dst
}

// newEnv returns an environment whose services hold m.
func newEnv(dir string, m *Manager) *tool.Env {
	s := &tool.Services{}
	tool.Provide(s, m)
	return &tool.Env{WorkDir: dir, Services: s, Files: tool.NewFileCache(0)}
}

// col returns the 1-based column of the first occurrence of sub in line
// (1-based) of file.
func col(t testing.TB, file string, line int, sub string) int {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	i := strings.Index(lines[line-1], sub)
	if i < 0 {
		t.Fatalf("%q not on line %d of %s: %q", sub, line, file, lines[line-1])
	}
	return len([]rune(lines[line-1][:i])) + 1
}

// run asks m (from env's services) what the LSP tool would: file is
// resolved against env's working directory. The tool's own checks are
// builtin/lsp's tests.
func run(t testing.TB, env *tool.Env, op, file string, line, char int) (string, bool) {
	t.Helper()
	m, err := tool.Use[*Manager](env)
	if err != nil {
		return "the LSP tool needs the session's language-server manager: " + err.Error(), true
	}
	if !filepath.IsAbs(file) {
		file = filepath.Join(env.WorkDir, file)
	}
	text, err := m.Query(context.Background(), env, op, file, line, char)
	if err != nil {
		return err.Error(), true
	}
	return text, false
}
