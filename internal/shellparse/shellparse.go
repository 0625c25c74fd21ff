// Package shellparse is Gantry's one analysis of shell command lines. The Bash
// tool uses it to classify a command as read-only ([ReadOnly]); the permission
// package uses it to match rules against every part of a compound command and
// to find redirect targets that write files.
//
// [Parse] reads a command line in the bash dialect (mvdan.cc/sh/v3/syntax) and
// flattens it into the simple commands it would run, in source order, from all
// parts of compound commands: lists (&& || ; & newlines), pipelines (| |&),
// subshells ( ), groups { }, if/while/until/for/case/select bodies, function
// bodies, and the insides of command and process substitutions. It never runs
// or expands anything: a word that is not fully literal is reported as such
// (Dynamic) with its source text, and the caller decides (fail closed).
//
// The analysis is conservative by design: anything it does not model sets
// [Script.Complex], input that does not parse or is longer than [MaxLen] is an
// error, and callers must treat an error as "cannot decide" (ask, not allow).
package shellparse

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// MaxLen is the longest command line, in bytes, that [Parse] analyses.
// Longer input is rejected with [ErrTooLong].
const MaxLen = 10_000

// ErrTooLong is returned (wrapped) by [Parse] for input over [MaxLen] bytes.
var ErrTooLong = errors.New("shellparse: command longer than the analysis limit")

// ErrSyntax is wrapped by the error [Parse] returns for input that is not a
// complete, valid bash command line.
var ErrSyntax = errors.New("shellparse: syntax error")

// Script is the analysis of one command line.
type Script struct {
	// Source is the analysed text.
	Source string
	// Commands are all simple commands of the line in source order, from
	// every part of compound commands and from inside substitutions. A
	// command's own substitutions follow it.
	Commands []Command
	// Redirects are all redirections of the line, including those attached
	// to compound commands (`{ a; b; } > f`) and to commands inside
	// substitutions, in source order.
	Redirects []Redirect
	// HasCommandSubst reports $(…) or `…` anywhere (inside double quotes,
	// parameter expansions, arithmetic, and here-documents whose delimiter
	// is unquoted included).
	HasCommandSubst bool
	// HasProcessSubst reports <(…) or >(…) anywhere.
	HasProcessSubst bool
	// HasBackground reports a command run in the background with &.
	HasBackground bool
	// Complex reports constructs the analysis does not model: function
	// definitions (which may shadow any command), coproc, extended globs, eval-like builtins
	// (eval, source, ., trap, alias, enable, exec), and expansions that bash
	// evaluates as code (arithmetic that refers to variables, array
	// subscripts, indirect ${!x}, ${x@P}), and assignments that do not
	// precede a command — loop variables, ${X:=v} — to a name that may be
	// exported or special to the shell (see shellVarOK).
	Complex bool
	// EvalsCode reports the part of Complex where bash evaluates text as
	// code when it expands a word: arithmetic or subscripts that refer to
	// variables (whose values may hold $(…)), ${x@P} and the other @
	// operators, indirection ${!x}, slices, [[ -v ]] and arithmetic
	// comparisons, let, for ((…)), enable (loads code).
	EvalsCode bool
	// ContinuedComment reports a comment that ends in a backslash: bash
	// and the parser may disagree on where it ends.
	ContinuedComment bool

	// The parse, for the flow of directories (resolve.go): the
	// statement behind each of Commands, and each redirection's index in
	// Redirects.
	file     *syntax.File
	stmtIdx  map[*syntax.Stmt]int
	redirIdx map[*syntax.Redirect]int
}

// Command is one simple command.
type Command struct {
	// Text is the source text of the command, including its leading
	// assignments and redirections but not a trailing ; or & and not the
	// body of a here-document.
	Text string
	// Assigns are the leading VAR=value assignments.
	Assigns []Assign
	// Args are the words of the command: for a fully literal word its value
	// with quotes and escapes removed, otherwise its source text. Args[0]
	// is the command name. Args is empty for a command that only assigns or
	// redirects. Declaration builtins (export, declare, local, readonly,
	// typeset) have their operands as Args ("export", "A=b"); `[[ … ]]`,
	// `(( … ))` and `let` have their keyword followed by the source text of
	// the expression.
	Args []string
	// Words holds the per-word detail behind Args.
	Words []Word
	// Dynamic reports that some word (or assignment value) is not fully
	// literal: it has a parameter expansion, glob, brace expansion,
	// substitution, tilde prefix, or ANSI-C quoting.
	Dynamic bool
	// Redirects are the command's own redirections.
	Redirects []Redirect
	// Negated reports a leading `!`.
	Negated bool
	// Background reports that the command runs with & (directly, not as
	// part of a backgrounded compound command).
	Background bool
}

// Name returns the command name (Args[0]) or "" for a command that only
// assigns or redirects.
func (c *Command) Name() string {
	if len(c.Args) == 0 {
		return ""
	}
	return c.Args[0]
}

// Word is one word of a command.
type Word struct {
	// Text is the word's source text.
	Text string
	// Value is the word with quotes and escapes removed; it equals Text
	// when Dynamic.
	Value string
	// Dynamic reports that the word's value is only known when the shell
	// expands it.
	Dynamic bool
	// Glob reports unquoted glob or brace-expansion characters (* ? [ {a,b}),
	// which can expand to several words, including ones that look like flags.
	Glob bool
	// Split reports an unquoted expansion ($x, $(…)), whose value is split
	// into several words, including ones that look like flags.
	Split bool
}

// Assign is one VAR=value assignment.
type Assign struct {
	// Name is the variable name.
	Name string
	// Value is the assigned value with quotes removed, or its source text
	// when Dynamic (for arrays, the source text of the whole array).
	Value string
	// Dynamic reports a value that is not fully literal, an array, an
	// indexed element (a[i]=) or an append (+=).
	Dynamic bool
}

// Redirect is one redirection.
type Redirect struct {
	// Op is the operator alone: ">", ">>", "<", "<>", "<&", ">&", ">|",
	// "<<", "<<-", "<<<", "&>", "&>>".
	Op string
	// Fd is the explicit file descriptor ("2" in 2>), "" when implicit, or
	// "{name}" for bash's variable-allocated descriptors.
	Fd string
	// Target is the target word's value (a file name, a descriptor number
	// for <& and >&, or a here-document delimiter), with quotes removed when
	// literal, else its source text.
	Target string
	// Dynamic reports a target that is not fully literal.
	Dynamic bool
	// Write reports a redirection that may create or change a file: >, >>,
	// >|, <>, &>, &>>, and >& with a target other than a descriptor number
	// or "-". A write to /dev/null is still Write; see [Redirect.IsDevNull].
	Write bool
	// Heredoc is the here-document body for << and <<-, else "".
	Heredoc string
}

// IsDevNull reports a redirection whose target is literally /dev/null (or
// a standard stream under /dev), which never writes a file.
func (r *Redirect) IsDevNull() bool {
	if r.Dynamic {
		return false
	}
	switch r.Target {
	case "/dev/null", "/dev/stdout", "/dev/stderr":
		return true
	}
	return false
}

// Parse analyses a bash command line. It returns an error wrapping
// [ErrTooLong] for input over [MaxLen] bytes and one wrapping [ErrSyntax] for
// input that is not a complete command line (`ls | | wc`, `ls &&`, `&& ls`,
// an unclosed quote). An empty or comment-only line is a valid Script with no
// commands.
func Parse(src string) (*Script, error) {
	if len(src) > MaxLen {
		return nil, fmt.Errorf("%w (%d > %d bytes)", ErrTooLong, len(src), MaxLen)
	}
	if strings.IndexByte(src, 0) >= 0 {
		return nil, fmt.Errorf("%w: NUL byte in command", ErrSyntax)
	}
	p := parsers.Get().(*syntax.Parser)
	f, err := p.Parse(strings.NewReader(src), "")
	parsers.Put(p)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSyntax, err)
	}
	a := &analyser{src: src, s: &Script{Source: src, file: f, stmtIdx: map[*syntax.Stmt]int{}, redirIdx: map[*syntax.Redirect]int{}}}
	syntax.Walk(f, a.visit)
	a.s.ContinuedComment = hasContinuedComment(src)
	return a.s, nil
}

// parsers reuses bash parsers (a Parser is reusable, not concurrent).
var parsers = sync.Pool{New: func() any { return syntax.NewParser(syntax.Variant(syntax.LangBash)) }}

type analyser struct {
	src string
	s   *Script
	// bound are loop-variable references whose value is known: see
	// bindLoop.
	bound map[*syntax.Word]Word
	funcs int8 // 0 not yet known, 1 no function definition, 2 some
}

func (a *analyser) text(from, to syntax.Pos) string {
	i, j := int(from.Offset()), int(to.Offset())
	if i < 0 || j > len(a.src) || i > j {
		return ""
	}
	return a.src[i:j]
}

func (a *analyser) nodeText(n syntax.Node) string { return a.text(n.Pos(), n.End()) }

// evalLike are builtins whose operands become code or change how later
// commands resolve.
var evalLike = map[string]bool{
	"eval": true, "source": true, ".": true, "trap": true, "alias": true,
	"enable": true, "exec": true, "coproc": true,
}

func (a *analyser) visit(n syntax.Node) bool {
	switch n := n.(type) {
	case *syntax.Stmt:
		if n.Background {
			a.s.HasBackground = true
		}
		if n.Coprocess || n.Disown {
			a.s.Complex = true
		}
		a.stmt(n)
	case *syntax.CmdSubst:
		a.s.HasCommandSubst = true
	case *syntax.ProcSubst:
		a.s.HasProcessSubst = true
	case *syntax.ExtGlob:
		// The pattern is kept as unparsed text; with extglob on, bash
		// expands substitutions inside it.
		a.s.Complex = true
		if p := n.Pattern.Value; strings.Contains(p, "$(") || strings.Contains(p, "`") {
			a.s.HasCommandSubst = true
		}
		if p := n.Pattern.Value; strings.Contains(p, "<(") || strings.Contains(p, ">(") {
			a.s.HasProcessSubst = true
		}
	case *syntax.ForClause:
		a.bindLoop(n)
		// for/select NAME in …: every item is assigned to NAME.
		if wi, ok := n.Loop.(*syntax.WordIter); ok && wi.Name != nil && !shellVarOK(wi.Name.Value) {
			a.s.Complex = true
		}
	case *syntax.FuncDecl, *syntax.CoprocClause, *syntax.TestDecl:
		a.s.Complex = true
	case *syntax.ArithmExp:
		if arithHasName(n.X) {
			a.s.Complex, a.s.EvalsCode = true, true
		}
	case *syntax.ArithmCmd:
		if arithHasName(n.X) {
			a.s.Complex, a.s.EvalsCode = true, true
		}
	case *syntax.CStyleLoop:
		a.s.Complex, a.s.EvalsCode = true, true
	case *syntax.LetClause:
		a.s.Complex, a.s.EvalsCode = true, true
	case *syntax.ParamExp:
		if n.Excl || n.Index != nil || n.Slice != nil || n.NestedParam != nil ||
			(n.Exp != nil && n.Exp.Op == syntax.OtherParamOps) {
			a.s.Complex, a.s.EvalsCode = true, true
		}
		// ${X:=v} and ${X=v} assign (envvars.go decides which names may).
		if n.Exp != nil && (n.Exp.Op == syntax.AssignUnset || n.Exp.Op == syntax.AssignUnsetOrNull) &&
			n.Param != nil && !shellVarOK(n.Param.Value) {
			a.s.Complex = true
		}
	case *syntax.Assign:
		if n.Index != nil {
			a.s.Complex, a.s.EvalsCode = true, true
		}
	case *syntax.UnaryTest:
		// [[ -v a[$(cmd)] ]] and -R evaluate a subscript.
		if n.Op == syntax.TsVarSet || n.Op == syntax.TsRefVar {
			a.s.Complex, a.s.EvalsCode = true, true
		}
	case *syntax.BinaryTest:
		// [[ a -eq b ]] and friends evaluate their operands arithmetically.
		switch n.Op {
		case syntax.TsEql, syntax.TsNeq, syntax.TsLss, syntax.TsGtr, syntax.TsLeq, syntax.TsGeq:
			a.s.Complex, a.s.EvalsCode = true, true
		}
	}
	return true
}

// arithHasName reports whether an arithmetic expression refers to anything
// but number literals: bash evaluates the value of a referenced variable as
// an expression again, and a[$(cmd)] in that value runs cmd.
func arithHasName(x syntax.ArithmExpr) bool {
	found := false
	syntax.Walk(x, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Word:
			lit := n.Lit()
			if lit == "" || !isNumber(lit) {
				found = true
			}
			return false
		case *syntax.ParamExp, *syntax.CmdSubst:
			found = true
		}
		return !found
	})
	return found
}

func isNumber(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' || c == 'x' || c == 'X' || c == '#') {
			return false
		}
	}
	return s[0] >= '0' && s[0] <= '9'
}

func (a *analyser) stmt(st *syntax.Stmt) {
	var redirs []Redirect
	for _, r := range st.Redirs {
		rd := a.redirect(r)
		redirs = append(redirs, rd)
		a.s.redirIdx[r] = len(a.s.Redirects)
		a.s.Redirects = append(a.s.Redirects, rd)
	}
	var cmd *Command
	switch c := st.Cmd.(type) {
	case nil:
		// Only redirections: `> f` truncates f.
		cmd = &Command{}
	case *syntax.CallExpr:
		cmd = a.call(c)
	case *syntax.DeclClause:
		cmd = a.decl(c)
	case *syntax.TestClause:
		cmd = a.keyword("[[", a.nodeText(c.X), "]]")
	case *syntax.ArithmCmd:
		cmd = a.keyword("((", a.nodeText(c.X), "))")
	case *syntax.LetClause:
		args := []string{"let"}
		for _, e := range c.Exprs {
			args = append(args, a.nodeText(e))
		}
		cmd = a.keyword(args...)
	default:
		// Compound commands: their inner statements are visited by Walk;
		// their redirections are already in Script.Redirects.
		return
	}
	cmd.Redirects = redirs
	cmd.Negated = st.Negated
	cmd.Background = st.Background
	for _, r := range redirs {
		if r.Dynamic {
			cmd.Dynamic = true
		}
	}
	// Text: from the first part of the command to the last, without the
	// statement's ; or & and without here-document bodies.
	var from, to syntax.Pos
	if st.Cmd != nil {
		from, to = st.Cmd.Pos(), st.Cmd.End()
	}
	for _, r := range st.Redirs {
		if !from.IsValid() || r.Pos().Offset() < from.Offset() {
			from = r.Pos()
		}
		if e := r.Word.End(); !to.IsValid() || e.Offset() > to.Offset() {
			to = e
		}
	}
	cmd.Text = a.text(from, to)
	if name := cmd.Name(); evalLike[name] && !cmd.Words[0].Dynamic {
		a.s.Complex = true
		if name == "enable" {
			a.s.EvalsCode = true
		}
	}
	a.s.stmtIdx[st] = len(a.s.Commands)
	a.s.Commands = append(a.s.Commands, *cmd)
}

func (a *analyser) keyword(args ...string) *Command {
	c := &Command{Args: args, Dynamic: true}
	for i, s := range args {
		// The keyword itself is literal; the expression is not modelled.
		c.Words = append(c.Words, Word{Text: s, Value: s, Dynamic: i > 0 && i < len(args)})
	}
	if args[0] == "[[" {
		c.Words[len(c.Words)-1].Dynamic = false
	}
	return c
}

func (a *analyser) call(c *syntax.CallExpr) *Command {
	cmd := &Command{}
	for _, as := range c.Assigns {
		asg := a.assign(as)
		if asg.Dynamic {
			cmd.Dynamic = true
		}
		cmd.Assigns = append(cmd.Assigns, asg)
	}
	for _, w := range c.Args {
		wd := a.word(w)
		if wd.Dynamic {
			cmd.Dynamic = true
		}
		cmd.Words = append(cmd.Words, wd)
		cmd.Args = append(cmd.Args, wd.Value)
	}
	return cmd
}

func (a *analyser) decl(d *syntax.DeclClause) *Command {
	name := d.Variant.Value
	cmd := &Command{Args: []string{name}, Words: []Word{{Text: name, Value: name}}}
	for _, as := range d.Args {
		var wd Word
		switch {
		case as.Naked && as.Name == nil && as.Value != nil:
			// A flag or other operand (declare -x, export "$x").
			wd = a.word(as.Value)
		case as.Naked:
			wd = Word{Text: a.nodeText(as), Value: as.Name.Value}
		default:
			asg := a.assign(as)
			wd = Word{Text: a.nodeText(as), Value: asg.Name + "=" + asg.Value, Dynamic: asg.Dynamic}
		}
		if wd.Dynamic {
			cmd.Dynamic = true
			wd.Value = wd.Text
		}
		cmd.Words = append(cmd.Words, wd)
		cmd.Args = append(cmd.Args, wd.Value)
	}
	return cmd
}

func (a *analyser) assign(as *syntax.Assign) Assign {
	out := Assign{}
	if as.Name != nil {
		out.Name = as.Name.Value
	}
	switch {
	case as.Array != nil:
		out.Value, out.Dynamic = a.nodeText(as.Array), true
	case as.Value != nil:
		w := a.word(as.Value)
		out.Value, out.Dynamic = w.Value, w.Dynamic
	}
	if as.Index != nil || as.Append {
		out.Dynamic = true
	}
	return out
}

func (a *analyser) redirect(r *syntax.Redirect) Redirect {
	rd := Redirect{Op: r.Op.String()}
	if r.N != nil {
		rd.Fd = r.N.Value
	}
	if r.Word != nil {
		w := a.word(r.Word)
		rd.Target, rd.Dynamic = w.Value, w.Dynamic
	}
	switch r.Op {
	case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.AppClob, syntax.RdrInOut,
		syntax.RdrAll, syntax.AppAll, syntax.RdrAllClob, syntax.AppAllClob:
		rd.Write = true
	case syntax.DplOut:
		rd.Write = rd.Dynamic || !isFd(rd.Target)
	case syntax.Hdoc, syntax.DashHdoc:
		if r.Hdoc != nil {
			// The body's last literal runs into the closing delimiter
			// line; keep the lines before it.
			body := a.nodeText(r.Hdoc)
			if i := strings.LastIndexByte(body, '\n'); i >= 0 {
				body = body[:i+1]
			} else {
				body = ""
			}
			rd.Heredoc = body
		}
		// The delimiter is never expanded; the body may be (checked by the
		// walk for substitutions).
		rd.Dynamic = false
		rd.Target = unquoteDelim(a.nodeText(r.Word))
	}
	return rd
}

func isFd(s string) bool {
	s = strings.TrimSuffix(s, "-")
	if s == "" {
		return true // ">&-" closes
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func unquoteDelim(s string) string {
	return strings.NewReplacer(`'`, "", `"`, "", `\`, "").Replace(s)
}

// word analyses one word: its literal value if it has one.
func (a *analyser) word(w *syntax.Word) Word {
	if b, ok := a.bound[w]; ok {
		return b
	}
	out := Word{Text: a.nodeText(w)}
	var b strings.Builder
	for i, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			v := p.Value
			if i == 0 && strings.HasPrefix(v, "~") {
				out.Dynamic = true // tilde expansion
			}
			if hasGlob(v, out.Text) {
				out.Dynamic, out.Glob = true, true
			}
			b.WriteString(unescapeUnquoted(v))
		case *syntax.SglQuoted:
			if p.Dollar {
				out.Dynamic = true // $'…' ANSI-C quoting: not decoded here
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			if p.Dollar {
				out.Dynamic = true // $"…" locale translation
			}
			for _, q := range p.Parts {
				if l, ok := q.(*syntax.Lit); ok {
					b.WriteString(unescapeDouble(l.Value))
				} else {
					out.Dynamic = true
				}
			}
		case *syntax.ParamExp, *syntax.CmdSubst, *syntax.ArithmExp:
			out.Dynamic, out.Split = true, true
		default: // ProcSubst, ExtGlob, BraceExp
			out.Dynamic, out.Glob = true, true
		}
	}
	if out.Dynamic {
		out.Value = out.Text
	} else {
		out.Value = b.String()
	}
	return out
}

// hasGlob reports unescaped glob or brace-expansion syntax in an unquoted
// literal.
//
// A '[' can open a bracket expression only in a word that holds a ']'
// (word is the whole word's source text: the bracket may close in a later,
// quoted part); bash takes a lone '[' — the test command's name — literally.
func hasGlob(s, word string) bool {
	brace := -1
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '*', '?':
			return true
		case '[':
			if strings.Contains(word, "]") {
				return true
			}
		case '{':
			brace = i
		case '}':
			if brace >= 0 {
				inner := s[brace+1 : i]
				if strings.Contains(inner, ",") || strings.Contains(inner, "..") {
					return true
				}
			}
		}
	}
	return false
}

// unescapeUnquoted removes backslash escapes from an unquoted literal.
func unescapeUnquoted(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			if s[i] == '\n' {
				continue // line continuation
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// unescapeDouble removes the backslash escapes that are special inside
// double quotes.
func unescapeDouble(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			switch s[i+1] {
			case '$', '`', '"', '\\':
				i++
			case '\n':
				i++
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
