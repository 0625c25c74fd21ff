package search

import (
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"
	"unicode/utf8"
)

// matcher is a compiled Grep pattern.
//
// Without multiline, a match never spans lines: every line is matched on
// its own, and "^", "$", \A and \z anchor at the line's ends (ripgrep's line
// semantics). With multiline, the pattern runs over the whole file and "."
// matches a newline (rg -U --multiline-dotall).
type matcher struct {
	re        *regexp.Regexp
	multiline bool
	// lit is a literal every match contains (nil if none is known). With
	// fold, lit is lower-case ASCII and must be searched in an
	// ASCII-lower-cased copy of the text.
	lit  []byte
	find *finder // finds lit
	fold bool
	// pure: the pattern is exactly lit (no regexp needed).
	pure bool
	// rust is the pattern in ripgrep's syntax, or "" with rustErr set when
	// it cannot be translated.
	rust    string
	rustErr error
}

// errNewline is returned for a pattern that can only match a line break
// without multiline.
var errNewline = errors.New(`the pattern matches a line break ("\n"), which never occurs inside a line: set multiline to true`)

func compilePattern(pattern string, ignoreCase, multiline bool) (*matcher, error) {
	flags := syntax.Perl &^ syntax.OneLine
	if ignoreCase {
		flags |= syntax.FoldCase
	}
	if multiline {
		flags |= syntax.DotNL
	}
	tree, err := syntax.Parse(pattern, flags)
	if err != nil {
		return nil, fmt.Errorf("invalid regular expression: %w", err)
	}
	tree = tree.Simplify()
	if !multiline {
		if hasNewlineLiteral(tree) {
			return nil, errNewline
		}
		lineAnchors(tree)
	}
	re, err := regexp.Compile(tree.String())
	if err != nil {
		return nil, fmt.Errorf("invalid regular expression: %w", err)
	}
	m := &matcher{re: re, multiline: multiline}
	if lit, fold := requiredLiteral(tree); len(lit) > 0 {
		s := string(lit)
		switch {
		case !fold && !(multiline && strings.Contains(s, "\n")):
			m.lit = []byte(s)
		case fold && foldableASCII(s):
			m.lit, m.fold = []byte(strings.ToLower(s)), true
		}
		if m.lit != nil {
			m.find = newFinder(m.lit)
			m.pure = tree.Op == syntax.OpLiteral && !multiline
		}
	}
	m.rust, m.rustErr = rustSyntax(tree, multiline)
	return m, nil
}

// foldableASCII reports whether s is ASCII and case-insensitive matching of
// s equals matching of its ASCII lower case in an ASCII-lower-cased text:
// not so for k and s, whose Unicode folds include the Kelvin sign and the
// long s.
func foldableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i] | 0x20
		if s[i] >= utf8.RuneSelf || c == 'k' || c == 's' {
			return false
		}
	}
	return true
}

func hasNewlineLiteral(re *syntax.Regexp) bool {
	if re.Op == syntax.OpLiteral && len(re.Rune) > 0 {
		for _, r := range re.Rune {
			if r == '\n' {
				return true
			}
		}
	}
	for _, s := range re.Sub {
		if hasNewlineLiteral(s) {
			return true
		}
	}
	return false
}

// lineAnchors turns text anchors into line anchors: without multiline each
// line is a text of its own.
func lineAnchors(re *syntax.Regexp) {
	switch re.Op {
	case syntax.OpBeginText:
		re.Op = syntax.OpBeginLine
	case syntax.OpEndText:
		re.Op = syntax.OpEndLine
		re.Flags &^= syntax.WasDollar
	}
	for _, s := range re.Sub {
		lineAnchors(s)
	}
}

// requiredLiteral returns the longest literal that every match of re
// contains, and whether it is case-folded.
func requiredLiteral(re *syntax.Regexp) ([]rune, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		return re.Rune, re.Flags&syntax.FoldCase != 0
	case syntax.OpCapture, syntax.OpPlus:
		return requiredLiteral(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredLiteral(re.Sub[0])
		}
	case syntax.OpConcat:
		var best []rune
		bestFold := false
		for _, s := range re.Sub {
			l, f := requiredLiteral(s)
			if len(l) > len(best) || (len(l) == len(best) && bestFold && !f) {
				best, bestFold = l, f
			}
		}
		return best, bestFold
	}
	return nil, false
}

// lowerASCII writes the ASCII lower case of src into dst (grown as needed)
// and returns it.
func lowerASCII(dst, src []byte) []byte {
	if cap(dst) < len(src) {
		dst = make([]byte, len(src), len(src)+len(src)/4)
	}
	dst = dst[:len(src)]
	for i, c := range src {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst[i] = c
	}
	return dst
}

// lineMatches returns the matches of m inside one line (no newline in it),
// appending to dst. low is line lower-cased when m.fold.
func (m *matcher) lineMatches(dst [][2]int, line, low []byte) [][2]int {
	if m.pure {
		hay := line
		if m.fold {
			hay = low
		}
		for i := 0; ; {
			j := m.find.index(hay[i:])
			if j < 0 {
				return dst
			}
			dst = append(dst, [2]int{i + j, i + j + len(m.lit)})
			i += j + len(m.lit)
		}
	}
	for _, loc := range m.re.FindAllIndex(line, -1) {
		dst = append(dst, [2]int{loc[0], loc[1]})
	}
	return dst
}

// rustSyntax prints re in the syntax of ripgrep's regex engine with the same
// meaning as Go's: every character outside [0-9A-Za-z] is written as a
// \x{…} escape, \b is ASCII, classes are written out (so \d, \w, \s keep
// Go's ASCII meaning).
func rustSyntax(re *syntax.Regexp, multiline bool) (string, error) {
	var b strings.Builder
	if err := writeRust(&b, re, multiline); err != nil {
		return "", err
	}
	return b.String(), nil
}

func writeRustRune(b *strings.Builder, r rune) {
	if r < utf8.RuneSelf && ('0' <= r && r <= '9' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z') {
		b.WriteRune(r)
		return
	}
	b.WriteString(`\x{`)
	b.WriteString(strconv.FormatInt(int64(r), 16))
	b.WriteByte('}')
}

func writeRust(b *strings.Builder, re *syntax.Regexp, multiline bool) error {
	group := func(sub *syntax.Regexp) error {
		b.WriteString("(?:")
		if err := writeRust(b, sub, multiline); err != nil {
			return err
		}
		b.WriteByte(')')
		return nil
	}
	switch re.Op {
	case syntax.OpNoMatch:
		return errors.New("a pattern that never matches has no ripgrep form")
	case syntax.OpEmptyMatch:
		b.WriteString("(?:)")
	case syntax.OpLiteral:
		fold := re.Flags&syntax.FoldCase != 0
		if fold {
			b.WriteString("(?i:")
		}
		for _, r := range re.Rune {
			writeRustRune(b, r)
		}
		if fold {
			b.WriteByte(')')
		}
	case syntax.OpCharClass:
		if len(re.Rune) == 0 {
			return errors.New("an empty character class has no ripgrep form")
		}
		b.WriteByte('[')
		for i := 0; i+1 < len(re.Rune); i += 2 {
			writeRustRune(b, re.Rune[i])
			if re.Rune[i+1] != re.Rune[i] {
				b.WriteByte('-')
				writeRustRune(b, re.Rune[i+1])
			}
		}
		b.WriteByte(']')
	case syntax.OpAnyCharNotNL:
		b.WriteString(`[^\x{a}]`)
	case syntax.OpAnyChar:
		b.WriteString(`(?s:.)`)
	case syntax.OpBeginLine:
		b.WriteString(`(?m:^)`)
	case syntax.OpEndLine:
		b.WriteString(`(?m:$)`)
	case syntax.OpBeginText:
		b.WriteString(`\A`)
	case syntax.OpEndText:
		b.WriteString(`\z`)
	case syntax.OpWordBoundary:
		b.WriteString(`(?-u:\b)`)
	case syntax.OpNoWordBoundary:
		b.WriteString(`(?-u:\B)`)
	case syntax.OpCapture:
		return group(re.Sub[0])
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		if err := group(re.Sub[0]); err != nil {
			return err
		}
		switch re.Op {
		case syntax.OpStar:
			b.WriteByte('*')
		case syntax.OpPlus:
			b.WriteByte('+')
		case syntax.OpQuest:
			b.WriteByte('?')
		default:
			if re.Max < 0 {
				fmt.Fprintf(b, "{%d,}", re.Min)
			} else if re.Max == re.Min {
				fmt.Fprintf(b, "{%d}", re.Min)
			} else {
				fmt.Fprintf(b, "{%d,%d}", re.Min, re.Max)
			}
		}
		if re.Flags&syntax.NonGreedy != 0 {
			b.WriteByte('?')
		}
	case syntax.OpConcat:
		for _, s := range re.Sub {
			if err := group(s); err != nil {
				return err
			}
		}
	case syntax.OpAlternate:
		b.WriteString("(?:")
		for i, s := range re.Sub {
			if i > 0 {
				b.WriteByte('|')
			}
			if err := writeRust(b, s, multiline); err != nil {
				return err
			}
		}
		b.WriteByte(')')
	default:
		return fmt.Errorf("regexp operator %v has no ripgrep form", re.Op)
	}
	return nil
}
