package search

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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
