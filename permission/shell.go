package permission

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gantry-dev/gantry/internal/shellparse"
)

// shellAnalysis is the analysis of one Bash command line: the command-risk
// model of internal/shellparse, which is the one place that knows what
// shell commands do. This package only applies rules, modes and paths to
// it.
type shellAnalysis struct {
	src    string
	model  *shellparse.Analysis
	script *shellparse.Script // nil when err is set
	err    error
	texts  [][]string // matchTexts per command, computed on first use
	bases  map[*shellparse.Cmd]basesOf
}

func analyseShell(src string) *shellAnalysis {
	m := shellparse.Analyze(src)
	return &shellAnalysis{src: src, model: m, script: m.Script, err: m.Err}
}

// allCmds returns every simple command, payloads included.
func (a *shellAnalysis) allCmds() []*shellparse.Cmd {
	out := make([]*shellparse.Cmd, len(a.model.Cmds))
	for i := range a.model.Cmds {
		out[i] = &a.model.Cmds[i]
	}
	return out
}

// topCmds returns the commands of the line itself (not payloads).
func (a *shellAnalysis) topCmds() []*shellparse.Cmd {
	var out []*shellparse.Cmd
	for i := range a.model.Cmds {
		if a.model.Cmds[i].Parent < 0 {
			out = append(out, &a.model.Cmds[i])
		}
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

// riskyWord reports a word whose value is only known at run time through a
// parameter expansion or substitution (it could become any text, flags
// included). Tilde and glob words are not risky in this sense.
//
// The words xargs adds from its input ({input}) are left to the model,
// which marks the command Escalated unless no option of it has an effect.
func riskyWord(w shellparse.Word) bool {
	return w.Dynamic && w.Text != "{input}" && (w.Split || strings.ContainsAny(w.Text, "$`"))
}

// wildcardBlind reports a command a wildcard allow rule never approves:
// it runs another command (a runner was stripped, or it is a shell, eval,
// xargs …; a shell running a script file is a script run, see scripts.go), an option makes it do more than its name says (find -delete,
// sed -i, git -c), its inner command is unknown, or a word is only known at
// run time. Only an exact rule can approve it.
func wildcardBlind(sc *shellparse.Cmd) (string, bool) {
	if _, ok := scriptOf(sc); ok {
		// A script run: approved only when the script passes
		// scriptOK (see scripts.go).
		return scriptBlind(sc)
	}
	switch {
	case sc.Wrapped || shellparse.IsRunner(sc.Name()):
		return fmt.Sprintf("%s runs another command, which prefix rules never approve", sc.Words[0].Value), true
	case sc.Unresolved:
		return "it runs a command the analysis cannot identify", true
	case sc.Escalated:
		return "its arguments make it write files or run programs (" + sc.Why() + "), which prefix rules never approve", true
	case slices.ContainsFunc(sc.Words, riskyWord):
		return "a word is only known when the shell runs", true
	}
	return "", false
}
