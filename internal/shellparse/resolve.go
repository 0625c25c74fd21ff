package shellparse

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Where relative paths resolve. The shell's current directory and the
// variables its path expansion uses (HOME for ~, CDPATH for cd, PWD and
// OLDPWD for cd's logical paths and cd -) change as a line runs: `cd sub
// && cat ../a` reads ./a, `cd sub; cat ../a` may read ../a (the cd may
// fail), `HOME=/etc; cat ~/x` reads /etc/x. The flow below follows the
// line's control structure (lists, && and ||, pipelines and subshells,
// groups, if, loops, case, substitutions, payloads) and gives every
// command the set of directories it may run in, as chains of literal cd
// targets from the directory the line starts in. Anything that moves path
// resolution in a way the flow does not follow — a cd to a target only
// known at run time, popd, an assignment to HOME, CDPATH, PWD, OLDPWD or
// DIRSTACK (directly, through declare/export/read/printf -v/mapfile/
// unset/getopts/for/let …), set -P, shopt, source, trap, a function
// definition, a command whose name is only known at run time, chroot —
// makes the later relative paths and ~ unknown (Where.Unknown): the
// permission layer asks for what it cannot place.

// Where is where a command runs.
type Where struct {
	// Dirs are the directories the command may run in, each a chain of
	// directory changes applied in order to the directory the line starts
	// in; a chain with no steps is that directory itself.
	Dirs [][]Chdir
	// Unknown: the directory, or what ~ means, is not known before the
	// shell runs: relative and ~ paths of the command cannot be placed.
	Unknown bool
}

// Bounds of the flow: more possible directories, or longer chains, are
// Unknown.
const (
	maxDirs  = 8
	maxSteps = 8
)

type dirState struct {
	chains  [][]Chdir
	unknown bool
}

var (
	startState   = dirState{chains: [][]Chdir{nil}}
	unknownState = dirState{unknown: true}
)

func chainKey(ch []Chdir) string {
	var b strings.Builder
	for _, s := range ch {
		b.WriteString(s.Target)
		if s.Physical {
			b.WriteString("\x00P")
		}
		b.WriteByte(0)
	}
	return b.String()
}

func (d dirState) has(ch []Chdir) bool {
	k := chainKey(ch)
	for _, c := range d.chains {
		if chainKey(c) == k {
			return true
		}
	}
	return false
}

func (d dirState) union(o dirState) dirState {
	if d.unknown || o.unknown {
		return unknownState
	}
	out := dirState{chains: d.chains}
	for _, c := range o.chains {
		if !out.has(c) {
			out.chains = append(out.chains[:len(out.chains):len(out.chains)], c)
		}
	}
	if len(out.chains) > maxDirs {
		return unknownState
	}
	return out
}

func (d dirState) then(step Chdir) dirState {
	if d.unknown || !step.Literal {
		return unknownState
	}
	out := dirState{chains: make([][]Chdir, 0, len(d.chains))}
	for _, c := range d.chains {
		if len(c) >= maxSteps {
			return unknownState
		}
		out.chains = append(out.chains, append(c[:len(c):len(c)], step))
	}
	return out
}

// subset reports whether every chain of d is in o.
func (d dirState) subset(o dirState) bool {
	if o.unknown {
		return true
	}
	if d.unknown {
		return false
	}
	for _, c := range d.chains {
		if !o.has(c) {
			return false
		}
	}
	return true
}

func (d dirState) where() Where {
	if d.unknown {
		return Where{Unknown: true}
	}
	return Where{Dirs: d.chains}
}

// scriptInfo is an analysed script: its parse and, for each of its
// Commands, the index of its Cmd in the Analysis.
type scriptInfo struct {
	s   *Script
	idx []int
}

// pathVars are the variables that move path resolution.
var pathVars = lazySet("HOME", "CDPATH", "PWD", "OLDPWD", "DIRSTACK")

// varName returns the variable a declaration or read operand names
// (NAME, NAME=v, NAME+=v, NAME[i]=v).
func varName(s string) string {
	if i := strings.IndexAny(s, "=+["); i >= 0 {
		return s[:i]
	}
	return s
}

// bashBuiltins are bash's builtin commands: only these (and functions)
// change the shell's own state; every other program runs in a child.
var bashBuiltins = lazySet(".", ":", "[", "alias", "bg", "bind", "break", "builtin", "caller", "cd", "command", "compgen",
	"complete", "compopt", "continue", "declare", "dirs", "disown", "echo", "enable", "eval", "exec", "exit", "export",
	"false", "fc", "fg", "getopts", "hash", "help", "history", "jobs", "kill", "let", "local", "logout", "mapfile", "popd",
	"printf", "pushd", "pwd", "read", "readarray", "readonly", "return", "set", "shift", "shopt", "source", "suspend",
	"test", "times", "trap", "true", "type", "typeset", "ulimit", "umask", "unalias", "unset", "wait", "[[", "((")

// neutralBuiltins never move path resolution.
var neutralBuiltins = lazySet(":", "[", "bg", "break", "caller", "continue", "dirs", "disown", "echo", "exec", "exit", "false",
	"fg", "hash", "help", "jobs", "kill", "logout", "pwd", "return", "shift", "suspend", "test", "times", "true", "type",
	"ulimit", "umask", "wait", "[[")

// shellBuiltin returns the builtin the shell itself runs for a command
// (past `builtin` and `command`, which run builtins in the shell), "" for
// a program run in a child, and dynamic when the name is only known at
// run time.
func shellBuiltin(c *Command) (name string, dynamic bool) {
	ws := c.Words
	for len(ws) > 0 {
		w := ws[0]
		if w.Dynamic {
			return "", true
		}
		switch w.Value {
		case "builtin":
			ws = ws[1:]
			continue
		case "command":
			ws = ws[1:]
			for len(ws) > 0 && !ws[0].Dynamic && strings.HasPrefix(ws[0].Value, "-") {
				if ws[0].Value == "-v" || ws[0].Value == "-V" {
					return "", false // a lookup
				}
				ws = ws[1:]
			}
			continue
		}
		if bashBuiltins()[w.Value] {
			return w.Value, false
		}
		return "", false
	}
	return "", false
}

// flow computes Where for every command of an analysed line.
type flow struct {
	an *analyzer
}

func (an *analyzer) flowTop(top *scriptInfo) {
	an.a.RedirectWhere = make([]Where, len(top.s.Redirects))
	for i := range an.a.RedirectWhere {
		an.a.RedirectWhere[i] = Where{Unknown: true}
	}
	f := flow{an: an}
	if top.s.file != nil {
		f.stmts(top, top.s.file.Stmts, startState, true)
	}
}

func (f flow) stmts(info *scriptInfo, sts []*syntax.Stmt, in dirState, top bool) dirState {
	for _, st := range sts {
		s, fl := f.stmt(info, st, in, top)
		in = s.union(fl)
	}
	return in
}

// subst gives the commands of substitutions inside n the state in; they
// run in subshells and change nothing after them.
func (f flow) subst(info *scriptInfo, n syntax.Node, in dirState, top bool) {
	if n == nil || !info.s.HasCommandSubst && !info.s.HasProcessSubst {
		return
	}
	syntax.Walk(n, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CmdSubst:
			f.stmts(info, n.Stmts, in, top)
			return false
		case *syntax.ProcSubst:
			f.stmts(info, n.Stmts, in, top)
			return false
		}
		return true
	})
}

// stmt returns the states after st succeeds and after it fails.
func (f flow) stmt(info *scriptInfo, st *syntax.Stmt, in dirState, top bool) (succ, fail dirState) {
	for _, r := range st.Redirs {
		if i, ok := info.s.redirIdx[r]; ok && top && i < len(f.an.a.RedirectWhere) {
			f.an.a.RedirectWhere[i] = in.where()
		}
		if r.Word != nil {
			f.subst(info, r.Word, in, top)
		}
		if r.Hdoc != nil {
			f.subst(info, r.Hdoc, in, top)
		}
	}
	if st.Background || st.Coprocess {
		f.node(info, st, in, top)
		return in, in
	}
	succ, fail = f.node(info, st, in, top)
	if st.Negated {
		succ, fail = fail, succ
	}
	return succ, fail
}

func (f flow) node(info *scriptInfo, st *syntax.Stmt, in dirState, top bool) (succ, fail dirState) {
	switch c := st.Cmd.(type) {
	case nil:
		return in, in
	case *syntax.CallExpr, *syntax.DeclClause, *syntax.TestClause, *syntax.ArithmCmd, *syntax.LetClause:
		f.subst(info, c, in, top)
		k, ok := info.s.stmtIdx[st]
		if !ok || k >= len(info.idx) {
			return unknownState, unknownState
		}
		succ, fail := f.cmd(info.idx[k], in)
		if f.an.a.Cmds[info.idx[k]].Command.Dynamic && assignsPathVar(st) {
			return unknownState, unknownState // : ${CDPATH:=/}, $((HOME=1))
		}
		return succ, fail
	case *syntax.BinaryCmd:
		switch c.Op {
		case syntax.AndStmt:
			s1, f1 := f.stmt(info, c.X, in, top)
			s2, f2 := f.stmt(info, c.Y, s1, top)
			return s2, f1.union(f2)
		case syntax.OrStmt:
			s1, f1 := f.stmt(info, c.X, in, top)
			s2, f2 := f.stmt(info, c.Y, f1, top)
			return s1.union(s2), f2
		default: // pipelines: every part runs in a subshell
			f.stmt(info, c.X, in, top)
			f.stmt(info, c.Y, in, top)
			return in, in
		}
	case *syntax.Subshell:
		f.stmts(info, c.Stmts, in, top)
		return in, in
	case *syntax.Block:
		o := f.stmts(info, c.Stmts, in, top)
		return o, o
	case *syntax.IfClause:
		o := f.ifClause(info, c, in, top)
		return o, o
	case *syntax.WhileClause:
		o := f.loop(in, func(x dirState) dirState {
			cond := f.stmts(info, c.Cond, x, top)
			return cond.union(f.stmts(info, c.Do, cond, top))
		})
		return o, o
	case *syntax.ForClause:
		wi, ok := c.Loop.(*syntax.WordIter)
		if !ok {
			return unknownState, unknownState // for (( … )): arithmetic
		}
		f.subst(info, wi, in, top)
		if pathVars()[wi.Name.Value] {
			in = unknownState
		}
		o := f.loop(in, func(x dirState) dirState { return f.stmts(info, c.Do, x, top) })
		return o, o
	case *syntax.CaseClause:
		f.subst(info, c.Word, in, top)
		out, cur := in, in
		for _, it := range c.Items {
			for _, p := range it.Patterns {
				f.subst(info, p, in, top)
			}
			// A fall-through body starts where the previous one ended.
			o := f.stmts(info, it.Stmts, cur, top)
			out = out.union(o)
			cur = cur.union(o)
		}
		return out, out
	case *syntax.TimeClause:
		if c.Stmt == nil {
			return in, in
		}
		return f.stmt(info, c.Stmt, in, top)
	}
	// Function definitions (a later command may be the function),
	// coprocesses, test declarations: not followed.
	return unknownState, unknownState
}

func (f flow) ifClause(info *scriptInfo, c *syntax.IfClause, in dirState, top bool) dirState {
	if len(c.Cond) == 0 { // else
		return f.stmts(info, c.Then, in, top)
	}
	cond := f.stmts(info, c.Cond, in, top)
	then := f.stmts(info, c.Then, cond, top)
	if c.Else == nil {
		return then.union(cond)
	}
	return then.union(f.ifClause(info, c.Else, cond, top))
}

// loop runs body to a fixed point; a loop whose states keep growing (cd x
// in a loop) is unknown, and its commands are given that.
func (f flow) loop(in dirState, body func(dirState) dirState) dirState {
	x := in
	for range 4 {
		nx := x.union(body(x))
		if nx.subset(x) {
			return x
		}
		x = nx
	}
	body(unknownState)
	return unknownState
}

// cmd gives command ci (and its payloads) the state in and returns the
// shell's states after it.
func (f flow) cmd(ci int, in dirState) (succ, fail dirState) {
	an := f.an
	c := &an.a.Cmds[ci]
	own := in
	for _, as := range c.Command.Assigns {
		if pathVars()[as.Name] {
			own = unknownState
		}
	}
	own = runnerDir(c, own)
	c.Where = own.where()
	name, dynamic := shellBuiltin(c.Command)
	// Payloads: a script run by this command (sh -c, eval, trap) and
	// commands given as words (find -exec, xargs).
	out := in
	for _, info := range an.payloadScripts[ci] {
		childIn := own
		if name == "trap" {
			childIn = unknownState // runs later, wherever the shell is then
		}
		o := f.stmts(info, info.s.file.Stmts, childIn, false)
		if name == "eval" {
			out = o // eval runs in this shell
		}
	}
	for _, j := range an.wordPayloads[ci] {
		childIn := own
		if an.a.Cmds[j].runsElsewhere {
			childIn = unknownState
		}
		f.cmd(j, childIn)
	}
	c = &an.a.Cmds[ci]
	if dynamic {
		return unknownState, unknownState // $CMD may be cd, or source
	}
	if len(c.Command.Args) == 0 {
		// Only assignments (or redirections): they stay in the shell.
		return own, own
	}
	if name == "" {
		return in, in // a program in a child process
	}
	if own.unknown {
		return unknownState, unknownState // CDPATH=/x cd y, HOME=/x read …
	}
	var args []Word
	for k, w := range c.Command.Words {
		if !w.Dynamic && w.Value == name {
			args = c.Command.Words[k+1:] // past builtin/command
			break
		}
	}
	switch name {
	case "cd", "pushd":
		for _, w := range args {
			if !w.Dynamic && w.Value == "-n" && name == "pushd" {
				return in, in // pushd -n only changes the stack
			}
		}
		if c.Chdir == nil || !c.Chdir.Literal {
			return unknownState, in
		}
		return in.then(*c.Chdir), in
	case "popd":
		return unknownState, in
	case "eval":
		if len(an.payloadScripts[ci]) == 0 {
			return unknownState, unknownState
		}
		return out, out
	case "declare", "typeset", "local", "export", "readonly", "read", "mapfile", "readarray", "getopts", "unset", "printf":
		for _, w := range args {
			if w.Dynamic {
				return unknownState, unknownState
			}
			v := w.Value
			if strings.HasPrefix(v, "-") && name != "printf" && strings.ContainsAny(v, "nC") {
				return unknownState, unknownState // namerefs, mapfile -C
			}
			if pathVars()[varName(v)] {
				return unknownState, unknownState
			}
		}
		return in, in
	case "set":
		for _, w := range args {
			if w.Dynamic || w.Value == "physical" || len(w.Value) > 1 && (w.Value[0] == '-' || w.Value[0] == '+') && w.Value != "--" && strings.Contains(w.Value, "P") {
				return unknownState, unknownState
			}
		}
		return in, in
	case "((", "let":
		for _, w := range args {
			for v := range pathVars() {
				if strings.Contains(w.Value, v) {
					return unknownState, unknownState
				}
			}
		}
		return in, in
	}
	if neutralBuiltins()[name] {
		return in, in
	}
	// source, ., trap, shopt, enable, alias, complete, fc, …
	return unknownState, unknownState
}

// runnerDir applies the directory a runner moves its command to: env -C
// and sudo -D change it, chroot changes what every path means.
func runnerDir(c *Cmd, in dirState) dirState {
	prefix := c.Command.Words
	if n := len(c.Command.Words) - len(c.Inner); n >= 0 && n <= len(prefix) {
		prefix = prefix[:n]
	}
	cur := ""
	for i := 0; i < len(prefix); i++ {
		w := prefix[i]
		if w.Dynamic {
			continue
		}
		v := w.Value
		if isAssignWord(v) && cur != "" && pathVars()[varName(v)] {
			return unknownState // env HOME=/x bash -c 'cd ~'
		}
		if !strings.HasPrefix(v, "-") {
			if b := baseOf(v); runnerNames[b] || wrapperNames()[b] {
				cur = b
				if b == "chroot" {
					return unknownState
				}
			}
			continue
		}
		var dir *Word
		switch {
		case cur == "env" && (v == "-C" || v == "--chdir"), (cur == "sudo" || cur == "doas" || cur == "runuser") && (v == "-D" || v == "--chdir"):
			if i+1 < len(prefix) {
				dir = &prefix[i+1]
				i++
			}
		case cur == "env" && strings.HasPrefix(v, "-C") && len(v) > 2:
			dir = &Word{Text: v[2:], Value: v[2:]}
		case (cur == "env" || cur == "sudo" || cur == "runuser") && strings.HasPrefix(v, "--chdir="):
			d := strings.TrimPrefix(v, "--chdir=")
			dir = &Word{Text: d, Value: d}
		case (cur == "sudo" || cur == "runuser") && (v == "-R" || strings.HasPrefix(v, "--chroot")):
			return unknownState
		}
		if dir != nil {
			in = in.then(chdirOf(*dir))
		}
	}
	return in
}

// chdirOf is a directory change to the word w (literal, or a plain ~
// path).
func chdirOf(w Word) Chdir {
	if !w.Dynamic {
		return Chdir{Target: w.Value, Literal: w.Value != "" && w.Value != "-", Physical: true}
	}
	if !w.Glob && !w.Split && (w.Text == "~" || strings.HasPrefix(w.Text, "~/")) && !strings.ContainsAny(w.Text, "$`\"'\\") {
		return Chdir{Target: w.Text, Literal: true, Physical: true}
	}
	return Chdir{Target: w.Text}
}

// physicalCd reports cd -P (the last of -L and -P wins).
func physicalCd(args []Word) bool {
	p := false
	for _, w := range args {
		v := w.Value
		if w.Dynamic || v == "--" || !strings.HasPrefix(v, "-") || v == "-" {
			break
		}
		for _, r := range v[1:] {
			switch r {
			case 'P':
				p = true
			case 'L':
				p = false
			}
		}
	}
	return p
}

// assignsPathVar reports an expansion inside a statement that assigns a
// path variable: ${HOME:=x}, ${CDPATH=x}, or arithmetic naming one.
func assignsPathVar(st *syntax.Stmt) bool {
	found := false
	syntax.Walk(st, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.ParamExp:
			if n.Param != nil && pathVars()[n.Param.Value] && n.Exp != nil &&
				(n.Exp.Op == syntax.AssignUnset || n.Exp.Op == syntax.AssignUnsetOrNull) {
				found = true
			}
		case *syntax.ArithmExp, *syntax.ArithmCmd:
			syntax.Walk(n, func(m syntax.Node) bool {
				if l, ok := m.(*syntax.Lit); ok && pathVars()[l.Value] {
					found = true
				}
				return !found
			})
			return false
		case *syntax.CmdSubst, *syntax.ProcSubst:
			return false // a subshell's assignments stay there
		}
		return !found
	})
	return found
}
