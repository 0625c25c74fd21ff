package file

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// EscapeDisplay returns s made safe for a terminal: ESC and every other C0 or
// C1 control character except newline and tab, DEL, invisible bidirectional
// controls (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069), zero-width
// characters (U+200B–U+200D, U+2060, U+FEFF) and the line/paragraph
// separators are written as Go-style escapes (\x1b, \u202e); invalid UTF-8
// bytes as \xNN. A backslash is left as it is. The model channel never goes
// through this function: it is for what a person sees.
func EscapeDisplay(s string) string {
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case invisible(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func needsEscape(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f {
				return true
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || invisible(r) {
			return true
		}
		i += size
	}
	return false
}

// invisible reports the non-ASCII runes EscapeDisplay escapes: C1 controls,
// bidi controls, zero-width characters and line/paragraph separators.
func invisible(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f: // C1 controls, including CSI (0x9b) and OSC (0x9d)
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f:
		return true
	case r >= 0x200b && r <= 0x200d, r == 0x2060, r == 0xfeff:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	case r == 0x2028, r == 0x2029:
		return true
	}
	return false
}
