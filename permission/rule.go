package permission

import (
	"errors"
	"fmt"
	"strings"
)

// Rule is one parsed permission rule: a tool name, optionally with a
// specifier in parentheses.
//
//	Bash                    every Bash call (same as Bash(*))
//	Bash(npm run test:*)    a command prefix (same as Bash(npm run test *))
//	Bash(git diff *)        a command glob: * matches any text, spaces included
//	Read(./src/**)          a gitignore-style path (Read, Edit, Write, …)
//	WebFetch(domain:*.x.io) a host
//	mcp__github             every tool of an MCP server (also mcp__github__*)
//	Tool(param:value)       a tool whose input field param equals value
//	                        (* in value is a wildcard)
//
// In a specifier, \( and \) stand for literal parentheses and \\ for a
// backslash.
type Rule struct {
	// Tool is the tool name (or "mcp__server" for a whole server).
	Tool string
	// Specifier is the text inside the parentheses, unescaped; "" for a
	// bare rule.
	Specifier string
}

// ErrBadRule is wrapped by [ParseRule] errors.
var ErrBadRule = errors.New("permission: bad rule")

// maxRuleLen bounds a rule's length.
const maxRuleLen = 4096

// ParseRule parses a rule. Surrounding space is ignored; Tool(*) and Tool()
// are the bare rule Tool; mcp__server__* is mcp__server.
func ParseRule(s string) (Rule, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Rule{}, fmt.Errorf("%w: empty", ErrBadRule)
	}
	if len(s) > maxRuleLen {
		return Rule{}, fmt.Errorf("%w: longer than %d bytes", ErrBadRule, maxRuleLen)
	}
	if strings.IndexByte(s, 0) >= 0 {
		return Rule{}, fmt.Errorf("%w: NUL byte", ErrBadRule)
	}
	name, rest := s, ""
	if i := strings.IndexByte(s, '('); i >= 0 {
		name, rest = s[:i], s[i:]
	}
	name = strings.TrimSpace(name)
	if !validToolName(name) {
		return Rule{}, fmt.Errorf("%w: %q: tool name must match [A-Za-z0-9_-]+ (optionally ending in __*)", ErrBadRule, s)
	}
	if strings.HasPrefix(name, "mcp__") && strings.HasSuffix(name, "__*") {
		name = strings.TrimSuffix(name, "__*")
	}
	if strings.Contains(name, "*") {
		return Rule{}, fmt.Errorf("%w: %q: wildcard in a tool name is only allowed as mcp__server__*", ErrBadRule, s)
	}
	r := Rule{Tool: name}
	if rest == "" {
		return r, nil
	}
	if !strings.HasSuffix(rest, ")") {
		return Rule{}, fmt.Errorf("%w: %q: missing closing parenthesis", ErrBadRule, s)
	}
	inner := rest[1 : len(rest)-1]
	spec, err := unescapeSpecifier(inner)
	if err != nil {
		return Rule{}, fmt.Errorf("%w: %q: %w", ErrBadRule, s, err)
	}
	if strings.TrimSpace(spec) == "*" || spec == "" {
		return r, nil
	}
	r.Specifier = spec
	return r, nil
}

func validToolName(name string) bool {
	if name == "" {
		return false
	}
	for i, c := range name {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '-':
		case c == '*' && i == len(name)-1:
		default:
			return false
		}
	}
	return true
}

// unescapeSpecifier turns \( \) \\ into ( ) \ and rejects an unescaped
// parenthesis that would unbalance the rule.
func unescapeSpecifier(s string) (string, error) {
	if !strings.ContainsAny(s, `\()`) {
		return s, nil
	}
	var b strings.Builder
	depth := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s) && (s[i+1] == '(' || s[i+1] == ')' || s[i+1] == '\\'):
			b.WriteByte(s[i+1])
			i++
			continue
		case c == '(':
			depth++
		case c == ')':
			depth--
			if depth < 0 {
				return "", errors.New("unbalanced parenthesis in specifier (escape it as \\))")
			}
		}
		b.WriteByte(c)
	}
	if depth != 0 {
		return "", errors.New("unbalanced parenthesis in specifier (escape it as \\()")
	}
	return b.String(), nil
}

// String returns the rule in its canonical written form; ParseRule of it
// gives r back.
func (r Rule) String() string {
	if r.Specifier == "" {
		return r.Tool
	}
	var b strings.Builder
	b.WriteString(r.Tool)
	b.WriteByte('(')
	for i := 0; i < len(r.Specifier); i++ {
		switch c := r.Specifier[i]; c {
		case '(', ')', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte(')')
	return b.String()
}

// Bare reports a rule without a specifier (it covers every call of the
// tool; as a deny it hides the tool from the model).
func (r Rule) Bare() bool { return r.Specifier == "" }

// matchesName reports whether the rule's tool part names the tool called
// name: equal, or an MCP server rule (mcp__server) covering
// mcp__server__tool.
func (r Rule) matchesName(name string) bool {
	if r.Tool == name {
		return true
	}
	if strings.HasPrefix(r.Tool, "mcp__") && !strings.Contains(r.Tool[len("mcp__"):], "__") {
		return strings.HasPrefix(name, r.Tool+"__")
	}
	return false
}
