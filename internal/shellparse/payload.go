package shellparse

import "strings"

// Run-time text substituted into a payload: xargs -I R and find -exec
// put text only known when they run (a line of input, a file name) in
// place of a replacement string. A payload word that holds the string is
// therefore only known at run time: a shell's -c script, an eval or the
// command name built from it is unresolved, a path built from it is
// unknown. Runners that hand their command to a shell as one text
// (watch, sudo -s, env -S) are unresolved too: the shell parses words the
// analysis only saw as arguments.

// substituted returns ws with every word that contains rep replaced by a
// word only known at run time (its source text kept for reasons).
func substituted(ws []Word, rep string) []Word {
	if rep == "" {
		return ws
	}
	var out []Word
	for i, w := range ws {
		if !strings.Contains(w.Value, rep) && !strings.Contains(w.Text, rep) {
			continue
		}
		if out == nil {
			out = append([]Word(nil), ws...)
		}
		out[i] = Word{Text: w.Text, Value: w.Text, Dynamic: true, Split: true}
	}
	if out == nil {
		return ws
	}
	return out
}

// xargsReplace returns the replacement string of an xargs among the
// stripped runner words: -I R, -IR, -i[R], --replace[=R] ("{}" by
// default for -i and --replace).
func xargsReplace(prefix []Word) string {
	in := false
	for i := 0; i < len(prefix); i++ {
		w := prefix[i]
		if w.Dynamic {
			continue
		}
		v := w.Value
		if baseOf(v) == "xargs" && !in {
			in = true
			continue
		}
		if !in || !strings.HasPrefix(v, "-") {
			if in && !strings.HasPrefix(v, "-") {
				in = false // the next command
			}
			continue
		}
		switch {
		case v == "-I" && i+1 < len(prefix):
			if prefix[i+1].Dynamic {
				return prefix[i+1].Text
			}
			return prefix[i+1].Value
		case strings.HasPrefix(v, "-I") && len(v) > 2:
			return v[2:]
		case v == "-i" || v == "--replace":
			return "{}"
		case strings.HasPrefix(v, "-i"):
			return v[2:]
		case strings.HasPrefix(v, "--replace="):
			if r := strings.TrimPrefix(v, "--replace="); r != "" {
				return r
			}
			return "{}"
		}
		if xargsArgs[v] {
			i++
		}
	}
	return ""
}

var wrapperNames = lazySet("timeout", "time", "nice", "nohup", "builtin", "stdbuf", "command")

// shellRunner reports a stripped runner that passes its command to a
// shell as one text: watch without -x, sudo/doas/runuser -s or -i, env -S.
func shellRunner(prefix []Word) (string, bool) {
	cur := ""
	exec := false
	for _, w := range prefix {
		if w.Dynamic {
			continue
		}
		v := w.Value
		if !strings.HasPrefix(v, "-") {
			// A runner's name starts its options; other words are
			// option values and operands (sudo -u root, watch -n 5).
			if b := baseOf(v); runnerNames[b] || wrapperNames()[b] {
				if cur == "watch" && !exec {
					return "watch runs its command with sh -c", true
				}
				cur, exec = b, false
			}
			continue
		}
		switch cur {
		case "watch":
			if v == "-x" || v == "--exec" || strings.HasPrefix(v, "-") && !strings.HasPrefix(v, "--") && strings.Contains(v, "x") {
				exec = true
			}
		case "sudo", "doas", "runuser":
			if v == "--shell" || v == "--login" || !strings.HasPrefix(v, "--") && strings.ContainsAny(v[1:], "si") {
				return cur + " " + v + " runs its command through a shell", true
			}
		case "env":
			if v == "--split-string" || strings.HasPrefix(v, "--split-string=") || strings.HasPrefix(v, "-S") {
				return "env -S splits its argument into a command", true
			}
		}
	}
	if cur == "watch" && !exec {
		return "watch runs its command with sh -c", true
	}
	return "", false
}

// envSplit reports env -S (--split-string) left unstripped: its string is
// the command.
func envSplit(ws []Word) bool {
	if len(ws) == 0 || ws[0].Dynamic || baseOf(ws[0].Value) != "env" {
		return false
	}
	_, ok := shellRunner(ws)
	return ok
}

// xargsArgFile returns the file an xargs among the stripped runner words
// reads its arguments from (-a FILE, -aFILE, --arg-file[=]FILE), or nil.
func xargsArgFile(prefix []Word) *Word {
	in := false
	for i := 0; i < len(prefix); i++ {
		w := prefix[i]
		v := w.Value
		switch {
		case !w.Dynamic && baseOf(v) == "xargs":
			in = true
		case !in || w.Dynamic:
		case (v == "-a" || v == "--arg-file") && i+1 < len(prefix):
			return &prefix[i+1]
		case strings.HasPrefix(v, "--arg-file="):
			f := strings.TrimPrefix(v, "--arg-file=")
			return &Word{Text: f, Value: f}
		case strings.HasPrefix(v, "-a") && len(v) > 2 && !strings.HasPrefix(v, "--"):
			return &Word{Text: v[2:], Value: v[2:]}
		case xargsArgs[v]:
			i++
		}
	}
	return nil
}
