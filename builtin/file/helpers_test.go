package file

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/gantry-dev/gantry/tool"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testEnv returns a fresh working directory and an Env with a file cache.
func testEnv(t testing.TB) (string, *tool.Env) {
	t.Helper()
	dir := t.TempDir()
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		dir = r
	}
	return dir, &tool.Env{WorkDir: dir, Files: tool.NewFileCache(0)}
}

func mustOK(t testing.TB, r *tool.Result) string {
	t.Helper()
	if r.IsError {
		t.Fatalf("unexpected error result: %s", r.TextContent())
	}
	return r.TextContent()
}

func mustErr(t testing.TB, r *tool.Result, want ...string) string {
	t.Helper()
	if !r.IsError {
		t.Fatalf("want an error result, got: %s", r.TextContent())
	}
	txt := r.TextContent()
	for _, w := range want {
		if !strings.Contains(txt, w) {
			t.Fatalf("error %q does not contain %q", txt, w)
		}
	}
	return txt
}

func writeFile(t testing.TB, path string, content string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func readFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func num(f float64) *float64 { return &f }

// displayText joins the display channel's text.
func displayText(r *tool.Result) string { return tool.JoinText(r.DisplayContent()) }
