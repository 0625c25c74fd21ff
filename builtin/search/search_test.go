package search

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/gantry-dev/gantry/internal/testtree"
	"github.com/gantry-dev/gantry/tool"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

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

func ctxLines() string {
	var b strings.Builder
	for i := 1; i <= 20; i++ {
		switch i {
		case 5, 7, 15:
			b.WriteString("line needle " + string(rune('a'+i)) + "\n")
		default:
			b.WriteString("line " + string(rune('a'+i)) + "\n")
		}
	}
	return b.String()
}

// grepTree is the shared fixture of the Grep tests: ignore files (nested,
// negated, a nested repository, .git/info/exclude), hidden and binary files,
// several languages, CRLF, long lines, Unicode, multi-line blocks.
func grepTree() []fixture {
	return []fixture{
		{".git/HEAD", "needle in git\n"},
		{".git/info/exclude", "excluded.txt\n"},
		{".gitignore", "# comment\n*.log\nbuild/\n!keep.log\nsecret/*.txt\n"},
		{"excluded.txt", "needle excluded\n"},
		{"a.go", "package a\n\nfunc Needle() {}\n// needle lower\nvar x = 1\n"},
		{"b.js", "const needle = 1;\nfunction foo() {\n  return needle + 2;\n}\n"},
		{"c.py", "def needle():\n    pass\n\nclass Needle:\n    pass\n"},
		{"app.log", "needle in log\n"},
		{"keep.log", "needle kept\n"},
		{"build/out.go", "needle build\n"},
		{"secret/x.txt", "needle secret\n"},
		{"secret/y.md", "# needle md\n"},
		{".hidden/h.go", "needle hidden\n"},
		{".env", "needle=1\n"},
		{"bin.dat", "needle\x00binary\n"},
		{"crlf.txt", "needle one\r\nsecond line\r\nneedle three\r\n"},
		{"long.txt", strings.Repeat("x", 1000) + "needle" + strings.Repeat("y", 10) + "\n"},
		{"uni.txt", "Ünïcödé needle ßtraße\nKELVIN \u212a needle\n"},
		{"multi.txt", "start block\n  inner needle\nend block\nother\nstart again\nend\n"},
		{"sub/.gitignore", "*.tmp\n!important.tmp\n"},
		{"sub/x.tmp", "needle tmp\n"},
		{"sub/important.tmp", "needle important\n"},
		{"sub/deep/d.go", "package deep\n// Needle deep\nfunc needleFn() {}\n"},
		{"sub/deep/d.ts", "let needle: number = 3;\n"},
		{"nested/.git/HEAD", "x\n"},
		{"nested/n.log", "needle nested log\n"},
		{"vendor/v.go", "needle vendor 42\n"},
		{"ctx.txt", ctxLines()},
		{"empty.txt", ""},
		{"noeol.txt", "no newline needle"},
		{"Makefile", "all:\n\techo needle 7\n"},
	}
}

type grepCase struct {
	name string
	in   string // JSON input
}

func grepCases() []grepCase {
	return []grepCase{
		{"files", `{"pattern":"needle"}`},
		{"files_i", `{"pattern":"NEEDLE","-i":true}`},
		{"content_i_mixed", `{"pattern":"nEeDlE [kI]","-i":true,"output_mode":"content"}`},
		{"content", `{"pattern":"needle","output_mode":"content"}`},
		{"content_no_n", `{"pattern":"Needle","output_mode":"content","-n":false}`},
		{"content_C1", `{"pattern":"needle","output_mode":"content","-C":1,"path":"ctx.txt"}`},
		{"content_context_alias", `{"pattern":"needle","output_mode":"content","context":2,"glob":"ctx.txt"}`},
		{"content_A2", `{"pattern":"needle","output_mode":"content","-A":2,"glob":"*.txt"}`},
		{"content_B1", `{"pattern":"needle","output_mode":"content","-B":1,"type":"go"}`},
		{"content_B_overrides_C", `{"pattern":"needle","output_mode":"content","-C":3,"-B":0,"path":"ctx.txt"}`},
		{"content_o", `{"pattern":"need\\w+","output_mode":"content","-o":true}`},
		{"count", `{"pattern":"needle","output_mode":"count"}`},
		{"count_o", `{"pattern":"e","output_mode":"count","-o":true}`},
		{"glob_go", `{"pattern":"needle","glob":"*.go","-i":true}`},
		{"glob_negated", `{"pattern":"needle","glob":"!*.go"}`},
		{"glob_braces", `{"pattern":"needle","glob":"*.{js,ts}"}`},
		{"glob_two", `{"pattern":"needle","glob":"*.py *.ts"}`},
		{"glob_anchored", `{"pattern":"needle","glob":"sub/**"}`},
		{"glob_whitelists_ignored", `{"pattern":"needle","glob":"*.log"}`},
		{"glob_dir_negated", `{"pattern":"needle","glob":"!vendor"}`},
		{"type_go", `{"pattern":"needle","type":"go","-i":true}`},
		{"type_js", `{"pattern":"needle","type":"js"}`},
		{"type_ts_content", `{"pattern":"needle","type":"ts","output_mode":"content"}`},
		{"type_make", `{"pattern":"needle","type":"make"}`},
		{"head_limit", `{"pattern":"needle","output_mode":"content","head_limit":3}`},
		{"offset", `{"pattern":"needle","output_mode":"content","head_limit":2,"offset":3}`},
		{"offset_files", `{"pattern":"needle","head_limit":2,"offset":1}`},
		{"offset_past_end", `{"pattern":"needle","output_mode":"count","offset":100}`},
		{"head_unlimited", `{"pattern":"line","output_mode":"content","head_limit":0}`},
		{"multiline", `{"pattern":"start.*?end","multiline":true,"output_mode":"content"}`},
		{"multiline_count", `{"pattern":"block\\n.*needle","multiline":true,"output_mode":"count"}`},
		{"multiline_o", `{"pattern":"start.*?end","multiline":true,"output_mode":"content","-o":true}`},
		{"multiline_files", `{"pattern":"needle\\nend","multiline":true}`},
		{"regex_word", `{"pattern":"\\bneedle\\w*","output_mode":"content"}`},
		{"regex_anchors", `{"pattern":"^needle|needle$","output_mode":"content"}`},
		{"regex_digits", `{"pattern":"\\d+","output_mode":"content","-o":true}`},
		{"regex_class_unicode", `{"pattern":"[ß-ü]\\S*","output_mode":"content","-o":true}`},
		{"regex_fold_kelvin", `{"pattern":"kelvin k","-i":true,"output_mode":"content"}`},
		{"regex_no_literal", `{"pattern":"[nN]e+dl[e]","output_mode":"count"}`},
		{"regex_empty_match", `{"pattern":"x*","output_mode":"count","glob":"*.py"}`},
		{"crlf_dollar", `{"pattern":"one$","output_mode":"content"}`},
		{"long_line", `{"pattern":"needle","output_mode":"content","path":"long.txt"}`},
		{"path_sub", `{"pattern":"needle","path":"sub","output_mode":"content"}`},
		{"path_file", `{"pattern":"needle","path":"a.go","output_mode":"content"}`},
		{"path_file_ignored", `{"pattern":"needle","path":"app.log"}`},
		{"path_file_binary", `{"pattern":"needle","path":"bin.dat"}`},
		{"path_hidden_dir", `{"pattern":"needle","path":".hidden"}`},
		{"alt_literals", `{"pattern":"needle|start","output_mode":"content"}`},
		{"alt_literals_i_count", `{"pattern":"NEEDLE|Block","-i":true,"output_mode":"count"}`},
		{"alt_literals_o", `{"pattern":"ne(e)dle|bl(o)ck","output_mode":"content","-o":true}`},
		{"regex_with_literal_i", `{"pattern":"l\\w+ NEEDLE","-i":true,"output_mode":"content"}`},
		{"no_match", `{"pattern":"zzzqqq"}`},
		{"no_match_content", `{"pattern":"zzzqqq","output_mode":"content"}`},
	}
}

func newEnv(root string) *tool.Env { return &tool.Env{WorkDir: root} }

func runGrep(t *testing.T, e Engine, root, in string) string {
	t.Helper()
	g, err := NewGrep(Options{Engine: e, Workers: 3})
	if err != nil {
		t.Fatal(err)
	}
	env := newEnv(root)
	if err := g.ValidateInput(context.Background(), env, json.RawMessage(in)); err != nil {
		t.Fatalf("%s: invalid input %s: %v", e, in, err)
	}
	r, err := g.Call(context.Background(), env, json.RawMessage(in))
	if err != nil {
		t.Fatalf("%s: %s: %v", e, in, err)
	}
	return strings.ReplaceAll(r.TextContent(), root, "$ROOT")
}

func haveRipgrep(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("rg"); err != nil {
		t.Skip("rg is not on PATH (run scripts/setup): skipping the ripgrep half")
	}
}

// TestGrepGolden checks the Go engine against reviewed golden outputs.
func TestGrepGolden(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, grepTree())
	for _, c := range grepCases() {
		t.Run(c.name, func(t *testing.T) {
			got := runGrep(t, EngineGo, root, c.in)
			golden := filepath.Join("testdata", "grep", c.name+".golden")
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, []byte(got+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -run TestGrepGolden -update)", err)
			}
			if diff := cmp.Diff(strings.TrimSuffix(string(want), "\n"), got); diff != "" {
				t.Errorf("%s (-want +got):\n%s", c.in, diff)
			}
		})
	}
}

// TestEnginesAgree runs both engines on the same fixtures and compares the
// outputs exactly.
func TestEnginesAgree(t *testing.T) {
	haveRipgrep(t)
	root := t.TempDir()
	writeTree(t, root, grepTree())
	for _, c := range grepCases() {
		t.Run(c.name, func(t *testing.T) {
			goOut := runGrep(t, EngineGo, root, c.in)
			rgOut := runGrep(t, EngineRipgrep, root, c.in)
			if diff := cmp.Diff(goOut, rgOut); diff != "" {
				t.Errorf("%s: engines differ (-go +rg):\n%s", c.in, diff)
			}
		})
	}
}

func TestGrepErrors(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, []fixture{{"a.txt", "x\n"}})
	g, err := NewGrep(Options{Engine: EngineGo})
	if err != nil {
		t.Fatal(err)
	}
	env := newEnv(root)
	for _, c := range []struct{ in, want string }{
		{`{"pattern":""}`, "pattern is empty"},
		{`{"pattern":"a("}`, "invalid regular expression"},
		{`{"pattern":"a\\nb"}`, "multiline"},
		{`{"pattern":"a","type":"nosuchtype"}`, "unknown file type"},
		{`{"pattern":"a","output_mode":"lines"}`, "output_mode"},
		{`{"pattern":"a","-A":-1}`, "-A must be a non-negative whole number"},
		{`{"pattern":"a","head_limit":2.5}`, "head_limit"},
		{`{"pattern":"a","glob":"[x"}`, "invalid glob"},
	} {
		err := g.ValidateInput(context.Background(), env, json.RawMessage(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error containing %q", c.in, err, c.want)
		}
	}
	for _, c := range []struct{ in, want string }{
		{`{"pattern":"a","path":"nope"}`, "does not exist"},
		{`{"pattern":"a","path":"a\u0000b"}`, "NUL"},
	} {
		_, err := g.Call(context.Background(), env, json.RawMessage(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error containing %q", c.in, err, c.want)
		}
	}
	if _, err := NewGrep(Options{Engine: "fast"}); err == nil {
		t.Error("NewGrep accepted an unknown engine")
	}
}

func TestSchemas(t *testing.T) {
	type prop struct {
		Type string `json:"type"`
		Enum []any  `json:"enum"`
	}
	type schema struct {
		Type       string          `json:"type"`
		Properties map[string]prop `json:"properties"`
		Required   []string        `json:"required"`
	}
	tools, err := Tools(Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]schema{
		"Glob": {Type: "object", Required: []string{"pattern"}, Properties: map[string]prop{
			"pattern": {Type: "string"}, "path": {Type: "string"},
		}},
		"Grep": {Type: "object", Required: []string{"pattern"}, Properties: map[string]prop{
			"pattern": {Type: "string"}, "path": {Type: "string"}, "glob": {Type: "string"},
			"output_mode": {Type: "string", Enum: []any{"content", "files_with_matches", "count"}},
			"-B":          {Type: "number"}, "-A": {Type: "number"}, "-C": {Type: "number"}, "context": {Type: "number"},
			"-n": {Type: "boolean"}, "-i": {Type: "boolean"}, "-o": {Type: "boolean"},
			"type": {Type: "string"}, "head_limit": {Type: "number"}, "offset": {Type: "number"},
			"multiline": {Type: "boolean"},
		}},
	}
	for _, tl := range tools {
		sp := tl.Spec()
		var got schema
		if err := json.Unmarshal(sp.InputSchema, &got); err != nil {
			t.Fatal(err)
		}
		slices.Sort(got.Required)
		if diff := cmp.Diff(want[sp.Name], got); diff != "" {
			t.Errorf("%s schema (-want +got):\n%s", sp.Name, diff)
		}
		if tr := tool.TraitsOf(tl, json.RawMessage(`{"pattern":"x"}`)); tr != tool.ReadOnlyTraits {
			t.Errorf("%s traits %+v, want read-only", sp.Name, tr)
		}
	}
}

// TestBinaryRule checks the binary-file rule of the Go engine with and
// without a literal prefilter (which looks for the NUL only in files with
// a match): a NUL in the first 64 KiB skips the file, a later one ends the
// search at the start of its line.

// TestSizeCapAgrees: ripgrep runs without --max-filesize and its results
// are filtered by size afterwards; every output format gives what the Go
// engine gives.
func TestSizeCapAgrees(t *testing.T) {
	haveRipgrep(t)
	root := t.TempDir()
	writeTree(t, root, []fixture{
		{"small.txt", "needle\n"},
		{"big.txt", "needle\n" + strings.Repeat("padding\n", 20)},
		{"sub/big2.txt", strings.Repeat("needle x\n", 10)},
	})
	for _, in := range []string{
		`{"pattern":"needle"}`,
		`{"pattern":"needle","output_mode":"content"}`,
		`{"pattern":"needle","output_mode":"count"}`,
		`{"pattern":"needle","output_mode":"content","-o":true}`,
		`{"pattern":"needle\\n","output_mode":"count","multiline":true}`,
	} {
		var outs []string
		for _, e := range []Engine{EngineGo, EngineRipgrep} {
			g, err := NewGrep(Options{Engine: e, MaxFileSize: 40})
			if err != nil {
				t.Fatal(err)
			}
			res, err := g.Call(context.Background(), newEnv(root), []byte(in))
			if err != nil {
				t.Fatal(err)
			}
			outs = append(outs, strings.ReplaceAll(res.TextContent(), root, "$ROOT"))
		}
		if outs[0] != outs[1] {
			t.Errorf("%s: go\n%s\nrg\n%s", in, outs[0], outs[1])
		}
		if strings.Contains(outs[0], "big") || !strings.Contains(outs[0], "small.txt") {
			t.Errorf("%s: the cap was not applied:\n%s", in, outs[0])
		}
	}
}
