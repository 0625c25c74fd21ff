package permission

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gantry-dev/gantry/internal/shellparse"
	"github.com/gantry-dev/gantry/tool"
)

// matchTexts are the forms of one command a deny or ask rule is matched
// against: as written, with assignments, wrappers stripped, runners
// stripped, git's global options removed, a path-qualified name reduced
// to its base name, and — for a command whose inner command could not be
// identified — every suffix that starts with a plain word.
func matchTexts(sc *shellparse.Cmd) []string {
	full := canonWords(sc.Command.Words)
	ts := []string{full}
	add := func(ws []shellparse.Word) {
		if len(ws) == 0 {
			return
		}
		if t := canonWords(ws); !slices.Contains(ts, t) {
			ts = append(ts, t)
		}
		if b := baseNamed(ws); b != nil {
			if t := canonWords(b); !slices.Contains(ts, t) {
				ts = append(ts, t)
			}
		}
	}
	if len(sc.Command.Assigns) > 0 {
		ts = append(ts, strings.TrimSpace(canonAssigns(sc.Command.Assigns)+" "+full))
	}
	add(sc.Command.Words)
	add(sc.Words)
	add(sc.Inner)
	add(sc.Canon)
	if sc.Unresolved {
		ws := sc.Command.Words
		for i := 1; i < len(ws); i++ {
			if !ws[i].Dynamic && !strings.HasPrefix(ws[i].Value, "-") {
				add(ws[i:])
			}
		}
	}
	return ts
}

// baseNamed returns ws with a path-qualified command name (/usr/bin/rm)
// reduced to its base name, or nil. Only deny and ask rules match it: an
// allow rule never approves ./rm because it names rm.
func baseNamed(ws []shellparse.Word) []shellparse.Word {
	if len(ws) == 0 || ws[0].Dynamic || !strings.Contains(ws[0].Value, "/") {
		return nil
	}
	w0 := ws[0]
	w0.Value = w0.Value[strings.LastIndexByte(w0.Value, '/')+1:]
	w0.Text = w0.Value
	return append([]shellparse.Word{w0}, ws[1:]...)
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

// bashRuleMatches matches a Bash deny or ask rule: any command of the line
// (payloads included), in any of its forms, is enough.
func (e *Engine) bashRuleMatches(c *call, r *rule) (string, bool) {
	if c.shell.err != nil {
		for _, t := range crudeParts(c.shell.src) {
			if specMatches(r.Specifier, t) {
				return fmt.Sprintf(": matches %q", t), true
			}
		}
		return "", false
	}
	if c.shell.texts == nil {
		for _, sc := range c.shell.allCmds() {
			c.shell.texts = append(c.shell.texts, matchTexts(sc))
		}
	}
	for _, ts := range c.shell.texts {
		for _, t := range ts {
			if r.matches(t) {
				return fmt.Sprintf(": matches %q", t), true
			}
		}
	}
	return "", false
}

// cmdBases returns the directories a command's relative paths may be
// relative to (see shellparse.Where); ok is false when they are not known
// (a cd to a target only known at run time, popd, HOME changed, …):
// relative and ~ paths are then unknown.
func (c *call) cmdBases(sc *shellparse.Cmd) ([]string, bool) {
	if b, ok := c.shell.bases[sc]; ok {
		return b.dirs, b.ok
	}
	dirs, ok := c.whereBases(sc.Where)
	if c.shell.bases == nil {
		c.shell.bases = make(map[*shellparse.Cmd]basesOf)
	}
	c.shell.bases[sc] = basesOf{dirs, ok}
	return dirs, ok
}

// basesOf is a memoised cmdBases result.
type basesOf struct {
	dirs []string
	ok   bool
}

// redirBases is cmdBases for the i-th redirection of the line.
func (c *call) redirBases(i int) ([]string, bool) {
	w := shellparse.Where{Unknown: true}
	if m := c.shell.model; i < len(m.RedirectWhere) {
		w = m.RedirectWhere[i]
	}
	return c.whereBases(w)
}

func (c *call) whereBases(w shellparse.Where) ([]string, bool) {
	if w.Unknown || len(w.Dirs) == 0 {
		return nil, false
	}
	if len(w.Dirs) == 1 && len(w.Dirs[0]) == 0 {
		return []string{c.workDir}, true
	}
	bases := make([]string, 0, len(w.Dirs))
	for _, chain := range w.Dirs {
		b := c.workDir
		for _, step := range chain {
			if !step.Literal {
				return nil, false
			}
			if !step.Physical {
				a, err := absPath(step.Target, b, c.home)
				if err != nil {
					return nil, false
				}
				b = a
				continue
			}
			f, err := newPathForms(step.Target, b, c.home, &c.res)
			if err != nil {
				return nil, false
			}
			b = f.resolved
		}
		bases = append(bases, b)
	}
	slices.Sort(bases)
	return slices.Compact(bases), true
}

// maxGlobMatches bounds the expansion of a glob operand; more matches are
// treated as an unknown path.
const maxGlobMatches = 256

// shellPath resolves a path of the model against every base: a glob is
// expanded (and its directory kept), a tilde expanded. ok is false when the
// path cannot be known before the shell runs ($x, another user's ~, a
// relative path after a cd to an unknown directory, a glob with too many
// matches).
func (c *call) shellPath(p shellparse.Path, bases []string, basesOK bool) ([]pathForms, bool) {
	v := p.Value
	if p.Unknown {
		return nil, false
	}
	if p.Dynamic {
		tilde := v == "~" || strings.HasPrefix(v, "~/")
		if strings.ContainsAny(v, "$`'\"\\") || strings.HasPrefix(v, "~") && !tilde || !tilde && !p.Glob {
			return nil, false
		}
	}
	if v == "" {
		return nil, false
	}
	rel := !filepath.IsAbs(v) && !strings.HasPrefix(v, "~")
	if !filepath.IsAbs(v) && !basesOK {
		return nil, false // relative, or ~ after HOME may have changed
	}
	if !rel {
		bases = bases[:0:0]
		bases = append(bases, c.workDir)
	}
	var out []pathForms
	for _, b := range bases {
		if !p.Glob {
			f, err := newPathForms(v, b, c.home, &c.res)
			if err != nil {
				return nil, false
			}
			out = append(out, f)
			continue
		}
		abs, err := absPath(v, b, c.home)
		if err != nil {
			return nil, false
		}
		dir := abs
		if i := strings.IndexAny(abs, "*?["); i >= 0 {
			dir = filepath.Dir(abs[:i+1])
		}
		f, err := newPathForms(dir, "/", c.home, &c.res)
		if err != nil {
			return nil, false
		}
		out = append(out, f)
		matches, err := filepath.Glob(abs)
		if err != nil || len(matches) > maxGlobMatches {
			return nil, false
		}
		if p.OptionGlob && !c.globsStable(matches) {
			return nil, false
		}
		for _, m := range matches {
			f, err := newPathForms(m, "/", c.home, &c.res)
			if err != nil {
				return nil, false
			}
			out = append(out, f)
		}
	}
	return out, true
}

// shellSafety: unparseable commands, destructive operations on critical
// paths, rules that cannot be checked and operands covered by Read/Edit
// deny rules ask in every mode; substitutions, constructs the analysis
// does not model, non-literal redirect targets and writes to protected
// paths ask outside bypass.
func (e *Engine) shellSafety(c *call, bypass bool) (Decision, bool) {
	a := c.shell
	if a.err != nil {
		why := "it cannot be fully parsed"
		if errors.Is(a.err, shellparse.ErrTooLong) {
			why = fmt.Sprintf("it is longer than %d characters", shellparse.MaxLen)
		}
		return ask(fmt.Sprintf("not understood: the command needs review because %s: %v", why, a.err), "safety", ""), true
	}
	for _, sc := range a.allCmds() {
		bases, basesOK := c.cmdBases(sc)
		if why, bad := c.criticalDestroy(sc, bases, basesOK); bad {
			return ask("destructive: "+why+" (a critical path: the root, a top-level directory, the home directory or a working directory)", "safety", ""), true
		}
	}
	if a.model.Unresolved {
		for i := range c.rules {
			r := &c.rules[i]
			if r.behavior != tool.Allow && !r.Bare() && slices.ContainsFunc(c.names, r.matchesName) {
				return ask(fmt.Sprintf("not understood: the command runs something the analysis cannot identify (%s), so the %s rule %s cannot be checked",
					unresolvedWhy(a.model), r.behavior, r.raw), r.source, r.raw), true
			}
		}
	}
	if d, ok := e.operandDenied(c); ok {
		return d, true
	}
	if bypass {
		return Decision{}, false
	}
	switch {
	case a.script.HasCommandSubst:
		return ask("not understood: the command uses command substitution ($(…) or `…`), which runs commands that rules cannot see", "safety", ""), true
	case a.script.HasProcessSubst:
		return ask("not understood: the command uses process substitution (<(…) or >(…))", "safety", ""), true
	case a.script.Complex:
		return ask("not understood: the command uses shell constructs that are not analysed (functions, eval, source, exec, arithmetic on variables, …)", "safety", ""), true
	case a.script.ContinuedComment:
		return ask("not understood: a comment ends in a backslash, where bash and the analysis may disagree on which commands run", "safety", ""), true
	}
	for i, r := range a.script.Redirects {
		if !r.Write || r.IsDevNull() {
			continue
		}
		bases, basesOK := c.redirBases(i)
		targets, ok := c.shellPath(shellparse.Path{Value: r.Target, Dynamic: r.Dynamic}, bases, basesOK)
		if !ok {
			return ask(fmt.Sprintf("not understood: the redirect %s%s target %q is not a literal path in a known directory", r.Fd, r.Op, r.Target), "safety", ""), true
		}
		for _, t := range targets {
			if t.any(c.protected) {
				return ask(fmt.Sprintf("writes: the redirect writes to a protected path: %s", t.lexical), "safety", ""), true
			}
		}
	}
	for _, sc := range a.allCmds() {
		bases, basesOK := c.cmdBases(sc)
		if why, bad := c.transferProtected(sc, bases, basesOK); bad {
			return ask("writes: "+why, "safety", ""), true
		}
		for _, p := range sc.Writes {
			if p.Redirect {
				continue
			}
			targets, _ := c.shellPath(p, bases, basesOK)
			for _, t := range targets {
				if t.any(c.protected) {
					return ask(fmt.Sprintf("writes: %s changes a protected path: %s", sc.Name(), t.lexical), "safety", ""), true
				}
			}
		}
	}
	return Decision{}, false
}

func unresolvedWhy(m *shellparse.Analysis) string {
	if m.Script != nil && m.Script.ContinuedComment {
		return "a comment ends in a backslash"
	}
	if m.Script != nil && m.Script.EvalsCode {
		return "bash evaluates text as code while expanding it: a subscript, ${x@P}, indirection or arithmetic on variables"
	}
	for i := range m.Cmds {
		if m.Cmds[i].Unresolved {
			return strings.TrimSpace(m.Cmds[i].Command.Text) + ": " + m.Cmds[i].Why()
		}
	}
	return "unknown"
}

// criticalDestroy reports a destructive operation (rm, find -delete, mv,
// rsync --delete, dd of=, shred …) whose target is not known before the
// shell runs or is a critical path.
func (c *call) criticalDestroy(sc *shellparse.Cmd, bases []string, basesOK bool) (string, bool) {
	if sc.Class&shellparse.Destructive == 0 {
		return "", false
	}
	for _, p := range sc.Writes {
		if !p.Destructive {
			continue
		}
		v := p.Value
		if p.Dynamic {
			tilde := v == "~" || strings.HasPrefix(v, "~/")
			switch {
			case strings.ContainsAny(v, "$`") || !tilde && !p.Glob && !strings.HasPrefix(v, "~"):
				return fmt.Sprintf("%s operand %s is only known when the shell runs", sc.Name(), v), true
			case strings.HasPrefix(v, "~") && !tilde:
				return fmt.Sprintf("%s operand %s is a home directory", sc.Name(), v), true
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
		}
		if !basesOK && !filepath.IsAbs(v) {
			return fmt.Sprintf("%s operand %s is relative to an unknown directory (or ~ after HOME may have changed)", sc.Name(), p.Value), true
		}
		bs := bases
		if filepath.IsAbs(v) || strings.HasPrefix(v, "~") {
			bs = []string{c.workDir}
		}
		for _, b := range bs {
			f, err := newPathForms(v, b, c.home, &c.res)
			if err != nil {
				return fmt.Sprintf("%s operand %s: %v", sc.Name(), p.Value, err), true
			}
			if f.any(func(p string) bool { return criticalRmTarget(p, c.home, c.boundary) }) {
				return fmt.Sprintf("%s %s", sc.Name(), p.Value), true
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
	for i, rd := range c.shell.script.Redirects {
		read := rd.Op == "<" || rd.Op == "<>"
		write := rd.Write && !rd.IsDevNull()
		if !read && !write || r.Tool == "Edit" && !write {
			continue
		}
		bases, basesOK := c.redirBases(i)
		if r.Bare() {
			if r.Tool == "Edit" {
				return fmt.Sprintf(": the command writes %s", rd.Target), true
			}
			continue
		}
		targets, ok := c.shellPath(shellparse.Path{Value: rd.Target, Dynamic: rd.Dynamic}, bases, basesOK)
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
	var used []*rule
	use := func(r *rule) {
		if !slices.Contains(used, r) {
			used = append(used, r)
		}
	}
	for _, sc := range a.topCmds() {
		bases, basesOK := c.cmdBases(sc)
		if readOnly {
			why, ok := e.readOnlyOK(c, sc, bases, basesOK)
			if !ok {
				// An allow rule may still approve it.
				if r, ok, _ := e.approveCmd(c, sc, bases, basesOK); ok && r != nil {
					use(r)
					continue
				}
				return ask(fmt.Sprintf("%q needs permission: %s", strings.TrimSpace(sc.Command.Text), why), "default", "")
			}
			continue
		}
		r, ok, why := e.approveCmd(c, sc, bases, basesOK)
		if ok {
			if r != nil {
				use(r)
			}
			continue
		}
		text := strings.TrimSpace(sc.Command.Text)
		hint := ""
		if r, ok := e.suggestCmd(c, sc, bases, basesOK); ok {
			hint = "; the allow rule " + r + " would approve it"
		}
		if why != "" {
			return ask(fmt.Sprintf("%q needs permission: %s%s", text, why, hint), "default", "")
		}
		reason := fmt.Sprintf("%q needs permission", text)
		switch why, blind := wildcardBlind(sc); {
		case len(sc.Command.Assigns) > 0:
			reason += " (allow rules do not match past leading variable assignments)"
		case blind:
			reason += " (" + why + ")"
		}
		if w := sc.Why(); w != "" {
			reason += ": " + sc.Class.String() + ": " + w
		}
		return ask(reason+hint, "default", "")
	}
	for i, rd := range a.script.Redirects {
		read := rd.Op == "<" || rd.Op == "<>"
		write := rd.Write && !rd.IsDevNull()
		if !read && !write {
			continue
		}
		bases, basesOK := c.redirBases(i)
		targets, ok := c.shellPath(shellparse.Path{Value: rd.Target, Dynamic: rd.Dynamic}, bases, basesOK)
		if !ok {
			return ask(fmt.Sprintf("not understood: redirect target %q is not a literal path", rd.Target), "default", "")
		}
		for _, t := range targets {
			r, ok := e.approveAccess(c, t, write)
			if !ok {
				verb := "reads"
				if write {
					verb = "writes"
				}
				return ask(fmt.Sprintf("%s: the command %s %s", verb, verb, t.lexical), "default", "")
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

// acceptEditsCommands are the file commands acceptEdits mode approves when
// every file they touch is inside the working directories.
var acceptEditsCommands = map[string]bool{"mkdir": true, "touch": true, "mv": true, "cp": true, "rmdir": true}

// approveCmd approves one simple command. For a read-only command that is
// not approved, why says what it reads outside.
func (e *Engine) approveCmd(c *call, sc *shellparse.Cmd, bases []string, basesOK bool) (_ *rule, ok bool, why string) {
	cmd := sc.Command
	if len(cmd.Args) == 0 {
		// Only redirections (checked on their own) or only assignments
		// (which can change what later commands do): the latter need
		// an exact rule.
		if len(cmd.Assigns) == 0 {
			return nil, true, ""
		}
	}
	withAssigns := strings.TrimSpace(canonAssigns(cmd.Assigns) + " " + canonWords(cmd.Words))
	stripped := canonWords(sc.Words)
	_, blind := wildcardBlind(sc)
	si, isScript := scriptOf(sc)
	near := "" // a rule that matched a script run it may not approve, and why
	// matched approves a command r matches, unless it runs a script the
	// rule may not approve (scripts.go).
	matched := func(r *rule) bool {
		if !isScript {
			return true
		}
		why, ok := e.scriptOK(c, sc.Words[si], bases, basesOK, r.wild)
		if !ok && near == "" {
			near = fmt.Sprintf("the allow rule %s matches, but %s", r.raw, why)
		}
		return ok
	}
	for i := range c.rules {
		r := &c.rules[i]
		if r.behavior != tool.Allow || !slices.ContainsFunc(c.names, r.matchesName) {
			continue
		}
		if r.Bare() {
			return r, true, ""
		}
		if !r.wild {
			cs := r.canon
			if len(cmd.Assigns) > 0 {
				if cs == withAssigns && matched(r) {
					return r, true, ""
				}
				continue
			}
			if (cs == stripped || cs == canonWords(cmd.Words)) && matched(r) {
				return r, true, ""
			}
			continue
		}
		// A wildcard never approves what it cannot see.
		if len(cmd.Assigns) > 0 || blind {
			continue
		}
		if globMatch(r.canon, stripped) && matched(r) {
			return r, true, ""
		}
	}
	if near != "" {
		return nil, false, near
	}
	// Past this point only the model approves: leading assignments must
	// all be inert (LANG=C sort f), see shellparse.InertAssigns.
	if len(sc.Words) == 0 || !shellparse.InertAssigns(cmd.Assigns) {
		return nil, false, ""
	}
	// A command that only reads, whatever its own redirections write:
	// the redirect targets are approved as file accesses (decideBash),
	// so `git diff > sub/x.patch` is an edit inside the project.
	if sc.Core == 0 {
		if why, ok := e.readOnlyOK(c, sc, bases, basesOK); !ok {
			return nil, false, why
		}
		if sc.Chdir != nil {
			// Changing directory stays inside the working directories.
			for _, b := range bases {
				if !slices.ContainsFunc(c.boundary, func(d string) bool { return within(b, d) }) {
					return nil, false, "reads outside the working directories: the directory " + b
				}
			}
			ts, tok := c.shellPath(shellparse.Path{Value: sc.Chdir.Target}, bases, basesOK)
			if !tok {
				return nil, false, "not understood: the directory " + sc.Chdir.Target + " is only known when the shell runs"
			}
			for _, t := range ts {
				if !t.both(c.inside) {
					return nil, false, "reads outside the working directories: the directory " + t.lexical
				}
			}
		}
		return nil, true, ""
	}
	if c.mode == tool.ModeAcceptEdits && acceptEditsCommands[sc.Name()] && !sc.Wrapped &&
		sc.Class&^(shellparse.Writes|shellparse.Destructive) == 0 && len(sc.Writes) > 0 {
		for _, p := range sc.Writes {
			if p.Dynamic && !p.Glob {
				return nil, false, ""
			}
			ts, ok := c.shellPath(p, bases, basesOK)
			if !ok {
				return nil, false, ""
			}
			for _, t := range ts {
				if !t.both(c.inside) || t.any(c.protected) {
					return nil, false, ""
				}
			}
		}
		why, ok := e.pathsReadable(c, sc, bases, basesOK)
		return nil, ok, why
	}
	return nil, false, ""
}

// matches matches a Bash rule's specifier against a command text.
func (r *rule) matches(text string) bool {
	if r.wild {
		return globMatch(r.canon, text)
	}
	return r.canon == text
}

// operandDenied asks when a file a command reads or writes — an operand,
// an option value, a glob's matches, a directory read recursively that
// holds the denied files — is covered by a scoped Read or Edit deny rule
// (`cat .env`, `grep -r x .`, `cat *.env` with Read(./.env) denied), or
// when such a rule is in force and a file is only known when the shell
// runs: an operand only known at run time, files a command opens that the
// analysis cannot name (a list file's entries, an awk program's ARGV), a
// recursion that follows symbolic links. The literal words of a command
// the model does not know are checked too: each as the file it may name,
// and a word naming an existing directory as a recursive read of it
// (tar, zip), by walking it for denied files. It asks rather than denies
// because an operand is not always a file the command opens (`echo
// .env`).
func (e *Engine) operandDenied(c *call) (Decision, bool) {
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
	type key struct {
		p     shellparse.Path
		where string
	}
	seen := make(map[key]bool)
	cannot := func(sc *shellparse.Cmd, what string) (Decision, bool) {
		r := rules[0]
		return ask(fmt.Sprintf("reads: %s %s, so the deny rule %s cannot be checked", sc.Name(), what, r.raw), r.source, r.raw), true
	}
	check := func(sc *shellparse.Cmd, p shellparse.Path, bases []string, basesOK, word bool) (Decision, bool) {
		k := key{p: p}
		switch len(bases) {
		case 0:
		case 1:
			k.where = bases[0]
		default:
			k.where = strings.Join(bases, "\x00")
		}
		if seen[k] {
			return Decision{}, false
		}
		seen[k] = true
		switch {
		case p.Unknown:
			return cannot(sc, "opens files the analysis cannot name ("+p.Value+")")
		case p.Follow:
			return cannot(sc, "follows the symbolic links below "+p.Value)
		}
		var targets []pathForms
		var exists []bool
		ok := true
		if word {
			for _, b := range bases {
				a, err := absPath(p.Value, b, c.home)
				if err != nil {
					continue
				}
				if _, err := os.Lstat(a); err != nil {
					// Nothing there to open (a word that is no file,
					// or a file still to be made): as written.
					targets = append(targets, pathForms{lexical: a, resolved: a})
					exists = append(exists, false)
					continue
				}
				if f, err := newPathForms(p.Value, b, c.home, &c.res); err == nil {
					targets = append(targets, f)
					exists = append(exists, true)
				}
			}
		} else {
			targets, ok = c.shellPath(p, bases, basesOK)
		}
		if !ok {
			if p.Redirect || len(sc.Reads)+len(sc.Writes) > 0 {
				return cannot(sc, "operand "+p.Value+" is only known when the shell runs")
			}
			return Decision{}, false
		}
		for i, t := range targets {
			var overlap *rule
			for _, r := range rules {
				if e.pathMatches(c, r, t, true) {
					return ask(fmt.Sprintf("reads: %s operand %s reaches files covered by the deny rule %s", sc.Name(), p.Value, r.raw), r.source, r.raw), true
				}
				if p.Recursive && !word && overlap == nil && e.pathOverlaps(c, r, t) {
					overlap = r
				}
			}
			if overlap != nil {
				// A recursive read of a directory the rule may reach
				// into: in a line that only reads, decided by what the
				// directory holds now; otherwise (the line may put a
				// denied file there first) by the rule's reach.
				if !c.readOnlyLine() || !isDir(t.resolved) {
					if c.readOnlyLine() {
						continue // a file or nothing: matched above
					}
					r := overlap
					return ask(fmt.Sprintf("reads: %s operand %s reaches files covered by the deny rule %s", sc.Name(), p.Value, r.raw), r.source, r.raw), true
				}
				if r, where := e.treeDenied(c, t, rules); r != nil {
					return ask(fmt.Sprintf("reads: %s operand %s is a directory that holds %s, covered by the deny rule %s", sc.Name(), p.Value, where, r.raw), r.source, r.raw), true
				}
			}
			if word && exists[i] {
				if isDir(t.resolved) {
					if r, where := e.treeDenied(c, t, rules); r != nil {
						return ask(fmt.Sprintf("reads: %s operand %s is a directory that holds %s, covered by the deny rule %s (a command the analysis does not know may read it whole)", sc.Name(), p.Value, where, r.raw), r.source, r.raw), true
					}
				} else if r, entry := e.listDenied(c, t, bases, rules); r != nil {
					return ask(fmt.Sprintf("reads: %s operand %s may list %s, covered by the deny rule %s (a command the analysis does not know may read the files a list names)", sc.Name(), p.Value, entry, r.raw), r.source, r.raw), true
				}
			}
		}
		return Decision{}, false
	}
	for _, sc := range c.shell.allCmds() {
		bases, basesOK := c.cmdBases(sc)
		for _, ps := range [][]shellparse.Path{sc.Reads, sc.Writes} {
			for _, p := range ps {
				if d, ok := check(sc, p, bases, basesOK, false); ok {
					return d, true
				}
			}
		}
		if len(sc.Inner) < 2 || sc.Class&(shellparse.Opaque|shellparse.Runs) == 0 {
			// A command the model knows: its Reads and Writes are all
			// the files it opens.
			continue
		}
		for _, w := range sc.Inner[1:] {
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
			if !basesOK && !filepath.IsAbs(v) {
				return cannot(sc, "operand "+v+" is relative to a directory only known when the shell runs")
			}
			// An unknown command may open its words as files, and read a
			// directory whole (tar, zip, cp -r): each word is checked as
			// the file it names, and, when that is a directory, for the
			// denied files it holds.
			if d, ok := check(sc, shellparse.Path{Value: v}, bases, basesOK, true); ok {
				return d, true
			}
		}
	}
	return Decision{}, false
}

// pathsReadable checks the files a command reads (operands, option values,
// glob matches; not redirects, which are checked on their own): each must
// be known and inside the working directories (both as written and with
// symlinks resolved) or covered by a Read allow rule, like a Read call.
func (e *Engine) pathsReadable(c *call, sc *shellparse.Cmd, bases []string, basesOK bool) (string, bool) {
	for _, p := range sc.Reads {
		if p.Redirect {
			continue
		}
		if p.Unknown {
			return "not understood: it opens files the analysis cannot name (" + p.Value + ")", false
		}
		targets, ok := c.shellPath(p, bases, basesOK)
		if !ok {
			return "not understood: it reads " + p.Value + ", which is only known when the shell runs (or in a directory that is)", false
		}
		for _, t := range targets {
			if p.Follow {
				if why, ok := c.followStaysInside(t); !ok {
					return why, false
				}
			}
			if _, ok := e.approveAccess(c, t, false); !ok {
				where := t.lexical
				if t.resolved != t.lexical {
					where += " (resolves to " + t.resolved + ")"
				}
				return "reads outside the working directories: " + where, false
			}
		}
	}
	return "", true
}

// readOnlyOK checks a command the model classifies read-only before it is
// approved as such: its files are readable (see pathsReadable), and a git
// command does not run in a repository whose own configuration names
// programs git would run (core.fsmonitor, a diff textconv driver, a
// filter, an include, …) — a repository found inside the project is not
// trusted to configure the commands that are approved without a prompt.
func (e *Engine) readOnlyOK(c *call, sc *shellparse.Cmd, bases []string, basesOK bool) (string, bool) {
	if why, ok := e.pathsReadable(c, sc, bases, basesOK); !ok {
		return why, false
	}
	if sc.Name() != "git" {
		return "", true
	}
	dirs := slices.Clone(bases)
	for _, p := range sc.Reads {
		if p.Recursive || p.Dynamic {
			continue
		}
		for _, b := range bases {
			if a, err := absPath(p.Value, b, c.home); err == nil {
				dirs = append(dirs, a)
			}
		}
	}
	for _, d := range dirs {
		if key, err := shellparse.GitRepoRisk(d); key != "" || err != nil {
			why := fmt.Sprintf("the repository at %s configures %s, which makes git run a program", d, key)
			if err != nil {
				why = fmt.Sprintf("the repository configuration at %s cannot be read: %v", d, err)
			}
			return why, false
		}
	}
	return "", true
}
