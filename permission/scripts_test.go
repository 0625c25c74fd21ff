package permission

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/internal/shellparse"
	"github.com/gantry-dev/gantry/tool"
)

// scriptWorld is a project with scripts in it and one outside (ROOT/etc).
func scriptWorld(t testing.TB) world {
	t.Helper()
	w := newWorld(t)
	outside := filepath.Join(w.root, "etc")
	must(t, os.MkdirAll(filepath.Join(w.work, "scripts", "sub"), 0o755))
	must(t, os.MkdirAll(filepath.Join(w.work, "scripts", "dir"), 0o755))
	must(t, os.MkdirAll(outside, 0o755))
	for _, p := range []string{
		filepath.Join(w.work, "greet.sh"), filepath.Join(w.work, "s.sh"), filepath.Join(w.work, "other.sh"),
		filepath.Join(w.work, "scripts", "test.sh"), filepath.Join(w.work, "scripts", "sub", "deep.sh"),
		filepath.Join(outside, "out.sh"),
	} {
		must(t, os.WriteFile(p, []byte("#!/bin/sh\necho hi\n"), 0o755))
	}
	must(t, os.Symlink(filepath.Join(outside, "out.sh"), filepath.Join(w.work, "link.sh")))
	must(t, os.Symlink(filepath.Join(w.work, "scripts", "test.sh"), filepath.Join(w.work, "inlink.sh")))
	return w
}

// scriptCase is one command line and the allow rules in force; approved
// says whether the rules approve it. fresh makes every file count as
// changed during the run.
type scriptCase struct {
	cmd      string
	allow    []string
	approved bool
	fresh    bool
	why      string // a part of the reason (for a line that asks in default mode)
}

// wantFor is what a mode makes of a line rules approve or not: plan
// denies what is not read-only, dontAsk denies what would ask, bypass
// runs it.
func (sc scriptCase) wantFor(mode tool.Mode) tool.Behavior {
	switch {
	case mode == tool.ModeBypassPermissions:
		return tool.Allow
	case mode == tool.ModePlan:
		return tool.Deny
	case sc.approved:
		return tool.Allow
	case mode == tool.ModeDontAsk:
		return tool.Deny
	}
	return tool.Ask
}

func scriptEngine(t testing.TB, w world, allow []string, fresh bool) *Engine {
	t.Helper()
	start := time.Now().Add(time.Hour) // every file was there before
	if fresh {
		start = time.Now().Add(-time.Hour) // every file changed since
	}
	e, err := NewEngine(Options{
		Home: w.home, WorkDir: w.work, Start: start,
		Rules: []RuleSet{{Source: "project", Root: w.work, Allow: allow}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestScriptRules(t *testing.T) {
	w := scriptWorld(t)
	cases := []scriptCase{
		// Rules name a project script by path.
		{cmd: "sh greet.sh", allow: []string{"Bash(sh greet.sh)"}, approved: true},
		{cmd: "sh greet.sh hello", allow: []string{"Bash(sh greet.sh *)"}, approved: true},
		{cmd: "sh greet.sh", allow: []string{"Bash(sh greet.sh *)"}, approved: true},
		{cmd: "sh greet.sh", allow: []string{"Bash(sh:*)"}, approved: true},
		{cmd: "sh greet.sh", allow: []string{"Bash(sh *)"}, approved: true},
		{cmd: "sh ./greet.sh", allow: []string{"Bash(sh ./greet.sh)"}, approved: true},
		{cmd: "sh -x greet.sh", allow: []string{"Bash(sh *)"}, approved: true},
		{cmd: "bash -eu scripts/test.sh", allow: []string{"Bash(bash *)"}, approved: true},
		{cmd: "bash scripts/test.sh -v", allow: []string{"Bash(bash scripts/test.sh *)"}, approved: true},
		{cmd: "./scripts/test.sh --fast", allow: []string{"Bash(./scripts/test.sh *)"}, approved: true},
		{cmd: "./scripts/test.sh", allow: []string{"Bash(./scripts/*)"}, approved: true},
		{cmd: "./scripts/sub/deep.sh a b", allow: []string{"Bash(./scripts/*)"}, approved: true},
		{cmd: "timeout 10 ./scripts/test.sh", allow: []string{"Bash(./scripts/test.sh *)"}, approved: true},
		{cmd: "cd scripts && ./test.sh", allow: []string{"Bash(./test.sh)"}, approved: true},
		{cmd: "./inlink.sh", allow: []string{"Bash(./*)"}, approved: true},
		{cmd: "for i in 1 2; do ./scripts/test.sh; done", allow: []string{"Bash(./scripts/*)"}, approved: true},
		{cmd: "LANG=C sh greet.sh", allow: []string{"Bash(LANG=C sh greet.sh)"}, approved: true},
		// An exact rule may name a script outside the project.
		{cmd: "sh ROOT/etc/out.sh", allow: []string{"Bash(sh ROOT/etc/out.sh)"}, approved: true},

		// The line writes the script, or a directory or link on its way.
		{cmd: "echo x > s.sh && sh s.sh", allow: []string{"Bash(sh s.sh)", "Bash(echo *)"}, why: "writes the script"},
		{cmd: "echo x > new.sh && sh new.sh", allow: []string{"Bash(sh new.sh)", "Bash(echo *)"}, why: "writes the script"},
		{cmd: "echo x > greet.sh; sh greet.sh", allow: []string{"Bash(sh *)", "Bash(echo *)"}, why: "writes the script"},
		{cmd: "sh greet.sh > greet.sh", allow: []string{"Bash(sh *)"}, why: "writes the script"},
		{cmd: "cp ROOT/etc/out.sh scripts/test.sh && ./scripts/test.sh", allow: []string{"Bash(./scripts/*)", "Bash(cp *)"}, why: "cp writes"},
		{cmd: "mv other.sh scripts && ./scripts/test.sh", allow: []string{"Bash(./scripts/*)", "Bash(mv *)"}, why: "directory holding it"},
		{cmd: "tee scripts/test.sh < /dev/null; ./scripts/test.sh", allow: []string{"Bash(./scripts/*)", "Bash(tee *)"}, why: "tee writes"},
		{cmd: "for i in 1 2; do sh s.sh; echo x >> s.sh; done", allow: []string{"Bash(sh s.sh)", "Bash(echo *)"}, why: "writes the script"},
		// Changed since the run started.
		{cmd: "sh greet.sh", allow: []string{"Bash(sh greet.sh)"}, fresh: true, why: "changed during this run"},
		{cmd: "./scripts/test.sh", allow: []string{"Bash(./scripts/*)"}, fresh: true, why: "changed during this run"},
		// What a wildcard never approves.
		{cmd: "sh -c 'echo hi'", allow: []string{"Bash(sh *)"}},
		{cmd: "sh -ec 'echo hi'", allow: []string{"Bash(sh *)"}},
		{cmd: "bash -c ./scripts/test.sh", allow: []string{"Bash(bash *)"}},
		{cmd: "bash --rcfile x greet.sh", allow: []string{"Bash(bash *)"}},
		{cmd: "sh < greet.sh", allow: []string{"Bash(sh *)"}},
		{cmd: "sh ROOT/etc/out.sh", allow: []string{"Bash(sh *)"}, why: "inside the working directories"},
		{cmd: "ROOT/etc/out.sh", allow: []string{"Bash(ROOT/etc/*)"}, why: "inside the working directories"},
		{cmd: "./link.sh", allow: []string{"Bash(./*)"}, why: "resolves to"},
		{cmd: "./scripts/../greet.sh", allow: []string{"Bash(./scripts/*)"}, why: ".."},
		{cmd: "./scripts/../../../etc/out.sh", allow: []string{"Bash(./scripts/*)"}},
		{cmd: `sh "$S"`, allow: []string{"Bash(sh *)"}},
		{cmd: "sh *.sh", allow: []string{"Bash(sh *)"}},
		{cmd: `sh greet.sh "$X"`, allow: []string{"Bash(sh greet.sh *)"}},
		{cmd: "sudo sh greet.sh", allow: []string{"Bash(sudo *)", "Bash(sh *)"}},
		{cmd: "env sh greet.sh", allow: []string{"Bash(env *)", "Bash(sh *)"}},
		{cmd: "xargs sh greet.sh", allow: []string{"Bash(sh *)"}},
		{cmd: "sh missing.sh", allow: []string{"Bash(sh *)"}, why: "not an existing file"},
		{cmd: "sh scripts/dir", allow: []string{"Bash(sh *)"}, why: "not an existing file"},
		{cmd: "LANG=C sh greet.sh", allow: []string{"Bash(sh *)"}},
		{cmd: "busybox sh greet.sh", allow: []string{"Bash(busybox *)"}},
	}
	root := func(s string) string { return strings.ReplaceAll(s, "ROOT", w.root) }
	for _, tc := range cases {
		var allow []string
		for _, r := range tc.allow {
			allow = append(allow, root(r))
		}
		e := scriptEngine(t, w, allow, tc.fresh)
		for _, mode := range tool.Modes() {
			t.Run(string(mode)+"/"+tc.cmd, func(t *testing.T) {
				d := w.decide(t, e, call1{tool: "Bash", input: bash(root(tc.cmd)), mode: mode})
				if want := tc.wantFor(mode); d.Behavior != want {
					t.Fatalf("%s (%s); want %s", d.Behavior, d.Reason, want)
				}
				if mode == tool.ModeDefault && tc.why != "" && !strings.Contains(d.Reason, tc.why) {
					t.Errorf("reason %q does not say %q", d.Reason, tc.why)
				}
			})
		}
	}
}

// TestScriptRuleHints: an ask names the rule that would approve the
// command, and Suggest offers the same rule — one that does approve it.
func TestScriptRuleHints(t *testing.T) {
	w := scriptWorld(t)
	cases := []struct {
		cmd   string
		fresh bool
		want  []string // nil: no rule can approve it
	}{
		{cmd: "sh greet.sh", want: []string{"Bash(sh greet.sh *)"}},
		{cmd: "sh ./greet.sh | tee out.txt", want: []string{"Bash(sh ./greet.sh *)", "Bash(tee out.txt *)"}},
		{cmd: "bash -e scripts/test.sh x", want: []string{"Bash(bash -e scripts/test.sh *)"}},
		{cmd: "./scripts/test.sh --fast", want: []string{"Bash(./scripts/test.sh *)"}},
		{cmd: "sh ROOT/etc/out.sh", want: []string{"Bash(sh ROOT/etc/out.sh)"}},
		{cmd: "./link.sh", want: []string{"Bash(./link.sh)"}},
		{cmd: `sh greet.sh "$X"`, want: []string{`Bash(sh greet.sh "$X")`}},
		{cmd: "sh -c 'echo hi'", want: []string{"Bash(sh -c 'echo hi')"}},
		{cmd: "echo x > s.sh && sh s.sh", want: nil},
		{cmd: "sh greet.sh", fresh: true, want: nil},
	}
	root := func(s string) string { return strings.ReplaceAll(s, "ROOT", w.root) }
	for _, tc := range cases {
		t.Run(tc.cmd, func(t *testing.T) {
			e := scriptEngine(t, w, nil, tc.fresh)
			in, _ := json.Marshal(bash(root(tc.cmd)))
			req := &Request{Tool: named("Bash"), Name: "Bash", Input: in, Env: &tool.Env{WorkDir: w.work, Mode: tool.ModeAcceptEdits}}
			var want []string
			for _, r := range tc.want {
				want = append(want, root(r))
			}
			got := e.Suggest(req)
			if !slices.Equal(got, want) {
				t.Fatalf("Suggest = %q; want %q", got, want)
			}
			d, err := e.Decide(context.Background(), req)
			if err != nil || d.Behavior != tool.Ask {
				t.Fatalf("Decide = %v, %v; want ask", d, err)
			}
			if len(want) > 0 && !strings.Contains(d.Reason, "the allow rule "+want[0]+" would approve it") {
				t.Errorf("reason %q does not name %s", d.Reason, want[0])
			}
			if len(want) == 0 {
				return
			}
			// The suggested rules approve the call.
			e2 := scriptEngine(t, w, want, tc.fresh)
			if d, _ := e2.Decide(context.Background(), req); d.Behavior != tool.Allow {
				t.Fatalf("with %q: %s (%s)", want, d.Behavior, d.Reason)
			}
		})
	}
}

// TestScriptRuleDefaultStart: without Config.Start, a script written after
// the engine was made is not approved; one written well before is.
func TestScriptRuleDefaultStart(t *testing.T) {
	w := scriptWorld(t)
	old := time.Now().Add(-time.Hour)
	p := filepath.Join(w.work, "greet.sh")
	// The change time cannot be set back; a file made before the engine
	// counts as old only past the margin, so this part uses a fixed Start.
	e, err := NewEngine(Options{Home: w.home, WorkDir: w.work, Rules: []RuleSet{{Source: "project", Root: w.work, Allow: []string{"Bash(sh greet.sh)"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if e.cfg.Start.After(time.Now().Add(-startMargin)) || e.cfg.Start.Before(old) {
		t.Fatalf("default Start %v is not NewEngine's time less the margin", e.cfg.Start)
	}
	must(t, os.WriteFile(p, []byte("echo changed\n"), 0o755))
	if d := w.decide(t, e, call1{tool: "Bash", input: bash("sh greet.sh")}); d.Behavior != tool.Ask || !strings.Contains(d.Reason, "changed during this run") {
		t.Fatalf("%s (%s); want ask: the script changed after the engine started", d.Behavior, d.Reason)
	}
}

// FuzzScriptRules: a line that writes the script it runs is never
// approved by rules for the script and for the writer, wherever the
// fuzzed text puts the write and the run, and a script outside the
// project is never approved by a wildcard.
func FuzzScriptRules(f *testing.F) {
	for _, s := range [][2]string{
		{"echo x > s.sh", "sh s.sh"}, {"echo x >> ./s.sh", "bash -e s.sh a"}, {"cp other.sh s.sh", "./s.sh"},
		{"tee s.sh < /dev/null", "sh ./s.sh"}, {"mv other.sh s.sh", "timeout 5 ./s.sh --x"},
		{"echo x > scripts/test.sh", "./scripts/test.sh"}, {"cp -r scripts/sub scripts", "./scripts/sub/deep.sh"},
		{"cd scripts && echo x > test.sh", "./scripts/test.sh"}, {"echo x >s.sh", "sh -x s.sh"},
	} {
		f.Add(s[0], s[1], " && ")
		f.Add(s[0], s[1], "; ")
	}
	w := scriptWorld(f)
	allow := []string{"Bash(sh *)", "Bash(bash *)", "Bash(./*)", "Bash(echo *)", "Bash(cp *)", "Bash(tee *)", "Bash(mv *)", "Bash(cd *)"}
	e := scriptEngine(f, w, allow, false)
	outside := filepath.Join(w.root, "etc", "out.sh")
	f.Fuzz(func(t *testing.T, write, run, sep string) {
		for _, line := range []string{write + sep + run, "for i in 1 2; do " + run + sep + write + "; done"} {
			a := analyseShell(line)
			if a.err != nil {
				continue
			}
			// The decision is only checked when the analysis names a
			// write of the script the run runs.
			d := w.decide(t, e, call1{tool: "Bash", input: bash(line), mode: tool.ModeAcceptEdits})
			if d.Behavior != tool.Allow {
				continue
			}
			c, err := e.newCall(&Request{Tool: named("Bash"), Name: "Bash", Input: mustJSON(t, bash(line)), Env: &tool.Env{WorkDir: w.work, Mode: tool.ModeAcceptEdits}})
			if err != nil {
				t.Fatal(err)
			}
			for _, sc := range c.shell.topCmds() {
				i, ok := scriptOf(sc)
				if !ok {
					continue
				}
				bases, basesOK := c.cmdBases(sc)
				ts, ok := c.shellPath(shellparse.Path{Value: sc.Words[i].Value}, bases, basesOK)
				if !ok {
					t.Fatalf("%q allowed (%s) with a script in an unknown place", line, d.Reason)
				}
				for _, tp := range ts {
					if why, w := c.lineWrites(tp); w {
						t.Fatalf("%q allowed (%s) although %s", line, d.Reason, why)
					}
					if tp.resolved == outside {
						t.Fatalf("%q allowed (%s): a script outside the project", line, d.Reason)
					}
				}
			}
		}
	})
}

func mustJSON(t testing.TB, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// BenchmarkDecideScriptRule: a script run approved by a wildcard rule
// (path resolution, two stats, the line's writes).
func BenchmarkDecideScriptRule(b *testing.B) {
	w := scriptWorld(b)
	e := scriptEngine(b, w, []string{"Bash(./scripts/*)", "Bash(go test *)"}, false)
	c := call1{tool: "Bash", input: bash("go test ./... && ./scripts/test.sh --fast > out.txt"), mode: tool.ModeAcceptEdits}
	for b.Loop() {
		if d := w.decide(b, e, c); d.Behavior != tool.Allow {
			b.Fatal(d.Reason)
		}
	}
}
