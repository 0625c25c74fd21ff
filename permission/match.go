package permission

import (
	"strings"
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
// "ls -la" but not "lsof". Matching is linear in len(text)*segments, with no
// backtracking blow-up.
func globMatch(pattern, text string) bool {
	if strings.HasSuffix(pattern, " *") && !strings.HasSuffix(pattern, `\ *`) {
		if globMatch1(pattern[:len(pattern)-2], text) {
			return true
		}
	}
	return globMatch1(pattern, text)
}

// globMatch1 is the classic iterative wildcard match with one star of
// backtracking state.
func globMatch1(p, t string) bool {
	// Decode escapes into a rune slice of (byte, isStar).
	type tok struct {
		c    byte
		star bool
	}
	toks := make([]tok, 0, len(p))
	for i := 0; i < len(p); i++ {
		switch {
		case p[i] == '\\' && i+1 < len(p):
			toks = append(toks, tok{c: p[i+1]})
			i++
		case p[i] == '*':
			if len(toks) > 0 && toks[len(toks)-1].star {
				continue
			}
			toks = append(toks, tok{star: true})
		default:
			toks = append(toks, tok{c: p[i]})
		}
	}
	pi, ti := 0, 0
	starP, starT := -1, 0
	for ti < len(t) {
		switch {
		case pi < len(toks) && !toks[pi].star && toks[pi].c == t[ti]:
			pi++
			ti++
		case pi < len(toks) && toks[pi].star:
			starP, starT = pi, ti
			pi++
		case starP >= 0:
			starT++
			pi, ti = starP+1, starT
		default:
			return false
		}
	}
	for pi < len(toks) && toks[pi].star {
		pi++
	}
	return pi == len(toks)
}

func unescapeStars(s string) string { return strings.ReplaceAll(s, `\*`, `*`) }

// collapseSpaces trims s and turns runs of blanks into one space.
func collapseSpaces(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
