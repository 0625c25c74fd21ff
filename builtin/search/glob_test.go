package search

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func runGlobTool(t *testing.T, o Options, root, in string) string {
	t.Helper()
	g, err := NewGlob(o)
	if err != nil {
		t.Fatal(err)
	}
	env := newEnv(root)
	if err := g.ValidateInput(context.Background(), env, json.RawMessage(in)); err != nil {
		t.Fatalf("%s: %v", in, err)
	}
	r, err := g.Call(context.Background(), env, json.RawMessage(in))
	if err != nil {
		t.Fatalf("%s: %v", in, err)
	}
	return strings.ReplaceAll(r.TextContent(), root, "$ROOT")
}

func TestGlob(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, []fixture{
		{".git/config", "x"},
		{".gitignore", "*.log\n/dist/\nnode_modules/\n!keep.log\n"},
		{"main.go", ""},
		{"main_test.go", ""},
		{"README.md", ""},
		{"a.log", ""},
		{"keep.log", ""},
		{"dist/out.js", ""},
		{"src/dist/in.js", ""},
		{"src/app.ts", ""},
		{"src/app.tsx", ""},
		{"src/lib/util.ts", ""},
		{"node_modules/x/index.js", ""},
		{".github/workflows/ci.yml", ""},
		{"docs/.gitignore", "*.tmp\n"},
		{"docs/a.tmp", ""},
		{"docs/b.md", ""},
	})
	for _, c := range []struct{ in, want string }{
		{`{"pattern":"**/*.go"}`, "$ROOT/main_test.go\n$ROOT/main.go"},
		{`{"pattern":"*.go"}`, "$ROOT/main_test.go\n$ROOT/main.go"},
		{`{"pattern":"**/*.{ts,tsx}"}`, "$ROOT/src/lib/util.ts\n$ROOT/src/app.tsx\n$ROOT/src/app.ts"},
		{`{"pattern":"src/*.ts"}`, "$ROOT/src/app.ts"},
		{`{"pattern":"*.ts","path":"src"}`, "$ROOT/src/app.ts"},
		{`{"pattern":"**/*.log"}`, "$ROOT/keep.log"},
		{`{"pattern":"**/*.js"}`, "$ROOT/src/dist/in.js"},
		{`{"pattern":"**/*.yml"}`, "$ROOT/.github/workflows/ci.yml"},
		{`{"pattern":"docs/*"}`, "$ROOT/docs/b.md\n$ROOT/docs/.gitignore"},
		{`{"pattern":"**/config"}`, "No files found"},
		{`{"pattern":"README.md"}`, "$ROOT/README.md"},
		{`{"pattern":"nothing/**"}`, "No files found"},
		{`{"pattern":"` + root + `/src/**/*.ts"}`, "$ROOT/src/lib/util.ts\n$ROOT/src/app.ts"},
	} {
		if got := runGlobTool(t, Options{}, root, c.in); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}

func TestGlobLimitAndOrder(t *testing.T) {
	root := t.TempDir()
	var files []fixture
	for i := range 12 {
		files = append(files, fixture{fmt.Sprintf("d%d/f%02d.txt", i%3, i), ""})
	}
	writeTree(t, root, files)
	// Two files with the same time: ordered by path.
	same := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, p := range []string{"d2/f11.txt", "d0/f00.txt"} {
		if err := os.Chtimes(filepath.Join(root, p), same, same); err != nil {
			t.Fatal(err)
		}
	}
	got := runGlobTool(t, Options{GlobLimit: 4}, root, `{"pattern":"**/*.txt"}`)
	want := "$ROOT/d0/f00.txt\n$ROOT/d2/f11.txt\n$ROOT/d1/f10.txt\n$ROOT/d0/f09.txt\n" +
		"(Results are truncated: showing the 4 most recently modified of 12 files. Use a more specific path or pattern.)"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Error(diff)
	}
}

func TestGlobErrors(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, []fixture{{"f.txt", ""}})
	g, err := NewGlob(Options{})
	if err != nil {
		t.Fatal(err)
	}
	env := newEnv(root)
	if err := g.ValidateInput(context.Background(), env, json.RawMessage(`{"pattern":"[x"}`)); err == nil {
		t.Error("bad pattern accepted")
	}
	for _, c := range []struct{ in, want string }{
		{`{"pattern":"*","path":"missing"}`, "does not exist"},
		{`{"pattern":"*","path":"f.txt"}`, "not a directory"},
	} {
		if _, err := g.Call(context.Background(), env, json.RawMessage(c.in)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.in, err, c.want)
		}
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
