package shellparse

import (
	"strings"
	"sync"
)

// Programs in other languages given as operands (awk, jq): a program that
// opens files the command line does not show — awk's getline or a
// rewritten ARGV, jq's import and include — reads files the analysis
// cannot name. Such programs are not read-only, and their unknown reads
// make a Read deny rule ask in every mode.

// awkToken is a construct of an awk program the model does not treat as
// read-only.
type awkToken struct {
	tok   string
	class Class
	why   string
}

var awkTokens = sync.OnceValue(func() []awkToken {
	return []awkToken{
		{"system", Writes | Runs | Opaque, "can write files or run commands"},
		{"|", Writes | Runs | Opaque, "can write files or run commands"},
		{">", Writes | Runs | Opaque, "can write files or run commands"},
		{"getline", Writes | Runs | Opaque, "can read files the command line does not name, or run commands"},
		{"@", Writes | Runs | Opaque, "calls functions indirectly or loads code"},
		{"close", Writes | Runs | Opaque, "can write files or run commands"},
		{"fflush", Writes | Runs | Opaque, "can write files or run commands"},
		{"PROCINFO", Writes | Runs | Opaque, "can write files or run commands"},
		// The program's own argument vector: awk reads the files ARGV names
		// when the program starts its main loop, so changing ARGV or ARGC
		// reads files no operand shows.
		{"ARGV", Opaque, "rewrites the files it reads (ARGV)"},
		{"ARGC", Opaque, "rewrites the files it reads (ARGC)"},
		{"ENVIRON", Opaque, "reads the environment (ENVIRON)"},
	}
})

// awkProgram classifies a literal awk program: it is read-only only when
// none of awkTokens occurs anywhere in its text (strings and regular
// expressions included: fail closed).
func awkProgram(e *Cmd, name, prog string) {
	for _, t := range awkTokens() {
		if !strings.Contains(prog, t.tok) {
			continue
		}
		e.add(t.class, "%s program uses %q (it %s)", name, t.tok, t.why)
		e.Escalated = true
		// Whatever it is, the program may then open files no operand
		// shows (a pipe from "cat f", getline after a redirection).
		e.Reads = append(e.Reads, unknownPath("files the "+name+" program opens itself"))
		return
	}
}

// jqTokens open files by a module search path: import, include, and the
// module metadata that names them.
var jqTokens = []string{"import", "include", "modulemeta", "get_search_list", "$__loc__", "input_filename"}

// checkJq: the generic scan, then the program (the first operand unless
// -f or --from-file gave it): a program that imports modules reads files
// the analysis cannot name; a program file is not seen at all.
func checkJq(an *analyzer, idx int, args []Word) {
	e := an.at(idx)
	sp := an.specOf(idx)
	r := sp.scanArgs(args)
	an.generic(e, sp, args)
	e = an.at(idx)
	fromFile := false
	for _, v := range r.values {
		if v.flag == "-f" || v.flag == "--from-file" || strings.HasPrefix(v.flag, "-") && strings.HasSuffix(v.flag, "f") && !strings.HasPrefix(v.flag, "--") {
			fromFile = true
		}
	}
	if fromFile {
		e.Reads = append(e.Reads, unknownPath("modules the jq program file may import"))
		return
	}
	if len(r.operands) == 0 {
		return
	}
	prog := r.operands[0]
	if prog.Dynamic {
		return // an operand only known at run time is already not understood
	}
	for _, t := range jqTokens {
		if strings.Contains(prog.Value, t) {
			e.add(Opaque, "jq program uses %s (it reads modules the analysis cannot name)", t)
			e.Escalated = true
			e.Reads = append(e.Reads, unknownPath("modules the jq program imports"))
			return
		}
	}
}
