package grep

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/internal/ignorefile"

	"github.com/google/go-cmp/cmp"
)

func TestRules(t *testing.T) {
	const dir = "/r"
	for _, c := range []struct {
		rules string
		path  string
		isDir bool
		want  verdict
	}{
		{"*.log", "a.log", false, ignored},
		{"*.log", "x/y/a.log", false, ignored},
		{"*.log\n!keep.log", "x/keep.log", false, whitelist},
		{"!keep.log\n*.log", "keep.log", false, ignored}, // the last rule wins
		{"/a.log", "a.log", false, ignored},
		{"/a.log", "x/a.log", false, noMatch},
		{"build/", "build", true, ignored},
		{"build/", "build", false, noMatch},
		{"build/", "x/build", true, ignored},
		{"doc/*.txt", "doc/a.txt", false, ignored},
		{"doc/*.txt", "doc/x/a.txt", false, noMatch},
		{"doc/*.txt", "x/doc/a.txt", false, noMatch},
		{"**/foo", "a/b/foo", false, ignored},
		{"**/foo", "foo", false, ignored},
		{"a/**/b", "a/b", false, ignored},
		{"a/**/b", "a/x/y/b", false, ignored},
		{"a/**", "a/x/y", false, ignored},
		{"a/**", "a", true, ignored}, // go-git: git itself keeps "a" (docs/rough-edges.md)
		{"# comment", "# comment", false, noMatch},
		{`\#hash`, "#hash", false, ignored},
		{`\!bang`, "!bang", false, ignored},
		{"trail   ", "trail", false, ignored},
		{`space\ `, "space ", false, ignored},
		{"*.{js,ts}", "a.ts", false, noMatch}, // git has no alternation in .gitignore (ripgrep does)
		{"[abc].txt", "b.txt", false, ignored},
		{"[^abc].txt", "b.txt", false, noMatch},
		{"[!abc].txt", "b.txt", false, ignored}, // go-git reads "!" in a class literally; git negates (docs/rough-edges.md)
		{"?.txt", "ab.txt", false, noMatch},
		{"crlf\r", "crlf", false, ignored},
		{"", "x", false, noMatch},
		{"!", "x", false, noMatch},
		{"/", "x", false, noMatch},
	} {
		got := noMatch
		if pats := ignorefile.Parse([]byte(c.rules), nil); len(pats) > 0 {
			s := &ignoreSet{dir: dir, pats: pats}
			got = s.match(dir+"/"+c.path, c.isDir)
		}
		if got != c.want {
			t.Errorf("rules %q, path %q (dir %v): got %d, want %d", c.rules, c.path, c.isDir, got, c.want)
		}
	}
}

func TestSplitGlobs(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"*.go", []string{"*.go"}},
		{"*.{ts,tsx}", []string{"*.{ts,tsx}"}},
		{"*.ts,*.tsx", []string{"*.ts", "*.tsx"}},
		{" *.py  !vendor ", []string{"*.py", "!vendor"}},
		{"", nil},
	} {
		if diff := cmp.Diff(c.want, SplitGlobs(c.in)); diff != "" {
			t.Errorf("%q: %s", c.in, diff)
		}
	}
}

func TestRustSyntax(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`abc`, `abc`},
		{`a-b`, `a\x{2d}b`},
		{`a.c`, `(?:a)(?:[^\x{a}])(?:c)`},
		{`\d+`, `(?:[0-9])+`},
		{`^x$`, `(?:(?m:^))(?:x)(?:(?m:$))`},
		{`\bx`, `(?:(?-u:\b))(?:x)`},
		{`a|b.`, `(?:a|(?:b)(?:[^\x{a}]))`},
		{`x{2,3}?`, `(?:x)(?:x)(?:(?:x)??)`},
	} {
		m, err := compilePattern(c.in, false, false)
		if err != nil {
			t.Fatal(err)
		}
		if m.rust != c.want {
			t.Errorf("%q: got %q, want %q", c.in, m.rust, c.want)
		}
	}
	m, err := compilePattern(`a.b`, true, true)
	if err != nil {
		t.Fatal(err)
	}
	if want := `(?:(?i:A))(?:(?s:.))(?:(?i:B))`; m.rust != want {
		t.Errorf("got %q, want %q", m.rust, want)
	}
}

// referenceLines is the obvious line-by-line search the Go engine's fast
// paths must agree with.
func referenceLines(re *regexp.Regexp, buf []byte) map[int][][2]int {
	out := map[int][][2]int{}
	lines := bytes.Split(buf, []byte("\n"))
	if len(buf) > 0 && buf[len(buf)-1] == '\n' {
		lines = lines[:len(lines)-1]
	}
	if len(buf) == 0 {
		lines = nil
	}
	for i, l := range lines {
		for _, loc := range re.FindAllIndex(l, -1) {
			out[i+1] = append(out[i+1], [2]int{loc[0], loc[1]})
		}
	}
	return out
}

func FuzzScan(f *testing.F) {
	f.Add("needle", "a needle\nno\nNEEDLE needle\n", false)
	f.Add("ne+dle", "needle\r\nneedle", true)
	f.Add(`\bx\w*$`, "x1 xy\nxz\n\n", false)
	f.Add(`^`, "\n\n", false)
	f.Add(`a*`, "bab\n", true)
	f.Add(`(?i)straße`, "STRASSE straße\n", false)
	f.Add(`foo|bar`, "xbar foo\n", true)
	f.Add(`TODO|FIXME`, "a FIXME\nTODO b TODO\nnone\n", false)
	f.Add(`x(abc|defg)+y`, "xabcy xdefgabcy\nxdefy\n", true)
	f.Add(`(?i)todo|fixme`, "ToDo\nFIXme\n", false)
	f.Add(`errors.New`, "errors.New errorsXNew\nNew errors\nerrors\u00e9New\n", false)
	f.Add(`(abc)+x{2}defg.(hij|klm)`, "abcxxdefg hij\nabcabcxxdefgZklm defg\nxxdefg.hij\n", false)
	f.Fuzz(func(t *testing.T, pattern, text string, ignoreCase bool) {
		m, err := compilePattern(pattern, ignoreCase, false)
		if err != nil {
			return
		}
		q := &Query{Mode: ModeCount, OnlyMatching: true}
		fl := newFileLines(q, Options{})
		buf := []byte(text)
		m.scan(buf, &worker{}, false, fl)
		ref := referenceLines(m.re, buf)
		matches := 0
		for _, subs := range ref {
			matches += len(subs)
		}
		if fl.matched != len(ref) || fl.matches != matches {
			t.Fatalf("pattern %q fold %v text %q: scan found %d lines/%d matches, reference %d/%d",
				pattern, ignoreCase, text, fl.matched, fl.matches, len(ref), matches)
		}
		if m.rustErr == nil && m.rust == "" {
			t.Fatalf("pattern %q: empty ripgrep form", pattern)
		}
	})
}

func FuzzRule(f *testing.F) {
	for _, s := range []string{"*.log", "/build/", "a/**/b", `\!x`, "**/foo", "x/**", "[a-z]?.go", "{a,b}/c", "  ", "#c"} {
		f.Add(s, "a/b/c.log", false)
	}
	f.Fuzz(func(t *testing.T, line, path string, isDir bool) {
		if strings.ContainsAny(line, "\n\r") || path == "" || strings.HasPrefix(path, "/") || strings.Contains(path, "//") || strings.HasSuffix(path, "/") {
			return
		}
		name := path[strings.LastIndexByte(path, '/')+1:]
		r, ok := parseRule(line)
		if !ok {
			return
		}
		got := r.matches(path, name, isDir)
		// Property: negating a rule inverts its verdict and keeps its reach.
		if strings.HasPrefix(line, "!") || strings.HasPrefix(line, `\`) {
			return
		}
		s := &ruleSet{dir: "/r", rules: []rule{r}}
		n, ok := parseRule("!" + line)
		if !ok {
			t.Fatalf("%q parses but its negation does not", line)
		}
		ns := &ruleSet{dir: "/r", rules: []rule{n}}
		v, nv := s.match("/r/"+path, name, isDir), ns.match("/r/"+path, name, isDir)
		want := map[verdict]verdict{noMatch: noMatch, ignored: whitelist, whitelist: ignored}
		if want[v] != nv || (v == ignored) != got {
			t.Fatalf("line %q path %q: verdict %d, negated %d, match %v", line, path, v, nv, got)
		}
	})
}

func FuzzTypeMatch(f *testing.F) {
	f.Add("go", "main.go")
	f.Add("make", "GNUmakefile")
	f.Add("sh", ".bashrc")
	f.Add("c", "x.h.in")
	f.Fuzz(func(t *testing.T, typ, name string) {
		globs, ok := lookupType(typ)
		if !ok {
			return
		}
		tf := &typeFilter{globs: globs}
		if v := tf.match(name, true); v != noMatch {
			t.Fatalf("a directory got verdict %d", v)
		}
		v := tf.match(name, false)
		for _, g := range globs {
			// Property: every plain "*.ext" glob selects name+".ext".
			if strings.HasPrefix(g, "*.") && !hasGlobMeta(g[2:]) && !strings.Contains(name, "/") {
				if tf.match(name+g[1:], false) != whitelist {
					t.Fatalf("type %s: %q not selected by %q", typ, name+g[1:], g)
				}
			}
		}
		if v == noMatch {
			t.Fatalf("a file got no verdict")
		}
	})
}
