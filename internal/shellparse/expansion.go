package shellparse

// Code run at expansion time. Bash evaluates some text it is given as
// data: array subscripts in variable names (declare 'a[$(cmd)]=1', read,
// printf -v, getopts, unset, wait -p, let), prompt strings (PS4 under
// set -x, ${x@P}), callbacks (mapfile -C, compgen -C/-F, complete -C,
// bind -x, trap), loaded builtins (enable -f), remembered paths (hash -p),
// history re-execution (fc -s, history -s), jobs -x. The parser reports
// the syntactic forms (Script.Complex: ${x@P}, ${!x}, subscripts,
// arithmetic on variables, [[ -v ]]); the builtins below take such text as
// operands. A line with either is not understood, and unresolved: it runs
// code the analysis cannot name, so a Bash deny or ask rule in force asks
// in every mode.

// noCodeBuiltins are the state builtins that never evaluate an operand as
// code or a subscript.
var noCodeBuiltins = lazySet("shift", "exit", "return", "break", "continue", "times", "caller", "suspend", "logout",
	"umask", "ulimit", "fg", "bg", "disown")

// checkStateBuiltin: a builtin that changes the shell's state (Opaque by
// its class) and, unless it is one of noCodeBuiltins, may run code given
// as data: unresolved.
func checkStateBuiltin(an *analyzer, idx int, args []Word) {
	e := an.at(idx)
	name := e.Inner[0].Value
	if noCodeBuiltins()[name] {
		return
	}
	if name == "export" || name == "readonly" || name == "declare" || name == "typeset" || name == "local" || name == "unset" {
		// Declarations of plain names with literal values, without
		// namerefs, evaluate nothing.
		plain := true
		for _, w := range args {
			if w.Dynamic || containsAny(w.Value, "[]$`") || len(w.Value) > 1 && w.Value[0] == '-' && containsAny(w.Value, "nfFi") {
				plain = false
			}
		}
		if plain {
			return
		}
	}
	e.add(Opaque, "%s may evaluate text it is given as code (subscripts, callbacks, prompts)", name)
	e.Unresolved = true
}

func containsAny(s, chars string) bool {
	for i := 0; i < len(s); i++ {
		for j := 0; j < len(chars); j++ {
			if s[i] == chars[j] {
				return true
			}
		}
	}
	return false
}

// checkPrintf: printf -v NAME assigns a variable, and a subscript in NAME
// is evaluated as code (printf -v 'a[$(cmd)]').
func checkPrintf(an *analyzer, idx int, args []Word) {
	e := an.at(idx)
	r := an.generic(e, an.specOf(idx), args)
	e = an.at(idx)
	for _, v := range r.values {
		if v.val.Dynamic || containsAny(v.val.Value, "[]$`") {
			e.add(Opaque, "printf %s %s evaluates a subscript as code", v.flag, v.val.Text)
			e.Unresolved = true
		}
	}
}
