package shellparse

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The differential test: generated command lines run under real bash in a
// throwaway directory, with stub programs on PATH that log every run, and
// every run bash made must be a command the analysis saw (name and
// arguments), including payloads of sh -c, eval, find -exec, xargs and the
// wrappers.

// stubs are the programs the generator calls; each logs "name args…".
var stubs = []string{"alpha", "beta", "gamma"}

type bashLab struct {
	bash, dir, log string
	env            []string
}

func newBashLab(t testing.TB) *bashLab {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not installed")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, "runs.log")
	for _, s := range stubs {
		// One line per run: the name and each argument, separated by
		// tabs.
		// Built first and written with one printf, so that runs in a
		// pipeline do not interleave.
		script := "#!/bin/sh\nl=$(basename \"$0\"); for a in \"$@\"; do l=$(printf '%s\\t%s' \"$l\" \"$a\"); done; printf '%s\\n' \"$l\" >> " + log + "\n"
		if err := os.WriteFile(filepath.Join(bin, s), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	work := filepath.Join(dir, "work")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	return &bashLab{bash: bash, dir: work, log: log, env: []string{"PATH=" + bin + ":" + os.Getenv("PATH"), "HOME=" + dir, "LC_ALL=C"}}
}

// run runs src and returns the logged runs.
func (l *bashLab) run(t testing.TB, src string) [][]string {
	t.Helper()
	_ = os.Remove(l.log)
	cmd := exec.Command(l.bash, "--norc", "--noprofile", "-c", src)
	cmd.Dir = l.dir
	cmd.Env = l.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = time.Second
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("%q: timed out", src)
	}
	data, _ := os.ReadFile(l.log)
	var runs [][]string
	for line := range strings.SplitSeq(strings.TrimSuffix(string(data), "\n"), "\n") {
		if line != "" {
			runs = append(runs, strings.Split(line, "\t"))
		}
	}
	return runs
}

// seen reports whether the analysis has a command named like run whose
// literal arguments are a prefix of run's (xargs appends its input).
func seen(a *Analysis, run []string) bool {
	for _, c := range a.Cmds {
		for _, ws := range [][]Word{c.Inner, c.Words} {
			if len(ws) == 0 || ws[0].Dynamic || baseOf(ws[0].Value) != run[0] {
				continue
			}
			ok := true
			for i, w := range ws[1:] {
				if w.Text == "{input}" {
					break
				}
				if i+1 >= len(run) || !w.Dynamic && w.Value != run[i+1] {
					ok = false
					break
				}
			}
			if ok {
				return true
			}
		}
	}
	return false
}

// gen generates a command line from r.
type gen struct{ r *rand.Rand }

func (g gen) pick(xs ...string) string { return xs[g.r.IntN(len(xs))] }

func (g gen) simple() string {
	name := g.pick(stubs...)
	var args []string
	for range g.r.IntN(3) {
		args = append(args, g.pick("x", "'y z'", "\"q r\"", "-n", "a\\ b", "--flag=v"))
	}
	return strings.TrimSpace(name + " " + strings.Join(args, " "))
}

// cmd is a simple command, maybe wrapped or inside a payload.
func (g gen) cmd(depth int) string {
	s := g.simple()
	if depth > 2 {
		return s
	}
	switch g.r.IntN(12) {
	case 0:
		return g.pick("timeout 5 ", "nice -n 1 ", "env A=1 ", "command ", "stdbuf -o0 ", "time ", "env -i PATH=\"$PATH\" ") + g.cmd(depth+1)
	case 1:
		return "bash -c " + quote(g.cmd(depth+1))
	case 2:
		return "sh -c " + quote(g.cmd(depth+1))
	case 3:
		return "eval " + quote(g.cmd(depth+1))
	case 4:
		return "find . -maxdepth 0 -exec " + g.simple() + " \\;"
	case 5:
		return "echo i | xargs " + g.simple()
	case 6:
		return "echo i | xargs -n1 " + g.simple()
	case 7:
		return "echo $(" + g.cmd(depth+1) + ")"
	case 8:
		return "cat <(" + g.cmd(depth+1) + ")"
	case 9:
		return "A=1 " + s
	}
	return s
}

// line is a compound command line.
func (g gen) line(depth int) string {
	var b strings.Builder
	for i := range 1 + g.r.IntN(4) {
		if i > 0 {
			b.WriteString(g.pick(" && ", "; ", " | ", "\n", " || true; "))
		}
		c := g.cmd(0)
		if depth < 2 {
			switch g.r.IntN(8) {
			case 0:
				c = "( " + g.line(depth+1) + " )"
			case 1:
				c = "{ " + g.line(depth+1) + "; }"
			case 2:
				c = "if true; then " + g.line(depth+1) + "; fi"
			case 3:
				c = "for v in 1 2; do " + g.line(depth+1) + "; done"
			case 4:
				f := fmt.Sprintf("f%d", depth)
				c = f + "() { " + g.line(depth+1) + "; }; " + f
			}
		}
		b.WriteString(c)
	}
	return b.String()
}

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func checkAgainstBash(t *testing.T, l *bashLab, src string) {
	t.Helper()
	a := Analyze(src)
	if a.Err != nil {
		t.Fatalf("%q: the analysis cannot parse what bash runs: %v", src, a.Err)
	}
	for _, run := range l.run(t, src) {
		if !seen(a, run) {
			t.Fatalf("%q: bash ran %q, which the analysis did not see", src, run)
		}
	}
}

func TestAnalyzeSeesWhatBashRuns(t *testing.T) {
	l := newBashLab(t)
	g := gen{rand.New(rand.NewPCG(7, 11))}
	n := 80
	if testing.Short() {
		n = 30
	}
	for range n {
		checkAgainstBash(t, l, g.line(0))
	}
}

// FuzzAnalyzeAgainstBash drives the generator with fuzzed seeds.
func FuzzAnalyzeAgainstBash(f *testing.F) {
	for i := range 8 {
		f.Add(uint64(i), uint64(i*31+7))
	}
	l := newBashLab(f)
	f.Fuzz(func(t *testing.T, s1, s2 uint64) {
		src := gen{rand.New(rand.NewPCG(s1, s2))}.line(0)
		checkAgainstBash(t, l, src)
	})
}

func TestBashLabSelfCheck(t *testing.T) {
	l := newBashLab(t)
	runs := l.run(t, "alpha 'a b' c; echo i | xargs beta")
	if fmt.Sprint(runs) != "[[alpha a b c] [beta i]]" {
		t.Fatalf("stub log: %q", runs)
	}
	// The check can fail: a command hidden from the parser is reported.
	if seen(Analyze("echo alpha"), []string{"alpha"}) {
		t.Fatal("seen() accepts a command the analysis never saw")
	}
}
