package sandbox

import (
	"strings"

	"github.com/gantry-dev/gantry/internal/shellparse"
)

// Excluded reports whether command matches one of patterns
// (sandbox.excludedCommands) and so runs outside the sandbox.
//
// A pattern is a list of words: "docker" or "docker *" or "docker:*"
// matches the command docker with any arguments, "git push" matches `git
// push` with any further arguments, "make test" without a wildcard does
// too (the pattern's words must be the command's first words). Matching is
// on the parsed command, never on its text, and fails closed: only a script
// of exactly one simple command whose words are all literal can match — no
// lists, pipes, substitutions, background jobs, variable assignments or
// constructs the analysis does not model. Running outside the sandbox
// widens what a command can do, so anything unclear stays inside.
func Excluded(command string, patterns []string) bool {
	if len(patterns) == 0 {
		return false
	}
	s, err := shellparse.Parse(command)
	if err != nil || len(s.Commands) != 1 || s.HasCommandSubst || s.HasProcessSubst || s.HasBackground || s.Complex {
		return false
	}
	c := s.Commands[0]
	if len(c.Assigns) > 0 || len(c.Words) == 0 {
		return false
	}
	words := make([]string, len(c.Words))
	for i, w := range c.Words {
		if w.Dynamic || w.Glob {
			return false
		}
		words[i] = w.Value
	}
	for _, p := range patterns {
		if matchWords(p, words) {
			return true
		}
	}
	return false
}

func matchWords(pattern string, words []string) bool {
	pattern = strings.TrimSpace(pattern)
	pattern = strings.TrimSuffix(pattern, ":*")
	pw := strings.Fields(pattern)
	if n := len(pw); n > 0 && pw[n-1] == "*" {
		pw = pw[:n-1]
	}
	if len(pw) == 0 || len(pw) > len(words) {
		return false
	}
	for i, w := range pw {
		if w != words[i] {
			return false
		}
	}
	return true
}
