package shellparse

import (
	"context"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// chdirLine builds a line from fragments that do and do not change the
// shell's directory, in the forms that can hide a cd (subshells, groups,
// conditionals, loops, functions, payloads, wrappers).
func chdirLine(r *rand.Rand, depth int) string {
	frags := []string{"ls", "true", "cd a", "cd b", "cd", "cd ..", "pushd a >/dev/null", "popd >/dev/null 2>&1",
		"builtin cd a", "command cd b", "eval 'cd a'", "echo cd", "ls cd", "cd - >/dev/null", "CDPATH=. cd a >/dev/null"}
	var b strings.Builder
	for i := range 1 + r.IntN(3) {
		if i > 0 {
			b.WriteString([]string{" && ", "; ", " || ", " | "}[r.IntN(4)])
		}
		c := frags[r.IntN(len(frags))]
		if depth < 2 {
			switch r.IntN(7) {
			case 0:
				c = "( " + chdirLine(r, depth+1) + " )"
			case 1:
				c = "{ " + chdirLine(r, depth+1) + "; }"
			case 2:
				c = "if true; then " + chdirLine(r, depth+1) + "; fi"
			case 3:
				c = "f() { " + chdirLine(r, depth+1) + "; }; f"
			case 4:
				c = "sh -c " + quote(chdirLine(r, depth+1))
			}
		}
		b.WriteString(c)
	}
	return b.String()
}

// checkChdirBash runs src in real bash in a directory with subdirectories a
// and b and fails when bash ended elsewhere although ChangesDir said no.
func checkChdirBash(t *testing.T, bashPath, src string) {
	t.Helper()
	if Analyze(src).ChangesDir() {
		return
	}
	dir := t.TempDir()
	for _, d := range []string{"a", "b", "a/a", "b/a"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bashPath, "--noprofile", "--norc", "-c", src+"\nbuiltin pwd -P >&3")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + filepath.Join(dir, "b")}
	rd, wr, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	cmd.ExtraFiles = []*os.File{wr}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	wr.Close()
	out := make([]byte, 4096)
	n, _ := rd.Read(out)
	_ = cmd.Wait()
	got := strings.TrimSpace(string(out[:n]))
	want, _ := filepath.EvalSymlinks(dir)
	if got != "" && got != want {
		t.Fatalf("%q: bash ended in %s (started in %s) but ChangesDir is false", src, got, want)
	}
}

func TestChangesDirAgainstBash(t *testing.T) {
	bashPath, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	r := rand.New(rand.NewPCG(3, 5))
	n := 60
	if testing.Short() {
		n = 20
	}
	for range n {
		checkChdirBash(t, bashPath, chdirLine(r, 0))
	}
}

// FuzzChangesDirAgainstBash drives the line generator with fuzzed seeds:
// a line ChangesDir calls directory-neutral must leave real bash where it
// started.
func FuzzChangesDirAgainstBash(f *testing.F) {
	bashPath, err := exec.LookPath("bash")
	if err != nil {
		f.Skip("no bash")
	}
	for i := range 8 {
		f.Add(uint64(i), uint64(i*17+3))
	}
	f.Fuzz(func(t *testing.T, s1, s2 uint64) {
		checkChdirBash(t, bashPath, chdirLine(rand.New(rand.NewPCG(s1, s2)), 0))
	})
}
