package permission

import (
	"strings"

	"github.com/gantry-dev/gantry/internal/wildcard"
)

// normalizeCommandSpec turns the legacy prefix form "cmd:*" into "cmd *".
func normalizeCommandSpec(spec string) string {
	spec = strings.TrimSpace(spec)
	if strings.HasSuffix(spec, ":*") {
		spec = strings.TrimRight(spec[:len(spec)-2], " ") + " *"
	}
	return spec
}

// hasWildcard reports an unescaped * in a command specifier.
func hasWildcard(spec string) bool {
	for i := 0; i < len(spec); i++ {
		switch spec[i] {
		case '\\':
			i++
		case '*':
			return true
		}
	}
	return false
}

// globMatch matches text against a command pattern in which * stands for
// any text, spaces included, and \* for a literal star. A pattern ending in
// " *" also matches the text without that tail, so "ls *" matches "ls" and
// "ls -la" but not "lsof". The matching itself is [wildcard.Match]'s.
func globMatch(pattern, text string) bool {
	if strings.HasSuffix(pattern, " *") && !strings.HasSuffix(pattern, `\ *`) {
		if wildcard.Match(pattern[:len(pattern)-2], text, wildcard.Options{Escapes: true}) {
			return true
		}
	}
	return wildcard.Match(pattern, text, wildcard.Options{Escapes: true})
}

func unescapeStars(s string) string { return strings.ReplaceAll(s, `\*`, `*`) }

// collapseSpaces trims s and turns runs of blanks into one space.
func collapseSpaces(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
