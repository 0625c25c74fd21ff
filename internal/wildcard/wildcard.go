// Package wildcard matches text against the simple wildcard patterns of
// permission rules ("Bash(git log *)") and tool-pool patterns ("mcp__*"):
// '*' stands for any run of characters, slashes and spaces included. Path
// globs, where '*' stops at '/', are doublestar's (github.com/bmatcuk/doublestar).
package wildcard

import "unicode/utf8"

// Options choose the pattern syntax. The zero value knows only '*'.
type Options struct {
	// Question makes '?' stand for exactly one character (rune); without
	// it '?' is literal.
	Question bool
	// Escapes makes a backslash take the next byte literally ("\*" is a
	// star); without it a backslash is literal. A trailing backslash is
	// literal either way.
	Escapes bool
}

// Match reports whether pattern matches all of text. It runs in
// O(len(pattern)·len(text)) time at worst (the classic single-backtrack
// algorithm: no exponential blow-up on "*a*a*a…b") and does not allocate.
func Match(pattern, text string, o Options) bool {
	pi, ti := 0, 0
	starP, starT := -1, 0
	for ti < len(text) {
		if pi < len(pattern) {
			c, w, lit := token(pattern, pi, o)
			switch {
			case !lit && c == '*':
				starP, starT = pi+w, ti
				pi += w
				continue
			case !lit && c == '?':
				_, size := utf8.DecodeRuneInString(text[ti:])
				pi += w
				ti += size
				continue
			case c == text[ti]:
				pi += w
				ti++
				continue
			}
		}
		if starP < 0 {
			return false
		}
		// Let the last star take one more character and retry after it.
		_, size := utf8.DecodeRuneInString(text[starT:])
		starT += size
		pi, ti = starP, starT
	}
	for pi < len(pattern) {
		c, w, lit := token(pattern, pi, o)
		if lit || c != '*' {
			return false
		}
		pi += w
	}
	return true
}

// token reads the pattern token at i: its byte, its width in the pattern
// and whether it is literal (escaped, or not special under o).
func token(p string, i int, o Options) (c byte, width int, literal bool) {
	c = p[i]
	switch {
	case c == '\\' && o.Escapes && i+1 < len(p):
		return p[i+1], 2, true
	case c == '*':
		return c, 1, false
	case c == '?' && o.Question:
		return c, 1, false
	}
	return c, 1, true
}
