package tui

import (
	"strconv"
	"strings"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// item is one choice of a [menu]. A text item asks for words when chosen
// (the "tell the model what to do instead" of a permission ask, the free
// answer of a question).
type item struct {
	label, hint string
	text        bool
	placeholder string
}

// menu is the focused choice list of a dialog: ↑/↓ (or k/j) move, a digit
// picks that item, Enter picks the current one, Space toggles in a
// multi-select. A text item opens a one-line input; Enter sends it, Esc goes
// back to the list.
type menu struct {
	items  []item
	cur    int
	multi  bool
	picked map[int]bool
	typing bool
	input  textinput.Model
}

// pick is what a key did to a menu.
type pick struct {
	done  bool // an item was chosen (or, multi-select, the choice submitted)
	index int  // the chosen item (-1 for a multi-select submit)
	text  string
}

func newMenu(items []item, multi bool) *menu {
	in := textinput.New()
	in.Prompt = "› "
	in.CharLimit = 4000
	return &menu{items: items, multi: multi, picked: map[int]bool{}, input: in}
}

func (m *menu) key(msg tea.KeyPressMsg) (pick, tea.Cmd) {
	if m.typing {
		switch msg.String() {
		case "enter":
			text := strings.TrimSpace(m.input.Value())
			m.typing = false
			m.input.Blur()
			return pick{done: true, index: m.cur, text: text}, nil
		case "esc":
			m.typing = false
			m.input.Blur()
			return pick{}, nil
		}
		var cmd tea.Cmd
		m.input, cmd = m.input.Update(msg)
		return pick{}, cmd
	}
	switch s := msg.String(); s {
	case "up", "k", "shift+tab":
		m.cur = (m.cur + len(m.items) - 1) % len(m.items)
	case "down", "j", "tab":
		m.cur = (m.cur + 1) % len(m.items)
	case "space":
		if m.multi && !m.items[m.cur].text {
			m.picked[m.cur] = !m.picked[m.cur]
		}
	case "enter":
		return m.choose()
	default:
		if n, err := strconv.Atoi(s); err == nil && n >= 1 && n <= len(m.items) {
			m.cur = n - 1
			if m.multi && !m.items[m.cur].text {
				m.picked[m.cur] = !m.picked[m.cur]
				return pick{}, nil
			}
			return m.choose()
		}
	}
	return pick{}, nil
}

func (m *menu) choose() (pick, tea.Cmd) {
	it := m.items[m.cur]
	if it.text {
		m.typing = true
		m.input.Placeholder = it.placeholder
		m.input.SetValue("")
		return pick{}, m.input.Focus()
	}
	if m.multi {
		return pick{done: true, index: -1}, nil
	}
	return pick{done: true, index: m.cur}, nil
}

// chosen returns the picked items of a multi-select in order.
func (m *menu) chosen() []int {
	var out []int
	for i := range m.items {
		if m.picked[i] {
			out = append(out, i)
		}
	}
	return out
}

func (m *menu) view(st *styles, width int) string {
	var b strings.Builder
	for i, it := range m.items {
		mark := "  "
		if i == m.cur {
			mark = st.selected.Render("❯ ")
		}
		box := ""
		if m.multi && !it.text {
			box = "[ ] "
			if m.picked[i] {
				box = "[x] "
			}
		}
		label := strconv.Itoa(i+1) + ". " + box + it.label
		if i == m.cur {
			label = st.selected.Render(label)
		}
		b.WriteString(ansi.Truncate(mark+label, width, "…"))
		if it.hint != "" {
			b.WriteString("\n" + wrapPrefixed(st.faint.Render(it.hint), "     ", "     ", width))
		}
		b.WriteByte('\n')
	}
	if m.typing {
		m.input.SetStyles(st.field)
		m.input.SetWidth(max(10, width-4))
		b.WriteString(m.input.View() + "\n")
		b.WriteString(st.faint.Render("enter to send · esc to go back"))
	} else if m.multi {
		b.WriteString(st.faint.Render("space to toggle · enter to submit · esc to cancel"))
	} else {
		b.WriteString(st.faint.Render("↑/↓ to move · enter or 1-" + strconv.Itoa(len(m.items)) + " to choose · esc to cancel"))
	}
	return b.String()
}
