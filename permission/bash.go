package permission

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gantry-dev/gantry/internal/shellparse"
	"github.com/gantry-dev/gantry/tool"
)

// allCmds returns the top-level commands followed by the commands found in
// literal `sh -c '…'` operands, recursively.
func (a *shellAnalysis) allCmds() []*shellCmd {
	var out []*shellCmd
	var walk func(cs []shellCmd)
	walk = func(cs []shellCmd) {
		for i := range cs {
			out = append(out, &cs[i])
			walk(cs[i].nested)
		}
	}
	walk(a.cmds)
	return out
}

// matchTexts are the forms of one command a deny or ask rule is matched
// against: as written, with assignments, wrappers stripped, runners
// stripped.
func (sc *shellCmd) matchTexts() []string {
	full := canonWords(sc.cmd.Words)
	ts := []string{full}
	if len(sc.cmd.Assigns) > 0 {
		ts = append(ts, strings.TrimSpace(canonAssigns(sc.cmd.Assigns)+" "+full))
	}
	if len(sc.words) != len(sc.cmd.Words) {
		ts = append(ts, canonWords(sc.words))
	}
	if sc.wrapped || len(sc.runnerWords) > 0 && sc.runnerWords[0].Value != sc.cmd.Name() {
		ts = append(ts, canonWords(sc.runnerWords))
	}
	return ts
}

// crudeParts splits a command line that did not parse on shell operators,
// so that deny rules still see its pieces.
func crudeParts(src string) []string {
	parts := strings.FieldsFunc(src, func(r rune) bool {
		return strings.ContainsRune(";&|\n()`{}", r)
	})
	out := []string{collapseSpaces(src)}
	for _, p := range parts {
		p = strings.TrimLeft(collapseSpaces(p), "$!<> ")
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

// bashRuleMatches matches a Bash deny or ask rule: any part of the command,
// in any of its forms, is enough.
func (e *Engine) bashRuleMatches(c *call, r *rule) (string, bool) {
	if c.shell.err != nil {
		for _, t := range crudeParts(c.shell.src) {
			if specMatches(r.Specifier, t) {
				return fmt.Sprintf(": matches %q", t), true
			}
		}
		return "", false
	}
	for _, sc := range c.shell.allCmds() {
		for _, t := range sc.matchTexts() {
			if r.matches(t) {
				return fmt.Sprintf(": matches %q", t), true
			}
		}
	}
	return "", false
}

// redirectTarget returns the absolute candidates of a redirect target (one
// per possible working directory), or ok=false when the target is not
// literal.
func (c *call) shellTargets(target string, dynamic bool, bases []string) ([]pathForms, bool) {
	if dynamic {
		// A lone tilde prefix is the only expansion we resolve ourselves.
		if !strings.HasPrefix(target, "~/") || strings.ContainsAny(target, "$`*?[{\\'\"") {
			return nil, false
		}
	}
	var out []pathForms
	for _, b := range bases {
		f, err := newPathForms(target, b, c.home, &c.res)
		if err != nil {
			return nil, false
		}
		out = append(out, f)
	}
	return out, true
}

// bases returns the directories relative paths of the command line may be
// relative to: the working directory and every literal cd target (the
// analysis does not track which command runs where, so every path is checked
// against all of them). ok is false when a cd target is not literal.
func (c *call) bases() ([]string, bool) {
	if c.basesDone {
		return c.basesList, c.basesOK
	}
	c.basesList, c.basesOK = c.computeBases()
	c.basesDone = true
	return c.basesList, c.basesOK
}

func (c *call) computeBases() ([]string, bool) {
	bases := []string{c.workDir}
	ok := true
	for _, sc := range c.shell.cmds {
		ws := sc.words
		if len(ws) == 0 || ws[0].Dynamic {
			continue
		}
		switch ws[0].Value {
		case "cd", "pushd", "popd":
			if len(ws) == 1 {
				bases = append(bases, c.home)
				continue
			}
			t := ws[len(ws)-1]
			if t.Dynamic && !strings.HasPrefix(t.Text, "~") || t.Value == "-" || ws[0].Value == "popd" {
				ok = false
				continue
			}
			b := make([]string, 0, len(bases))
			for _, base := range bases {
				if a, err := absPath(t.Value, base, c.home); err == nil {
					b = append(b, a)
				}
			}
			if t.Dynamic {
				if a, err := absPath(t.Text, c.workDir, c.home); err == nil {
					b = append(b, a)
				}
			}
			bases = append(bases, b...)
		}
	}
	slices.Sort(bases)
	return slices.Compact(bases), ok
}

// writeCommands are commands whose operands are (mostly) files they create
// or change.
var writeCommands = set("mkdir", "touch", "mv", "cp", "rm", "rmdir", "ln", "chmod", "chown", "chgrp", "tee", "truncate", "install", "rsync", "unlink", "shred", "dd")

// acceptEditsCommands are the file commands acceptEdits mode approves when
// every operand is inside the working directories.
var acceptEditsCommands = set("mkdir", "touch", "mv", "cp", "rmdir")

// operands returns the non-option words after the command name (all words
// after "--").
func operands(ws []shellparse.Word) []shellparse.Word {
	var out []shellparse.Word
	dash := false
	for _, w := range ws[1:] {
		if !dash && !w.Dynamic && w.Value == "--" {
			dash = true
			continue
		}
		if !dash && !w.Dynamic && strings.HasPrefix(w.Value, "-") && w.Value != "-" {
			continue
		}
		out = append(out, w)
	}
	return out
}

// shellSafety: unparseable commands and removal of critical paths ask in
// every mode; substitutions, constructs the analysis does not model,
// non-literal redirect targets and writes to protected paths ask outside
// bypass.
func (e *Engine) shellSafety(c *call, bypass bool) (Decision, bool) {
	a := c.shell
	if a.err != nil {
		why := "it cannot be fully parsed"
		if errors.Is(a.err, shellparse.ErrTooLong) {
			why = fmt.Sprintf("it is longer than %d characters", shellparse.MaxLen)
		}
		return ask(fmt.Sprintf("the command needs review because %s: %v", why, a.err), "safety", ""), true
	}
	bases, basesOK := c.bases()
	for _, sc := range a.allCmds() {
		if why, bad := c.criticalRm(sc.runnerWords, bases, basesOK); bad {
			return ask("removal of a critical path: "+why, "safety", ""), true
		}
	}
	if d, ok := e.operandDenied(c, bases); ok {
		return d, true
	}
	if bypass {
		return Decision{}, false
	}
	switch {
	case a.script.HasCommandSubst:
		return ask("the command uses command substitution ($(…) or `…`), which runs commands that rules cannot see", "safety", ""), true
	case a.script.HasProcessSubst:
		return ask("the command uses process substitution (<(…) or >(…))", "safety", ""), true
	case a.script.Complex:
		return ask("the command uses shell constructs that are not analysed (functions, eval, source, exec, arithmetic on variables, …)", "safety", ""), true
	}
	for _, sc := range a.allCmds() {
		if sc.nestedErr {
			return ask("the script passed to a shell with -c cannot be analysed", "safety", ""), true
		}
	}
	for _, r := range a.script.Redirects {
		if !r.Write || r.IsDevNull() {
			continue
		}
		targets, ok := c.shellTargets(r.Target, r.Dynamic, bases)
		if !ok || !basesOK && !filepath.IsAbs(r.Target) {
			return ask(fmt.Sprintf("the redirect %s%s target %q is not a literal path", r.Fd, r.Op, r.Target), "safety", ""), true
		}
		for _, t := range targets {
			if t.any(func(p string) bool { return isProtected(p, c.home) }) {
				return ask(fmt.Sprintf("the redirect writes to a protected path: %s", t.lexical), "safety", ""), true
			}
		}
	}
	for _, sc := range a.allCmds() {
		ws := sc.runnerWords
		if len(ws) == 0 || ws[0].Dynamic || !writeCommands[ws[0].Value] {
			continue
		}
		for _, op := range operands(ws) {
			if op.Dynamic && !strings.HasPrefix(op.Text, "~/") {
				continue
			}
			v := op.Value
			if op.Dynamic {
				v = op.Text
			}
			targets, _ := c.shellTargets(v, false, bases)
			for _, t := range targets {
				if t.any(func(p string) bool { return isProtected(p, c.home) }) {
					return ask(fmt.Sprintf("%s changes a protected path: %s", ws[0].Value, t.lexical), "safety", ""), true
				}
			}
		}
	}
	return Decision{}, false
}

// criticalRm reports an rm (or rmdir, unlink, shred) whose operand is not
// literal or names a critical path.
func (c *call) criticalRm(ws []shellparse.Word, bases []string, basesOK bool) (string, bool) {
	if len(ws) == 0 || ws[0].Dynamic {
		return "", false
	}
	switch filepath.Base(ws[0].Value) {
	case "rm", "rmdir", "unlink", "shred":
	default:
		return "", false
	}
	for _, op := range operands(ws) {
		v := op.Value
		if riskyWord(op) {
			return fmt.Sprintf("%s operand %s is only known when the shell runs", ws[0].Value, op.Text), true
		}
		if op.Dynamic {
			v = op.Text
			if !strings.HasPrefix(v, "~") && !op.Glob {
				return fmt.Sprintf("%s operand %s is only known when the shell runs", ws[0].Value, op.Text), true
			}
			if i := strings.IndexAny(v, "*?[{"); i >= 0 {
				// The directory a glob expands in is what is at stake.
				v = v[:i]
				if v == "" || strings.HasSuffix(v, "/") {
					v += "."
				} else {
					v = filepath.Dir(v)
				}
			}
			if v == "~" || strings.HasPrefix(v, "~") && !strings.HasPrefix(v, "~/") {
				return fmt.Sprintf("%s operand %s is a home directory", ws[0].Value, op.Text), true
			}
		}
		if !basesOK && !filepath.IsAbs(v) && !strings.HasPrefix(v, "~") {
			return fmt.Sprintf("%s operand %s is relative to an unknown directory", ws[0].Value, op.Text), true
		}
		for _, b := range bases {
			f, err := newPathForms(v, b, c.home, &c.res)
			if err != nil {
				return fmt.Sprintf("%s operand %s: %v", ws[0].Value, op.Text, err), true
			}
			if f.any(func(p string) bool { return criticalRmTarget(p, c.home, c.workDirs) }) {
				return fmt.Sprintf("%s %s", ws[0].Value, op.Text), true
			}
		}
	}
	return "", false
}

// bashRedirectRule applies Edit and Read deny/ask rules to the files a
// command line reads (<) and writes (>, >>, …).
func (e *Engine) bashRedirectRule(c *call, r *rule) (string, bool) {
	if c.shell.err != nil {
		return "", false
	}
	bases, _ := c.bases()
	for _, rd := range c.shell.script.Redirects {
		read := rd.Op == "<" || rd.Op == "<>"
		write := rd.Write && !rd.IsDevNull()
		if !read && !write || r.Tool == "Edit" && !write {
			continue
		}
		if r.Bare() {
			if r.Tool == "Edit" {
				return fmt.Sprintf(": the command writes %s", rd.Target), true
			}
			continue
		}
		targets, ok := c.shellTargets(rd.Target, rd.Dynamic, bases)
		if !ok {
			continue
		}
		for _, t := range targets {
			if e.pathMatches(c, r, t, true) {
				return fmt.Sprintf(": the command accesses %s", t.lexical), true
			}
		}
	}
	return "", false
}

// decideBash approves a command line when every simple command in it is
// approved (by an allow rule, as read-only, or by acceptEdits) and every
// file it redirects to or from is.
func (e *Engine) decideBash(c *call, readOnly bool) Decision {
	a := c.shell
	bases, _ := c.bases()
	var used []*rule
	use := func(r *rule) {
		if !slices.Contains(used, r) {
			used = append(used, r)
		}
	}
	for i := range a.cmds {
		sc := &a.cmds[i]
		if readOnly {
			if why, ok := e.operandsReadable(c, sc, bases); !ok {
				return ask(fmt.Sprintf("%q reads outside the working directories: %s", strings.TrimSpace(sc.cmd.Text), why), "default", "")
			}
			continue
		}
		if r, ok := e.approveCmd(c, sc, bases); ok {
			if r != nil {
				use(r)
			}
			continue
		}
		text := strings.TrimSpace(sc.cmd.Text)
		reason := fmt.Sprintf("%q needs permission", text)
		if len(sc.cmd.Assigns) > 0 {
			reason += " (allow rules do not match past leading variable assignments)"
		} else if isRunner(sc.words) {
			reason += fmt.Sprintf(" (%s runs another command, which prefix rules never approve)", sc.words[0].Value)
		} else if dangerousArgs(sc.words) {
			reason += " (its arguments write files or run programs, which prefix rules never approve)"
		}
		return ask(reason, "default", "")
	}
	for _, rd := range a.script.Redirects {
		read := rd.Op == "<" || rd.Op == "<>"
		write := rd.Write && !rd.IsDevNull()
		if !read && !write {
			continue
		}
		targets, ok := c.shellTargets(rd.Target, rd.Dynamic, bases)
		if !ok {
			return ask(fmt.Sprintf("redirect target %q is not a literal path", rd.Target), "default", "")
		}
		for _, t := range targets {
			r, ok := e.approveAccess(c, t, write)
			if !ok {
				verb := "reads"
				if write {
					verb = "writes"
				}
				return ask(fmt.Sprintf("the command %s %s", verb, t.lexical), "default", "")
			}
			if r != nil {
				use(r)
			}
		}
	}
	if len(used) == 0 {
		return allow("read-only command", "default", "")
	}
	raws := make([]string, len(used))
	for i, r := range used {
		raws[i] = r.raw
	}
	return allow("allowed by rule "+strings.Join(raws, ", "), used[0].source, strings.Join(raws, ", "))
}

// approveAccess approves a file a command reads or writes: a matching allow
// rule (Read for reads, Edit for writes; both path forms), a read inside the
// working directories, or a write inside them in acceptEdits mode.
func (e *Engine) approveAccess(c *call, f pathForms, write bool) (*rule, bool) {
	for i := range c.rules {
		r := &c.rules[i]
		if r.behavior != tool.Allow {
			continue
		}
		if r.Tool == "Edit" || r.Tool == "Read" && !write {
			if r.Bare() || e.pathMatches(c, r, f, false) {
				return r, true
			}
		}
	}
	in := f.both(c.inside)
	if !write && in || write && in && c.mode == tool.ModeAcceptEdits {
		return nil, true
	}
	return nil, false
}

// approveCmd approves one simple command.
func (e *Engine) approveCmd(c *call, sc *shellCmd, bases []string) (*rule, bool) {
	cmd := sc.cmd
	if len(cmd.Args) == 0 {
		// Only redirections (checked on their own) or only assignments
		// (which can change what later commands do): the latter need
		// an exact rule.
		if len(cmd.Assigns) == 0 {
			return nil, true
		}
	}
	withAssigns := strings.TrimSpace(canonAssigns(cmd.Assigns) + " " + canonWords(cmd.Words))
	stripped := canonWords(sc.words)
	for i := range c.rules {
		r := &c.rules[i]
		if r.behavior != tool.Allow || !slices.ContainsFunc(c.names, r.matchesName) {
			continue
		}
		if r.Bare() {
			return r, true
		}
		if !r.wild {
			cs := r.canon
			if len(cmd.Assigns) > 0 {
				if cs == withAssigns {
					return r, true
				}
				continue
			}
			if cs == stripped || cs == canonWords(cmd.Words) {
				return r, true
			}
			continue
		}
		// A wildcard never approves what it cannot see.
		if len(cmd.Assigns) > 0 || isRunner(sc.words) || dangerousArgs(sc.words) || slices.ContainsFunc(sc.words, riskyWord) {
			continue
		}
		if globMatch(r.canon, stripped) {
			return r, true
		}
	}
	if len(cmd.Assigns) > 0 || len(sc.words) == 0 {
		return nil, false
	}
	if e.cfg.ReadOnlyCommand != nil && e.cfg.ReadOnlyCommand(cmd) {
		if _, ok := e.operandsReadable(c, sc, bases); ok {
			return nil, true
		}
		return nil, false
	}
	ws := sc.words
	if ws[0].Dynamic {
		return nil, false
	}
	switch name := ws[0].Value; {
	case name == "cd" || name == "pushd":
		// Changing directory is harmless in itself if it stays inside
		// the working directories; relative paths are checked against
		// every directory a cd may lead to.
		ops := operands(ws)
		if len(ops) != 1 {
			return nil, false
		}
		t, ok := c.shellTargets(ops[0].Value, ops[0].Dynamic, []string{c.workDir})
		return nil, ok && len(t) == 1 && t[0].both(c.inside)
	case c.mode == tool.ModeAcceptEdits && acceptEditsCommands[name]:
		ops := operands(ws)
		if len(ops) == 0 {
			return nil, false
		}
		for _, op := range ops {
			if op.Dynamic {
				return nil, false
			}
			ts, ok := c.shellTargets(op.Value, false, bases)
			if !ok {
				return nil, false
			}
			for _, t := range ts {
				if !t.both(c.inside) || t.any(func(p string) bool { return isProtected(p, c.home) }) {
					return nil, false
				}
			}
		}
		return nil, true
	}
	return nil, false
}

// matches matches a Bash rule's specifier against a command text.
func (r *rule) matches(text string) bool {
	if r.wild {
		return globMatch(r.canon, text)
	}
	return r.canon == text
}

// operandDenied asks when a literal operand of any command names a path
// that a scoped Read or Edit deny rule covers (`cat .env` with
// Read(./.env) denied). It asks rather than denies because an operand is
// not always a path the command opens (`echo .env`).
func (e *Engine) operandDenied(c *call, bases []string) (Decision, bool) {
	var rules []*rule
	for i := range c.rules {
		r := &c.rules[i]
		if r.behavior == tool.Deny && !r.Bare() && (r.Tool == "Read" || r.Tool == "Edit") {
			rules = append(rules, r)
		}
	}
	if len(rules) == 0 {
		return Decision{}, false
	}
	for _, sc := range c.shell.allCmds() {
		ws := sc.runnerWords
		if len(ws) < 2 {
			continue
		}
		for _, w := range ws[1:] {
			v := w.Value
			if w.Dynamic {
				if !strings.HasPrefix(w.Text, "~/") {
					continue
				}
				v = w.Text
			}
			if v == "" || strings.HasPrefix(v, "-") {
				if i := strings.IndexByte(v, '='); i > 0 && strings.HasPrefix(v, "--") {
					v = v[i+1:] // --file=.env
				} else {
					continue
				}
			}
			targets, ok := c.shellTargets(v, false, bases)
			if !ok {
				continue
			}
			for _, t := range targets {
				for _, r := range rules {
					if e.pathMatches(c, r, t, true) {
						return ask(fmt.Sprintf("%s operand %s is covered by the deny rule %s", ws[0].Value, v, r.raw), r.source, r.raw), true
					}
				}
			}
		}
	}
	return Decision{}, false
}

// operandsReadable checks the operands of a command approved as read-only:
// an operand with an expansion could name any file, and one that is
// absolute, starts with ~ or climbs with .. must stay inside the working
// directories (or be covered by a Read allow rule), like a Read call.
func (e *Engine) operandsReadable(c *call, sc *shellCmd, bases []string) (string, bool) {
	ws := sc.words
	if len(ws) < 2 {
		return "", true
	}
	for _, w := range ws[1:] {
		if riskyWord(w) {
			return w.Text + " is only known when the shell runs", false
		}
		v := w.Value
		if w.Dynamic {
			v = w.Text // a tilde or a glob
		}
		if strings.HasPrefix(v, "-") {
			i := strings.IndexByte(v, '=')
			if i < 0 {
				continue
			}
			v = v[i+1:]
		}
		if i := strings.IndexAny(v, "*?[{"); w.Glob && i >= 0 {
			v = v[:i]
			if j := strings.LastIndexByte(v, '/'); j >= 0 {
				v = v[:j+1]
			} else {
				v = "."
			}
		}
		if v == "" || !(filepath.IsAbs(v) || strings.HasPrefix(v, "~") || slices.Contains(strings.Split(v, "/"), "..")) {
			continue
		}
		if strings.HasPrefix(v, "~") && !strings.HasPrefix(v, "~/") && v != "~" {
			return v + " is another user's home", false
		}
		targets, ok := c.shellTargets(v, false, bases)
		if !ok {
			return v, false
		}
		for _, t := range targets {
			if _, ok := e.approveAccess(c, t, false); !ok {
				return t.lexical, false
			}
		}
	}
	return "", true
}
