package permission

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/gantry-dev/gantry/internal/shellparse"
)

// Rules for scripts.
//
// A command that runs a script file — the file named as the command
// (./scripts/test.sh, scripts/x.sh) or given to a shell (sh greet.sh,
// bash -eu ./x.sh) — is approved by an allow rule only while the script is
// what the person who wrote the rule could have read: the file the run is
// about to execute must not be one the run itself could have written
// without another approval. An allow rule (exact or wildcard) that
// matches such a command approves it only when:
//
//   - the script resolves (symbolic links followed) to an existing
//     regular file, and for a wildcard rule that file is inside the
//     working directories and the word naming it has no ".." element;
//   - no command and no redirection of the same line writes or creates
//     it, a directory holding it or a link on its way (every write of the
//     line must be a literal path for this to be known);
//   - neither the file nor a link naming it has changed since the run
//     started ([Config.Start]): its change time (which no program can set
//     back) is older. Whatever a session wrote — Write, Edit, a Bash
//     redirect in acceptEdits, a command approved by another rule — makes
//     it ask again.
//
// A wildcard rule still never approves a shell given -c, a script only
// known at run time, a script through a runner (sudo, env), or an
// argument only known at run time.

// scriptShells are the shells whose "SHELL [-flags] FILE args" form runs
// a script file. busybox runs applets, not files.
var scriptShells = map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "mksh": true, "ash": true}

// startMargin is how much earlier than NewEngine the default Config.Start
// lies: file systems stamp change times from a coarse clock (a jiffy, or
// whole seconds on some), so a file written just after the engine was
// made may carry an earlier time.
const startMargin = 2 * time.Second

// scriptOf returns the index in sc.Words of the word naming the script a command runs: its name
// when that is a path, or the file given to a shell after flags that only
// change how it runs (-e -u -x -v). ok is false for anything else: -c,
// standard input, an option the table does not know, a runner before it,
// words xargs adds, a name only known at run time.
func scriptOf(sc *shellparse.Cmd) (int, bool) {
	ws := sc.Words
	if sc.Wrapped || len(ws) == 0 || ws[0].Dynamic {
		return 0, false
	}
	for _, w := range ws {
		if w.Text == "{input}" {
			return 0, false
		}
	}
	if strings.Contains(ws[0].Value, "/") {
		return 0, true
	}
	if !scriptShells[ws[0].Value] {
		return 0, false
	}
	i := 1
	for i < len(ws) && !ws[i].Dynamic && len(ws[i].Value) > 1 && ws[i].Value[0] == '-' &&
		strings.Trim(ws[i].Value[1:], "euxv") == "" {
		i++
	}
	if i >= len(ws) || ws[i].Dynamic || ws[i].Value == "" || strings.HasPrefix(ws[i].Value, "-") || strings.HasPrefix(ws[i].Value, "+") {
		return 0, false
	}
	return i, true
}

// scriptBlind is wildcardBlind for a command that runs a script: only an
// argument only known at run time keeps a wildcard from it.
func scriptBlind(sc *shellparse.Cmd) (string, bool) {
	if slices.ContainsFunc(sc.Words, riskyWord) {
		return "a word is only known when the shell runs", true
	}
	return "", false
}

// scriptOK reports whether an allow rule (wild: a wildcard one) that
// matched sc may approve it: see the package comment above. why says what
// keeps it from doing so.
func (e *Engine) scriptOK(c *call, script shellparse.Word, bases []string, basesOK, wild bool) (string, bool) {
	v := script.Value
	if wild && slices.Contains(strings.Split(v, "/"), "..") {
		return "a wildcard rule does not approve a script path with ..", false
	}
	targets, ok := c.shellPath(shellparse.Path{Value: v}, bases, basesOK)
	if !ok || len(targets) == 0 {
		return "the script " + v + " is in a directory only known when the shell runs", false
	}
	for _, t := range targets {
		if wild && !t.both(c.inside) {
			return "a wildcard rule approves only a script inside the working directories, and " + v + " resolves to " + t.resolved, false
		}
		if why, written := c.lineWrites(t); written {
			return why, false
		}
		st, err := os.Stat(t.resolved)
		if err != nil || !st.Mode().IsRegular() {
			return "the script " + v + " is not an existing file", false
		}
		if why, ok := e.unchanged(t, st); !ok {
			return why, false
		}
	}
	return "", true
}

// unchanged reports whether a script and the link naming it (if the path
// as written is one) have not changed since the run started.
func (e *Engine) unchanged(t pathForms, st os.FileInfo) (string, bool) {
	since := e.cfg.Start
	if changeTime(st).After(since) || st.ModTime().After(since) {
		return fmt.Sprintf("the script %s changed during this run (%s), so the person who wrote the rule has not seen it", t.lexical, changeTime(st).Format(time.TimeOnly)), false
	}
	if t.lexical != t.resolved {
		if lst, err := os.Lstat(t.lexical); err == nil && lst.Mode()&os.ModeSymlink != 0 && changeTime(lst).After(since) {
			return fmt.Sprintf("the link %s was made during this run", t.lexical), false
		}
	}
	return "", true
}

// changeTime is a file's status change time: unlike the modification time
// no program can set it back.
func changeTime(st os.FileInfo) time.Time {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return time.Unix(int64(s.Ctim.Sec), int64(s.Ctim.Nsec))
	}
	return time.Now() // unknown: count it as changed
}

// lineWrites reports whether the command line writes or creates the file
// t (or a directory or link on its way): any redirection or write of any
// command that reaches it, or a write the analysis cannot name.
func (c *call) lineWrites(t pathForms) (string, bool) {
	a := c.shell
	hits := func(w pathForms) bool {
		for _, p := range []string{t.lexical, t.resolved} {
			for _, q := range []string{w.lexical, w.resolved} {
				if within(p, q) {
					return true
				}
			}
		}
		return false
	}
	for i, rd := range a.script.Redirects {
		if !rd.Write || rd.IsDevNull() {
			continue
		}
		bases, basesOK := c.redirBases(i)
		ws, ok := c.shellPath(shellparse.Path{Value: rd.Target, Dynamic: rd.Dynamic}, bases, basesOK)
		if !ok {
			return "the line writes " + rd.Target + ", only known when the shell runs, which may be the script", true
		}
		for _, w := range ws {
			if hits(w) {
				return "the line writes the script (" + rd.Op + " " + rd.Target + ") before it may run it", true
			}
		}
	}
	for _, sc := range a.allCmds() {
		if sc.Core&shellparse.Writes != 0 && len(sc.Writes) == 0 {
			return sc.Name() + " writes files the analysis does not name, which may be the script", true
		}
		bases, basesOK := c.cmdBases(sc)
		for _, p := range sc.Writes {
			if p.Unknown {
				return sc.Name() + " writes files the analysis cannot name (" + p.Value + "), which may be the script", true
			}
			ws, ok := c.shellPath(p, bases, basesOK)
			if !ok {
				return sc.Name() + " writes " + p.Value + ", only known when the shell runs, which may be the script", true
			}
			for _, w := range ws {
				if hits(w) {
					return sc.Name() + " writes " + p.Value + ", the script or a directory holding it, in the same line", true
				}
			}
		}
	}
	return "", false
}

// scriptRule returns the allow rule to suggest for a command that runs a
// script a rule can approve: the script path with its arguments as a
// wildcard (Bash(sh ./greet.sh *), Bash(./scripts/test.sh *)) when it lies
// inside the working directories, else the exact command.
func (e *Engine) scriptRule(c *call, sc *shellparse.Cmd, i int, bases []string, basesOK bool) (string, bool) {
	script := sc.Words[i]
	if _, ok := e.scriptOK(c, script, bases, basesOK, false); !ok {
		return "", false
	}
	if _, blind := scriptBlind(sc); !blind {
		if _, ok := e.scriptOK(c, script, bases, basesOK, true); ok {
			return Rule{Tool: "Bash", Specifier: escapeStars(canonWords(sc.Words[:i+1])) + " *"}.String(), true
		}
	}
	return Rule{Tool: "Bash", Specifier: escapeStars(canonWords(sc.Words))}.String(), true
}
