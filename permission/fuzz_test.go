package permission

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/internal/shellparse"
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
		got := globMatch1(pat, text)
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
			if len(sc.words) > len(sc.cmd.Words) || len(sc.runnerWords) > len(sc.words) {
				t.Fatalf("stripping grew the command: %q", src)
			}
			if len(sc.words) > 0 && !slices.EqualFunc(sc.words, sc.cmd.Words[len(sc.cmd.Words)-len(sc.words):], func(a, b shellparse.Word) bool { return a.Text == b.Text }) {
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

// TestSplitterMatchesBash is the differential test: for generated compound
// commands, the simple commands the analysis finds are exactly the ones
// bash runs (bash -x traces each simple command it executes).
func TestSplitterMatchesBash(t *testing.T) {
	bashPath, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not installed")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"true", "echo a", "echo 'b c'", "printf x", ": x", "test 1", "true z", "echo d > /dev/null", "if true; then echo e; fi", "for f in 1; do printf y; done"}
	// Every command succeeds, so every one runs (|| is left out: it
	// skips its right side after a success).
	ops := []string{" && ", "; ", " | ", "\n"}
	dir := t.TempDir()
	for i := 0; i < 120; i++ {
		n := 1 + rng.IntN(5)
		var b strings.Builder
		for j := 0; j < n; j++ {
			if j > 0 {
				b.WriteString(ops[rng.IntN(len(ops))])
			}
			w := words[rng.IntN(len(words))]
			switch rng.IntN(4) {
			case 0:
				w = "( " + w + " )"
			case 1:
				w = "{ " + w + "; }"
			}
			b.WriteString(w)
		}
		src := b.String()
		cmd := exec.Command(bashPath, "-x", "-c", src)
		cmd.Dir = dir
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%q: %v", src, err)
		}
		var traced []string
		for _, line := range strings.Split(stderr.String(), "\n") {
			// "for f in …" is the loop header bash traces, not a command.
			if t := strings.TrimLeft(line, "+"); len(t) < len(line) && !strings.HasPrefix(strings.TrimSpace(t), "for ") {
				traced = append(traced, strings.TrimSpace(t))
			}
		}
		a := analyseShell(src)
		if a.err != nil {
			t.Fatalf("%q: %v", src, a.err)
		}
		var ours []string
		for _, sc := range a.cmds {
			ours = append(ours, canonWords(sc.cmd.Words))
		}
		// Pipeline members run concurrently, so compare as multisets.
		slices.Sort(traced)
		slices.Sort(ours)
		if !slices.Equal(traced, ours) {
			t.Fatalf("%q: bash ran %q, the analysis found %q", src, traced, ours)
		}
	}
}
