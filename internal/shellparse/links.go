package shellparse

import "path"

// Links, moves and copies give a file another name. The model records the
// sources of ln, cp, install and mv as Transfer paths: a source is read
// (a Read deny on it, or on a file below a source directory, binds), and
// whatever it is or holds becomes reachable at the destination — a hard
// link to .git/config is .git/config, a copy of a directory holding .git
// creates a repository, a moved .envrc is gone from where it was. The
// permission layer treats a Transfer of a protected path (or of a
// directory holding one) as a write to it.

// transferSources records the sources of a copy, move or link. ops are all
// operands; srcs the sources among them; targetDir reports -t DIR (every
// operand a source). A link source is recorded recursively (a symbolic
// link to a directory reaches everything below it), and a relative source
// of ln is also recorded relative to the link's directory, where a
// symbolic link's target is resolved.
func transferSources(e *Cmd, role byte, srcs, ops []Word, targetDir, recursive bool) {
	dest := ""
	if !targetDir && len(ops) > 1 && !ops[len(ops)-1].Dynamic {
		dest = path.Dir(ops[len(ops)-1].Value)
	}
	if targetDir {
		for _, p := range e.Writes {
			if !p.Dynamic && !p.Redirect {
				dest = p.Value
			}
		}
	}
	for _, w := range srcs {
		p := pathOf(w)
		p.Transfer = true
		p.Recursive = recursive || role == opLink
		switch role {
		case opMove:
			p.Destructive = true
			e.Writes = append(e.Writes, p)
		default:
			e.Reads = append(e.Reads, p)
		}
		if role == opLink && !w.Dynamic && dest != "" && dest != "." && !path.IsAbs(w.Value) {
			q := p
			q.Value = path.Join(dest, w.Value)
			e.Reads = append(e.Reads, q)
		}
	}
}
