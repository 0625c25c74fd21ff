package permission

import (
	"strings"

	"github.com/gantry-dev/gantry/internal/shellparse"
)

// maxShellDepth bounds the recursion into `sh -c '…'` strings.
const maxShellDepth = 3

// shellCmd is one simple command of a Bash call, prepared for rule matching.
type shellCmd struct {
	cmd *shellparse.Command
	// words are the command's words after the transparent wrappers
	// (timeout, time, nice, nohup, stdbuf, command, builtin, flagless
	// xargs) are stripped. Allow rules match these.
	words []shellparse.Word
	// runnerWords are the words after runners (env, sudo, watch, setsid,
	// flock, ionice, xargs with flags, …) are stripped too. Only deny and
	// ask rules match these.
	runnerWords []shellparse.Word
	// wrapped: a runner was stripped to reach runnerWords.
	wrapped bool
	// nested are the commands of a literal `sh -c '…'` operand.
	nested []shellCmd
	// nestedErr: the operand of sh -c did not parse.
	nestedErr bool
}

// shellAnalysis is the analysis of one Bash command line.
type shellAnalysis struct {
	src    string
	script *shellparse.Script
	err    error
	cmds   []shellCmd
}

func analyseShell(src string) *shellAnalysis {
	a := &shellAnalysis{src: src}
	a.script, a.err = shellparse.Parse(src)
	if a.err != nil {
		return a
	}
	a.cmds = prepareCommands(a.script.Commands, 0)
	return a
}

func prepareCommands(cmds []shellparse.Command, depth int) []shellCmd {
	out := make([]shellCmd, 0, len(cmds))
	for i := range cmds {
		c := &cmds[i]
		sc := shellCmd{cmd: c}
		sc.words = stripWrappers(c.Words)
		sc.runnerWords, sc.wrapped = stripRunners(sc.words)
		if inner, ok := shellCOperand(sc.runnerWords); ok {
			if depth >= maxShellDepth {
				sc.nestedErr = true
			} else if s, err := shellparse.Parse(inner); err != nil {
				sc.nestedErr = true
			} else {
				sc.nested = prepareCommands(s.Commands, depth+1)
			}
		}
		out = append(out, sc)
	}
	return out
}

// canonWords joins words into the text rules match: literal values, with a
// value holding blanks (or empty) single-quoted so that one word can never
// pass for several.
func canonWords(ws []shellparse.Word) string {
	var b strings.Builder
	for i, w := range ws {
		if i > 0 {
			b.WriteByte(' ')
		}
		v := w.Value
		if !w.Dynamic && (v == "" || strings.ContainsAny(v, " \t\n'")) {
			v = "'" + strings.ReplaceAll(v, "'", `'\''`) + "'"
		}
		b.WriteString(v)
	}
	return b.String()
}

func canonAssigns(as []shellparse.Assign) string {
	var b strings.Builder
	for i, a := range as {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(a.Name)
		b.WriteByte('=')
		b.WriteString(a.Value)
	}
	return b.String()
}

// canonSpec returns the text an exact (wildcard-free) Bash specifier is
// compared with: parsed like a command when it is one simple literal
// command, so `echo "a b"` and `echo 'a b'` are the same rule.
func canonSpec(spec string) string {
	spec = normalizeCommandSpec(spec)
	if hasWildcard(spec) {
		return collapseSpaces(spec)
	}
	s, err := shellparse.Parse(spec)
	if err == nil && len(s.Commands) == 1 && !s.Commands[0].Dynamic && len(s.Commands[0].Redirects) == 0 {
		c := s.Commands[0]
		t := canonWords(c.Words)
		if len(c.Assigns) > 0 {
			t = canonAssigns(c.Assigns) + " " + t
		}
		return t
	}
	return collapseSpaces(unescapeStars(spec))
}

// specMatches matches a Bash specifier against a command text.
func specMatches(spec, text string) bool {
	n := normalizeCommandSpec(spec)
	if hasWildcard(n) {
		return globMatch(collapseSpaces(n), text)
	}
	return canonSpec(spec) == text
}

// skipOpts skips leading options of a wrapper. withArg lists options that
// take the next word as their argument; a word of the form -xVALUE or
// --opt=VALUE carries its own. It returns the index of the first operand,
// or -1 if an option is not known (then the wrapper is not stripped).
func skipOpts(ws []shellparse.Word, i int, known, withArg map[string]bool) int {
	for i < len(ws) {
		w := ws[i]
		if w.Dynamic {
			return -1
		}
		v := w.Value
		if v == "--" {
			return i + 1
		}
		if !strings.HasPrefix(v, "-") || v == "-" {
			return i
		}
		name := v
		if j := strings.IndexByte(v, '='); j > 0 && strings.HasPrefix(v, "--") {
			name = v[:j]
			if !known[name] && !withArg[name] {
				return -1
			}
			i++
			continue
		}
		switch {
		case withArg[name]:
			i += 2
		case known[name]:
			i++
		case len(v) > 2 && !strings.HasPrefix(v, "--") && withArg[v[:2]]:
			i++ // -n10
		default:
			return -1
		}
	}
	return i
}

func set(xs ...string) map[string]bool {
	m := make(map[string]bool, len(xs))
	for _, x := range xs {
		m[x] = true
	}
	return m
}

var (
	timeoutFlags   = set("--preserve-status", "--foreground", "-v", "--verbose")
	timeoutArgs    = set("-s", "--signal", "-k", "--kill-after")
	niceArgs       = set("-n", "--adjustment")
	stdbufArgs     = set("-i", "-o", "-e", "--input", "--output", "--error")
	timeFlags      = set("-p")
	commandFlags   = set("-p")
	noFlags        = set()
	envFlags       = set("-i", "--ignore-environment", "-0", "--null", "-v", "--debug")
	envArgs        = set("-u", "--unset", "-C", "--chdir")
	sudoFlags      = set("-A", "-b", "-E", "-e", "-H", "-i", "-k", "-K", "-n", "-P", "-S", "-s", "-V", "-v", "--preserve-env", "--login", "--non-interactive", "--shell", "--stdin", "--background", "--set-home")
	sudoArgs       = set("-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-T", "--user", "--group", "--chdir", "--host", "--prompt", "--role", "--type", "--other-user", "--command-timeout", "--close-from")
	watchFlags     = set("-d", "-t", "-x", "-b", "-e", "-g", "-c", "-p", "-w", "--differences", "--no-title", "--exec", "--beep", "--errexit", "--chgexit", "--color", "--precise", "--no-wrap")
	watchArgs      = set("-n", "--interval", "-q", "--equexit")
	setsidFlags    = set("-c", "-f", "-w", "--ctty", "--fork", "--wait")
	flockFlags     = set("-s", "-x", "-e", "-n", "-u", "-o", "-F", "--shared", "--exclusive", "--nonblock", "--unlock", "--close", "--no-fork", "--verbose")
	flockArgs      = set("-w", "-E", "--timeout", "--conflict-exit-code")
	ioniceFlags    = set("-t", "--ignore")
	ioniceArgs     = set("-c", "-n", "--class", "--classdata")
	xargsFlags     = set("-0", "-r", "-t", "-p", "-x", "--null", "--no-run-if-empty", "--verbose", "--interactive", "--exit", "-o", "--open-tty")
	xargsArgs      = set("-n", "-I", "-L", "-P", "-d", "-E", "-s", "-a", "-i", "-l", "-e", "--max-args", "--replace", "--max-lines", "--max-procs", "--delimiter", "--eof", "--max-chars", "--arg-file")
	chrootFlags    = set()
	unshareFlags   = set("-m", "-u", "-i", "-n", "-p", "-U", "-C", "-T", "-f", "-r", "--fork", "--mount", "--uts", "--ipc", "--net", "--pid", "--user", "--map-root-user")
	shells         = set("sh", "bash", "zsh", "dash", "ksh", "fish", "ash", "busybox")
	runnerCommands = set("env", "sudo", "doas", "su", "watch", "setsid", "flock", "ionice", "chroot", "unshare", "nsenter", "runuser", "chrt", "taskset", "xargs", "parallel", "eval", "exec", "ssh", "script", "strace", "ltrace", "gdb", "nice", "timeout", "stdbuf", "nohup", "time", "command", "builtin", "find", "fakeroot", "firejail", "systemd-run", "tmux", "screen", "dbus-launch")
)

// stripWrappers removes the wrappers that only change how a command runs
// (timeout, time, nice, nohup, stdbuf, command, builtin and flagless
// xargs), repeatedly. A wrapper whose options it cannot read is kept (so no
// allow rule for the inner command applies).
func stripWrappers(ws []shellparse.Word) []shellparse.Word {
	for len(ws) > 1 {
		if ws[0].Dynamic {
			return ws
		}
		i := -1
		switch ws[0].Value {
		case "timeout":
			i = skipOpts(ws, 1, timeoutFlags, timeoutArgs)
			if i >= 0 && i < len(ws) && !ws[i].Dynamic {
				i++ // the duration
			} else {
				i = -1
			}
		case "time":
			i = skipOpts(ws, 1, timeFlags, noFlags)
		case "nice":
			if len(ws) > 1 && isNiceNumber(ws[1]) {
				i = 2
			} else {
				i = skipOpts(ws, 1, noFlags, niceArgs)
			}
		case "nohup", "builtin":
			i = skipOpts(ws, 1, noFlags, noFlags)
		case "stdbuf":
			i = skipOpts(ws, 1, noFlags, stdbufArgs)
		case "command":
			i = skipOpts(ws, 1, commandFlags, noFlags)
		case "xargs":
			if !ws[1].Dynamic && !strings.HasPrefix(ws[1].Value, "-") {
				i = 1
			}
		}
		if i < 1 || i >= len(ws) {
			return ws
		}
		ws = ws[i:]
	}
	return ws
}

func isNiceNumber(w shellparse.Word) bool {
	v := w.Value
	if w.Dynamic || len(v) < 2 || v[0] != '-' {
		return false
	}
	for _, c := range v[1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// stripRunners removes commands that run another command (env, sudo,
// watch, setsid, flock, ionice, xargs with options, chroot, …) for deny and
// ask matching, repeatedly, together with the transparent wrappers. It is
// best effort: deny rules match both the unstripped and the stripped form.
func stripRunners(ws []shellparse.Word) ([]shellparse.Word, bool) {
	stripped := false
	for len(ws) > 1 && !ws[0].Dynamic {
		ws = baseName(ws)
		i := -1
		switch ws[0].Value {
		case "env":
			i = skipOpts(ws, 1, envFlags, envArgs)
			for i >= 0 && i < len(ws) && !ws[i].Dynamic && isAssignWord(ws[i].Value) {
				i++
			}
		case "sudo", "doas", "runuser":
			i = skipOpts(ws, 1, sudoFlags, sudoArgs)
		case "watch":
			i = skipOpts(ws, 1, watchFlags, watchArgs)
		case "setsid":
			i = skipOpts(ws, 1, setsidFlags, noFlags)
		case "flock":
			i = skipOpts(ws, 1, flockFlags, flockArgs)
			if i >= 0 {
				i++ // the lock file
			}
		case "ionice":
			i = skipOpts(ws, 1, ioniceFlags, ioniceArgs)
		case "xargs":
			i = skipOpts(ws, 1, xargsFlags, xargsArgs)
		case "chroot":
			i = skipOpts(ws, 1, chrootFlags, noFlags)
			if i >= 0 {
				i++ // the new root
			}
		case "unshare":
			i = skipOpts(ws, 1, unshareFlags, noFlags)
		default:
			next := stripWrappers(ws)
			if len(next) == len(ws) {
				return ws, stripped
			}
			ws, stripped = next, true
			continue
		}
		if i < 1 || i >= len(ws) {
			return ws, stripped
		}
		ws, stripped = ws[i:], true
	}
	return ws, stripped
}

// baseName returns ws with a path-qualified command name (/usr/bin/env)
// reduced to its base name, for deny and ask matching only: an allow rule
// never approves ./rm because it names rm.
func baseName(ws []shellparse.Word) []shellparse.Word {
	if len(ws) == 0 || ws[0].Dynamic || !strings.Contains(ws[0].Value, "/") {
		return ws
	}
	w0 := ws[0]
	w0.Value = w0.Value[strings.LastIndexByte(w0.Value, '/')+1:]
	w0.Text = w0.Value
	return append([]shellparse.Word{w0}, ws[1:]...)
}

func isAssignWord(s string) bool {
	i := strings.IndexByte(s, '=')
	if i <= 0 {
		return false
	}
	for j, c := range s[:i] {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || j > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// shellCOperand returns the literal script of `sh -c 'script'` (any
// common shell, options before -c allowed).
func shellCOperand(ws []shellparse.Word) (string, bool) {
	if len(ws) < 3 || ws[0].Dynamic {
		return "", false
	}
	name := ws[0].Value
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	if !shells[name] {
		return "", false
	}
	for i := 1; i < len(ws)-1; i++ {
		v := ws[i].Value
		if ws[i].Dynamic || !strings.HasPrefix(v, "-") {
			return "", false
		}
		if strings.HasPrefix(v, "-") && !strings.HasPrefix(v, "--") && strings.Contains(v, "c") {
			if ws[i+1].Dynamic {
				return "", false
			}
			return ws[i+1].Value, true
		}
	}
	return "", false
}

// riskyWord reports a word whose value is only known at run time through a
// parameter expansion or substitution (it could become any text, flags
// included). Tilde and glob words are not risky in this sense.
func riskyWord(w shellparse.Word) bool {
	return w.Dynamic && (w.Split || strings.ContainsAny(w.Text, "$`"))
}

// dangerousArgs reports arguments that make a command that usually reads
// write or run other programs. A wildcard allow rule (Bash(find *)) never
// approves such a call; only an exact rule can.
func dangerousArgs(ws []shellparse.Word) bool {
	if len(ws) == 0 {
		return false
	}
	name := ws[0].Value
	args := ws[1:]
	has := func(pred func(string) bool) bool {
		for _, w := range args {
			if pred(w.Value) {
				return true
			}
		}
		return false
	}
	switch name {
	case "find":
		return has(func(v string) bool {
			switch v {
			case "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls":
				return true
			}
			return false
		})
	case "git":
		return has(func(v string) bool {
			return v == "-c" || strings.HasPrefix(v, "-c") && len(v) > 2 && !strings.HasPrefix(v, "--") && strings.Contains(v, "=") ||
				strings.HasPrefix(v, "--config-env") || strings.HasPrefix(v, "--exec-path") ||
				strings.HasPrefix(v, "--output") || v == "--ext-diff" || strings.HasPrefix(v, "--upload-pack") ||
				strings.HasPrefix(v, "--receive-pack") || strings.HasPrefix(v, "--open-files-in-pager") || v == "-O" ||
				strings.HasPrefix(v, "--git-dir") || strings.HasPrefix(v, "--work-tree")
		})
	case "sed":
		return has(func(v string) bool {
			return v == "-i" || strings.HasPrefix(v, "--in-place") || strings.HasPrefix(v, "-i") && !strings.HasPrefix(v, "--") ||
				strings.HasPrefix(v, "-") && !strings.HasPrefix(v, "--") && strings.Contains(v, "i")
		}) || sedScriptWrites(args)
	case "awk", "gawk", "mawk", "nawk":
		return has(func(v string) bool {
			return strings.Contains(v, "system") || strings.Contains(v, ">") || strings.Contains(v, "|") || strings.Contains(v, "getline")
		})
	case "rg":
		return has(func(v string) bool { return strings.HasPrefix(v, "--pre") })
	case "tar":
		return has(func(v string) bool {
			return strings.HasPrefix(v, "--to-command") || strings.HasPrefix(v, "--checkpoint-action") || strings.HasPrefix(v, "--use-compress-program") || v == "-I"
		})
	}
	return false
}

// sedScriptWrites reports a sed script (the first operand, or each -e
// value) holding a command that writes or runs: w, W, e, r, R, or an s
// command with the w or e flag. It is conservative.
func sedScriptWrites(args []shellparse.Word) bool {
	var scripts []string
	sawE := false
	for i := 0; i < len(args); i++ {
		v := args[i].Value
		switch {
		case v == "-e" || v == "--expression":
			sawE = true
			if i+1 < len(args) {
				scripts = append(scripts, args[i+1].Value)
				i++
			}
		case strings.HasPrefix(v, "--expression="):
			sawE = true
			scripts = append(scripts, strings.TrimPrefix(v, "--expression="))
		case v == "-f" || strings.HasPrefix(v, "--file"):
			return true // a script file we cannot see
		case strings.HasPrefix(v, "-"):
		default:
			if !sawE && len(scripts) == 0 {
				scripts = append(scripts, v)
			}
		}
	}
	for _, sc := range scripts {
		if sedWrites(sc) {
			return true
		}
	}
	return false
}

func sedWrites(script string) bool {
	for _, part := range strings.FieldsFunc(script, func(r rune) bool { return r == ';' || r == '\n' || r == '{' || r == '}' }) {
		p := strings.TrimLeft(strings.TrimSpace(part), "0123456789,$^.*!~+ ")
		// skip a /regex/ address
		for strings.HasPrefix(p, "/") {
			j := strings.IndexByte(p[1:], '/')
			if j < 0 {
				return true
			}
			p = strings.TrimLeft(p[j+2:], "0123456789,$^.*!~+ ")
		}
		if p == "" {
			continue
		}
		switch p[0] {
		case 'w', 'W', 'e', 'r', 'R':
			return true
		case 's', 'y':
			if p[0] == 'y' || len(p) < 2 {
				continue
			}
			d := p[1]
			n, k := 0, 2
			for ; k < len(p) && n < 2; k++ {
				if p[k] == '\\' {
					k++
					continue
				}
				if p[k] == d {
					n++
				}
			}
			if n < 2 || strings.ContainsAny(p[k:], "we") {
				return true
			}
		}
	}
	return false
}

// isRunner reports a command that runs another command given in its
// arguments; a wildcard allow rule never approves it.
func isRunner(ws []shellparse.Word) bool {
	if len(ws) == 0 {
		return false
	}
	if ws[0].Dynamic {
		return true
	}
	name := ws[0].Value
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	if name == "find" {
		return false // find's -exec is a dangerous argument, not the command itself
	}
	return runnerCommands[name] || shells[name]
}
