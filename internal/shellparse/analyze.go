package shellparse

import (
	"fmt"
	"slices"
	"strings"
)

// Class is the set of risks of a command. The zero Class is read-only:
// the command and every option it was given are known to only read.
type Class uint8

const (
	// Writes: creates or changes files.
	Writes Class = 1 << iota
	// Runs: runs another command (a shell's -c script, eval, find -exec,
	// xargs, sudo, env …).
	Runs
	// Network: reaches another machine.
	Network
	// Destructive: removes or replaces data (rm, find -delete, mv,
	// rsync --delete, dd of=).
	Destructive
	// Opaque: not understood — an unknown command or option, or something
	// the parser cannot see exactly (expansions, globs that may become
	// options, eval-like constructs, a comment ending in a backslash).
	Opaque
)

// ReadOnly reports the zero Class.
func (c Class) ReadOnly() bool { return c == 0 }

// String names the classes in c ("read-only" for none), joined by "+".
func (c Class) String() string {
	if c == 0 {
		return "read-only"
	}
	var parts []string
	for _, x := range []struct {
		c Class
		s string
	}{{Writes, "writes"}, {Runs, "runs other commands"}, {Network, "network"}, {Destructive, "destructive"}, {Opaque, "not understood"}} {
		if c&x.c != 0 {
			parts = append(parts, x.s)
		}
	}
	return strings.Join(parts, "+")
}

// Reason is one finding of the analysis: the class it adds and why.
type Reason struct {
	Class Class
	Text  string
}

func (r Reason) String() string { return r.Class.String() + ": " + r.Text }

// Path is a file operand or option value a command reads or writes.
type Path struct {
	// Value is the path as the command gets it when literal; else the
	// word's source text (a glob, ~/x, $x).
	Value string
	// Dynamic: the value needs expansion by the shell (tilde, glob, $x).
	Dynamic bool
	// Glob: the word holds unquoted glob or brace characters.
	Glob bool
	// Recursive: a directory and everything below it.
	Recursive bool
	// Destructive: the file is removed or replaced.
	Destructive bool
	// Redirect: the path is a redirection target, not an operand.
	Redirect bool
	// Transfer: the file — a directory with everything below it — gets
	// another name: linked (ln, cp -l/-s, rsync --link-dest), moved (mv,
	// git mv) or copied (cp, rsync). What it is or holds (a protected
	// path, a denied file) is then reachable, or created, at the
	// destination (see links.go).
	Transfer bool
	// Unknown: the command opens files the analysis cannot name — the
	// entries of a list file (--files0-from, sha256sum -c), files an awk
	// or jq program opens itself, a script file's own accesses. Value
	// says what they are; no rule can be checked against them.
	Unknown bool
	// OptionGlob: a glob operand of a command some of whose options open
	// more files (a list file, a recursion): a match whose name starts
	// with "-" would be taken for such an option, and matches made by the
	// line itself are not seen when it is decided.
	OptionGlob bool
	// Follow: Value is a directory walked recursively following symbolic
	// links (grep -R, rg -L, find -L, cp -rL, du -L): whatever the links
	// below it point at is read (or, for a write, changed) too.
	Follow bool
}

// Cmd is the analysis of one simple command.
type Cmd struct {
	// Command is the command as parsed. For a payload given as words
	// (find -exec, xargs) it is synthesised from those words.
	Command *Command
	// Words are the command's words after the wrappers that only change
	// how a command runs (timeout, time, nice, nohup, stdbuf, command,
	// builtin, flagless xargs) are stripped. Allow rules match these.
	Words []Word
	// Inner are the words after commands that run another command (env,
	// sudo, watch, setsid, flock, ionice, xargs with options, chroot, …)
	// are stripped too. Deny and ask rules match these as well.
	Inner []Word
	// Canon is Inner with options that do not change what the command
	// is removed (git's global options: git -C dir push is git push), or
	// nil. Deny and ask rules match it too.
	Canon []Word
	// Wrapped: a runner was stripped to reach Inner.
	Wrapped bool
	// Unresolved: the command runs something the analysis could not
	// identify (a runner with an option it does not know, a payload that
	// is not literal), so rules cannot be matched against it.
	Unresolved bool
	// Parent is the index in [Analysis.Cmds] of the command whose payload
	// this command is (sh -c '…', eval, find -exec, xargs), or -1.
	Parent int
	// Depth is the payload nesting depth (0 at top level).
	Depth int
	// Class is what the command is; Reasons say why.
	Class   Class
	Reasons []Reason
	// Core is Class without the findings of the command's own write
	// redirections (> f): what the command itself does.
	Core Class
	// Escalated: an option or argument makes the command do more than
	// its name suggests (find -delete, sed -i, git -c, rg --pre). A
	// wildcard allow rule never approves such a command.
	Escalated bool
	// Reads and Writes are the files the command reads and writes:
	// operands, option values (-o F, --output=F, of=F) and its own
	// redirections.
	Reads, Writes []Path
	// Chdir is set for cd, pushd and popd: the target ("" for popd or
	// an unknown target, "~" for a bare cd) and whether it is literal.
	Chdir *Chdir
	// Where is the directory the command runs in (relative paths of
	// Reads, Writes and Chdir start there) and whether ~ is still the
	// home directory; see [Where].
	Where Where
	// runsElsewhere: a payload run in another directory than its
	// parent's (find -execdir).
	runsElsewhere bool
}

// Chdir is a change of directory.
type Chdir struct {
	Target  string
	Literal bool
	// Physical: cd -P, the directory is the target with symbolic links
	// resolved (a later "cd .." leaves the link's target).
	Physical bool
}

// Name returns the effective command name: the first of Inner, reduced to
// its base name.
func (c *Cmd) Name() string {
	if len(c.Inner) == 0 {
		return ""
	}
	n := c.Inner[0].Value
	if i := strings.LastIndexByte(n, '/'); i >= 0 && !c.Inner[0].Dynamic {
		n = n[i+1:]
	}
	return n
}

// Why returns the reasons joined for people.
func (c *Cmd) Why() string {
	var parts []string
	for _, r := range c.Reasons {
		parts = append(parts, r.Text)
	}
	return strings.Join(parts, "; ")
}

func (c *Cmd) add(cl Class, format string, args ...any) {
	c.Class |= cl
	c.Reasons = append(c.Reasons, Reason{Class: cl, Text: fmt.Sprintf(format, args...)})
}

// Analysis is the command-risk analysis of one command line: what every
// simple command in it is and which files it reads and writes.
type Analysis struct {
	// Source is the analysed text.
	Source string
	// Script is the parse; nil when Err is set.
	Script *Script
	// Err is the parse error (wrapping [ErrSyntax] or [ErrTooLong]); the
	// Class is then Opaque.
	Err error
	// Cmds are all simple commands, top level first in source order,
	// each followed by the commands of its payloads.
	Cmds []Cmd
	// Class is the union of every command's class and the line's own
	// findings (substitutions, background jobs, constructs beyond the
	// analysis); Reasons are the line's own findings.
	Class   Class
	Reasons []Reason
	// Unresolved: some part runs a command the analysis cannot name
	// (see [Cmd.Unresolved]) or bash may see commands the parser does
	// not (a comment ending in a backslash).
	Unresolved bool
	// RedirectWhere is where each of Script.Redirects opens its file
	// (same order).
	RedirectWhere []Where
}

// ReadOnly reports whether the whole line is read-only, and if not, the
// first reason.
func (a *Analysis) ReadOnly() (bool, string) {
	if a.Class == 0 && a.Err == nil {
		return true, ""
	}
	return false, a.FirstReason()
}

// ChangesDir reports whether running the line may leave the shell in
// another directory than it started in: some command in it is cd, pushd or
// popd (at any depth, in a subshell or a payload too — the analysis does not
// try to prove that a change stays inside a subshell), or the line was not
// understood. A caller that runs lines in one persistent shell state must
// run such a line on its own and track where it ends.
func (a *Analysis) ChangesDir() bool {
	if a.Err != nil {
		return true
	}
	for i := range a.Cmds {
		if a.Cmds[i].Chdir != nil {
			return true
		}
	}
	return false
}

// FirstReason is the first reason the line is not read-only, naming its
// class ("" for a read-only line).
func (a *Analysis) FirstReason() string {
	if a.Err != nil {
		return "not understood: " + a.Err.Error()
	}
	if len(a.Reasons) > 0 {
		return a.Reasons[0].String()
	}
	for i := range a.Cmds {
		c := &a.Cmds[i]
		if len(c.Reasons) > 0 {
			return fmt.Sprintf("%s: %s (%s)", c.Class, c.Why(), strings.TrimSpace(c.Command.Text))
		}
	}
	return ""
}

// MaxDepth bounds the recursion into payloads (sh -c '…' inside eval
// inside find -exec …); deeper payloads are Opaque and unresolved.
const MaxDepth = 4

// Analyze parses src and analyses every simple command in it. It never
// fails: a line that does not parse has Err set and is Opaque.
func Analyze(src string) *Analysis {
	loadTables()
	a := &Analysis{Source: src}
	s, err := Parse(src)
	if err != nil {
		a.Err = err
		a.Class = Opaque
		a.Unresolved = true
		a.Reasons = append(a.Reasons, Reason{Class: Opaque, Text: err.Error()})
		return a
	}
	a.Script = s
	an := &analyzer{a: a}
	top := an.script(s, -1, 0)
	an.flowTop(top)
	for i := range a.Cmds {
		a.Class |= a.Cmds[i].Class
		if a.Cmds[i].Unresolved {
			a.Unresolved = true
		}
	}
	return a
}

type analyzer struct {
	a *Analysis
	// payloadScripts are the scripts given to a command (sh -c, eval,
	// trap) by the command's index; wordPayloads the commands given as
	// words (find -exec).
	payloadScripts map[int][]*scriptInfo
	wordPayloads   map[int][]int
}

func (an *analyzer) line(cl Class, text string) {
	an.a.Class |= cl
	an.a.Reasons = append(an.a.Reasons, Reason{Class: cl, Text: text})
}

// script adds the commands of a parsed script with the given parent.
func (an *analyzer) script(s *Script, parent, depth int) *scriptInfo {
	info := &scriptInfo{s: s, idx: make([]int, len(s.Commands))}
	switch {
	case s.HasCommandSubst:
		an.line(Opaque, "command substitution: its output becomes words only known when the shell runs")
	case s.HasProcessSubst:
		an.line(Opaque, "process substitution")
	}
	if s.HasBackground {
		an.line(Opaque, "background job")
	}
	if s.Complex {
		an.line(Opaque, "construct beyond the analysis (function, eval-like builtin, arithmetic or test -v on variables, coproc, extended glob)")
	}
	if s.EvalsCode {
		// Bash evaluates subscripts, prompts and indirections at
		// expansion time: code the analysis does not name.
		an.a.Unresolved = true
	}
	if s.ContinuedComment {
		an.line(Opaque, "a comment ends in a backslash (bash and the parser disagree on where it ends)")
		an.a.Unresolved = true
	}
	// Redirections of compound commands: not part of any simple command.
	own := 0
	for i := range s.Commands {
		own += len(s.Commands[i].Redirects)
	}
	if own != len(s.Redirects) {
		for _, r := range s.Redirects {
			if !containsRedirect(s.Commands, r) && r.Write && !r.IsDevNull() {
				an.line(Writes, fmt.Sprintf("redirect %s to %s writes a file", r.Op, r.Target))
			}
		}
	}
	for i := range s.Commands {
		info.idx[i] = len(an.a.Cmds)
		an.command(&s.Commands[i], parent, depth)
	}
	return info
}

func containsRedirect(cmds []Command, r Redirect) bool {
	for i := range cmds {
		for _, cr := range cmds[i].Redirects {
			if cr == r {
				return true
			}
		}
	}
	return false
}

// payloadSource analyses a literal script given to a shell, eval or trap.
func (an *analyzer) payloadSource(src string, parent int) {
	p := &an.a.Cmds[parent]
	depth := p.Depth + 1
	if depth > MaxDepth {
		p.add(Opaque, "payload nested deeper than %d levels", MaxDepth)
		p.Unresolved = true
		return
	}
	s, err := Parse(src)
	if err != nil {
		p.add(Opaque, "its script does not parse: %v", err)
		p.Unresolved = true
		return
	}
	info := an.script(s, parent, depth)
	if an.payloadScripts == nil {
		an.payloadScripts = map[int][]*scriptInfo{}
	}
	an.payloadScripts[parent] = append(an.payloadScripts[parent], info)
}

// payloadWords analyses a command given as words (find -exec, xargs).
// extra marks a payload that gets more arguments at run time.
func (an *analyzer) payloadWords(ws []Word, extra bool, parent int) {
	p := &an.a.Cmds[parent]
	depth := p.Depth + 1
	if depth > MaxDepth {
		p.add(Opaque, "payload nested deeper than %d levels", MaxDepth)
		p.Unresolved = true
		return
	}
	c := &Command{Words: ws}
	for _, w := range ws {
		c.Args = append(c.Args, w.Value)
	}
	texts := make([]string, len(ws))
	for i, w := range ws {
		texts[i] = w.Text
	}
	c.Text = strings.Join(texts, " ")
	if extra {
		c.Words = append(c.Words, Word{Text: "{input}", Value: "{input}", Dynamic: true, Split: true})
		c.Args = append(c.Args, "{input}")
		c.Dynamic = true
	}
	if an.wordPayloads == nil {
		an.wordPayloads = map[int][]int{}
	}
	an.wordPayloads[parent] = append(an.wordPayloads[parent], len(an.a.Cmds))
	an.command(c, parent, depth)
}

// command analyses one simple command and appends it (and its payloads).
func (an *analyzer) command(c *Command, parent, depth int) {
	an.a.Cmds = append(an.a.Cmds, Cmd{Command: c, Parent: parent, Depth: depth, Where: Where{Unknown: true}})
	idx := len(an.a.Cmds) - 1
	e := &an.a.Cmds[idx]
	// The command's own write redirections are findings of their own:
	// Core is the class without them (the permission layer checks
	// redirect targets as file accesses).
	var redirWrites []string
	defer func() {
		e := &an.a.Cmds[idx]
		e.Core = e.Class
		for _, why := range redirWrites {
			e.add(Writes, "%s", why)
		}
	}()
	for _, as := range c.Assigns {
		if !safeAssign(as) { // envvars.go: the one home of this rule
			e.add(Opaque, "assignment to %s can change what commands run or load", as.Name)
		}
	}
	for _, r := range c.Redirects {
		switch {
		case r.Heredoc != "" || r.Op == "<<" || r.Op == "<<-" || r.Op == "<<<":
		case r.Write && !r.IsDevNull():
			e.Writes = append(e.Writes, Path{Value: r.Target, Dynamic: r.Dynamic, Redirect: true})
			redirWrites = append(redirWrites, fmt.Sprintf("redirect %s%s to %s writes a file", r.Fd, r.Op, r.Target))
			if r.Dynamic {
				e.add(Opaque, "redirect target %s is only known when the shell runs", r.Target)
			}
		case r.Op == "<" || r.Op == "<>":
			e.Reads = append(e.Reads, Path{Value: r.Target, Dynamic: r.Dynamic, Redirect: true})
			if r.Dynamic {
				e.add(Opaque, "redirect source %s is only known when the shell runs", r.Target)
			}
		case (r.Op == "<&" || r.Op == ">&") && r.Dynamic:
			e.add(Opaque, "redirect target %s is only known when the shell runs", r.Target)
		}
	}
	if len(c.Words) == 0 {
		return
	}
	words, wcl, wwhy := stripWrappers(c.Words)
	inner, wrapped, unresolved := stripRunners(words)
	prefix := c.Words[:len(c.Words)-len(inner)]
	xargs := viaXargs(prefix)
	if xargs && len(inner) > 0 && !unresolved {
		// xargs adds words read from its input: the command is never
		// seen whole.
		in := Word{Text: "{input}", Value: "{input}", Dynamic: true, Split: true}
		if len(words) == len(inner) {
			words = append(slices.Clip(words), in)
		}
		inner = append(slices.Clip(inner), in)
	}
	if rep := xargsReplace(prefix); xargs && rep != "" {
		inner = substituted(inner, rep)
	}
	if f := xargsArgFile(prefix); xargs && f != nil {
		e.Reads = append(e.Reads, pathOf(*f))
	}
	if !wrapped {
		prefix = words
	}
	if why, ok := shellRunner(prefix); ok && (wrapped || envSplit(words)) {
		unresolved = true
		e.add(Opaque, "%s", why)
	}
	e.Words, e.Inner, e.Wrapped, e.Unresolved = words, inner, wrapped, unresolved
	runnerAssigns(e, words[:len(words)-len(inner)])
	if wcl != 0 {
		e.add(wcl, "%s", wwhy)
	}
	if wrapped {
		e.add(Runs, "%s runs another command", words[0].Value)
		if baseOf(words[0].Value) == "xargs" {
			e.add(Opaque, "xargs runs its command with arguments read from its input")
		}
	}
	if unresolved {
		e.add(Opaque, "%s runs a command the analysis cannot identify", baseOf(words[0].Value))
	}
	an.classify(idx)
	if xargs && len(inner) > 0 {
		e := &an.a.Cmds[idx]
		if sp := commands[baseOf(inner[0].Value)]; sp == nil || !sp.globSafe || sp.globFiles || sp.check != nil {
			e.Escalated = true
			e.Reasons = append(e.Reasons, Reason{Class: Opaque, Text: "xargs may pass " + baseOf(inner[0].Value) + " any option"})
		}
	}
}

// viaXargs reports an xargs among the stripped wrapper and runner words.
func viaXargs(prefix []Word) bool {
	for _, w := range prefix {
		if !w.Dynamic && baseOf(w.Value) == "xargs" {
			return true
		}
	}
	return false
}

func baseOf(name string) string {
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		return name[i+1:]
	}
	return name
}

// classify analyses the effective command e.Inner.
func (an *analyzer) classify(idx int) {
	e := &an.a.Cmds[idx]
	ws := e.Inner
	if len(ws) == 0 {
		return
	}
	name := ws[0]
	if name.Dynamic {
		e.add(Opaque, "the command name %s is only known when the shell runs", name.Text)
		e.Unresolved = true
		return
	}
	if strings.Contains(name.Value, "/") {
		e.add(Opaque, "%s is a program given by path", name.Value)
		return
	}
	sp, ok := commands[name.Value]
	if !ok {
		e.add(Opaque, "%s is not a known command", name.Value)
		return
	}
	if sp.class != 0 {
		why := sp.why
		if why == "" {
			why = name.Value
		}
		e.add(sp.class, "%s", why)
	}
	args := ws[1:]
	if sp.check != nil {
		sp.check(an, idx, args)
		return
	}
	an.generic(e, sp, args)
}

// generic applies a cmdSpec's option scan and operand roles.
func (an *analyzer) generic(e *Cmd, sp *cmdSpec, args []Word) scanResult {
	name := e.Inner[0].Value
	r := sp.scanArgs(args)
	for _, u := range r.unknown {
		e.add(Opaque, "%s has no known option %s", name, u)
		e.Escalated = true
	}
	recursive := sp.recursive || strings.Contains(r.effects, "R")
	follow := (recursive || sp.walks || strings.Contains(r.effects, "T")) && strings.Contains(r.effects, "F") && !strings.Contains(r.effects, "N")
	for _, v := range r.values {
		an.effect(e, name, v.flag, v.eff, &v.val)
		if strings.Contains(v.eff, "P") {
			r.effects += "P"
		}
	}
	opWrites := false
	for _, f := range r.effects {
		switch f {
		case 'w':
			opWrites = true
		}
	}
	if r.effects != "" {
		an.effect(e, name, "", strings.Map(func(r rune) rune {
			if r == 'w' {
				return -1
			}
			return r
		}, r.effects), nil)
	}
	ops := r.operands
	for _, w := range ops {
		if ok, why := safeOperand(w, sp.globSafe); !ok {
			e.add(Opaque, "%s %s", name, why)
		}
	}
	role := sp.ops
	if role == opPattern {
		if strings.Contains(r.effects, "P") {
			role = opRead
		} else if len(ops) > 0 {
			ops = ops[1:]
			role = opRead
		}
	}
	if opWrites {
		e.add(Writes, "%s with an option that changes its files in place", name)
		e.Escalated = true
		role = opWrite
	}
	if recursive && len(ops) == 0 && (role == opRead) {
		e.Reads = append(e.Reads, Path{Value: ".", Recursive: true})
	}
	if follow {
		followPaths(e, role, ops)
	}
	nr, nw := len(e.Reads), len(e.Writes)
	an.operands(e, role, ops, recursive, hasTargetDir(r.values))
	if sp.globFiles {
		markOptionGlobs(e.Reads[nr:])
		markOptionGlobs(e.Writes[nw:])
	}
	r.operands = ops
	return r
}

// hasTargetDir reports a -t/--target-directory value (cp, mv, ln, install):
// every operand is then a source.
func hasTargetDir(vs []optValue) bool {
	for _, v := range vs {
		if v.flag == "--target-directory" || v.flag == "-t" || strings.HasPrefix(v.flag, "-") && strings.HasSuffix(v.flag, "t") && !strings.HasPrefix(v.flag, "--") {
			if strings.Contains(v.eff, "w") {
				return true
			}
		}
	}
	return false
}

// effect applies an option's effects; val is its value (nil for none).
func (an *analyzer) effect(e *Cmd, name, flag, eff string, val *Word) {
	show := flag
	if val != nil {
		show = flag + " " + val.Text
	}
	if strings.Contains(eff, "x") {
		e.add(Runs, "%s %s runs another program", name, show)
		e.Escalated = true
	}
	if strings.Contains(eff, "n") {
		e.add(Network, "%s %s reaches the network", name, show)
	}
	if strings.Contains(eff, "o") {
		e.add(Opaque, "%s %s cannot be analysed", name, show)
		e.Escalated = true
	}
	if val == nil {
		if strings.Contains(eff, "L") {
			e.Reads = append(e.Reads, unknownPath(name+" "+flag+": the files its operands list"))
		}
		if strings.Contains(eff, "d") {
			e.add(Destructive, "%s %s removes files", name, flag)
			e.Escalated = true
		}
		return
	}
	if strings.ContainsAny(eff, "acL") {
		an.fileValue(e, name, flag, eff, *val)
		return
	}
	p := pathOf(*val)
	switch {
	case strings.Contains(eff, "w"):
		p.Destructive = strings.Contains(eff, "d")
		e.Writes = append(e.Writes, p)
		e.add(Writes, "%s %s writes %s", name, flag, val.Text)
		if p.Destructive {
			e.Class |= Destructive
		}
		e.Escalated = true
		if val.Dynamic {
			e.add(Opaque, "%s %s: the file is only known when the shell runs", name, flag)
		}
	case strings.Contains(eff, "r"):
		e.Reads = append(e.Reads, p)
		if ok, why := safeOperand(*val, false); !ok {
			e.add(Opaque, "%s %s", name, why)
		}
	default:
		if val.Dynamic && (val.Split || strings.ContainsAny(val.Text, "$`")) {
			e.add(Opaque, "%s %s: the value is only known when the shell runs", name, flag)
		}
	}
}

func pathOf(w Word) Path {
	v := w.Value
	if w.Dynamic {
		v = w.Text
	}
	return Path{Value: v, Dynamic: w.Dynamic, Glob: w.Glob}
}

// safeOperand reports whether an operand is seen exactly: a literal, a
// tilde path, or a glob that cannot expand to an option (it starts with a
// literal character other than "-") or belongs to a command none of whose
// options has an effect. Parameter expansions, substitutions, ANSI-C
// quoting and brace expansions are not.
func safeOperand(w Word, globSafe bool) (bool, string) {
	if !w.Dynamic {
		return true, ""
	}
	t := w.Text
	if w.Split || strings.ContainsAny(t, "$`") {
		return false, "operand " + t + " is only known when the shell runs"
	}
	if strings.HasPrefix(t, "~") {
		rest := t[1:]
		if rest != "" && !strings.HasPrefix(rest, "/") {
			return false, "operand " + t + " names another user's home"
		}
		if !w.Glob {
			return true, ""
		}
	}
	if strings.Contains(t, "{") && hasBrace(t) {
		return false, "operand " + t + " uses brace expansion"
	}
	if !w.Glob {
		return false, "operand " + t + " is not a plain word"
	}
	if globSafe {
		return true, ""
	}
	c := t[0]
	if c == '-' || c == '*' || c == '?' || c == '[' || c == '"' || c == '\'' || c == '\\' {
		return false, "glob " + t + " may expand to an option"
	}
	return true, ""
}

func hasBrace(s string) bool {
	i := strings.IndexByte(s, '{')
	j := strings.LastIndexByte(s, '}')
	return i >= 0 && j > i && (strings.Contains(s[i:j], ",") || strings.Contains(s[i:j], ".."))
}

// operands records operands by role.
func (an *analyzer) operands(e *Cmd, role byte, ops []Word, recursive, targetDir bool) {
	name := e.Inner[0].Value
	add := func(list *[]Path, w Word, destructive bool) {
		p := pathOf(w)
		p.Recursive = recursive
		p.Destructive = destructive
		*list = append(*list, p)
	}
	switch role {
	case opRead:
		for _, w := range ops {
			add(&e.Reads, w, false)
		}
	case opWrite:
		for _, w := range ops {
			add(&e.Writes, w, false)
		}
	case opDestroy:
		for _, w := range ops {
			add(&e.Writes, w, true)
		}
		if len(ops) > 0 {
			e.add(Destructive, "%s removes %s", name, ops[0].Text)
		}
	case opCopy, opMove, opLink:
		srcs := ops
		if !targetDir && len(ops) > 0 {
			srcs = ops[:len(ops)-1]
			add(&e.Writes, ops[len(ops)-1], role == opMove)
		}
		transferSources(e, role, srcs, ops, targetDir, recursive)
		if role == opMove && len(ops) > 0 {
			e.add(Destructive, "%s moves %s away", name, ops[0].Text)
		}
	case opInOut:
		for i, w := range ops {
			if i == 0 {
				add(&e.Reads, w, false)
			} else {
				add(&e.Writes, w, false)
				e.add(Writes, "%s writes its output operand %s", name, w.Text)
				e.Escalated = true
			}
		}
	case opMode:
		if len(ops) > 0 {
			for _, w := range ops[1:] {
				add(&e.Writes, w, false)
			}
		}
	}
}

// ReadOnlySource analyses src and reports whether it is read-only, with
// the first reason when it is not.
func ReadOnlySource(src string) (bool, string) {
	return Analyze(src).ReadOnly()
}

// hasContinuedComment reports a line that holds a "#" and ends in a
// backslash. Bash ends a comment at the newline; the parser may join the
// next line into it (or the reverse), so such a line is not seen exactly.
// Lines with a "#" inside a word are reported too (fail closed).
func hasContinuedComment(src string) bool {
	for line := range strings.SplitSeq(src, "\n") {
		if !strings.Contains(line, "#") {
			continue
		}
		n := 0
		for n < len(line) && line[len(line)-1-n] == '\\' {
			n++
		}
		if n%2 == 1 {
			return true
		}
	}
	return false
}
