package tui

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/gantry-dev/gantry/builtin/shell"
	"github.com/gantry-dev/gantry/tool"
)

// card is the UI's state of one tool call: its phase (WAIT, DOING, SUCCESS,
// ERROR), description, elapsed time, the tail of a running command's output,
// the latest steps of a subagent it started, and its result.
type card struct {
	id, name string
	display  string // the tool's name for people, when it has one other than name
	phase    tool.Phase
	desc     string
	input    json.RawMessage
	start    time.Time
	dur      time.Duration
	tail     string   // the last lines of a running command's output
	sub      []string // the latest steps of a subagent (Agent calls)
	result   *tool.Result
	dir      string // the working directory: paths are shown relative to it
}

// apply merges a status event.
func (c *card) apply(s tool.Status) {
	c.phase = s.Phase
	if s.Description != "" {
		c.desc = s.Description
	}
	if len(s.Input) > 0 {
		c.input = s.Input
	}
	if !s.Start.IsZero() {
		c.start = s.Start
	}
	if s.Duration > 0 {
		c.dur = s.Duration
	}
	if s.Progress != nil {
		switch d := s.Progress.Data.(type) {
		case shell.Progress:
			c.tail = d.Output
		case *shell.Progress:
			c.tail = d.Output
		default:
			if s.Progress.Message != "" {
				c.tail = s.Progress.Message
			}
		}
	}
	if s.Result != nil {
		c.result = s.Result
	}
}

// title is the card's first line without the mark: the tool and what the
// call does.
func (c *card) title(st *styles) string {
	d := c.desc
	if d == "" {
		d = summarizeInput(c.name, c.input)
	}
	name, rest := callTitle(c.name, d)
	if c.display != "" {
		name = esc(oneLine(c.display))
	}
	t := st.bold.Render(name)
	if rest != "" {
		t += " " + rest
	}
	return t
}

// callTitle splits the title of a call into the tool's name and what the
// call does, both escaped: "Edit main.go" rather than "Edit Edit main.go"
// when the description starts with the name.
func callTitle(name, desc string) (string, string) {
	switch {
	case desc == "" || desc == name:
		return esc(name), ""
	case strings.HasPrefix(desc, name+" "):
		return esc(name), esc(oneLine(desc[len(name)+1:]))
	}
	return esc(name), esc(oneLine(desc))
}

// summarizeInput is a short view of a call's input while no description is
// known yet (the model is still writing it).
func summarizeInput(name string, input json.RawMessage) string {
	var in map[string]any
	if json.Unmarshal(input, &in) != nil {
		return ""
	}
	for _, k := range []string{"command", "file_path", "notebook_path", "pattern", "url", "query", "description", "prompt"} {
		if s, ok := in[k].(string); ok && s != "" {
			return s
		}
	}
	return ""
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	return s
}

func elapsed(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return d.Round(time.Second).String()
}

// live renders a card while its call is pending or running.
func (c *card) live(st *styles, width int, now time.Time, frame string) string {
	var mark, when string
	switch c.phase {
	case tool.PhaseDoing:
		mark = st.warn.Render(frame)
		if !c.start.IsZero() {
			when = st.faint.Render(" " + elapsed(now.Sub(c.start).Round(100*time.Millisecond)))
		}
	case tool.PhaseSuccess:
		mark = st.ok.Render("✓")
	case tool.PhaseError:
		mark = st.bad.Render("✗")
	default:
		mark = st.faint.Render("◌")
	}
	out := truncate(mark+" "+c.title(st)+when, width)
	if c.phase == tool.PhaseDoing {
		out += c.tailLines(st, width)
	}
	for _, s := range c.sub {
		out += "\n" + st.faint.Render(truncate("  ↳ "+s, width))
	}
	return out
}

// tailLines renders the last five lines of a running command's output,
// each on a line of its own (with the leading newline), or "".
func (c *card) tailLines(st *styles, width int) string {
	if c.tail == "" {
		return ""
	}
	lines := strings.Split(strings.TrimRight(esc(c.tail), "\n"), "\n")
	if len(lines) > 5 {
		lines = lines[len(lines)-5:]
	}
	var out string
	for _, l := range lines {
		out += "\n" + st.faint.Render(truncate("  │ "+expandTabs(l), width))
	}
	return out
}

// final renders a finished card for the transcript: ✓ or ✗, the title and
// duration, then the change of an edit as a coloured diff, the error, or
// the first lines of the result.
func (c *card) final(st *styles, width int) string {
	res := c.result
	isErr := c.phase == tool.PhaseError || (res != nil && res.IsError)
	mark := st.ok.Render("✓")
	if isErr {
		mark = st.bad.Render("✗")
	} else if res == nil {
		mark = st.warn.Render("■") // never finished (interrupted)
	}
	head := mark + " " + c.title(st)
	if c.dur > 0 {
		head += st.faint.Render(" (" + elapsed(c.dur) + ")")
	}
	out := truncate(head, width)
	if res == nil {
		// The output the card was showing stays with it.
		return out + c.tailLines(st, width) + "\n" + st.faint.Render("  ⎿ interrupted")
	}
	text := displayText(res)
	switch {
	case isErr:
		out += "\n" + st.bad.Render(wrapPrefixed(esc(clipLines(strings.TrimSpace(text), 4)), "  ⎿ ", "    ", width))
	case c.name == "Edit" || c.name == "Write" || c.name == "NotebookEdit":
		summary, diff := c.change(text)
		out += "\n" + st.faint.Render(truncate("  ⎿ "+summary, width))
		if d := renderDiff(st, diff, 20, width); d != "" {
			out += "\n" + d
		}
	case c.name == "AskUserQuestion" || c.name == "ExitPlanMode":
		// The answer was recorded under the dialog.
	default:
		t := strings.TrimSpace(text)
		if t == "" {
			break
		}
		lines := strings.Split(t, "\n")
		more := ""
		if len(lines) > 3 {
			more = fmt.Sprintf(" … +%d lines", len(lines)-3)
			lines = lines[:3]
		}
		for i, l := range lines {
			prefix := "    "
			if i == 0 {
				prefix = "  ⎿ "
			}
			if i == len(lines)-1 {
				l += more
			}
			out += "\n" + st.faint.Render(truncate(prefix+expandTabs(l), width))
		}
	}
	return out
}

// change splits the display text of a file change (the tool's message,
// then a unified diff) into a one-line summary for a person and the diff's
// hunks: the model-facing text after the first sentence (an Edit's "The
// edited region now reads: …") and the diff's ---/+++ headers (the title
// names the file) are left out, absolute paths inside the working
// directory are shown relative to it, and the summary ends with the
// counts of added and removed lines.
func (c *card) change(text string) (summary, diff string) {
	lines := strings.Split(text, "\n")
	start := len(lines)
	for i := 0; i+1 < len(lines); i++ {
		if strings.HasPrefix(lines[i], "--- ") && strings.HasPrefix(lines[i+1], "+++ ") {
			start = i
			break
		}
	}
	msg := strings.TrimSpace(lines[0])
	if i := strings.Index(msg, ": replaced "); i > 0 {
		msg = msg[:i] // "Edited /p/a.go: replaced 1 occurrence. The edited region now reads:"
	}
	msg = strings.TrimSuffix(msg, ".")
	if c.dir != "" {
		msg = strings.ReplaceAll(msg, strings.TrimSuffix(c.dir, "/")+"/", "")
	}
	hunks := lines[min(start+2, len(lines)):]
	if start == len(lines) {
		hunks = lines[1:] // no headers: what follows the message is the diff
	}
	add, del := 0, 0
	for _, l := range hunks {
		switch {
		case strings.HasPrefix(l, "+"):
			add++
		case strings.HasPrefix(l, "-"):
			del++
		}
	}
	if strings.HasPrefix(msg, "Edited ") || strings.HasPrefix(msg, "Updated ") {
		if i := strings.LastIndex(msg, " ("); i > 0 {
			msg = msg[:i]
		}
		msg += fmt.Sprintf(" (+%d -%d)", add, del)
	}
	return msg, strings.Join(hunks, "\n")
}

// displayText is the text a person sees of a result (its display channel,
// already escaped by the tools that set it; escaped again here, which
// leaves escaped text unchanged).
func displayText(r *tool.Result) string {
	var b strings.Builder
	for _, c := range r.DisplayContent() {
		if c.Type == tool.TypeText {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(c.Text)
		}
	}
	return esc(b.String())
}

// renderDiff colours a unified diff: additions green, removals red, hunk
// headers faint; at most n lines.
func renderDiff(st *styles, diff string, n, width int) string {
	diff = strings.TrimRight(diff, "\n")
	if diff == "" {
		return ""
	}
	lines := strings.Split(diff, "\n")
	more := 0
	if len(lines) > n {
		more = len(lines) - n
		lines = lines[:n]
	}
	for i, l := range lines {
		l = truncate("    "+expandTabs(l), width)
		switch t := strings.TrimLeft(l, " "); {
		case strings.HasPrefix(t, "+++"), strings.HasPrefix(t, "---"), strings.HasPrefix(t, "@@"):
			lines[i] = st.hunk.Render(l)
		case strings.HasPrefix(t, "+"):
			lines[i] = st.add.Render(l)
		case strings.HasPrefix(t, "-"):
			lines[i] = st.del.Render(l)
		default:
			lines[i] = st.faint.Render(l)
		}
	}
	if more > 0 {
		lines = append(lines, st.faint.Render(fmt.Sprintf("    … %d more lines", more)))
	}
	return strings.Join(lines, "\n")
}
