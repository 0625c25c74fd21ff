package shellparse

import (
	"strings"
	"sync"
)

// Files a command opens through option values and indirections: curl's
// @FILE values, list files (--files0-from, sha256sum -c), recursions that
// follow symbolic links. The command table says which option does what
// (the effect letters a, c, L, F, N of flagSpec); this file turns those
// effects into Paths.

// unknownPath is a read or write of files the analysis cannot name; what
// says what they are (it becomes the Path's Value, for reasons).
func unknownPath(what string) Path {
	return Path{Value: what, Unknown: true, Dynamic: true}
}

// atFile returns the file a curl-style value names: @FILE (-d, --data,
// -H, -w, --json), NAME@FILE (--data-urlencode), NAME=@FILE or NAME=<FILE
// (-F, --form; the file ends at the first ";", curl's attribute
// separator). ok is false when the value names no file; exact is false
// when it may name one the analysis cannot pin down (a quoted file name,
// a value only known at run time).
func atFile(v string) (file string, ok, exact bool) {
	at := strings.IndexByte(v, '@')
	eq := strings.IndexByte(v, '=')
	switch {
	case at == 0:
		file = v[1:]
	case eq >= 0 && eq+1 < len(v) && (v[eq+1] == '@' || v[eq+1] == '<'):
		file = v[eq+2:]
		if i := strings.IndexByte(file, ';'); i >= 0 {
			file = file[:i]
		}
	case at > 0 && (eq < 0 || eq > at):
		file = v[at+1:]
	default:
		return "", false, true
	}
	if file == "-" {
		return "", false, true // standard input
	}
	if file == "" || strings.ContainsAny(file, "\"'\\") {
		return "", true, false
	}
	return file, true, true
}

// fileValue applies the file effects a, c and L to an option's value.
func (an *analyzer) fileValue(e *Cmd, name, flag, eff string, val Word) {
	if val.Dynamic && (val.Split || strings.ContainsAny(val.Text, "$`")) {
		e.Reads = append(e.Reads, unknownPath(name+" "+flag+" "+val.Text))
		e.add(Opaque, "%s %s: the value is only known when the shell runs", name, flag)
		return
	}
	switch {
	case strings.Contains(eff, "L"):
		e.Reads = append(e.Reads, pathOf(val), unknownPath(name+" "+flag+": the files "+val.Text+" lists"))
	case strings.Contains(eff, "a"):
		f, ok, exact := atFile(val.Value)
		switch {
		case !ok:
		case !exact:
			e.Reads = append(e.Reads, unknownPath(name+" "+flag+" "+val.Text))
		default:
			w := val
			w.Value, w.Text = f, f
			e.Reads = append(e.Reads, pathOf(w))
		}
	case strings.Contains(eff, "c"):
		if !strings.Contains(val.Value, "=") {
			e.Reads = append(e.Reads, pathOf(val))
		}
	}
	if strings.Contains(eff, "o") {
		e.add(Opaque, "%s %s cannot be analysed", name, flag)
		e.Escalated = true
	}
}

// followPaths records a recursion that follows symbolic links: each
// directory it starts from (the operands, or "." without any) is walked
// with its links followed.
func followPaths(e *Cmd, role byte, ops []Word) {
	var roots []Word
	switch role {
	case opCopy, opMove, opLink, opInOut:
		if len(ops) > 1 {
			roots = ops[:len(ops)-1]
		} else {
			roots = ops
		}
	case opMode:
		if len(ops) > 0 {
			roots = ops[1:]
		}
	default:
		roots = ops
	}
	if len(ops) == 0 {
		roots = []Word{{Text: ".", Value: "."}}
	}
	for _, w := range roots {
		p := pathOf(w)
		p.Recursive, p.Follow = true, true
		if role == opMode || role == opWrite {
			e.Writes = append(e.Writes, p)
			continue
		}
		e.Reads = append(e.Reads, p)
	}
}

func markOptionGlobs(ps []Path) {
	for i := range ps {
		if ps[i].Glob {
			ps[i].OptionGlob = true
		}
	}
}

// rsyncFiles are rsync's options whose value is a file: r read, w
// written, L a list of files read, F following links (no value).
var rsyncFiles = sync.OnceValue(func() map[string]string {
	return map[string]string{
		"--exclude-from": "r", "--include-from": "r", "--files-from": "L", "--password-file": "r", "--read-batch": "r",
		"--log-file": "w", "--write-batch": "w", "--only-write-batch": "w", "--backup-dir": "w", "--temp-dir": "w",
		"-T": "w", "--partial-dir": "w", "--compare-dest": "r", "--copy-dest": "r", "--link-dest": "r",
		"-L": "F", "--copy-links": "F", "--copy-unsafe-links": "F", "-K": "F", "--keep-dirlinks": "F", "--copy-dirlinks": "F",
		"-f": "m", "--filter": "m",
	}
})

// rsyncFileOption records the file an rsync option reads or writes
// (val is its value, nil for none). A filter rule that merges a file
// (merge, ., dir-merge, :) reads a file the analysis does not resolve.
func rsyncFileOption(e *Cmd, name string, val *Word) {
	eff := rsyncFiles()[name]
	if eff == "" && strings.HasPrefix(name, "-") && !strings.HasPrefix(name, "--") && len(name) > 2 {
		// A cluster (-avL): only the link-following letters matter.
		if strings.ContainsAny(name[1:], "LK") {
			eff = "F"
		}
	}
	switch {
	case eff == "F":
		e.Reads = append(e.Reads, unknownPath("rsync "+name+": what the links below its sources point at"))
	case val == nil:
	case eff == "r":
		e.Reads = append(e.Reads, pathOf(*val))
	case eff == "w":
		e.Writes = append(e.Writes, pathOf(*val))
	case eff == "L":
		e.Reads = append(e.Reads, pathOf(*val), unknownPath("rsync "+name+": the files "+val.Text+" lists"))
	case eff == "m":
		r := strings.TrimSpace(val.Value)
		if val.Dynamic || strings.HasPrefix(r, "merge") || strings.HasPrefix(r, "dir-merge") || strings.HasPrefix(r, ".") || strings.HasPrefix(r, ":") {
			e.Reads = append(e.Reads, unknownPath("rsync "+name+" "+val.Text+": a merged filter file"))
		}
	}
}
