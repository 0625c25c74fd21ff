package toolset

import (
	"strings"

	"github.com/gantry-dev/gantry/internal/wildcard"
)

// pattern is one allow/deny/restriction name pattern.
type pattern struct {
	glob   string // the name glob ('*' any run, '?' one character)
	server bool   // glob is mcp__<server>: every tool of that server
}

// parsePattern reads a pool name pattern. A permission rule with a
// specifier ("Bash(git:*)") names its tool; specifier reports whether one was
// present (a rule with a specifier restricts inputs, not the tool, so it
// does not remove the tool from the pool).
func parsePattern(s string) (p pattern, specifier bool) {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '('); i >= 0 && strings.HasSuffix(s, ")") {
		s, specifier = strings.TrimSpace(s[:i]), true
	}
	p.glob = s
	if rest, ok := strings.CutPrefix(s, MCPPrefix); ok && rest != "" && !strings.Contains(rest, mcpSep) && !strings.ContainsAny(rest, "*?") {
		p.server = true
	}
	return p, specifier
}

// matches reports whether the pattern matches name.
func (p pattern) matches(name string) bool {
	if p.server && strings.HasPrefix(name, p.glob+mcpSep) {
		return true
	}
	return matchGlob(p.glob, name)
}

// matchAny reports whether p matches one of names.
func (p pattern) matchAny(names []string) bool {
	for _, n := range names {
		if p.matches(n) {
			return true
		}
	}
	return false
}

// MatchName reports whether the pool pattern pat matches the tool name
// name. Patterns are globs ('*' matches any run of characters, '?' one
// character); "mcp__<server>" matches every tool of that server; a trailing
// permission specifier ("Bash(git:*)") is ignored.
func MatchName(pat, name string) bool {
	p, _ := parsePattern(pat)
	return p.matches(name)
}

// matchGlob matches name against a glob with '*' and '?' (no escapes, no
// classes: tool names have neither).
func matchGlob(glob, name string) bool {
	return wildcard.Match(glob, name, wildcard.Options{Question: true})
}
