package shellparse

import (
	"strings"
)

// Commands whose arguments need more than an option scan.

func (an *analyzer) at(idx int) *Cmd { return &an.a.Cmds[idx] }

func (an *analyzer) specOf(idx int) *cmdSpec { return commands[an.at(idx).Inner[0].Value] }

// checkNoOperand: the command reads with options only; an operand changes
// something (hostname NAME, env VAR=x without a command).
func checkNoOperand(an *analyzer, idx int, args []Word) {
	e := an.at(idx)
	r := an.generic(e, an.specOf(idx), args)
	if len(r.operands) > 0 {
		e.add(Opaque, "%s with an operand (%s) does more than print", e.Inner[0].Value, r.operands[0].Text)
		e.Escalated = true
	}
}

// checkDate: only +FORMAT operands; anything else sets the clock.
func checkDate(an *analyzer, idx int, args []Word) {
	e := an.at(idx)
	r := an.generic(e, an.specOf(idx), args)
	for _, op := range r.operands {
		if op.Dynamic || !strings.HasPrefix(op.Value, "+") {
			e.add(Opaque, "date with the operand %s may set the clock", op.Text)
			e.Escalated = true
		}
	}
}

// checkTest: test and [ evaluate array subscripts for -v and -R, and a
// dynamic word may become either.
func checkTest(an *analyzer, idx int, args []Word) {
	e := an.at(idx)
	for _, w := range args {
		if ok, why := safeOperand(w, false); !ok {
			e.add(Opaque, "%s %s", e.Inner[0].Value, why)
			return
		}
		if w.Value == "-v" || w.Value == "-R" {
			e.add(Opaque, "%s %s evaluates an array subscript as code", e.Inner[0].Value, w.Value)
			return
		}
	}
}

// checkCommandLookup: command -v/-V NAME looks a name up.
func checkCommandLookup(an *analyzer, idx int, args []Word) {
	e := an.at(idx)
	r := an.generic(e, an.specOf(idx), args)
	_ = r
}

// checkChdir records the target of cd, pushd and popd.
func checkChdir(an *analyzer, idx int, args []Word) {
	e := an.at(idx)
	name := e.Inner[0].Value
	r := an.generic(e, an.specOf(idx), args)
	e.Reads = nil
	ops := r.operands
	switch {
	case name == "popd" || name == "pushd" && len(ops) == 0:
		e.Chdir = &Chdir{}
		e.add(Opaque, "%s changes to a directory from the directory stack", name)
	case len(ops) == 0:
		e.Chdir = &Chdir{Target: "~", Literal: true}
	case len(ops) > 1:
		e.Chdir = &Chdir{}
		e.add(Opaque, "%s with more than one operand", name)
	default:
		t := ops[0]
		tilde := t.Dynamic && !t.Glob && !t.Split && (t.Text == "~" || strings.HasPrefix(t.Text, "~/")) && !strings.ContainsAny(t.Text, "$`")
		switch {
		case !t.Dynamic && t.Value != "-" && !(name == "pushd" && (strings.HasPrefix(t.Value, "+") || strings.HasPrefix(t.Value, "-"))):
			e.Chdir = &Chdir{Target: t.Value, Literal: true, Physical: physicalCd(args)}
		case tilde:
			e.Chdir = &Chdir{Target: t.Text, Literal: true, Physical: physicalCd(args)}
		default:
			e.Chdir = &Chdir{Target: t.Text}
			e.add(Opaque, "%s %s: the directory is only known when the shell runs", name, t.Text)
		}
	}
}

var ddKeys = set("bs", "cbs", "conv", "count", "ibs", "iflag", "obs", "oflag", "seek", "skip", "status", "iseek", "oseek")

// checkDD: if= is read, of= is written (replaced).
func checkDD(an *analyzer, idx int, args []Word) {
	e := an.at(idx)
	for _, w := range args {
		if w.Dynamic {
			e.add(Opaque, "dd operand %s is only known when the shell runs", w.Text)
			continue
		}
		k, v, ok := strings.Cut(w.Value, "=")
		switch {
		case !ok:
			e.add(Opaque, "dd has no known operand %s", w.Value)
		case k == "if":
			e.Reads = append(e.Reads, Path{Value: v})
		case k == "of":
			e.Writes = append(e.Writes, Path{Value: v, Destructive: true})
			e.add(Writes|Destructive, "dd of=%s overwrites a file", v)
			e.Escalated = true
		case !ddKeys[k]:
			e.add(Opaque, "dd has no known operand %s", w.Value)
		}
	}
}

var rsyncArg = set("-e", "-f", "-B", "-T", "-M", "--exclude", "--include", "--filter", "--exclude-from", "--include-from",
	"--files-from", "--rsh", "--rsync-path", "--temp-dir", "--partial-dir", "--backup-dir", "--suffix", "--chmod",
	"--log-file", "--password-file", "--compare-dest", "--copy-dest", "--link-dest", "--max-size", "--min-size",
	"--timeout", "--bwlimit", "--port", "--out-format", "--info", "--debug", "--chown", "--usermap", "--groupmap",
	"--modify-window", "--max-delete", "--block-size", "--checksum-choice", "--compress-choice", "--compress-level",
	"--skip-compress", "--sockopts", "--outbuf", "--protocol", "--iconv", "--address", "--contimeout", "--stop-after",
	"--stop-at", "--write-batch", "--only-write-batch", "--read-batch", "--log-file-format")

// checkRsync: the last operand is written; --delete and
// --remove-source-files destroy; -e runs a remote shell; host:path is
// network.
func checkRsync(an *analyzer, idx int, args []Word) {
	e := an.at(idx)
	var ops []Word
	destroy := false
	for i := 0; i < len(args); i++ {
		w := args[i]
		v := w.Value
		if w.Dynamic || !strings.HasPrefix(v, "-") || v == "-" {
			ops = append(ops, w)
			continue
		}
		if v == "--" {
			ops = append(ops, args[i+1:]...)
			break
		}
		name, _, hasVal := strings.Cut(v, "=")
		var val *Word
		if !strings.HasPrefix(v, "--") {
			// A cluster of short options (-avz, -avze CMD, -essh): the
			// first that takes a value takes the rest or the next word.
			name, val, i = rsyncShort(e, args, i) // links.go
		} else {
			switch {
			case strings.HasPrefix(name, "--delete") || name == "--remove-source-files" || name == "--del":
				destroy = true
			case name == "--rsh" || name == "--rsync-path":
				e.add(Runs, "rsync %s runs another program", v)
				e.Escalated = true
			}
			if rsyncArg[name] && !hasVal && i+1 < len(args) {
				val = &args[i+1]
				i++
			} else if hasVal {
				_, s, _ := strings.Cut(v, "=")
				val = &Word{Text: s, Value: s}
			}
		}
		if !strings.HasPrefix(v, "--") {
			rsyncFileOption(e, v, nil)
		}
		rsyncFileOption(e, name, val)
		rsyncDirOpt(e, name, val) // links.go
	}
	if destroy {
		e.add(Destructive, "rsync --delete removes files at the destination")
		e.Escalated = true
	}
	if len(ops) > 1 {
		rsyncDestDirs(e, ops[len(ops)-1]) // links.go
	}
	for i, w := range ops {
		if ok, why := safeOperand(w, false); !ok {
			e.add(Opaque, "rsync %s", why)
		}
		if strings.Contains(w.Value, ":") {
			e.add(Network, "rsync %s reaches another machine", w.Text)
			continue
		}
		p := pathOf(w)
		p.Recursive = true
		p.Transfer = i < len(ops)-1 // copied, or linked with --link-dest
		if i == len(ops)-1 && len(ops) > 1 {
			p.Destructive = destroy
			e.Writes = append(e.Writes, p)
		} else {
			e.Reads = append(e.Reads, p)
		}
	}
}

// checkNetwork: the generic scan; operands are URLs.
func checkNetwork(an *analyzer, idx int, args []Word) {
	e := an.at(idx)
	an.generic(e, an.specOf(idx), args)
}

// checkShell: sh -c 'script' is analysed as a payload; a script file or
// standard input is not seen.
func checkShell(an *analyzer, idx int, args []Word) {
	e := an.at(idx)
	name := e.Inner[0].Value
	if name == "busybox" {
		e.add(Runs|Opaque, "busybox runs an applet")
		e.Unresolved = true
		return
	}
	cflag := false
	i := 0
loop:
	for ; i < len(args); i++ {
		w := args[i]
		if w.Dynamic {
			break
		}
		v := w.Value
		switch {
		case v == "--" || v == "-":
			i++
			break loop
		case v == "--rcfile" || v == "--init-file":
			// Read (and run) by an interactive shell.
			if i+1 < len(args) {
				e.Reads = append(e.Reads, pathOf(args[i+1]))
			}
			i++
		case v == "-o" || v == "+o" || v == "-O" || v == "+O":
			i++
		case strings.HasPrefix(v, "--"):
		case strings.HasPrefix(v, "-") || strings.HasPrefix(v, "+"):
			if strings.HasPrefix(v, "-") && strings.Contains(v, "c") {
				cflag = true
			}
		default:
			break loop
		}
	}
	e.add(Runs, "%s runs a script", name)
	switch {
	case cflag && i < len(args) && !args[i].Dynamic:
		an.payloadSource(args[i].Value, idx)
	case cflag && i < len(args):
		e.add(Opaque, "%s -c with a script only known when the shell runs (%s)", name, args[i].Text)
		e.Unresolved = true
	case cflag:
		e.add(Opaque, "%s -c without a script", name)
	case i < len(args):
		e.Reads = append(e.Reads, pathOf(args[i]))
		e.add(Opaque, "%s runs the script file %s, which the analysis does not see", name, args[i].Text)
		e.Unresolved = true
	default:
		e.add(Opaque, "%s reads commands from its input", name)
		e.Unresolved = true
	}
}

// checkEval: a literal eval is analysed as a payload.
func checkEval(an *analyzer, idx int, args []Word) {
	e := an.at(idx)
	var parts []string
	for _, w := range args {
		if w.Dynamic {
			e.add(Opaque, "eval of %s, only known when the shell runs", w.Text)
			e.Unresolved = true
			return
		}
		parts = append(parts, w.Value)
	}
	an.payloadSource(strings.Join(parts, " "), idx)
}

// checkTrap: trap 'cmd' SIG runs cmd later: a literal is analysed as a
// payload; listing traps reads.
func checkTrap(an *analyzer, idx int, args []Word) {
	e := an.at(idx)
	if len(args) == 0 || !args[0].Dynamic && (args[0].Value == "-l" || args[0].Value == "-p") {
		return
	}
	e.add(Runs, "trap runs a command when a signal arrives")
	if args[0].Dynamic {
		e.add(Opaque, "trap of %s, only known when the shell runs", args[0].Text)
		e.Unresolved = true
		return
	}
	if args[0].Value == "-" || args[0].Value == "" {
		return
	}
	an.payloadSource(args[0].Value, idx)
}

// checkSource: source and . run a file the analysis does not see.
func checkSource(an *analyzer, idx int, args []Word) {
	e := an.at(idx)
	if len(args) > 0 {
		e.Reads = append(e.Reads, pathOf(args[0]))
	}
	e.Unresolved = true
}

// checkUnresolved: a runner whose inner command could not be found.
func checkUnresolved(an *analyzer, idx int, args []Word) {
	e := an.at(idx)
	if len(args) > 0 {
		e.Unresolved = true
	}
}

var (
	findNoArg = set("-print", "-print0", "-ls", "-prune", "-quit", "-true", "-false", "-not", "!", "-a", "-o", "-and", "-or",
		"(", ")", ",", "-depth", "-follow", "-xdev", "-mount", "-noleaf", "-daystart", "-ignore_readdir_race",
		"-noignore_readdir_race", "-empty", "-readable", "-writable", "-executable", "-nouser", "-nogroup", "-d", "-help",
		"--help", "-version", "--version")
	findArg = set("-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex", "-type", "-xtype",
		"-size", "-mtime", "-mmin", "-atime", "-amin", "-ctime", "-cmin", "-user", "-group", "-uid", "-gid", "-perm",
		"-links", "-inum", "-lname", "-ilname", "-maxdepth", "-mindepth", "-regextype", "-fstype", "-used", "-context",
		"-printf")
	findPathArg = set("-newer", "-anewer", "-cnewer", "-samefile", "-files0-from")
	findWrite   = set("-fprint", "-fprint0", "-fls")
	findExec    = set("-exec", "-execdir", "-ok", "-okdir")
)

// checkFind: roots are read recursively; -exec and friends run a payload,
// -delete removes, -fprint and friends write.
func checkFind(an *analyzer, idx int, args []Word) {
	e := an.at(idx)
	i := 0
	follow := false
	for i < len(args) && !args[i].Dynamic {
		v := args[i].Value
		if v == "-L" {
			follow = true
		} else if v == "-P" || v == "-H" {
			follow = false
		}
		if v == "-H" || v == "-L" || v == "-P" || strings.HasPrefix(v, "-O") && len(v) > 2 {
			i++
		} else if v == "-D" {
			i += 2
		} else {
			break
		}
	}
	var roots []Path
	for ; i < len(args); i++ {
		w := args[i]
		if !w.Dynamic && (strings.HasPrefix(w.Value, "-") || w.Value == "(" || w.Value == "!" || w.Value == ")" || w.Value == ",") {
			break
		}
		if ok, why := safeOperand(w, false); !ok {
			e.add(Opaque, "find %s", why)
		}
		p := pathOf(w)
		p.Recursive = true
		roots = append(roots, p)
	}
	if len(roots) == 0 {
		roots = []Path{{Value: ".", Recursive: true}}
	}
	e.Reads = append(e.Reads, roots...)
	var payloads [][]Word
	var elsewhere []bool // -execdir, -okdir: the payload runs in each found file's directory
	for ; i < len(args); i++ {
		w := args[i]
		if w.Dynamic {
			e.add(Opaque, "find expression word %s is only known when the shell runs", w.Text)
			continue
		}
		v := w.Value
		switch {
		case v == "-follow":
			follow = true
		case findNoArg[v]:
		case findArg[v], strings.HasPrefix(v, "-newer") && len(v) == 8:
			i++
			if i < len(args) && args[i].Split {
				e.add(Opaque, "find %s %s: the value is only known when the shell runs", v, args[i].Text)
			}
		case findPathArg[v]:
			i++
			if i < len(args) {
				e.Reads = append(e.Reads, pathOf(args[i]))
				if v == "-files0-from" {
					e.Reads = append(e.Reads, unknownPath("find -files0-from: the files "+args[i].Text+" lists"))
				}
			}
		case findWrite[v] || v == "-fprintf":
			i++
			if i < len(args) {
				e.Writes = append(e.Writes, pathOf(args[i]))
				e.add(Writes, "find %s writes %s", v, args[i].Text)
			}
			if v == "-fprintf" {
				i++
			}
			e.Escalated = true
		case v == "-delete":
			e.add(Writes|Destructive, "find -delete removes what it finds")
			e.Escalated = true
			for _, r := range roots {
				r.Destructive = true
				e.Writes = append(e.Writes, r)
			}
		case findExec[v]:
			e.add(Runs, "find %s runs a command for what it finds", v)
			e.Escalated = true
			j := i + 1
			for j < len(args) && !(args[j].Value == ";" || args[j].Value == "+") {
				j++
			}
			if j >= len(args) || j == i+1 {
				e.add(Opaque, "find %s without a command or terminator", v)
				i = j
				continue
			}
			payloads = append(payloads, args[i+1:j])
			elsewhere = append(elsewhere, v == "-execdir" || v == "-okdir")
			i = j
		default:
			e.add(Opaque, "find has no known predicate %s", v)
		}
	}
	if follow {
		for _, r := range roots {
			r.Follow = true
			an.at(idx).Reads = append(an.at(idx).Reads, r)
		}
	}
	for k, p := range payloads {
		// find puts each found file's name where the payload says {}.
		j := len(an.a.Cmds)
		an.payloadWords(substituted(p, "{}"), false, idx)
		if elsewhere[k] && j < len(an.a.Cmds) {
			an.at(j).runsElsewhere = true
		}
	}
}

// checkSed: only scripts that print, substitute (without w or e flags),
// delete or branch are read-only; -i writes the files.
func checkSed(an *analyzer, idx int, args []Word) {
	e := an.at(idx)
	var scripts []Word
	var files []Word
	haveScript, inPlace, fromFile := false, false, false
	for i := 0; i < len(args); i++ {
		w := args[i]
		v := w.Value
		switch {
		case w.Dynamic || !strings.HasPrefix(v, "-") || v == "-":
			files = append(files, w)
		case v == "--":
			files = append(files, args[i+1:]...)
			i = len(args)
		case v == "-e" || v == "--expression" || v == "-f" || v == "--file" || v == "-l" || v == "--line-length":
			if i+1 >= len(args) {
				e.add(Opaque, "sed %s without a value", v)
				return
			}
			switch v {
			case "-e", "--expression":
				scripts, haveScript = append(scripts, args[i+1]), true
			case "-f", "--file":
				e.Reads = append(e.Reads, pathOf(args[i+1]))
				e.add(Opaque, "sed -f runs a script file the analysis does not see")
				e.Escalated, haveScript, fromFile = true, true, true
			}
			i++
		case strings.HasPrefix(v, "--expression="):
			scripts, haveScript = append(scripts, Word{Text: v, Value: strings.TrimPrefix(v, "--expression=")}), true
		case strings.HasPrefix(v, "--file="):
			e.Reads = append(e.Reads, Path{Value: strings.TrimPrefix(v, "--file=")})
			e.add(Opaque, "sed --file runs a script file the analysis does not see")
			e.Escalated, haveScript, fromFile = true, true, true
		case v == "--in-place" || strings.HasPrefix(v, "--in-place="):
			inPlace = true
		case v == "--quiet" || v == "--silent" || v == "--posix" || v == "--debug" || v == "--regexp-extended" ||
			v == "--null-data" || v == "--separate" || v == "--unbuffered" || v == "--sandbox" || v == "--follow-symlinks" ||
			strings.HasPrefix(v, "--line-length="):
		case strings.HasPrefix(v, "--"):
			e.add(Opaque, "sed has no known option %s", v)
		default:
		cluster:
			for j := 1; j < len(v); j++ {
				switch v[j] {
				case 'n', 'E', 'r', 'z', 's', 'u':
				case 'i':
					inPlace = true
					break cluster // the rest is the backup suffix
				case 'e', 'f', 'l':
					if j+1 < len(v) {
						if v[j] == 'e' {
							scripts, haveScript = append(scripts, Word{Text: v, Value: v[j+1:]}), true
						} else if v[j] == 'f' {
							e.add(Opaque, "sed -f runs a script file the analysis does not see")
							e.Escalated, haveScript, fromFile = true, true, true
						}
					} else if i+1 < len(args) {
						if v[j] == 'e' {
							scripts, haveScript = append(scripts, args[i+1]), true
						} else if v[j] == 'f' {
							e.Reads = append(e.Reads, pathOf(args[i+1]))
							e.add(Opaque, "sed -f runs a script file the analysis does not see")
							e.Escalated, haveScript, fromFile = true, true, true
						}
						i++
					}
					break cluster
				default:
					e.add(Opaque, "sed has no known option -%c", v[j])
					break cluster
				}
			}
		}
	}
	if fromFile {
		// A script file may read (r, R) and write (w, W) any file.
		e.Reads = append(e.Reads, unknownPath("files sed's script file opens"))
		e.Writes = append(e.Writes, unknownPath("files sed's script file writes"))
	}
	if !haveScript {
		if len(files) == 0 {
			e.add(Opaque, "sed without a script")
			return
		}
		scripts, files = append(scripts, files[0]), files[1:]
	}
	for _, s := range scripts {
		if s.Dynamic {
			e.add(Opaque, "sed script %s is only known when the shell runs", s.Text)
			e.Escalated = true
			continue
		}
		sedScript(e, s.Value)
	}
	for _, f := range files {
		if ok, why := safeOperand(f, false); !ok {
			e.add(Opaque, "sed %s", why)
		}
		p := pathOf(f)
		if inPlace {
			e.Writes = append(e.Writes, p)
		} else {
			e.Reads = append(e.Reads, p)
		}
	}
	if inPlace {
		e.add(Writes, "sed -i changes its files in place")
		e.Escalated = true
	}
}

// sedScript classifies a sed script command by command: w/W and the s
// flag w write, e and the s flag e run, r/R read; unknown syntax is Opaque.
func sedScript(e *Cmd, script string) {
	s := script
	i, n := 0, len(s)
	skip := func() {
		for i < n && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
	}
	restOfLine := func() string {
		j := i
		for j < n && s[j] != '\n' {
			j++
		}
		out := strings.TrimSpace(s[i:j])
		i = j
		return out
	}
	// past moves i past the next unescaped d.
	past := func(d byte) bool {
		for i < n && s[i] != d {
			if s[i] == '\\' {
				i++
			}
			i++
		}
		if i >= n {
			return false
		}
		i++
		return true
	}
	addr := func() bool {
		switch {
		case i < n && s[i] == '$':
			i++
			return true
		case i < n && s[i] >= '0' && s[i] <= '9':
			for i < n && (s[i] >= '0' && s[i] <= '9' || s[i] == '~') {
				i++
			}
			return true
		case i < n && (s[i] == '/' || s[i] == '\\'):
			d := byte('/')
			if s[i] == '\\' {
				i++
				if i >= n {
					return false
				}
				d = s[i]
			}
			i++
			if !past(d) {
				return false
			}
			for i < n && (s[i] == 'I' || s[i] == 'M') {
				i++
			}
			return true
		}
		return true
	}
	// delimited reads count parts delimited by s[i] (the delimiter).
	delimited := func(count int) bool {
		if i >= n || s[i] == '\n' || s[i] == '\\' {
			return false
		}
		d := s[i]
		i++
		for k := 0; k < count; k++ {
			if !past(d) {
				return false
			}
		}
		return true
	}
	for {
		skip()
		for i < n && (s[i] == ';' || s[i] == '\n' || s[i] == '}') {
			i++
			skip()
		}
		if i >= n {
			return
		}
		if s[i] == '#' {
			restOfLine()
			continue
		}
		if !addr() {
			e.add(Opaque, "sed script %q is not understood", script)
			return
		}
		skip()
		if i < n && s[i] == ',' {
			i++
			skip()
			if i < n && (s[i] == '+' || s[i] == '~') {
				i++
				for i < n && s[i] >= '0' && s[i] <= '9' {
					i++
				}
			} else if !addr() {
				e.add(Opaque, "sed script %q is not understood", script)
				return
			}
		}
		skip()
		for i < n && s[i] == '!' {
			i++
			skip()
		}
		if i >= n {
			e.add(Opaque, "sed script %q is not understood", script)
			return
		}
		c := s[i]
		i++
		switch c {
		case '{':
		case 'p', 'P', '=', 'l', 'd', 'D', 'n', 'N', 'g', 'G', 'h', 'H', 'x', 'z', 'F':
		case 'q', 'Q', 'L':
			for i < n && s[i] >= '0' && s[i] <= '9' {
				i++
			}
		case ':', 'b', 't', 'T', 'v':
			for i < n && s[i] != '\n' && s[i] != ';' {
				i++
			}
		case 'a', 'i', 'c':
			restOfLine()
		case 'w', 'W':
			f := restOfLine()
			e.Writes = append(e.Writes, Path{Value: f})
			e.add(Writes, "sed %c writes %s", c, f)
			e.Escalated = true
		case 'r', 'R':
			f := restOfLine()
			e.Reads = append(e.Reads, Path{Value: f})
		case 'e':
			e.add(Runs, "sed e runs a command")
			e.Escalated = true
			e.Reads = append(e.Reads, unknownPath("files the command sed runs opens"))
			restOfLine()
		case 'y':
			if !delimited(2) {
				e.add(Opaque, "sed script %q is not understood", script)
				return
			}
		case 's':
			if !delimited(2) {
				e.add(Opaque, "sed script %q is not understood", script)
				return
			}
		flags:
			for i < n {
				switch f := s[i]; {
				case f == 'g' || f == 'p' || f == 'i' || f == 'I' || f == 'm' || f == 'M' || f >= '0' && f <= '9':
					i++
				case f == 'w':
					i++
					p := restOfLine()
					e.Writes = append(e.Writes, Path{Value: p})
					e.add(Writes, "sed s///w writes %s", p)
					e.Escalated = true
					break flags
				case f == 'e':
					i++
					e.add(Runs, "sed s///e runs the pattern space as a command")
					e.Escalated = true
					e.Reads = append(e.Reads, unknownPath("files the command sed runs opens"))
				default:
					break flags
				}
			}
		default:
			e.add(Opaque, "sed command %c is not understood", c)
			e.Escalated = true
			return
		}
	}
}

// checkAwk: a literal program without output redirection, pipes,
// system() or getline only reads.
func checkAwk(an *analyzer, idx int, args []Word) {
	e := an.at(idx)
	name := e.Inner[0].Value
	var ops []Word
	haveProg := false
	for i := 0; i < len(args); i++ {
		w := args[i]
		v := w.Value
		switch {
		case w.Dynamic || !strings.HasPrefix(v, "-") || v == "-":
			ops = append(ops, w)
		case v == "--":
			ops = append(ops, args[i+1:]...)
			i = len(args)
		case v == "-F" || v == "-v":
			i++
		case strings.HasPrefix(v, "-F") || strings.HasPrefix(v, "-v") || strings.HasPrefix(v, "--field-separator=") ||
			strings.HasPrefix(v, "--assign="):
		case v == "-f" || strings.HasPrefix(v, "--file"):
			e.add(Opaque, "%s -f runs a program file the analysis does not see", name)
			e.Escalated, haveProg = true, true
			e.Reads = append(e.Reads, unknownPath("files the "+name+" program file opens"))
			if f, ok := strings.CutPrefix(v, "--file="); ok {
				e.Reads = append(e.Reads, Path{Value: f})
			} else if v == "-f" && i+1 < len(args) {
				e.Reads = append(e.Reads, pathOf(args[i+1]))
			}
			if v == "-f" || v == "--file" {
				i++
			}
		default:
			e.add(Opaque, "%s has no known option %s", name, v)
			e.Escalated = true
		}
	}
	if !haveProg {
		if len(ops) == 0 {
			e.add(Opaque, "%s without a program", name)
			return
		}
		prog := ops[0]
		ops = ops[1:]
		if prog.Dynamic {
			e.add(Opaque, "%s program %s is only known when the shell runs", name, prog.Text)
			e.Escalated = true
		} else {
			awkProgram(e, name, prog.Value)
		}
	}
	for _, w := range ops {
		if ok, why := safeOperand(w, false); !ok {
			e.add(Opaque, "%s %s", name, why)
		}
		e.Reads = append(e.Reads, pathOf(w))
	}
}
