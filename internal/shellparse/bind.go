package shellparse

import (
	"mvdan.cc/sh/v3/syntax"
)

// Loop variables. In `for f in sub/*.txt; do wc -l "$f"; done` the word
// "$f" is not only known at run time: it is one of the loop's words. When
// a loop has one word (a literal or a glob) and its body cannot assign the
// variable, a quoted whole-word reference to it ("$f", "${f}") is
// analysed as that word — a glob the permission layer expands, a literal
// it checks. Unquoted references (split and globbed again), parts of
// words ("$f.bak") and loops over several words stay only known at run
// time.

// assigningBuiltins can assign a variable named in their operands.
var assigningBuiltins = lazySet("read", "mapfile", "readarray", "printf", "getopts", "eval", "source", ".", "unset",
	"declare", "typeset", "local", "export", "readonly", "let", "builtin", "command", "exec", "trap", "enable", "alias")

// bindLoop records the references to a loop's variable that take the
// loop's single word.
func (a *analyser) bindLoop(fc *syntax.ForClause) {
	wi, ok := fc.Loop.(*syntax.WordIter)
	if !ok || fc.Select || len(wi.Items) != 1 || !wi.InPos.IsValid() {
		return
	}
	if a.hasFunc() {
		return // a function called in the body may assign the variable
	}
	item := a.word(wi.Items[0])
	if item.Dynamic && !item.Glob || item.Split || hasBrace(item.Text) || item.Value == "" {
		return // $x, $(…), {a,b}, ~: not a single known word
	}
	name := wi.Name.Value
	var refs []*syntax.Word
	clean := true
	for _, st := range fc.Do {
		syntax.Walk(st, func(n syntax.Node) bool {
			if !clean {
				return false
			}
			switch n := n.(type) {
			case *syntax.Assign:
				if n.Name != nil && n.Name.Value == name {
					clean = false
				}
			case *syntax.ParamExp:
				if n.Param != nil && n.Param.Value == name && (n.Exp != nil || n.Repl != nil || n.Index != nil || n.Slice != nil || n.Excl || n.Length || n.Width) {
					clean = false
				}
			case *syntax.CallExpr:
				if len(n.Args) > 0 {
					lit := n.Args[0].Lit()
					if lit == "" || assigningBuiltins()[lit] {
						clean = false
					}
				}
			case *syntax.DeclClause, *syntax.LetClause, *syntax.ArithmCmd, *syntax.ArithmExp, *syntax.FuncDecl,
				*syntax.CoprocClause, *syntax.TestDecl:
				clean = false
			case *syntax.ForClause:
				if w, ok := n.Loop.(*syntax.WordIter); !ok || w.Name.Value == name {
					clean = false
				}
			case *syntax.Word:
				if isQuotedRef(n, name) {
					refs = append(refs, n)
				}
			}
			return clean
		})
	}
	if !clean || len(refs) == 0 {
		return
	}
	if a.bound == nil {
		a.bound = map[*syntax.Word]Word{}
	}
	for _, r := range refs {
		a.bound[r] = item
	}
}

// isQuotedRef reports a word that is exactly "$name" or "${name}".
func isQuotedRef(w *syntax.Word, name string) bool {
	if len(w.Parts) != 1 {
		return false
	}
	dq, ok := w.Parts[0].(*syntax.DblQuoted)
	if !ok || dq.Dollar || len(dq.Parts) != 1 {
		return false
	}
	pe, ok := dq.Parts[0].(*syntax.ParamExp)
	return ok && pe.Param != nil && pe.Param.Value == name && pe.Exp == nil && pe.Repl == nil && pe.Index == nil &&
		pe.Slice == nil && !pe.Excl && !pe.Length && !pe.Width && pe.NestedParam == nil
}

// hasFunc reports a function definition anywhere in the line (computed
// once).
func (a *analyser) hasFunc() bool {
	if a.funcs == 0 {
		a.funcs = 1
		syntax.Walk(a.s.file, func(n syntax.Node) bool {
			if _, ok := n.(*syntax.FuncDecl); ok {
				a.funcs = 2
			}
			return a.funcs == 1
		})
	}
	return a.funcs == 2
}
