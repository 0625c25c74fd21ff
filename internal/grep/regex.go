package grep

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"regexp"
	"regexp/syntax"
	"slices"
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
	// pre finds the places where a match can be: every match contains
	// one of its literals (nil: no literal is known, or multiline). With
	// fold, the literals are lower-case ASCII matched in either case (a
	// literal may have two finders, one per case of its scanned letter).
	pre      []*finder
	literals int // distinct literals in pre
	fold     bool
	// lit is set when the pattern is exactly one literal (no regexp
	// needed): pre[0]'s. With fold, lowFind finds it in a lower-cased line.
	lit     []byte
	lowFind *finder
	// req are exact literals every match contains besides the prefilter's
	// (up to maxRequired): a candidate line without one of them cannot
	// match and the regexp does not run on it.
	req [][]byte
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
	if lits, fold := literalSet(tree); lits != nil && !multiline {
		// Case-folded, a literal is searched for by its longest piece
		// that folds within ASCII (see foldablePiece).
		whole := true
		for i, l := range lits {
			if fold {
				p := foldablePiece(string(l))
				whole = whole && len(p) == len(l)
				lits[i] = []rune(p)
			}
		}
		if ok := !slices.ContainsFunc(lits, func(l []rune) bool { return len(l) == 0 }); ok {
			m.fold = fold
			for _, l := range lits {
				if fold {
					m.pre = append(m.pre, foldFinders([]byte(strings.ToLower(string(l))))...)
				} else {
					m.pre = append(m.pre, newFinder([]byte(string(l))))
				}
			}
			m.literals = len(lits)
			if m.lit == nil && m.pre != nil {
				for _, r := range requiredLiterals(tree, nil) {
					if len(m.pre) > 1 || string(r) != string(m.pre[0].lit) {
						m.req = append(m.req, r)
					}
				}
			}
			if len(lits) == 1 && tree.Op == syntax.OpLiteral && whole {
				m.lit = m.pre[0].lit
				if fold {
					m.lowFind = newFinder(m.lit)
				}
			}
		}
	}
	m.rust, m.rustErr = rustSyntax(tree, multiline)
	return m, nil
}

// foldablePiece returns the longest piece of s that foldableASCII accepts:
// every case-insensitive match of s contains a case-insensitive match of
// it, found by comparing ASCII letters in either case.
func foldablePiece(s string) string {
	best, start := "", 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || !foldableASCII(s[i:i+1]) {
			if i-start > len(best) {
				best = s[start:i]
			}
			start = i + 1
		}
	}
	return best
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

// maxRequired bounds the required literals a line is checked for.
const maxRequired = 3

// requiredLiterals appends to dst the exact-case literals of at least 3
// bytes that every match of re contains — the literal pieces of a
// concatenation, through groups and repetitions of at least one — up to
// maxRequired.
func requiredLiterals(re *syntax.Regexp, dst [][]byte) [][]byte {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase == 0 && len(dst) < maxRequired {
			if b := []byte(string(re.Rune)); len(b) >= 3 {
				dst = append(dst, b)
			}
		}
	case syntax.OpCapture, syntax.OpPlus:
		dst = requiredLiterals(re.Sub[0], dst)
	case syntax.OpRepeat:
		if re.Min >= 1 {
			dst = requiredLiterals(re.Sub[0], dst)
		}
	case syntax.OpConcat:
		for _, s := range re.Sub {
			dst = requiredLiterals(s, dst)
		}
	}
	return dst
}

// maxLiterals bounds the literals of a prefilter: each is a pass over the
// text.
const maxLiterals = 4

// literalSet returns literals one of which every match of re contains
// (nil if none is known), and whether they are case-folded. Of the sets a
// concatenation offers it picks the one whose shortest literal is longest.
func literalSet(re *syntax.Regexp) ([][]rune, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		return [][]rune{re.Rune}, re.Flags&syntax.FoldCase != 0
	case syntax.OpCapture, syntax.OpPlus:
		return literalSet(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return literalSet(re.Sub[0])
		}
	case syntax.OpAlternate:
		var all [][]rune
		fold := false
		for i, s := range re.Sub {
			l, f := literalSet(s)
			if l == nil || (i > 0 && f != fold) {
				return nil, false
			}
			all, fold = append(all, l...), f
		}
		if len(all) > maxLiterals {
			return nil, false
		}
		return all, fold
	case syntax.OpConcat:
		var best [][]rune
		bestFold := false
		for _, s := range re.Sub {
			l, f := literalSet(s)
			if l != nil && betterSet(l, f, best, bestFold) {
				best, bestFold = l, f
			}
		}
		return best, bestFold
	}
	return nil, false
}

// betterSet reports whether the literal set a finds fewer false candidates
// than b: the one whose literals the scan finds less often (by setBits,
// when they differ by more than a quarter of the smaller), then a longer
// shortest literal, then fewer literals, then exact case. In
// `errors.New` ("." is any character) "New" is found less often than
// "errors" (a pair scan stops at fewer places) although it is shorter.
func betterSet(a [][]rune, af bool, b [][]rune, bf bool) bool {
	if b == nil {
		return true
	}
	// Rarity decides between sets of literals of at least 3 bytes (or of
	// one length): the engine choice (fastInGo) asks for 3.
	if ma, mb := shortest(a), shortest(b); ma == mb || min(ma, mb) >= 3 {
		if ba, bb := setBits(a, af), setBits(b, bf); 4*abs(ba-bb) > min(ba, bb) {
			return ba > bb
		}
	}
	if ma, mb := shortest(a), shortest(b); ma != mb {
		return ma > mb
	}
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return bf && !af
}

func abs(x int) int { return max(x, -x) }

// setBits estimates, in quarter bits, how rarely the scans of a prefilter
// stop: one of the literals' (by litBits) at each place.
func setBits(lits [][]rune, fold bool) int {
	rate := 0.0
	for _, l := range lits {
		lit := string(l)
		if fold {
			lit = strings.ToLower(lit)
		}
		rate += math.Exp2(-float64(litBits([]byte(lit), fold)) / 4)
	}
	return int(math.Round(-4 * math.Log2(rate)))
}

func shortest(lits [][]rune) int {
	n := math.MaxInt
	for _, l := range lits {
		n = min(n, len(l))
	}
	return n
}

// fastInGo reports whether the Go engine searches for m about as fast as
// ripgrep: the pattern is a literal, or its prefilter's literals are long
// enough that the regexp runs on few lines. Without a prefilter Go's regexp
// scans every byte, an order of magnitude slower than ripgrep's engine.
func (m *matcher) fastInGo() bool {
	if m.lit != nil {
		return true
	}
	if m.pre == nil {
		return false
	}
	for _, f := range m.pre {
		if len(f.lit) < 3 {
			return false
		}
	}
	return m.literals <= maxLiterals
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
// appending to dst. low is line lower-cased when m.fold and m.lit is set.
func (m *matcher) lineMatches(dst [][2]int, line, low []byte) [][2]int {
	if m.lit != nil {
		hay, find := line, m.pre[0]
		if m.fold {
			hay, find = low, m.lowFind
		}
		for i := 0; ; {
			j := find.index(hay[i:])
			if j < 0 {
				return dst
			}
			dst = append(dst, [2]int{i + j, i + j + len(m.lit)})
			i += j + len(m.lit)
		}
	}
	for _, r := range m.req {
		if !bytes.Contains(line, r) {
			return dst
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
