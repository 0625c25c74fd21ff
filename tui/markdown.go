package tui

import (
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/gantry-dev/gantry/internal/outbuf"
)

// renderMarkdown renders the Markdown of a model's reply for the terminal,
// wrapped to width: headings, emphasis, inline code, fenced code blocks,
// lists, quotes, links and rules. It is a small line-oriented renderer, not
// a full CommonMark one: what it does not recognise is shown as written.
// Control characters and invisible code points in the text are shown
// escaped (the text comes from the model), so nothing in a reply reaches
// the terminal as a control sequence.
func renderMarkdown(st *styles, text string, width int) string {
	if width < 10 {
		width = 10
	}
	text = expandTabs(outbuf.EscapeDisplay(text))
	var out []string
	inFence := false
	fence := ""
	for _, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if inFence {
			if strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, fence[:1]) == "" {
				inFence = false
				continue
			}
			out = append(out, wrapPrefixed(st.code.Render(expandTabs(line)), "  ", "  ", width))
			continue
		}
		if f, ok := fenceStart(trimmed); ok {
			inFence, fence = true, f
			continue
		}
		switch {
		case trimmed == "":
			out = append(out, "")
		case isRule(trimmed):
			out = append(out, st.faint.Render(strings.Repeat("─", min(width, 40))))
		case strings.HasPrefix(trimmed, "#"):
			level := len(trimmed) - len(strings.TrimLeft(trimmed, "#"))
			rest := strings.TrimSpace(trimmed[level:])
			if level > 6 || (rest != "" && trimmed[level] != ' ') {
				out = append(out, wrapPrefixed(inline(st, line), "", "", width))
				break
			}
			out = append(out, wrapPrefixed(st.heading.Render(rest), "", "", width))
		case strings.HasPrefix(trimmed, ">"):
			rest := strings.TrimSpace(strings.TrimPrefix(trimmed, ">"))
			out = append(out, wrapPrefixed(st.quote.Render(rest), st.quote.Render("│ "), st.quote.Render("│ "), width))
		default:
			indent := len(line) - len(strings.TrimLeft(line, " \t"))
			pad := strings.Repeat(" ", min(indent, 12))
			if marker, rest, ok := listItem(trimmed); ok {
				first := pad + marker + " "
				out = append(out, wrapPrefixed(inline(st, rest), first, strings.Repeat(" ", ansi.StringWidth(first)), width))
				break
			}
			out = append(out, wrapPrefixed(inline(st, trimmed), pad, pad, width))
		}
	}
	return strings.Join(out, "\n")
}

// fenceStart reports whether line opens a fenced code block and returns
// its fence (``` or ~~~, possibly longer).
func fenceStart(line string) (string, bool) {
	for _, c := range []string{"`", "~"} {
		if strings.HasPrefix(line, c+c+c) {
			n := len(line) - len(strings.TrimLeft(line, c))
			return strings.Repeat(c, n), true
		}
	}
	return "", false
}

func isRule(line string) bool {
	if len(line) < 3 {
		return false
	}
	c := line[0]
	if c != '-' && c != '*' && c != '_' {
		return false
	}
	return strings.Trim(strings.ReplaceAll(line, " ", ""), string(c)) == ""
}

// listItem splits "- item", "* item", "+ item" and "1. item" into a display
// marker and the rest.
func listItem(line string) (marker, rest string, ok bool) {
	if len(line) >= 2 && (line[0] == '-' || line[0] == '*' || line[0] == '+') && line[1] == ' ' {
		rest = strings.TrimSpace(line[2:])
		switch {
		case strings.HasPrefix(rest, "[ ] "):
			return "☐", rest[4:], true
		case strings.HasPrefix(rest, "[x] "), strings.HasPrefix(rest, "[X] "):
			return "☑", rest[4:], true
		}
		return "•", rest, true
	}
	i := 0
	for i < len(line) && i < 4 && line[i] >= '0' && line[i] <= '9' {
		i++
	}
	if i > 0 && i+1 < len(line) && (line[i] == '.' || line[i] == ')') && line[i+1] == ' ' {
		return line[:i+1], strings.TrimSpace(line[i+2:]), true
	}
	return "", "", false
}

// inline styles `code`, **bold**, *italic* / _italic_ and [text](url).
// Unclosed markers are kept as written.
func inline(st *styles, s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		switch c := s[i]; {
		case c == '`':
			if j := strings.IndexByte(s[i+1:], '`'); j >= 0 {
				b.WriteString(st.code.Render(s[i+1 : i+1+j]))
				i += j + 2
				continue
			}
		case c == '*' && strings.HasPrefix(s[i:], "**"), c == '_' && strings.HasPrefix(s[i:], "__"):
			m := s[i : i+2]
			if j := strings.Index(s[i+2:], m); j > 0 {
				b.WriteString(st.bold.Render(s[i+2 : i+2+j]))
				i += j + 4
				continue
			}
		case c == '*' || c == '_':
			// Emphasis only when the marker hugs a word: "a * b" and
			// snake_case stay as written.
			if i+1 < len(s) && s[i+1] != ' ' && s[i+1] != c && (i == 0 || !isWordByte(s[i-1])) {
				if j := strings.IndexByte(s[i+1:], c); j > 0 && s[i+j] != ' ' && (i+2+j >= len(s) || !isWordByte(s[i+2+j])) {
					b.WriteString(st.italic.Render(s[i+1 : i+1+j]))
					i += j + 2
					continue
				}
			}
		case c == '[':
			if end := strings.Index(s[i:], "]("); end > 1 {
				if close := strings.IndexByte(s[i+end+2:], ')'); close >= 0 {
					label := s[i+1 : i+end]
					url := s[i+end+2 : i+end+2+close]
					b.WriteString(st.link.Render(label))
					if url != "" && url != label {
						b.WriteString(st.faint.Render(" (" + url + ")"))
					}
					i += end + 3 + close
					continue
				}
			}
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// wrapPrefixed wraps styled text to width with first before the first line
// and rest before the others.
func wrapPrefixed(s, first, rest string, width int) string {
	w := width - max(ansi.StringWidth(first), ansi.StringWidth(rest))
	if w < 8 {
		w = 8
	}
	lines := strings.Split(ansi.Wrap(s, w, ""), "\n")
	for i := range lines {
		if i == 0 {
			lines[i] = first + lines[i]
		} else {
			lines[i] = rest + lines[i]
		}
	}
	return strings.Join(lines, "\n")
}

func expandTabs(s string) string { return strings.ReplaceAll(s, "\t", "    ") }

// truncate cuts s (which may be styled) to width cells.
func truncate(s string, width int) string { return ansi.Truncate(s, max(width, 1), "…") }
