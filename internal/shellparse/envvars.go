package shellparse

import (
	"strings"
	"sync"
)

// Environment assignments: the one home of the rule that decides which
// variables a command line may set without changing what a command runs
// or loads. It is an allow-list: a variable is inert only if it is listed
// here and its value has the listed shape. Everything else — GIT_*,
// PAGER, EDITOR, LD_PRELOAD, BASH_ENV, PATH, IFS, PYTHONPATH, NODE_OPTIONS,
// TAR_OPTIONS, SSH_ASKPASS, a variable this list has never heard of — can
// name a program, a loader, a library or options for one, so setting it
// (before a command, through env NAME=value, or with a dynamic value) is
// not understood.

// inertVars are the variables whose value only changes how a program
// formats what it prints, mapped to the shape their value must have.
var inertVars = sync.OnceValue(func() map[string]func(string) bool {
	return map[string]func(string) bool{
		"LANG": localeName, "LANGUAGE": localeList, "LC_ALL": localeName,
		"TZ":   tzName,
		"TERM": termName, "COLORTERM": termName,
		"COLUMNS": digits, "LINES": digits,
		"NO_COLOR": anyFlag, "CLICOLOR": anyFlag, "CLICOLOR_FORCE": anyFlag, "FORCE_COLOR": anyFlag,
		"CI": anyFlag, "PYTHONUNBUFFERED": anyFlag, "PYTHONDONTWRITEBYTECODE": anyFlag,
		"RUST_BACKTRACE": anyFlag, "TIME_STYLE": anyFlag, "QUOTING_STYLE": anyFlag,
	}
})

// inertAssign reports whether an assignment cannot change what a command
// runs or loads: a listed variable (or LC_*, a locale category) with a
// literal value of the listed shape.
func inertAssign(name, value string, dynamic bool) bool {
	if dynamic {
		return false
	}
	check, ok := inertVars()[name]
	if !ok && strings.HasPrefix(name, "LC_") && len(name) > 3 {
		check, ok = localeName, true
	}
	return ok && check(value)
}

// safeAssign is inertAssign for a parsed assignment.
func safeAssign(as Assign) bool { return inertAssign(as.Name, as.Value, as.Dynamic) }

// InertAssigns reports whether every assignment is inert (see the list
// above); none is true.
func InertAssigns(as []Assign) bool {
	for _, a := range as {
		if !safeAssign(a) {
			return false
		}
	}
	return true
}

// runnerAssigns checks the NAME=value words a runner (env) gives its
// command: the same rule as assignments before a command.
func runnerAssigns(e *Cmd, prefix []Word) {
	for _, w := range prefix {
		text := w.Value
		if w.Dynamic {
			text = w.Text
		}
		if !isAssignWord(text) {
			continue
		}
		name, value, _ := strings.Cut(text, "=")
		if !inertAssign(name, value, w.Dynamic) {
			e.add(Opaque, "env sets %s, which can change what commands run or load", name)
			e.Escalated = true
		}
	}
}

// localeName: a locale such as C, POSIX, en_US.UTF-8, de_DE@euro — never
// a path (glibc loads a locale given by path).
func localeName(v string) bool { return v != "" && onlyBytes(v, "_.-@+=,") }

// localeList: LANGUAGE's colon-separated list of locale names.
func localeList(v string) bool { return v != "" && onlyBytes(v, "_.-@+=,:") }

// tzName: a zone name (Europe/Paris, UTC, EST5EDT, <+03>-3) — not an
// absolute path and no "..", so it names a file under the zone directory.
func tzName(v string) bool {
	v = strings.TrimPrefix(v, ":")
	return !strings.HasPrefix(v, "/") && !strings.Contains(v, "..") && onlyBytes(v, "_.-+/,<>:")
}

// termName: a terminal type (xterm-256color): never a path.
func termName(v string) bool { return v != "" && onlyBytes(v, "_.-+") }

func digits(v string) bool { return v == "" || isDigits(v) }

// anyFlag: a switch; its value is text the program only compares.
func anyFlag(v string) bool { return onlyBytes(v, "_.-+=:, ") }

// onlyBytes reports whether v holds only ASCII letters, digits and the
// bytes in extra.
func onlyBytes(v, extra string) bool {
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte(extra, c) >= 0) {
			return false
		}
	}
	return true
}

// proxyVars are the lower-case names programs read from the environment
// to choose where they connect.
var proxyVars = lazySet("http_proxy", "https_proxy", "ftp_proxy", "all_proxy", "no_proxy")

// shellVarOK reports whether a shell variable may be assigned where no
// command follows (a for or select loop's variable, ${NAME:=value}): an
// inert variable, or a lower-case name (a script's own variable) that is
// not a proxy setting. Upper-case names may already be exported — PATH,
// IFS, CDPATH, HOME, LD_PRELOAD, BASH_ENV, PS4 — and an assignment then
// changes what every later command runs or loads.
func shellVarOK(name string) bool {
	if _, ok := inertVars()[name]; ok || strings.HasPrefix(name, "LC_") {
		return true
	}
	if name == "" || proxyVars()[name] {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}
