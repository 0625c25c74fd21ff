package tui

import (
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/gantry-dev/gantry/builtin/sleep"
	"github.com/gantry-dev/gantry/interaction"
	"github.com/gantry-dev/gantry/internal/outbuf"
	"github.com/gantry-dev/gantry/tool"
)

// notified shows a notification: a line in the transcript (marked with the
// subagent that sent it), the terminal's bell and an OSC 9 notification,
// which terminals that support it (iTerm2, kitty, WezTerm, Ghostty, Windows
// Terminal) raise as an OS notification and others ignore.
func (m *model) notified(r *interaction.NotificationRequest) tea.Cmd {
	line := noticeLine(r.Message, 300)
	if r.Title != "" {
		line = noticeLine(r.Title, 60) + ": " + line
	}
	if r.Agent != "" {
		line = "[" + noticeLine(r.Agent, 40) + "] " + line
	}
	m.print("🔔 " + line)
	return tea.Raw("\a\x1b]9;" + osc(line) + "\a")
}

// wakeSleep ends a Sleep call of the running turn: the person wrote
// something, which the agent reads once its turn ends.
func (m *model) wakeSleep() {
	if m.sess == nil || m.sess.Workspace == nil {
		return
	}
	if w, err := tool.Use[*sleep.Waker](&tool.Env{Services: m.sess.Workspace.Services()}); err == nil {
		w.Wake("the user sent a message; end your turn to read it")
	}
}

// noticeLine is s on one line, escaped for display, cut to n runes.
func noticeLine(s string, n int) string {
	s = outbuf.EscapeDisplay(strings.Join(strings.Fields(s), " "))
	if r := []rune(s); len(r) > n {
		s = string(r[:n-1]) + "…"
	}
	return s
}

// osc keeps the printable characters of s that cannot end or break an
// operating system command (no controls, no ESC, no BEL, no C1).
func osc(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return -1
		}
		return r
	}, s)
}
