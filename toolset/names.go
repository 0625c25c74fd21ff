package toolset

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// MCPPrefix starts the name of every MCP tool: mcp__<server>__<tool>.
const MCPPrefix = "mcp__"

// mcpSep separates the server from the tool in an MCP tool's name.
const mcpSep = "__"

// maxNameLen is the longest tool name the model APIs accept.
const maxNameLen = 64

// maxServerLen is the longest MCP server name: it leaves room in a 64
// character tool name for the prefix, the separator, some of the tool's name
// and a hash suffix, so the server part of a shortened name is intact.
const maxServerLen = 40

// ErrBadServerName is wrapped by the errors about unusable MCP server names.
var ErrBadServerName = errors.New("bad MCP server name")

// CheckServerName reports whether server can name an MCP server in tool
// names: non-empty, without "__" (which separates server from tool) and not
// ending in '_' (mcp__a___b would be ambiguous) once [SanitizeName] has
// replaced the characters the model APIs do not accept with '_' (so
// "my.server" is usable as "my_server", "v2.ü" is not), and at most 40
// characters long.
func CheckServerName(server string) error {
	if server == "" {
		return fmt.Errorf("%w: empty", ErrBadServerName)
	}
	s := SanitizeName(server)
	if strings.Contains(s, mcpSep) {
		return fmt.Errorf("%w: %q contains %q (it separates server and tool in mcp__<server>__<tool>)", ErrBadServerName, server, mcpSep)
	}
	if len(s) > maxServerLen {
		return fmt.Errorf("%w: %q is longer than %d characters", ErrBadServerName, server, maxServerLen)
	}
	if strings.HasSuffix(s, "_") {
		return fmt.Errorf("%w: %q ends with '_' (or a character replaced by '_'), which makes mcp__<server>__<tool> ambiguous", ErrBadServerName, server)
	}
	return nil
}

// SanitizeName replaces every character that is not an ASCII letter, digit,
// '_' or '-' with '_'.
func SanitizeName(s string) string {
	out := make([]byte, 0, len(s))
	for _, r := range s {
		if r < 128 && (r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			out = append(out, byte(r))
		} else {
			out = append(out, '_')
		}
	}
	return string(out)
}

// MCPName returns the pool name of MCP tool toolName of server:
// mcp__<server>__<tool>, with characters the model APIs do not accept
// replaced by '_' (see [SanitizeName]). A name longer than 64 characters is
// shortened deterministically: cut, then "_" and 8 hex digits of the SHA-256
// of the full name, so different long names stay different. The result
// always satisfies tool.ValidName. The error wraps [ErrBadServerName].
//
// A toolName that already carries the mcp__<server>__ prefix is not prefixed
// again.
func MCPName(server, toolName string) (string, error) {
	if err := CheckServerName(server); err != nil {
		return "", err
	}
	if toolName == "" {
		return "", fmt.Errorf("MCP server %q: empty tool name", server)
	}
	prefix := MCPPrefix + SanitizeName(server) + mcpSep
	full := SanitizeName(toolName)
	if !strings.HasPrefix(full, prefix) {
		full = prefix + full
	}
	return shorten(full), nil
}

// shorten cuts a name to maxNameLen with a hash suffix.
func shorten(name string) string {
	if len(name) <= maxNameLen {
		return name
	}
	return name[:maxNameLen-9] + "_" + hashSuffix(name)
}

func hashSuffix(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:4])
}

// SplitMCPName splits an MCP tool's pool name into server and tool. ok is
// false for names that do not start with mcp__ or lack the second "__".
func SplitMCPName(name string) (server, toolName string, ok bool) {
	rest, found := strings.CutPrefix(name, MCPPrefix)
	if !found {
		return "", "", false
	}
	server, toolName, ok = strings.Cut(rest, mcpSep)
	if !ok || server == "" {
		return "", "", false
	}
	return server, toolName, true
}

// SplitNames splits a list of tool names or permission rules written as one
// string —
// "Read, Grep Bash(git diff *)" — at commas and white space outside
// parentheses, so a rule's specifier keeps its own commas and spaces. Empty
// items are dropped. It is the one parser of such lists (CLI flags, agent
// and skill front matter).
func SplitNames(s string) []string {
	var out []string
	depth, start := 0, 0
	flush := func(end int) {
		if v := strings.TrimSpace(s[start:end]); v != "" {
			out = append(out, v)
		}
		start = end + 1
	}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			if depth > 0 {
				depth--
			}
		case ',', ' ', '\t', '\n', '\r':
			if depth == 0 {
				flush(i)
			}
		}
	}
	flush(len(s))
	return out
}

// SplitNameLists is [SplitNames] over repeated values (a flag given several
// times, each "A,B" or "A B"), in order.
func SplitNameLists(vals []string) []string {
	var out []string
	for _, v := range vals {
		out = append(out, SplitNames(v)...)
	}
	return out
}
