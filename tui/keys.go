package tui

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/gantry-dev/gantry/tool"
)

func (m *model) key(msg tea.KeyPressMsg) tea.Cmd {
	k := msg.String()
	if k == "ctrl+c" {
		return m.ctrlCPressed()
	}
	if m.dlg != nil {
		if _, ok := m.dlg.(granter); ok && m.now().Sub(m.dlgAt) < dialogGrace {
			return m.typedAhead(msg)
		}
		s, cmd := m.dlg.key(msg)
		if fv, ok := m.dlg.(fullViewer); ok && s.print {
			m.print(fv.full(m.st, m.width-2))
		}
		if s.done {
			return tea.Batch(cmd, m.answer(s))
		}
		return cmd
	}
	if m.picker != nil {
		return m.pickerKey(msg)
	}
	switch k {
	case "esc":
		if m.running {
			m.interrupt()
			return nil
		}
		if len(m.queue) > 0 {
			m.queue = nil
			m.notice = "queued prompts dropped"
		}
		return nil
	case "ctrl+d":
		if m.input.Value() == "" {
			return m.quit()
		}
	case "shift+tab":
		m.cycleMode()
		return nil
	case "ctrl+j":
		// Enter typed before the UI put the terminal in raw mode arrives
		// as a line feed: while the first session opens it sends the
		// prompt, as Enter does (it is queued).
		if m.opening && m.session == "" {
			return m.submit()
		}
	case "enter":
		v := m.input.Value()
		if strings.HasSuffix(v, "\\") {
			// A trailing backslash continues the input on a new line.
			m.input.SetValue(strings.TrimSuffix(v, "\\"))
			m.input.InsertString("\n")
			return nil
		}
		return m.submit()
	case "tab":
		if c := m.completeCommand(); c != "" {
			m.input.SetValue(c + " ")
			return nil
		}
	case "up":
		if m.input.Line() == 0 && m.browseHistory(-1) {
			return nil
		}
	case "down":
		if m.input.Line() == m.input.LineCount()-1 && m.browseHistory(1) {
			return nil
		}
	}
	m.ctrlC = time.Time{}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(msg)
	return cmd
}

// typedAhead takes a key that reached a granting dialog before the person
// could have read it: text goes to the prompt (hidden under the dialog
// until it is answered), Enter (or a line feed) queues the prompt, other
// keys are dropped.
// The dialog is left as it was.
func (m *model) typedAhead(msg tea.KeyPressMsg) tea.Cmd {
	m.notice = "keys typed before the dialog appeared went to the prompt"
	switch {
	case msg.String() == "enter" || msg.String() == "ctrl+j": // ctrl+j: Enter typed before the terminal was in raw mode
		cmd := m.submit()
		if len(m.queue) > 0 {
			m.notice = fmt.Sprintf("%d prompt(s) queued; answer the dialog first", len(m.queue))
		}
		return cmd
	case msg.Text != "" && msg.Mod&^tea.ModShift == 0:
		m.input.InsertString(msg.Text)
	}
	return nil
}

// ctrlCPressed: the first Ctrl-C stops what is going on (the turn, a
// dialog, the typed input); a second one within exitWindow exits.
func (m *model) ctrlCPressed() tea.Cmd {
	now := m.now()
	if !m.ctrlC.IsZero() && now.Sub(m.ctrlC) <= exitWindow {
		return m.quit()
	}
	m.ctrlC = now
	m.notice = "press Ctrl-C again to exit"
	var cmd tea.Cmd
	switch {
	case m.dlg != nil:
		s, c := m.dlg.key(tea.KeyPressMsg{Code: tea.KeyEscape})
		cmd = c
		if !s.done { // a dialog in its text input: esc went back; cancel it as Esc on the list does
			s, cmd = m.dlg.key(tea.KeyPressMsg{Code: tea.KeyEscape})
		}
		if s.done {
			cmd = tea.Batch(cmd, m.answer(s))
		}
		m.interrupt()
	case m.picker != nil:
		m.picker = nil
		cmd = m.input.Focus()
	case m.running:
		m.interrupt()
	default:
		m.input.Reset()
	}
	return tea.Batch(cmd, m.tick())
}

func (m *model) quit() tea.Cmd {
	m.quitting = true
	m.interrupt()
	// Requests still waiting are told nobody answers.
	for _, p := range m.asks {
		p.reply <- result{err: errClosed}
	}
	m.asks, m.dlg = nil, nil
	return nil
}

// modeCycle is the order Shift-Tab goes through: default → acceptEdits →
// plan, and bypassPermissions only for a session started in it.
func (m *model) modeCycle() []tool.Mode {
	c := []tool.Mode{tool.ModeDefault, tool.ModeAcceptEdits, tool.ModePlan}
	if m.startIn == tool.ModeBypassPermissions {
		c = append(c, tool.ModeBypassPermissions)
	}
	return c
}

func (m *model) cycleMode() {
	c := m.modeCycle()
	cur := m.mode
	if cur == "" {
		cur = tool.ModeDefault
	}
	next := c[0]
	for i, x := range c {
		if x == cur {
			next = c[(i+1)%len(c)]
		}
	}
	m.mode = next
	if m.sess != nil {
		m.sess.Agent.SetMode(next)
	}
}

func (m *model) submit() tea.Cmd {
	raw := m.input.Value()
	text := strings.TrimSpace(m.expandPastes(raw))
	if text == "" {
		return nil
	}
	m.input.Reset()
	m.pastes = map[string]string{}
	if len(m.history) == 0 || m.history[len(m.history)-1] != raw {
		m.history = append(m.history, raw)
		if err := appendHistory(m.opts.HistoryFile, raw); err != nil {
			m.notice = "prompt history not saved: " + err.Error()
		}
	}
	m.histPos, m.draft = len(m.history), ""
	if strings.HasPrefix(text, "/") {
		return m.command(text)
	}
	m.queue = append(m.queue, text)
	if m.running || m.sess == nil || m.compacting {
		m.notice = fmt.Sprintf("%d prompt(s) queued", len(m.queue))
		m.wakeSleep()
		return nil
	}
	return m.next()
}

// browseHistory moves through earlier inputs; dir -1 is older.
func (m *model) browseHistory(dir int) bool {
	if len(m.history) == 0 {
		return false
	}
	if m.histPos == len(m.history) && dir > 0 {
		return false
	}
	if m.histPos == len(m.history) {
		m.draft = m.input.Value()
	}
	pos := m.histPos + dir
	if pos < 0 {
		return true
	}
	m.histPos = pos
	if pos == len(m.history) {
		m.input.SetValue(m.draft)
	} else {
		m.input.SetValue(m.history[pos])
	}
	return true
}

// paste inserts pasted text; a large paste is kept aside and shown as a
// placeholder that is replaced by the text when the prompt is sent.
func (m *model) paste(s string) tea.Cmd {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	lines := strings.Count(s, "\n") + 1
	if len(s) <= pasteBytes && lines <= pasteLines {
		m.input.InsertString(s)
		return nil
	}
	tag := fmt.Sprintf("[pasted text #%d: %d lines]", len(m.pastes)+1, lines)
	m.pastes[tag] = s
	m.input.InsertString(tag)
	return nil
}

func (m *model) expandPastes(s string) string {
	for tag, text := range m.pastes {
		s = strings.ReplaceAll(s, tag, text)
	}
	return s
}
