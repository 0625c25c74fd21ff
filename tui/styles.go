package tui

import (
	"charm.land/bubbles/v2/textarea"
	"charm.land/bubbles/v2/textinput"
	"charm.land/lipgloss/v2"
)

// styles are the UI's text styles. They are built once per UI (never at
// package init, so a headless gantry pays nothing for them); without colour
// (NO_COLOR) only bold, italic, underline and faint remain.
type styles struct {
	bold, faint, italic, code, heading, quote, link lipgloss.Style
	user, accent, ok, bad, warn, add, del, hunk     lipgloss.Style
	dialog, selected, status, statusMode, key       lipgloss.Style

	area  textarea.Styles
	field textinput.Styles
}

func newStyles(color bool) *styles {
	s := lipgloss.NewStyle
	fg := func(st lipgloss.Style, c string) lipgloss.Style {
		if !color {
			return st
		}
		return st.Foreground(lipgloss.Color(c))
	}
	st := &styles{
		bold:       s().Bold(true),
		faint:      s().Faint(true),
		italic:     s().Italic(true),
		code:       fg(s(), "6"),
		heading:    fg(s().Bold(true), "5"),
		quote:      fg(s().Faint(true), "8"),
		link:       fg(s(), "4"),
		user:       fg(s().Bold(true), "4"),
		accent:     fg(s().Bold(true), "5"),
		ok:         fg(s(), "2"),
		bad:        fg(s(), "1"),
		warn:       fg(s(), "3"),
		add:        fg(s(), "2"),
		del:        fg(s(), "1"),
		hunk:       fg(s().Faint(true), "6"),
		selected:   fg(s().Bold(true), "5"),
		status:     s().Faint(true),
		statusMode: fg(s().Bold(true), "3"),
		key:        s().Bold(true),
	}
	// The input: no background on the cursor line (it clashes with light
	// terminals), a faint placeholder, the prompt in the accent colour.
	plain := s()
	st.area.Focused = textarea.StyleState{Base: plain, Text: plain, CursorLine: plain, LineNumber: plain, CursorLineNumber: plain,
		EndOfBuffer: plain, Placeholder: st.faint, Prompt: st.accent}
	st.area.Blurred = st.area.Focused
	st.area.Blurred.Text = st.faint
	st.area.Cursor = textarea.CursorStyle{Blink: true}
	st.field.Focused = textinput.StyleState{Text: plain, Placeholder: st.faint, Suggestion: st.faint, Prompt: st.accent}
	st.field.Blurred = st.field.Focused
	st.field.Cursor = textinput.CursorStyle{Blink: true}
	border := lipgloss.RoundedBorder()
	if !color {
		st.dialog = s().Border(border).Padding(0, 1)
	} else {
		st.dialog = s().Border(border).BorderForeground(lipgloss.Color("5")).Padding(0, 1)
	}
	return st
}
