package tui

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/gantry-dev/gantry/store"
	"github.com/gantry-dev/gantry/tool"
)

// View implements tea.Model: the live part of the screen — the streaming
// reply, the running calls, the todo list, a dialog or the input, and the
// status line — fitted to the terminal's height (the reply is cut from the
// top when space runs out).
func (m *model) View() tea.View {
	if m.quitting {
		return tea.NewView("")
	}
	w := m.width
	var bottom []string
	if t := m.todoView(w); t != "" {
		bottom = append(bottom, t)
	}
	switch {
	case m.dlg != nil:
		bottom = append(bottom, m.st.dialog.Render(m.dlg.view(m.st, w-4)))
	case m.picker != nil:
		head := m.st.accent.Render(m.picker.title) + "\n"
		for _, l := range strings.Split(m.picker.body, "\n") {
			if l != "" {
				head += truncate(l, w-4) + "\n"
			}
		}
		bottom = append(bottom, m.st.dialog.Render(head+m.picker.m.view(m.st, w-4)))
	default:
		bottom = append(bottom, m.input.View())
		if cs := m.matching(); len(cs) > 0 {
			var lines []string
			for _, c := range cs {
				name := c.name
				if c.args != "" {
					name += " " + c.args
				}
				lines = append(lines, truncate("  "+m.st.key.Render(name)+"  "+m.st.faint.Render(c.help), w))
			}
			bottom = append(bottom, strings.Join(lines, "\n"))
		}
	}
	if m.logLine != "" {
		bottom = append(bottom, truncate(m.st.faint.Render("… "+esc(m.logLine)), w))
	}
	bottom = append(bottom, m.statusLine(w))
	bot := strings.Join(bottom, "\n")

	var top []string
	if r := strings.TrimSpace(m.reply.String()[m.shown:]); r != "" {
		top = append(top, renderMarkdown(m.st, r, w-2))
	} else if m.thinking != "" {
		t := strings.ReplaceAll(strings.TrimSpace(m.thinking), "\n", " ")
		top = append(top, m.st.italic.Render(m.st.faint.Render(truncate("✻ "+esc(t), w))))
	}
	now := m.now()
	frame := spinner[m.frame%len(spinner)]
	for _, id := range m.order {
		top = append(top, m.cards[id].live(m.st, w, now, frame))
	}
	switch {
	case m.running:
		line := m.st.warn.Render(frame) + " " + m.st.faint.Render(fmt.Sprintf("working… %s · esc to interrupt", elapsed(now.Sub(m.runStart).Truncate(time.Second))))
		top = append(top, line)
	case m.opening:
		top = append(top, m.st.warn.Render(frame)+" "+m.st.faint.Render("opening the session…"))
	case m.compacting:
		top = append(top, m.st.warn.Render(frame)+" "+m.st.faint.Render("compacting…"))
	}
	room := m.height - strings.Count(bot, "\n") - 2
	topText := strings.Join(top, "\n")
	if room <= 0 {
		topText = ""
	} else if lines := strings.Split(topText, "\n"); len(lines) > room {
		topText = strings.Join(lines[len(lines)-room:], "\n")
	}
	out := bot
	if topText != "" {
		out = topText + "\n" + bot
	}
	return tea.NewView(out)
}

// statusLine is the model, the permission mode, tokens, cost and a hint,
// or a transient notice.
func (m *model) statusLine(w int) string {
	st := m.st
	model := m.model
	if model == "" {
		model = "default model"
	}
	mode := string(m.mode)
	if mode == "" {
		mode = string(tool.ModeDefault)
	}
	modeText := st.faint.Render(mode)
	if m.mode != "" && m.mode != tool.ModeDefault {
		modeText = st.statusMode.Render(mode)
	}
	tokens := m.usage.InputTokens + m.usage.OutputTokens + m.usage.CacheCreationInputTokens + m.usage.CacheReadInputTokens
	left := st.status.Render(esc(model)+" · ") + modeText + st.status.Render(fmt.Sprintf(" · %s tokens · $%.4f", compact(tokens), m.cost))
	hint := "shift+tab mode · /help"
	if m.notice != "" {
		hint = m.notice
	}
	if len(m.queue) > 0 && m.notice == "" {
		hint = fmt.Sprintf("%d queued", len(m.queue))
	}
	return truncate(left+st.status.Render("  "+hint), w)
}

func compact(n int) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 1000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}

// todoView shows the todo list while something in it is not done: the
// item in progress, the next pending ones, and counts.
func (m *model) todoView(w int) string {
	if len(m.todos) == 0 {
		return ""
	}
	st := m.st
	done := 0
	for _, t := range m.todos {
		if t.Status == store.TodoCompleted {
			done++
		}
	}
	if done == len(m.todos) {
		return ""
	}
	lines := []string{st.faint.Render(fmt.Sprintf("☰ todos %d/%d done", done, len(m.todos)))}
	shown := 0
	for _, t := range m.todos {
		if shown == 4 {
			break
		}
		switch t.Status {
		case store.TodoInProgress:
			lines = append(lines, truncate("  "+st.warn.Render("▸ "+esc(t.ActiveForm)), w))
			shown++
		case store.TodoPending:
			lines = append(lines, truncate(st.faint.Render("  ☐ "+esc(t.Content)), w))
			shown++
		}
	}
	return strings.Join(lines, "\n")
}
