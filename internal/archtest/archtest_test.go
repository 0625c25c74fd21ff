package archtest

import (
	"bufio"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/gantry-dev/gantry"

// floorEntry is one package entry of the floors table: a path relative to
// the module, or a directory and everything under it when Tree is set.
type floorEntry struct {
	Path  string
	Tree  bool
	Floor int
}

// parseFloors reads the floors table of docs/architecture.md: the rows
// "| N | name | `pkg`, `dir/...`, … |" under the heading "## Floors",
// up to the next heading.
func parseFloors(doc string) ([]floorEntry, error) {
	var out []floorEntry
	in := false
	sc := bufio.NewScanner(strings.NewReader(doc))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "#") {
			in = line == "## Floors"
			continue
		}
		if !in || !strings.HasPrefix(line, "|") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) != 3 {
			return nil, fmt.Errorf("floors table row %q: want 3 cells", line)
		}
		n, err := strconv.Atoi(strings.TrimSpace(cells[0]))
		if err != nil {
			continue // the header and separator rows
		}
		for item := range strings.SplitSeq(cells[2], ",") {
			item = strings.TrimSpace(item)
			if len(item) < 3 || item[0] != '`' || item[len(item)-1] != '`' {
				return nil, fmt.Errorf("floor %d: entry %q is not a `package`", n, item)
			}
			p := item[1 : len(item)-1]
			e := floorEntry{Path: p, Floor: n}
			if dir, ok := strings.CutSuffix(p, "/..."); ok {
				e.Path, e.Tree = dir, true
			}
			if e.Path == "" || strings.Contains(e.Path, "...") || strings.HasPrefix(e.Path, "/") {
				return nil, fmt.Errorf("floor %d: bad entry %q", n, item)
			}
			for _, o := range out {
				if o.Path == e.Path && o.Tree == e.Tree {
					return nil, fmt.Errorf("%q is on floors %d and %d", item, o.Floor, n)
				}
			}
			out = append(out, e)
		}
	}
	if len(out) == 0 {
		return nil, errors.New(`no floors table under "## Floors"`)
	}
	return out, nil
}

// floorOf returns the floor of the package at rel (relative to the
// module) and the entry that placed it: an exact entry, else the longest
// tree entry holding it.
func floorOf(entries []floorEntry, rel string) (floorEntry, bool) {
	var best floorEntry
	found := false
	for _, e := range entries {
		if !e.Tree && e.Path == rel {
			return e, true
		}
		if e.Tree && (rel == e.Path || strings.HasPrefix(rel, e.Path+"/")) && (!found || len(e.Path) > len(best.Path)) {
			best, found = e, true
		}
	}
	return best, found
}

// moduleRoot finds the directory of the module's go.mod above the test's.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && strings.HasPrefix(string(b), "module "+module+"\n") {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatalf("no go.mod of %s above the test", module)
		}
		dir = parent
	}
}

// imports returns, for every package of the module under root, its
// module-internal imports from non-test files, as paths relative to the
// module ("" is the root package). Files of every GOOS and GOARCH count
// (build constraints are not evaluated, except "ignore"); directories
// holding their own go.mod (temporal/, bench/), testdata and hidden
// directories are other worlds and are skipped.
func imports(root string) (map[string][]string, error) {
	out := map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root {
				if name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
					return filepath.SkipDir
				}
				if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly|parser.ParseComments)
		if err != nil {
			return err
		}
		for _, cg := range f.Comments {
			if cg.Pos() >= f.Package {
				break
			}
			for _, c := range cg.List {
				if c.Text == "//go:build ignore" {
					return nil
				}
			}
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if rel == "." {
			rel = ""
		}
		deps := out[rel]
		if deps == nil {
			deps = []string{}
		}
		for _, imp := range f.Imports {
			p, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				return err
			}
			if dep, ok := strings.CutPrefix(p, module+"/"); ok {
				deps = append(deps, dep)
			}
		}
		out[rel] = deps
		return nil
	})
	for rel, deps := range out {
		slices.Sort(deps)
		out[rel] = slices.Compact(deps)
	}
	return out, err
}

// upward lists the imports that break the floors rule, and the packages
// that stand on no floor.
func upward(entries []floorEntry, graph map[string][]string) []string {
	var bad []string
	for _, pkg := range sortedKeys(graph) {
		from, ok := floorOf(entries, pkg)
		if !ok {
			bad = append(bad, fmt.Sprintf("%s stands on no floor: add it to the floors table of docs/architecture.md", pkg))
			continue
		}
		for _, dep := range graph[pkg] {
			to, ok := floorOf(entries, dep)
			if ok && to.Floor > from.Floor {
				bad = append(bad, fmt.Sprintf("%s (floor %d) imports %s (floor %d): a lower floor must not import a higher one", pkg, from.Floor, dep, to.Floor))
			}
		}
	}
	return bad
}

// unused lists the table entries that place no package.
func unused(entries []floorEntry, graph map[string][]string) []string {
	var bad []string
	for _, e := range entries {
		hit := false
		for pkg := range graph {
			if got, ok := floorOf(entries, pkg); ok && got == e {
				hit = true
				break
			}
		}
		if !hit {
			bad = append(bad, fmt.Sprintf("floor %d entry %q names no package", e.Floor, e.Path))
		}
	}
	return bad
}

func sortedKeys(m map[string][]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func load(t *testing.T) ([]floorEntry, map[string][]string) {
	t.Helper()
	root := moduleRoot(t)
	doc, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	entries, err := parseFloors(string(doc))
	if err != nil {
		t.Fatalf("docs/architecture.md: %v", err)
	}
	graph, err := imports(root)
	if err != nil {
		t.Fatal(err)
	}
	// A walk that found next to nothing would pass every rule.
	for _, must := range []string{"tool", "agent", "executor", "cmd/gantry"} {
		if _, ok := graph[must]; !ok {
			t.Fatalf("the walk of %s did not find package %s", root, must)
		}
	}
	return entries, graph
}

// TestFloors: no package imports a package of a higher floor, every
// package stands on a floor, and every entry of the table names a package.
func TestFloors(t *testing.T) {
	entries, graph := load(t)
	for _, msg := range append(upward(entries, graph), unused(entries, graph)...) {
		t.Error(msg)
	}
}

// TestToolImportsNothing: the tool contract imports nothing of Gantry.
func TestToolImportsNothing(t *testing.T) {
	_, graph := load(t)
	if deps := graph["tool"]; len(deps) > 0 {
		t.Errorf("package tool imports %v: it must import nothing of Gantry", deps)
	}
}

// TestToolsImportNoExecutor: a built-in tool is called by the pipeline;
// it never calls it.
func TestToolsImportNoExecutor(t *testing.T) {
	_, graph := load(t)
	for _, pkg := range sortedKeys(graph) {
		if pkg != "builtin" && !strings.HasPrefix(pkg, "builtin/") {
			continue
		}
		if slices.Contains(graph[pkg], "executor") {
			t.Errorf("%s imports executor: a built-in tool must not call the pipeline", pkg)
		}
	}
}

// TestAgentImportsNoTool: the loop imports no tool package; it reaches
// tools through the interfaces the workspace fills.
func TestAgentImportsNoTool(t *testing.T) {
	_, graph := load(t)
	for _, dep := range graph["agent"] {
		if dep == "builtin" || strings.HasPrefix(dep, "builtin/") {
			t.Errorf("agent imports the tool package %s: the loop must reach tools through the workspace's interfaces", dep)
		}
	}
}

// TestRulesCatchViolations runs the checks on a made-up module, so that
// a check that can no longer fail is itself a failure.
func TestRulesCatchViolations(t *testing.T) {
	entries, err := parseFloors("# x\n## Floors\n| floor | name | packages |\n|---|---|---|\n" +
		"| 0 | low | `tool`, `internal/a` |\n| 1 | mid | `exec`, `builtin/...` |\n| 2 | top | `agent`, `builtin/special`, `gone` |\n## Next\n| 9 | x | `ignored` |\n")
	if err != nil {
		t.Fatal(err)
	}
	graph := map[string][]string{
		"tool":            {},
		"internal/a":      {"exec"},              // upward
		"exec":            {"tool", "builtin/x"}, // same floor: fine
		"builtin/x":       {"tool"},
		"builtin/special": {"agent"}, // exact entry wins over builtin/...: floor 2, same floor
		"agent":           {"builtin/x", "exec"},
		"stray":           {},
	}
	got := append(upward(entries, graph), unused(entries, graph)...)
	want := []string{
		"internal/a (floor 0) imports exec (floor 1): a lower floor must not import a higher one",
		"stray stands on no floor: add it to the floors table of docs/architecture.md",
		`floor 2 entry "gone" names no package`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, bad := range []string{
		"## Floors\n| 0 | x | tool |\n",      // not in backticks
		"## Floors\n| 0 | x | `a/.../b` |\n", // ... inside
		"## Floors\n| 0 | x |\n",             // two cells
		"## Other\n| 0 | x | `tool` |\n",     // no floors section
	} {
		if _, err := parseFloors(bad); err == nil {
			t.Errorf("parseFloors(%q): no error", bad)
		}
	}
}

func FuzzParseFloors(f *testing.F) {
	f.Add("## Floors\n| floor | name | packages |\n|---|---|---|\n| 0 | leaves | `tool`, `internal/...` |\n")
	f.Add("## Floors\n| 1 | x | `a`,`b/...` |\n## Next\n")
	f.Add("| 0 | x | `tool` |")
	f.Fuzz(func(t *testing.T, doc string) {
		entries, err := parseFloors(doc)
		if err != nil {
			return
		}
		for _, e := range entries {
			if e.Path == "" || strings.Contains(e.Path, "...") {
				t.Fatalf("entry %+v from %q", e, doc)
			}
			// An exact entry places its package itself.
			if got, ok := floorOf(entries, e.Path); !e.Tree && (!ok || got != e) {
				t.Fatalf("floorOf(%q) = %+v, %v; entry %+v", e.Path, got, ok, e)
			}
		}
	})
}
