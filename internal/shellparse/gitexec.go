package shellparse

import (
	"strings"
	"sync"
)

// Git that runs programs. Every subcommand that is not a pure read may run
// the repository's hooks (.git/hooks or core.hooksPath: pre-commit,
// post-checkout, reference-transaction on any ref update, …) and programs
// its configuration names (an editor, a merge driver, credential helpers),
// so it is classed as running other commands: never read-only, and never
// an acceptEdits "edit". On top of that, the options below hand git a
// program or shell text to run, given on the command line; they escalate
// the command (a wildcard allow rule such as Bash(git rebase *) never
// approves `git rebase --exec 'rm -rf ~' main`), and a literal payload is
// analysed as commands of its own, so deny rules see what it runs.

// gitExecKind is what an option's value (or the option itself) runs.
type gitExecKind byte

const (
	execShell   gitExecKind = iota + 1 // the value is shell text (rebase --exec)
	execProgram                        // the value names a program (--upload-pack, --receive-pack)
	execTool                           // the option makes git start a configured program (an editor, a tool)
	execConfig                         // the value is configuration, which can name programs (clone -c)
)

// gitExecOpt is an option of a subcommand that runs something: long is
// "--name" (value attached with = or the next word; "" for none), short
// is its one-letter form (0 for none). noArg marks an option without a
// value.
type gitExecOpt struct {
	long  string
	short byte
	noArg bool
	kind  gitExecKind
}

// gitExecOpts are the options per subcommand that make git run a program.
var gitExecOpts = sync.OnceValue(func() map[string][]gitExecOpt {
	return map[string][]gitExecOpt{
		"rebase": {{"--exec", 'x', false, execShell}, {"--interactive", 'i', true, execTool}, {"--edit-todo", 0, true, execTool},
			{"--strategy", 's', false, execProgram}},
		"merge":      {{"--strategy", 's', false, execProgram}, {"--edit", 'e', true, execTool}},
		"pull":       {{"--upload-pack", 0, false, execProgram}, {"--strategy", 's', false, execProgram}},
		"fetch":      {{"--upload-pack", 0, false, execProgram}},
		"clone":      {{"--upload-pack", 'u', false, execProgram}, {"--template", 0, false, execProgram}, {"--config", 'c', false, execConfig}},
		"init":       {{"--template", 0, false, execProgram}},
		"ls-remote":  {{"--upload-pack", 'u', false, execProgram}},
		"fetch-pack": {{"--upload-pack", 0, false, execProgram}, {"--exec", 0, false, execProgram}},
		"push":       {{"--receive-pack", 0, false, execProgram}, {"--exec", 0, false, execProgram}},
		"send-pack":  {{"--receive-pack", 0, false, execProgram}, {"--exec", 0, false, execProgram}},
		"archive":    {{"--exec", 0, false, execProgram}, {"--remote", 0, false, execProgram}},
		"difftool":   {{"--extcmd", 'x', false, execShell}, {"--tool", 't', false, execProgram}},
		"mergetool":  {{"--tool", 't', false, execProgram}},
		"commit":     {{"--edit", 'e', true, execTool}, {"--interactive", 0, true, execTool}, {"--patch", 'p', true, execTool}},
		"am":         {{"--interactive", 'i', true, execTool}},
		"send-email": {{"--smtp-server", 0, false, execProgram}, {"--sendmail-cmd", 0, false, execShell},
			{"--to-cmd", 0, false, execShell}, {"--cc-cmd", 0, false, execShell}, {"--header-cmd", 0, false, execShell},
			{"--compose", 0, true, execTool}, {"--annotate", 0, true, execTool}},
		"filter-branch": {{"--tree-filter", 0, false, execShell}, {"--index-filter", 0, false, execShell},
			{"--env-filter", 0, false, execShell}, {"--msg-filter", 0, false, execShell}, {"--commit-filter", 0, false, execShell},
			{"--parent-filter", 0, false, execShell}, {"--tag-name-filter", 0, false, execShell}, {"--setup", 0, false, execShell}},
	}
})

// builtinStrategies are the merge strategies built into git; any other
// name runs the program git-merge-<name>.
var builtinStrategies = lazySet("ort", "recursive", "resolve", "octopus", "ours", "subtree")

// gitRuns classifies a subcommand that is not a pure read: it runs hooks
// and configured programs (Runs); its exec options escalate it and their
// literal payloads are analysed; subcommands that take a command as
// operands (bisect run, submodule foreach) have it analysed as a payload.
// mv and rm record their operands (protected paths, Read deny rules).
func gitRuns(an *analyzer, idx int, sub string, rest []Word) {
	e := an.at(idx)
	e.add(Runs, "git %s may run the repository's hooks and the programs its configuration names", sub)
	var payloads []string
	var payloadWords []Word
	ops := gitOperands(rest, gitExecOpts()[sub], func(o gitExecOpt, flag string, val *Word) {
		if o.long == "--strategy" && val != nil && !val.Dynamic && builtinStrategies()[val.Value] {
			return // built into git: no program is looked up
		}
		e := an.at(idx)
		e.Escalated = true
		show := flag
		if val != nil {
			show += " " + val.Text
		}
		switch o.kind {
		case execShell:
			e.add(Runs, "git %s %s runs a shell command", sub, show)
			if val != nil && !val.Dynamic {
				payloads = append(payloads, val.Value)
			} else {
				e.add(Opaque, "git %s %s: the command is only known when the shell runs", sub, flag)
				e.Unresolved = true
			}
		case execProgram:
			e.add(Runs, "git %s %s runs another program", sub, show)
		case execTool:
			e.add(Runs, "git %s %s starts an editor or tool the configuration names", sub, show)
		case execConfig:
			e.add(Runs|Opaque, "git %s %s sets configuration, which can make git run programs", sub, show)
		}
	})
	e = an.at(idx)
	switch {
	case sub == "bisect" && len(ops) > 0 && !ops[0].Dynamic && ops[0].Value == "run":
		e.add(Runs, "git bisect run runs a command for every step")
		e.Escalated = true
		payloadWords = ops[1:]
		if len(payloadWords) == 0 {
			e.add(Opaque, "git bisect run without a command")
		}
	case sub == "submodule":
		for i, w := range ops {
			if w.Dynamic || w.Value != "foreach" {
				continue
			}
			e.add(Runs, "git submodule foreach runs a shell command in every submodule")
			e.Escalated = true
			var parts []string
			for _, p := range ops[i+1:] {
				if p.Dynamic {
					e.add(Opaque, "git submodule foreach: the command is only known when the shell runs")
					e.Unresolved = true
					parts = nil
					break
				}
				if len(parts) == 0 && strings.HasPrefix(p.Value, "--") {
					continue // --recursive
				}
				parts = append(parts, p.Value)
			}
			if len(parts) > 0 {
				payloads = append(payloads, strings.Join(parts, " "))
			}
			break
		}
	case sub == "mv" || sub == "rm":
		gitFileOps(e, sub, ops)
	}
	for _, w := range ops {
		// A remote "<transport>::<address>" given to a subcommand that
		// reaches a remote runs the remote helper git-remote-<transport>;
		// ext:: runs a shell command.
		if gitWrite[sub]&Network == 0 && sub != "remote" {
			break
		}
		if t, _, ok := strings.Cut(w.Value, "::"); ok && !w.Dynamic && t != "" && onlyBytes(t, "+.-") {
			e.add(Runs, "git %s %s runs the remote helper git-remote-%s", sub, w.Text, t)
			e.Escalated = true
		}
	}
	for _, src := range payloads {
		an.payloadSource(src, idx)
	}
	if len(payloadWords) > 0 {
		an.payloadWords(payloadWords, false, idx)
	}
}

// gitOperands walks a subcommand's arguments, calls hit for every exec
// option (with its value, or nil) and returns the operands: words that are
// not options (values of other options cannot be told from operands; a
// word after "--" is always an operand).
func gitOperands(args []Word, opts []gitExecOpt, hit func(o gitExecOpt, flag string, val *Word)) []Word {
	var ops []Word
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
		if strings.HasPrefix(v, "--") {
			name, val, hasVal := strings.Cut(v, "=")
			for _, o := range opts {
				// getopt accepts an unambiguous prefix: --exe is --exec.
				if o.long == "" || len(name) < 3 || !strings.HasPrefix(o.long, name) {
					continue
				}
				switch {
				case o.noArg:
					hit(o, v, nil)
				case hasVal:
					hit(o, name, &Word{Text: val, Value: val})
				case i+1 < len(args):
					i++
					hit(o, name, &args[i])
				default:
					hit(o, name, nil)
				}
				break
			}
			continue
		}
		// A cluster of short options: -ix CMD, -xCMD.
	cluster:
		for j := 1; j < len(v); j++ {
			for _, o := range opts {
				if o.short != v[j] {
					continue
				}
				switch {
				case o.noArg:
					hit(o, "-"+v[j:j+1], nil)
					continue cluster
				case j+1 < len(v):
					val := v[j+1:]
					hit(o, "-"+v[j:j+1], &Word{Text: val, Value: val})
				case i+1 < len(args):
					i++
					hit(o, "-"+v[j:j+1], &args[i])
				default:
					hit(o, "-"+v[j:j+1], nil)
				}
				break cluster
			}
		}
	}
	return ops
}

// gitFileOps records git mv's sources (moved away: a Transfer) and
// destination, and git rm's files, as writes.
func gitFileOps(e *Cmd, sub string, ops []Word) {
	if sub == "rm" {
		for _, w := range ops {
			e.Writes = append(e.Writes, pathOf(w))
		}
		return
	}
	if len(ops) < 2 {
		return
	}
	for _, w := range ops[:len(ops)-1] {
		p := pathOf(w)
		p.Destructive, p.Transfer, p.Recursive = true, true, true
		e.Writes = append(e.Writes, p)
	}
	e.Writes = append(e.Writes, pathOf(ops[len(ops)-1]))
}
