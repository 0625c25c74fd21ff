package shellparse

import (
	"path"
	"strings"
)

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

// rsyncShortArgs are rsync's short options that take a value.
const rsyncShortArgs = "efBTM"

// rsyncShort reads a cluster of rsync's short options at args[i] (-avz,
// -avze ssh, -essh): -e names the remote shell, a program rsync runs. It
// returns the option that took a value ("-e", "-f", …; the cluster when
// none did), that value, and the index of the last word it used.
func rsyncShort(e *Cmd, args []Word, i int) (string, *Word, int) {
	v := args[i].Value
	for j := 1; j < len(v); j++ {
		if !strings.ContainsRune(rsyncShortArgs, rune(v[j])) {
			continue
		}
		var val *Word
		if rest := v[j+1:]; rest != "" {
			val = &Word{Text: rest, Value: rest}
		} else if i+1 < len(args) {
			i++
			val = &args[i]
		}
		if v[j] == 'e' {
			show := ""
			if val != nil {
				show = val.Text
			}
			e.add(Runs, "rsync -e %s runs another program", show)
			e.Escalated = true
		}
		return "-" + v[j:j+1], val, i
	}
	return v, nil, i
}

// rsyncDirOpt records the directories rsync compares against, copies or
// hard-links from (--compare-dest, --copy-dest, --link-dest): they are
// read, and --link-dest's files get new names at the destination.
func rsyncDirOpt(e *Cmd, name string, val *Word) {
	switch name {
	case "--compare-dest", "--copy-dest", "--link-dest":
		if val == nil {
			return
		}
		p := pathOf(*val)
		p.Recursive, p.Transfer = true, name != "--compare-dest"
		e.Reads = append(e.Reads, p)
	}
}

// rsyncDestDirs adds, for a relative --link-dest/--copy-dest/
// --compare-dest directory, its form relative to the destination, which
// is where rsync resolves it.
func rsyncDestDirs(e *Cmd, dest Word) {
	if dest.Dynamic {
		return
	}
	n := len(e.Reads)
	for _, p := range e.Reads[:n] {
		if p.Transfer && p.Recursive && !p.Dynamic && !path.IsAbs(p.Value) && p.Value != dest.Value {
			q := p
			q.Value = path.Join(dest.Value, p.Value)
			e.Reads = append(e.Reads, q)
		}
	}
}
