package permission

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/internal/shellparse"
	"github.com/gantry-dev/gantry/internal/wildcard"
	"github.com/gantry-dev/gantry/tool"
)

func FuzzParseRule(f *testing.F) {
	for _, s := range []string{"Bash", "Bash(*)", "Bash(npm run test:*)", `Read(//etc/\(x\))`, "mcp__s__*", "Edit(./a(b)c)",
		"WebFetch(domain:*.x.io)", "Bash(", "()", "a b(c)", "Bash(\\\\)", "X(())", "mcp__a__b__*"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRule(s)
		if err != nil {
			return
		}
		if r.Tool == "" || r.Specifier == "*" {
			t.Fatalf("ParseRule(%q) = %+v", s, r)
		}
		// The canonical form parses back to the same rule.
		r2, err := ParseRule(r.String())
		if err != nil || r2 != r {
			t.Fatalf("round trip %q → %q → %+v, %v (want %+v)", s, r.String(), r2, err, r)
		}
	})
}

func FuzzGlobMatch(f *testing.F) {
	f.Add("git diff *", "git diff --stat")
	f.Add("npm run test:*", "npm run test")
	f.Add("a*b*c", "aXbYc")
	f.Add(`\*`, "*")
	f.Fuzz(func(t *testing.T, pat, text string) {
		got := wildcard.Match(pat, text, wildcard.Options{Escapes: true})
		if !strings.ContainsAny(pat, `*\`) && got != (pat == text) {
			t.Fatalf("literal %q vs %q = %v", pat, text, got)
		}
		if strings.HasSuffix(pat, " *") && !strings.HasSuffix(pat, `\ *`) && !strings.Contains(pat[:len(pat)-2], `\`) && globMatch(pat, pat[:len(pat)-2]) != true {
			t.Fatalf("%q does not match its own prefix", pat)
		}
		if pat == "*" && !got {
			t.Fatal("* must match everything")
		}
	})
}

// FuzzShellAnalysis checks the splitter and the wrapper stripper: never a
// panic, stripping only ever removes a prefix, and a command line that
// parses gives the engine a verdict (never an error).
func FuzzShellAnalysis(f *testing.F) {
	for _, s := range []string{"ls -la", "timeout 3 nice -n 2 nohup rm -rf b", "a && b || c; d | e |& f &", "FOO=1 env -i B=2 sudo -u x rm y",
		"xargs -n1 rm < l", "sh -c 'bash -c \"rm x\"'", "echo $(id) > ~/.bashrc", "cd .git && echo > x", "stdbuf -oL command -p ls", "find . -exec rm {} +"} {
		f.Add(s)
	}
	w := newWorld(f)
	e := w.engine(f, []string{"Bash(ls *)", "Bash(git diff *)"}, []string{"Bash(rm *)"}, []string{"Bash(git push *)"})
	f.Fuzz(func(t *testing.T, src string) {
		src = strings.ToValidUTF8(src, "\uFFFD") // what survives JSON
		a := analyseShell(src)
		for _, sc := range a.allCmds() {
			if len(sc.Words) > len(sc.Command.Words) || len(sc.Inner) > len(sc.Words) {
				t.Fatalf("stripping grew the command: %q", src)
			}
			ws := sc.Words
			if n := len(ws); n > 0 && ws[n-1].Text == "{input}" {
				ws = ws[:n-1] // xargs's input
			}
			if len(ws) > 0 && !slices.EqualFunc(ws, sc.Command.Words[len(sc.Command.Words)-len(ws):], func(a, b shellparse.Word) bool { return a.Text == b.Text }) {
				t.Fatalf("stripping is not a suffix: %q", src)
			}
		}
		in, _ := json.Marshal(map[string]string{"command": src})
		d, err := e.Decide(context.Background(), &Request{Tool: named("Bash"), Input: in, Env: &tool.Env{WorkDir: w.work}})
		if err != nil {
			t.Fatalf("Decide(%q): %v", src, err)
		}
		if d.Behavior == tool.Allow && (a.err != nil || a.script.HasCommandSubst) {
			t.Fatalf("allowed an unanalysable command %q: %+v", src, d)
		}
	})
}
