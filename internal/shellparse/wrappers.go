package shellparse

import (
	"strings"
	"sync"
)

// Wrappers and runners are the one list of commands that run another
// command given in their arguments.
//
// Wrappers only change how the inner command runs (a time limit, a
// priority, buffering); rules and the read-only classification look
// through them. Runners change who or where the inner command runs as, or
// run it repeatedly or at another time; deny and ask rules look through
// them, allow rules and the read-only classification do not.

// lazySet is set built on first use: package tables are not paid for by a
// process that analyses no command.
func lazySet(xs ...string) func() map[string]bool {
	return sync.OnceValue(func() map[string]bool { return set(xs...) })
}

func set(xs ...string) map[string]bool {
	m := make(map[string]bool, len(xs))
	for _, x := range xs {
		m[x] = true
	}
	return m
}

var (
	timeoutFlags = set("--preserve-status", "--foreground", "-v", "--verbose")
	timeoutArgs  = set("-s", "--signal", "-k", "--kill-after")
	niceArgs     = set("-n", "--adjustment")
	stdbufArgs   = set("-i", "-o", "-e", "--input", "--output", "--error")
	timeFlags    = set("-p")
	commandFlags = set("-p")
	noFlags      = set()
	envFlags     = set("-i", "--ignore-environment", "-0", "--null", "-v", "--debug")
	// env -S/--split-string splits its value into the command and its
	// first arguments: the command is not the next word, so env with -S
	// is not stripped (its inner command is unknown).
	envArgs      = set("-u", "--unset", "-C", "--chdir")
	sudoFlags    = set("-A", "-b", "-E", "-e", "-H", "-i", "-k", "-K", "-n", "-P", "-S", "-s", "-V", "-v", "--preserve-env", "--login", "--non-interactive", "--shell", "--stdin", "--background", "--set-home", "--askpass", "--reset-timestamp", "--remove-timestamp")
	sudoArgs     = set("-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-T", "--user", "--group", "--chdir", "--host", "--prompt", "--role", "--type", "--other-user", "--command-timeout", "--close-from")
	watchFlags   = set("-d", "-t", "-x", "-b", "-e", "-g", "-c", "-p", "-w", "--differences", "--no-title", "--exec", "--beep", "--errexit", "--chgexit", "--color", "--precise", "--no-wrap")
	watchArgs    = set("-n", "--interval", "-q", "--equexit")
	setsidFlags  = set("-c", "-f", "-w", "--ctty", "--fork", "--wait")
	flockFlags   = set("-s", "-x", "-e", "-n", "-u", "-o", "-F", "--shared", "--exclusive", "--nonblock", "--unlock", "--close", "--no-fork", "--verbose")
	flockArgs    = set("-w", "-E", "--timeout", "--conflict-exit-code")
	ioniceFlags  = set("-t", "--ignore")
	ioniceArgs   = set("-c", "-n", "--class", "--classdata")
	xargsFlags   = set("-0", "-r", "-t", "-p", "-x", "--null", "--no-run-if-empty", "--verbose", "--interactive", "--exit", "-o", "--open-tty")
	xargsArgs    = set("-n", "-I", "-L", "-P", "-d", "-E", "-s", "-a", "-i", "-l", "-e", "--max-args", "--replace", "--max-lines", "--max-procs", "--delimiter", "--eof", "--max-chars", "--arg-file")
	unshareFlags = set("-m", "-u", "-i", "-n", "-p", "-U", "-C", "-T", "-f", "-r", "--fork", "--mount", "--uts", "--ipc", "--net", "--pid", "--user", "--map-root-user")
	tasksetFlags = set("-a", "-c", "--all-tasks", "--cpu-list")
	chrtFlags    = set("-a", "-b", "-d", "-e", "-f", "-i", "-o", "-r", "-R", "--all-tasks", "--batch", "--deadline", "--fifo", "--idle", "--other", "--rr", "--reset-on-fork")
	execFlags    = set("-c", "-l")
	execArgs     = set("-a")
	// shells run a script given with -c, or a file.
	shells = set("sh", "bash", "zsh", "dash", "ksh", "mksh", "fish", "ash", "busybox", "rbash", "tcsh", "csh")
	// runnerNames are every runner stripRunners knows, plus commands that
	// run another command in a form it does not strip.
	runnerNames = set("env", "sudo", "doas", "runuser", "watch", "setsid", "flock", "ionice", "chroot", "unshare",
		"xargs", "taskset", "chrt", "exec", "nsenter", "su", "parallel", "strace", "ltrace", "gdb", "script",
		"fakeroot", "firejail", "systemd-run", "tmux", "screen", "dbus-launch", "ssh", "eval", "trap", "source", ".")
)

// skipOpts skips leading options of a wrapper. withArg lists options that
// take the next word as their argument; a word of the form -xVALUE or
// --opt=VALUE carries its own. It returns the index of the first operand,
// or -1 if an option is not known (the wrapper is then not stripped).
func skipOpts(ws []Word, i int, known, withArg map[string]bool) int {
	for i < len(ws) {
		w := ws[i]
		if w.Dynamic {
			if operandStart(w.Text) {
				return i // PATH="$x": its literal start is not an option
			}
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

// stripWrappers removes the wrappers that only change how a command runs
// (timeout, time, nice, nohup, stdbuf, command, builtin and flagless
// xargs), repeatedly. A wrapper whose options it cannot read is kept (and
// then classified as an unknown form of that command). It returns the
// class the wrappers themselves add (nohup writes nohup.out, xargs runs
// its command with words from its input).
func stripWrappers(ws []Word) ([]Word, Class, string) {
	var cl Class
	why := ""
	for len(ws) > 1 {
		if ws[0].Dynamic {
			return ws, cl, why
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
			if isNiceNumber(ws[1]) {
				i = 2
			} else {
				i = skipOpts(ws, 1, noFlags, niceArgs)
			}
		case "nohup":
			i = skipOpts(ws, 1, noFlags, noFlags)
			if i > 0 {
				cl |= Writes
				why = "nohup may write nohup.out"
			}
		case "builtin":
			i = skipOpts(ws, 1, noFlags, noFlags)
		case "stdbuf":
			i = skipOpts(ws, 1, noFlags, stdbufArgs)
		case "command":
			if !ws[1].Dynamic && (ws[1].Value == "-v" || ws[1].Value == "-V") {
				return ws, cl, why // a lookup, not a run
			}
			i = skipOpts(ws, 1, commandFlags, noFlags)
		case "xargs":
			if !ws[1].Dynamic && !strings.HasPrefix(ws[1].Value, "-") {
				i = 1
				cl |= Runs | Opaque
				why = "xargs runs its command with arguments read from its input"
			}
		}
		if i < 1 || i >= len(ws) {
			return ws, cl, why
		}
		ws = ws[i:]
	}
	return ws, cl, why
}

func isNiceNumber(w Word) bool {
	v := w.Value
	if w.Dynamic || len(v) < 2 || v[0] != '-' {
		return false
	}
	return isDigits(v[1:])
}

// runner is how to find the inner command of a runner: its options without
// and with a value, then a number of operands before the command (flock's
// lock file, chroot's root, taskset's mask, chrt's priority).
type runner struct {
	flags, args map[string]bool
	operands    int
}

var runners = map[string]runner{
	"sudo": {sudoFlags, sudoArgs, 0}, "doas": {sudoFlags, sudoArgs, 0}, "runuser": {sudoFlags, sudoArgs, 0},
	"watch": {watchFlags, watchArgs, 0}, "setsid": {setsidFlags, noFlags, 0}, "flock": {flockFlags, flockArgs, 1},
	"ionice": {ioniceFlags, ioniceArgs, 0}, "xargs": {xargsFlags, xargsArgs, 0}, "chroot": {noFlags, noFlags, 1},
	"unshare": {unshareFlags, noFlags, 0}, "taskset": {tasksetFlags, noFlags, 1}, "chrt": {chrtFlags, noFlags, 1},
	"exec": {execFlags, execArgs, 0},
}

func isRunnerWithOptions(name string) bool {
	_, ok := runners[baseOf(name)]
	return ok || baseOf(name) == "env"
}

// stripRunners removes commands that run another command (env, sudo,
// watch, setsid, flock, ionice, xargs with options, chroot, unshare,
// taskset, chrt, exec), together with wrappers, repeatedly. wrapped
// reports that one was removed; unresolved that a runner's options could
// not be read, so its inner command is unknown.
func stripRunners(ws []Word) (inner []Word, wrapped, unresolved bool) {
	for len(ws) > 1 && !ws[0].Dynamic {
		i := -1
		switch baseOf(ws[0].Value) {
		case "env":
			i = skipOpts(ws, 1, envFlags, envArgs)
			// NAME=value (a dynamic value is still an assignment when the
			// name is literal).
			for i >= 0 && i < len(ws) && (!ws[i].Dynamic && isAssignWord(ws[i].Value) || ws[i].Dynamic && isAssignWord(ws[i].Text)) {
				i++
			}
			if i >= 0 && i >= len(ws) {
				return ws, wrapped, false // env VAR=x: prints the environment
			}
		case "nsenter", "su", "parallel", "strace", "ltrace", "gdb", "script", "fakeroot", "firejail",
			"systemd-run", "tmux", "screen", "dbus-launch", "ssh":
			// Runners whose options are not modelled: the inner
			// command is not known.
			return ws, true, true
		default:
			r, ok := runners[baseOf(ws[0].Value)]
			if !ok {
				break
			}
			i = skipOpts(ws, 1, r.flags, r.args)
			if i >= 0 {
				i += r.operands
			}
		}
		if i == -1 && !isRunnerWithOptions(ws[0].Value) {
			next, _, _ := stripWrappers(ws)
			if len(next) == len(ws) {
				return ws, wrapped, unresolved
			}
			ws = next
			continue
		}
		if i < 1 || i >= len(ws) {
			return ws, true, true
		}
		ws, wrapped = ws[i:], true
	}
	return ws, wrapped, unresolved
}

// operandStart reports a word whose source text starts with a literal
// character that no expansion can turn into an option's "-".
func operandStart(text string) bool {
	if text == "" {
		return false
	}
	switch c := text[0]; c {
	case '-', '$', '`', '"', '\'', '\\', '*', '?', '[', '{', '~', '<', '>':
		return false
	}
	return true
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

// IsRunner reports a command (by base name) that runs another command
// given in its arguments.
func IsRunner(name string) bool { return runnerNames[name] || shells[name] }
