package mcptool

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/gantry-dev/gantry/internal/outbuf"
)

// EscapeDisplay makes text from a configuration file safe to show on a
// terminal: control characters, bidirectional overrides and invalid UTF-8
// are escaped.
func EscapeDisplay(s string) string { return outbuf.EscapeDisplay(s) }

// Describe is one line saying what a server definition runs or reaches
// (command and arguments, or transport and URL; the names of its
// environment variables or headers, never their values, which may hold
// secrets), escaped for a terminal.
func (sc ServerConfig) Describe() string {
	var b strings.Builder
	if sc.Type == TypeStdio {
		b.WriteString(shellQuote(sc.Command))
		for _, a := range sc.Args {
			b.WriteByte(' ')
			b.WriteString(shellQuote(a))
		}
		if len(sc.Env) > 0 {
			fmt.Fprintf(&b, " (env: %s)", strings.Join(slices.Sorted(maps.Keys(sc.Env)), ", "))
		}
	} else {
		fmt.Fprintf(&b, "%s %s", sc.Type, sc.URL)
		if len(sc.Headers) > 0 {
			fmt.Fprintf(&b, " (headers: %s)", strings.Join(slices.Sorted(maps.Keys(sc.Headers)), ", "))
		}
	}
	return strings.ReplaceAll(EscapeDisplay(b.String()), "\n", `\n`)
}

// shellQuote quotes s for display when it holds anything but plain word
// characters.
func shellQuote(s string) string {
	if s != "" && !strings.ContainsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:@%+,", r))
	}) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
