package shellparse

import (
	"fmt"
	"strings"
)

// ReadOnly reports whether a parsed command line only reads: every simple
// command is a known read-only command used with safe flags, nothing is
// redirected to a file (/dev/null and the standard streams are fine), there
// is no command or process substitution, nothing runs in the background, no
// construct is beyond the analysis ([Script.Complex]), no assignment sets a
// variable other than a few harmless locale/display ones, and no command
// name is dynamic or a path. When it says no, the string says why (for
// logs and tests).
//
// The answer is fail-closed: a command it does not know is not read-only.
// Commands that run other commands (env with arguments, sudo, xargs,
// timeout, nice, nohup, watch, setsid, command without -v, …) are never
// read-only, nor are awk (system()), and cd (it changes the session's
// working directory). A nil Script is not read-only.
func ReadOnly(s *Script) (bool, string) {
	switch {
	case s == nil:
		return false, "no analysis"
	case s.HasCommandSubst:
		return false, "command substitution"
	case s.HasProcessSubst:
		return false, "process substitution"
	case s.HasBackground:
		return false, "background job"
	case s.Complex:
		return false, "construct beyond the analysis (function, eval-like builtin, arithmetic evaluation, …)"
	}
	for _, r := range s.Redirects {
		if r.Write && !r.IsDevNull() {
			return false, fmt.Sprintf("redirect %s to %s writes a file", r.Op, r.Target)
		}
	}
	for i := range s.Commands {
		if ok, why := CommandReadOnly(&s.Commands[i]); !ok {
			return false, why
		}
	}
	return true, ""
}

// ReadOnlySource parses src and classifies it with [ReadOnly]; a parse
// error is not read-only.
func ReadOnlySource(src string) (bool, string) {
	s, err := Parse(src)
	if err != nil {
		return false, err.Error()
	}
	return ReadOnly(s)
}

// safeAssign are variables whose assignment cannot change what a command
// runs or loads.
func safeAssign(name string) bool {
	switch name {
	case "LANG", "LANGUAGE", "TZ", "NO_COLOR", "CLICOLOR", "COLUMNS", "LINES", "TERM":
		return true
	}
	return strings.HasPrefix(name, "LC_")
}

// check decides a command given its operands (Args without the name).
type check func(c *Command) (bool, string)

// anyArgs accepts any operands, dynamic ones included: the command has no
// option that writes or runs anything.
func anyArgs(*Command) (bool, string) { return true, "" }

// literalExcept accepts only fully literal operands, none of which is a
// rejected flag. A long flag matches by prefix ("--output" rejects
// "--output=x"); shortLetters rejects any short-flag cluster containing
// one of its letters ("-o", "-so").
func literalExcept(long []string, shortLetters string) check {
	return func(c *Command) (bool, string) {
		if ok, why := literal(c); !ok {
			return false, why
		}
		for _, a := range c.Args[1:] {
			if a == "--" {
				break
			}
			if strings.HasPrefix(a, "--") {
				for _, l := range long {
					if a == l || strings.HasPrefix(a, l+"=") || (strings.HasSuffix(l, "*") && strings.HasPrefix(a, strings.TrimSuffix(l, "*"))) {
						return false, fmt.Sprintf("%s %s", c.Args[0], a)
					}
				}
				continue
			}
			if len(a) > 1 && a[0] == '-' && strings.ContainsAny(a[1:], shortLetters) && shortLetters != "" {
				return false, fmt.Sprintf("%s %s", c.Args[0], a)
			}
		}
		return true, ""
	}
}

// literal rejects dynamic operands: a glob or $x can expand to a flag.
func literal(c *Command) (bool, string) {
	for _, w := range c.Words[1:] {
		if w.Dynamic {
			return false, fmt.Sprintf("%s with a dynamic operand %s", c.Args[0], w.Text)
		}
	}
	return true, ""
}

// operands returns the non-flag operands.
func operands(args []string) []string {
	var out []string
	dash := false
	for _, a := range args {
		if !dash && a == "--" {
			dash = true
			continue
		}
		if !dash && len(a) > 1 && a[0] == '-' {
			continue
		}
		out = append(out, a)
	}
	return out
}

func noArgs(c *Command) (bool, string) {
	if len(c.Args) > 1 {
		return false, c.Args[0] + " with arguments"
	}
	return true, ""
}

func atMostOneOperand(c *Command) (bool, string) {
	if ok, why := literal(c); !ok {
		return false, why
	}
	if len(operands(c.Args[1:])) > 1 {
		return false, c.Args[0] + " with an output operand"
	}
	return true, ""
}

// readOnlyCommands maps a command name to its check. A name not here is not
// read-only.
var readOnlyCommands = map[string]check{
	// Files and text, no writing or executing options.
	"cat": anyArgs, "head": anyArgs, "tail": anyArgs, "wc": anyArgs, "ls": anyArgs,
	"grep": anyArgs, "egrep": anyArgs, "fgrep": anyArgs, "stat": anyArgs, "du": anyArgs,
	"df": anyArgs, "cut": anyArgs, "tr": anyArgs, "nl": anyArgs, "od": anyArgs,
	"hexdump": anyArgs, "diff": anyArgs, "cmp": anyArgs, "comm": anyArgs, "column": anyArgs,
	"strings": anyArgs, "fold": anyArgs, "rev": anyArgs, "paste": anyArgs, "join": anyArgs,
	"tac": anyArgs, "md5sum": anyArgs, "sha1sum": anyArgs, "sha256sum": anyArgs,
	"sha512sum": anyArgs, "b2sum": anyArgs, "cksum": anyArgs, "base64": anyArgs, "jq": anyArgs,
	"realpath": anyArgs, "readlink": anyArgs, "basename": anyArgs, "dirname": anyArgs,
	// Shell and system information.
	"pwd": anyArgs, "echo": anyArgs, "which": anyArgs, "whereis": anyArgs, "type": anyArgs,
	"uname": anyArgs, "whoami": anyArgs, "id": anyArgs, "groups": anyArgs, "nproc": anyArgs,
	"uptime": anyArgs, "free": anyArgs, "ps": anyArgs, "locale": anyArgs, "printenv": anyArgs,
	"arch": anyArgs, "true": anyArgs, "false": anyArgs, ":": anyArgs, "test": anyArgs,
	"[": anyArgs, "[[": anyArgs, "seq": anyArgs, "expr": anyArgs, "sleep": anyArgs,
	// Checked.
	"printf":   literalExcept(nil, "v"),
	"env":      noArgs,
	"hostname": noArgs,
	"uniq":     atMostOneOperand,
	"xxd":      atMostOneOperand,
	"file":     literalExcept([]string{"--compile"}, "C"),
	"sort":     literalExcept([]string{"--output", "--compress-program"}, "o"),
	"tree":     literalExcept([]string{"--output"}, "oR"),
	"rg":       literalExcept([]string{"--pre", "--pre-glob", "--hostname-bin"}, ""),
	"date":     dateCheck,
	"command":  commandCheck,
	"find":     findCheck,
	"sed":      sedCheck,
	"git":      gitCheck,
}

// CommandReadOnly classifies one simple command like [ReadOnly] does: a
// known read-only command with safe flags, no file redirect, only harmless
// assignments. Script-level facts (substitutions, background, [Script.Complex],
// redirects of compound commands) are not seen here; use [ReadOnly] for a
// whole command line.
func CommandReadOnly(c *Command) (bool, string) {
	for _, r := range c.Redirects {
		if r.Write && !r.IsDevNull() {
			return false, fmt.Sprintf("redirect %s to %s writes a file", r.Op, r.Target)
		}
	}
	for _, a := range c.Assigns {
		if a.Dynamic || !safeAssign(a.Name) {
			return false, fmt.Sprintf("assignment to %s", a.Name)
		}
	}
	if len(c.Words) == 0 {
		return true, ""
	}
	name := c.Words[0]
	if name.Dynamic {
		return false, "dynamic command name " + name.Text
	}
	if strings.Contains(name.Value, "/") {
		return false, "command given by path " + name.Value
	}
	chk, ok := readOnlyCommands[name.Value]
	if !ok {
		return false, name.Value + " is not a known read-only command"
	}
	return chk(c)
}

func dateCheck(c *Command) (bool, string) {
	if ok, why := literalExcept([]string{"--set"}, "s")(c); !ok {
		return false, why
	}
	for _, op := range operands(c.Args[1:]) {
		if !strings.HasPrefix(op, "+") {
			return false, "date with an operand that sets the clock"
		}
	}
	return true, ""
}

// commandCheck accepts only `command -v name` and `command -V name`; any
// other form runs a command.
func commandCheck(c *Command) (bool, string) {
	if ok, why := literal(c); !ok {
		return false, why
	}
	if len(c.Args) >= 3 && (c.Args[1] == "-v" || c.Args[1] == "-V") {
		return true, ""
	}
	return false, "command runs another command"
}

// findCheck rejects find's actions that run commands or write files.
func findCheck(c *Command) (bool, string) {
	if ok, why := literal(c); !ok {
		return false, why
	}
	for _, a := range c.Args[1:] {
		switch a {
		case "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls":
			return false, "find " + a
		}
	}
	return true, ""
}

// sedCheck accepts only `sed -n` with print-only scripts (`sed -n '1,20p'
// f`, `sed -n '/re/p'`): no -i, no script files, no s///, w, W, e, r, R.
func sedCheck(c *Command) (bool, string) {
	if ok, why := literal(c); !ok {
		return false, why
	}
	quiet := false
	var scripts []string
	haveE := false
	args := c.Args[1:]
	var files []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			files = append(files, args[i+1:]...)
			i = len(args)
		case a == "-e" || a == "--expression":
			if i+1 >= len(args) {
				return false, "sed -e without a script"
			}
			scripts = append(scripts, args[i+1])
			haveE = true
			i++
		case strings.HasPrefix(a, "--expression="):
			scripts = append(scripts, strings.TrimPrefix(a, "--expression="))
			haveE = true
		case a == "--quiet" || a == "--silent":
			quiet = true
		case a == "--posix" || a == "--debug" || a == "--regexp-extended" || a == "--null-data" ||
			a == "--separate" || a == "--unbuffered" || a == "--sandbox":
		case strings.HasPrefix(a, "--"):
			return false, "sed " + a
		case len(a) > 1 && a[0] == '-':
			for _, f := range a[1:] {
				switch f {
				case 'n':
					quiet = true
				case 'E', 'r', 'z', 's', 'u':
				default:
					return false, "sed -" + string(f)
				}
			}
		default:
			files = append(files, a)
		}
	}
	if !haveE {
		if len(files) == 0 {
			return false, "sed without a script"
		}
		scripts = append(scripts, files[0])
	}
	if !quiet {
		return false, "sed without -n"
	}
	for _, s := range scripts {
		if !sedPrintOnly(s) {
			return false, fmt.Sprintf("sed script %q is not print-only", s)
		}
	}
	return true, ""
}

// sedPrintOnly reports whether a sed script is a list of print-only
// commands: [addr[,addr]][!]{p,P,=,l,q,Q,d} separated by ; or newlines.
func sedPrintOnly(script string) bool {
	i := 0
	n := len(script)
	skipSpace := func() {
		for i < n && (script[i] == ' ' || script[i] == '\t') {
			i++
		}
	}
	addr := func() bool {
		switch {
		case i < n && script[i] == '$':
			i++
			return true
		case i < n && script[i] >= '0' && script[i] <= '9':
			for i < n && (script[i] >= '0' && script[i] <= '9' || script[i] == '~') {
				i++
			}
			return true
		case i < n && script[i] == '/':
			i++
			for i < n && script[i] != '/' {
				if script[i] == '\\' {
					i++
				}
				if i < n && script[i] == '\n' {
					return false
				}
				i++
			}
			if i >= n {
				return false
			}
			i++
			for i < n && (script[i] == 'I' || script[i] == 'M') {
				i++
			}
			return true
		}
		return false
	}
	cmds := 0
	for {
		skipSpace()
		for i < n && (script[i] == ';' || script[i] == '\n') {
			i++
			skipSpace()
		}
		if i >= n {
			return cmds > 0
		}
		if addr() {
			skipSpace()
			if i < n && script[i] == ',' {
				i++
				skipSpace()
				if i < n && (script[i] == '+' || script[i] == '~') {
					i++
					for i < n && script[i] >= '0' && script[i] <= '9' {
						i++
					}
				} else if !addr() {
					return false
				}
			}
		}
		skipSpace()
		if i < n && script[i] == '!' {
			i++
			skipSpace()
		}
		if i >= n {
			return false
		}
		switch script[i] {
		case 'p', 'P', '=', 'l', 'q', 'Q', 'd':
			i++
			cmds++
		default:
			return false
		}
		skipSpace()
		if i < n && script[i] != ';' && script[i] != '\n' {
			return false
		}
	}
}

// gitReadOnly lists git subcommands that only read, with an extra check
// where a subcommand also has writing forms.
var gitReadOnly = map[string]func(args []string) bool{
	"status": nil, "diff": nil, "log": nil, "show": nil, "rev-parse": nil, "ls-files": nil,
	"ls-tree": nil, "cat-file": nil, "blame": nil, "shortlog": nil, "describe": nil,
	"merge-base": nil, "show-ref": nil, "grep": nil, "count-objects": nil, "rev-list": nil,
	"name-rev": nil, "for-each-ref": nil, "whatchanged": nil, "version": nil, "diff-tree": nil,
	"diff-files": nil, "diff-index": nil, "cherry": nil, "range-diff": nil,
	"branch": listOnly([]string{"-d", "-D", "-m", "-M", "-c", "-C", "-f", "-u", "--delete", "--move",
		"--copy", "--force", "--set-upstream-to", "--unset-upstream", "--edit-description", "--track",
		"--no-track", "--create-reflog"}),
	"tag": listOnly([]string{"-d", "-a", "-s", "-u", "-f", "-m", "-F", "--delete", "--annotate",
		"--sign", "--local-user", "--force", "--message", "--file", "--edit", "-e", "--create-reflog"}),
	"remote": func(args []string) bool {
		return len(args) == 0 || (len(args) == 1 && (args[0] == "-v" || args[0] == "--verbose")) ||
			(len(args) >= 1 && args[0] == "get-url")
	},
	"stash": func(args []string) bool {
		return len(args) >= 1 && (args[0] == "list" || args[0] == "show")
	},
	"reflog": func(args []string) bool { return len(args) == 0 || args[0] == "show" },
	"config": func(args []string) bool {
		for _, a := range args {
			switch a {
			case "--get", "--get-all", "--get-regexp", "--list", "-l", "--get-urlmatch":
				return true
			}
		}
		return false
	},
	"worktree": func(args []string) bool { return len(args) >= 1 && args[0] == "list" },
}

// listOnly accepts the listing forms of branch and tag: no flag from deny,
// and operands only as patterns after -l/--list.
func listOnly(deny []string) func([]string) bool {
	return func(args []string) bool {
		list := false
		for _, a := range args {
			for _, d := range deny {
				if a == d || strings.HasPrefix(a, d+"=") {
					return false
				}
			}
			if a == "-l" || a == "--list" {
				list = true
			}
		}
		return list || len(operands(args)) == 0
	}
}

// gitDenyFlags are flags that write files or run programs in any
// subcommand (prefix match).
var gitDenyFlags = []string{
	"--output", "--ext-diff", "--exec", "--upload-pack", "--receive-pack", "--config",
	"--open-files-in-pager", "-O", "--textconv", "--run", "--paginate",
}

func gitCheck(c *Command) (bool, string) {
	if ok, why := literal(c); !ok {
		return false, why
	}
	args := c.Args[1:]
	// Global options before the subcommand.
	i := 0
	for ; i < len(args) && strings.HasPrefix(args[i], "-"); i++ {
		switch a := args[i]; a {
		case "--no-pager", "-P", "--no-optional-locks", "--literal-pathspecs", "--no-replace-objects":
		case "-C":
			i++
		default:
			return false, "git global option " + a
		}
	}
	if i >= len(args) {
		return false, "git without a subcommand"
	}
	sub, rest := args[i], args[i+1:]
	extra, ok := gitReadOnly[sub]
	if !ok {
		return false, "git " + sub + " is not a read-only subcommand"
	}
	for _, a := range rest {
		if a == "--" {
			break
		}
		for _, d := range gitDenyFlags {
			if strings.HasPrefix(a, d) {
				return false, "git " + sub + " " + a
			}
		}
	}
	if extra != nil && !extra(rest) {
		return false, "git " + sub + " in a writing form"
	}
	return true, ""
}
