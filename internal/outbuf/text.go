package outbuf

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Invisible reports runes that change how text is shown without being seen:
// bidirectional controls (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F,
// U+061C), zero-width characters (U+200B–U+200D, U+2060, U+FEFF), and Unicode
// tag characters (U+E0000–U+E007F), which can smuggle hidden instructions.
func Invisible(r rune) bool {
	switch {
	case r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069, r == 0x200E, r == 0x200F, r == 0x061C:
		return true
	case r >= 0x200B && r <= 0x200D, r == 0x2060, r == 0xFEFF:
		return true
	case r >= 0xE0000 && r <= 0xE007F:
		return true
	}
	return false
}

// StripEscapes returns s as plain text for a model: terminal escape
// sequences (CSI such as colours, OSC such as titles and hyperlinks, and
// other ESC sequences) are removed; a carriage return that is not part of
// \r\n discards the line so far, as a terminal would overwrite it (progress
// bars keep their last state); other control characters except tab and
// newline are removed; invisible characters ([Invisible]) are shown as
// \u{…} so that they cannot hide text; invalid UTF-8 becomes U+FFFD.
func StripEscapes(s string) string {
	out := make([]byte, 0, len(s))
	lineStart := 0 // index in out of the current line's start
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == 0x1b:
			i = skipEscape(s, i)
			continue
		case c == '\r':
			if i+1 < len(s) && s[i+1] != '\n' {
				out = out[:lineStart] // overwrite: drop the line so far
			}
			i++
			continue
		case c == '\n':
			out = append(out, '\n')
			lineStart = len(out)
			i++
			continue
		case c == '\t':
			out = append(out, c)
			i++
			continue
		case c < 0x20 || c == 0x7f:
			i++
			continue
		case c < 0x80:
			out = append(out, c)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			out = utf8.AppendRune(out, utf8.RuneError)
		case r < 0xa0: // C1 controls (0x9b is a CSI)
		case Invisible(r):
			out = fmt.Appendf(out, `\u{%X}`, r)
		default:
			out = append(out, s[i:i+size]...)
		}
		i += size
	}
	return string(out)
}

// skipEscape returns the index after the escape sequence starting at s[i]
// (an ESC).
func skipEscape(s string, i int) int {
	i++ // ESC
	if i >= len(s) {
		return i
	}
	switch s[i] {
	case '[': // CSI: parameters and intermediates, then a final byte 0x40–0x7e
		i++
		for i < len(s) && (s[i] < 0x40 || s[i] > 0x7e) {
			if s[i] == 0x1b || s[i] == '\n' {
				return i
			}
			i++
		}
		return min(i+1, len(s))
	case ']', 'P', 'X', '^', '_': // OSC, DCS, SOS, PM, APC: until BEL or ST
		i++
		for i < len(s) {
			if s[i] == 0x07 {
				return i + 1
			}
			if s[i] == 0x1b {
				if i+1 < len(s) && s[i+1] == '\\' {
					return i + 2
				}
				return i
			}
			i++
		}
		return i
	default: // two-byte sequences (ESC c, ESC 7, ESC ( B …)
		if s[i] >= 0x20 && s[i] <= 0x2f && i+1 < len(s) {
			return i + 2
		}
		return i + 1
	}
}

// EscapeDisplay returns s for a person's terminal: every control character
// except tab and newline (ESC, CR, BEL, C1 controls …) and every invisible
// character ([Invisible]) is shown as a visible escape (\x1b, \r, \u{202E}),
// so output cannot move the cursor, retitle the window, forge a hyperlink or
// reorder text. Invalid UTF-8 is shown as \xNN.
func EscapeDisplay(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		c := s[i]
		if c < 0x80 {
			switch {
			case c == '\n' || c == '\t':
				b.WriteByte(c)
			case c == '\r':
				b.WriteString(`\r`)
			case c < 0x20 || c == 0x7f:
				fmt.Fprintf(&b, `\x%02x`, c)
			default:
				b.WriteByte(c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&b, `\x%02x`, c)
		case r < 0xa0 || Invisible(r):
			fmt.Fprintf(&b, `\u{%X}`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}
