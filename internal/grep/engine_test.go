package grep

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/internal/testtree"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fixture is a file of a test tree, written by testtree.Write in order
// with strictly increasing modification times (the last one is the newest).
type fixture struct{ path, content string }

func writeTree(t testing.TB, root string, files []fixture) {
	t.Helper()
	tree := make([]testtree.File, len(files))
	for i, f := range files {
		tree[i] = testtree.File{Path: f.path, Content: f.content}
	}
	testtree.Write(t, root, tree)
}

func haveRipgrep(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("rg"); err != nil {
		t.Skip("rg is not on PATH (run scripts/setup): skipping the ripgrep half")
	}
}

func TestRipgrepMissing(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, []fixture{{"a.txt", "x\n"}})
	if _, err := Search(context.Background(), &Query{Root: root, Pattern: "x", Mode: ModeFiles}, Options{Engine: EngineRipgrep, RipgrepPath: filepath.Join(root, "no-rg")}); err == nil {
		t.Error("engine rg without rg: no error")
	}
}

// TestAutoEngine checks that auto mode works with and without ripgrep.
func TestAutoEngine(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, []fixture{{"a.txt", "hello\n"}})
	for _, rg := range []string{"", filepath.Join(root, "missing-rg")} {
		q := &Query{Root: root, Pattern: "hello", Mode: ModeFiles}
		r, err := Search(context.Background(), q, Options{RipgrepPath: rg})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Files) != 1 {
			t.Fatalf("rg=%q: got %d files", rg, len(r.Files))
		}
		if rg != "" && r.Engine != EngineGo {
			t.Errorf("missing rg: engine %s, want go", r.Engine)
		}
	}
	// With rg present, auto picks by pattern: Go for literals (and
	// regexps holding long enough literals), ripgrep for the rest.
	if _, err := findRipgrep(Options{}); err != nil {
		return
	}
	for _, c := range []struct {
		pattern string
		want    Engine
	}{
		{"hello", EngineGo},
		{`h\w+o`, EngineRipgrep},
		{`hello+`, EngineGo},           // "hell"
		{`he|hello`, EngineRipgrep},    // "he" is too short to filter well
		{`hello|world`, EngineGo},      // one of two literals
		{`(?i)hello`, EngineGo},        // ASCII folding
		{`(?i)kelvin`, EngineGo},       // by "elvin": k folds to the Kelvin sign too
		{`(?i)ks`, EngineRipgrep},      // no piece folds within ASCII
		{`a|b|c|d|e`, EngineRipgrep},   // too many alternatives
		{`\d{4}-\d{2}`, EngineRipgrep}, // "-" alone
		{`[A-Z]\w+Error\(`, EngineGo},  // "Error("
	} {
		q := &Query{Root: root, Pattern: c.pattern, Mode: ModeFiles}
		r, err := Search(context.Background(), q, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if r.Engine != c.want {
			t.Errorf("pattern %q: engine %s, want %s", c.pattern, r.Engine, c.want)
		}
	}
}

func TestBinaryRule(t *testing.T) {
	root := t.TempDir()
	pad := strings.Repeat("padding line\n", binaryChunk/13+10)
	writeTree(t, root, []fixture{
		{"late.txt", "needle early\n" + pad + "needle before\nx\x00 needle on the NUL line\nneedle after\n"},
		{"early.txt", "needle\n\x00" + pad},
		{"late_nomatch_before.txt", pad + "x\x00\nneedle after\n"},
	})
	for _, pattern := range []string{"needle", "ne+dle", "needle|haystack"} {
		for _, mode := range []string{ModeContent, ModeCount, ModeFiles} {
			q := &Query{Root: root, Pattern: pattern, Mode: mode, LineNumbers: true}
			r, err := Search(context.Background(), q, Options{Engine: EngineGo})
			if err != nil {
				t.Fatal(err)
			}
			got := strings.ReplaceAll(r.Format(), root, "$ROOT")
			want := map[string]string{
				ModeContent: "$ROOT/late.txt:1:needle early\n$ROOT/late.txt:" + strconv.Itoa(strings.Count(pad, "\n")+2) + ":needle before",
				ModeCount:   "$ROOT/late.txt:2\n\nFound 2 matching lines in 1 file.",
				ModeFiles:   "Found 1 file\n$ROOT/late.txt",
			}[mode]
			if got != want {
				t.Errorf("%s %s:\n%s\nwant:\n%s", pattern, mode, got, want)
			}
		}
	}
	// Context lines stop before the NUL byte's line too.
	q := &Query{Root: filepath.Join(root, "late.txt"), Pattern: "needle before", Mode: ModeContent, LineNumbers: true, After: 3}
	r, err := Search(context.Background(), q, Options{Engine: EngineGo})
	if err != nil {
		t.Fatal(err)
	}
	n := strings.Count(pad, "\n") + 2
	got := strings.ReplaceAll(r.Format(), root, "$ROOT")
	if want := "$ROOT/late.txt:" + strconv.Itoa(n) + ":needle before"; got != want {
		t.Errorf("-A 3 before a NUL line:\n%s\nwant:\n%s", got, want)
	}
}

// TestCancel checks that a cancelled context stops both tools promptly and
// leaves no goroutine or ripgrep process behind (goleak checks the former).
func TestCancel(t *testing.T) {
	root := t.TempDir()
	var files []fixture
	for i := range 300 {
		files = append(files, fixture{fmt.Sprintf("d%d/e%d/f%d.txt", i%10, i%7, i), strings.Repeat("some text needle\n", 50)})
	}
	writeTree(t, root, files)
	before := openFDs(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, e := range []Engine{EngineGo, EngineRipgrep} {
		if e == EngineRipgrep {
			if _, err := findRipgrep(Options{}); err != nil {
				continue
			}
		}
		q := &Query{Root: root, Pattern: "needle", Mode: ModeContent, HeadLimit: 10}
		if _, err := Search(ctx, q, Options{Engine: e}); err == nil {
			t.Errorf("%s: cancelled search returned no error", e)
		}
	}
	if _, err := Glob(ctx, root, "**/*.txt", Options{}); err == nil {
		t.Error("cancelled glob returned no error")
	}
	// Cancel in the middle of a walk.
	ctx3, cancel3 := context.WithCancel(context.Background())
	defer cancel3()
	var visited atomic.Int64
	done := make(chan error, 1)
	go func() {
		done <- walk(ctx3, &walkConfig{root: root, workers: 2, batch: 1}, func(*worker, fileEntry) {
			if visited.Add(1) == 5 {
				cancel3()
			}
		})
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Error("walk cancelled midway returned nil")
		}
		if v := visited.Load(); v >= 300 {
			t.Errorf("walk visited %d files after cancel", v)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("walk did not stop after cancel")
	}
	// The directories the walk kept open for its files are all closed,
	// whether their files were searched or dropped by the cancel.
	if after := openFDs(t); after != before {
		t.Errorf("open descriptors: %d before the walks, %d after", before, after)
	}
}

// openFDs counts this process's open file descriptors (Linux only).
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(ents)
}
