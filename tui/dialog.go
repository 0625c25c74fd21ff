package tui

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/gantry-dev/gantry/interaction"
	"github.com/gantry-dev/gantry/internal/outbuf"
	"github.com/gantry-dev/gantry/tool"
)

// dialog is the focused view of one pending request. key gets every key
// while the dialog is shown.
type dialog interface {
	view(st *styles, width int) string
	key(msg tea.KeyPressMsg) (step, tea.Cmd)
}

// step is what a key did: done with an answer (or err), and whether the
// running turn is to be interrupted as well (Esc on a question or a plan).
type step struct {
	done      bool
	ans       interaction.Answer
	err       error
	interrupt bool
	// print asks for the dialog's full text in the transcript (a
	// [fullViewer]'s full).
	print bool
}

// granter is a dialog whose answer can grant something (run a call, allow
// a rule, trust a folder, start servers, approve a plan and its mode).
// Such a dialog starts on its refusing choice, and keys that arrive within
// [dialogGrace] of it being shown are not its answer: they were typed
// before the person could see it (see model.key).
type granter interface{ grants() }

func (*permissionDialog) grants() {}
func (*trustDialog) grants()      {}
func (*planDialog) grants()       {}

// dialogGrace is how long after a granting dialog appears keys still count
// as typed ahead: they go to the prompt, not to the dialog. A person needs
// longer than this to read a dialog; a burst of typed-ahead keys (a prompt
// and Enter) arrives well within it.
const dialogGrace = 400 * time.Millisecond

// fullViewer is a dialog with more to show than fits: full is all of it,
// for the transcript.
type fullViewer interface {
	full(st *styles, width int) string
}

// esc returns s shown safely: control characters and invisible code points
// visible, never interpreted by the terminal.
func esc(s string) string { return outbuf.EscapeDisplay(s) }

func whoLabel(w interaction.Who) string {
	if w.Agent == "" {
		return ""
	}
	return " (subagent " + esc(w.Agent) + ")"
}

// clipLines keeps the first n lines of s and says how many more there were.
func clipLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) <= n {
		return s
	}
	return strings.Join(lines[:n], "\n") + fmt.Sprintf("\n… %d more lines", len(lines)-n)
}

// newDialog builds the dialog of a request.
func newDialog(req interaction.Request) dialog {
	switch r := req.(type) {
	case *interaction.PermissionRequest:
		return newPermissionDialog(r)
	case *interaction.QuestionRequest:
		return newQuestionDialog(r)
	case *interaction.PlanRequest:
		return newPlanDialog(r)
	case *interaction.ElicitationRequest:
		return newElicitDialog(r)
	case *interaction.TrustRequest:
		return newTrustDialog(r)
	}
	return nil
}

// --- permission -----------------------------------------------------------

type permissionDialog struct {
	r       *interaction.PermissionRequest
	m       *menu
	choices []interaction.Choice
	printed bool // the whole preview was printed to the transcript (ctrl+o)
}

func newPermissionDialog(r *interaction.PermissionRequest) *permissionDialog {
	d := &permissionDialog{r: r}
	items := []item{{label: "Yes"}}
	d.choices = []interaction.Choice{interaction.AllowOnce}
	if len(r.Suggestions) > 0 {
		rules := esc(strings.Join(r.Suggestions, ", "))
		items = append(items, item{label: "Yes, and don't ask again this session for " + rules})
		d.choices = append(d.choices, interaction.AllowSession)
		if len(r.Scopes) > 0 {
			items = append(items, item{label: "Yes, and always allow " + rules + " (saved to " + string(r.Scopes[0]) + " settings)"})
			d.choices = append(d.choices, interaction.AllowAlways)
		}
	}
	items = append(items, item{label: "No, and tell the model what to do instead", text: true, placeholder: "what to do instead (empty: just no)"})
	d.choices = append(d.choices, interaction.Deny)
	d.m = newMenu(items, false)
	d.m.cur = len(items) - 1 // Enter alone never grants
	return d
}

// previewRows is how many rows of a call's preview a permission dialog
// shows before it offers the rest (ctrl+o prints it all to the
// transcript, where the scrollback holds it).
const previewRows = 14

func (d *permissionDialog) key(msg tea.KeyPressMsg) (step, tea.Cmd) {
	if msg.String() == "ctrl+o" && !d.m.typing {
		d.printed = true
		return step{print: true}, nil
	}
	if msg.String() == "esc" && !d.m.typing {
		return step{done: true, ans: &interaction.PermissionAnswer{Choice: interaction.Deny, Interrupt: true,
			Message: "The user interrupted: the call was not run. Wait for the user's next instruction."}}, nil
	}
	p, cmd := d.m.key(msg)
	if !p.done {
		return step{}, cmd
	}
	c := d.choices[p.index]
	a := &interaction.PermissionAnswer{Choice: c}
	switch c {
	case interaction.AllowAlways:
		a.Scope = d.r.Scopes[0]
	case interaction.Deny:
		a.Message = p.text
	}
	return step{done: true, ans: a}, cmd
}

// full is the whole preview of the call, for the transcript (ctrl+o).
func (d *permissionDialog) full(st *styles, width int) string {
	head := st.accent.Render(esc(d.r.ToolName)+" asks to run:") + st.faint.Render(whoLabel(d.r.Who))
	return head + "\n" + strings.Join(previewLines(st, d.r.ToolName, d.r.Input, width), "\n")
}

func (d *permissionDialog) view(st *styles, width int) string {
	r := d.r
	var b strings.Builder
	b.WriteString(st.accent.Render("Allow "+esc(r.ToolName)+"?") + st.faint.Render(whoLabel(r.Who)) + "\n")
	// What the call does first, whole up to previewRows rows; the model's
	// description after it (it is the model's claim, not the call).
	lines := previewLines(st, r.ToolName, r.Input, width)
	if len(lines) > previewRows {
		more := len(lines) - (previewRows - 1)
		lines = lines[:previewRows-1]
		note := fmt.Sprintf("… %d more lines · ctrl+o prints it all above", more)
		if d.printed {
			note = fmt.Sprintf("… %d more lines · printed in full above", more)
		}
		lines = append(lines, st.warn.Render(note))
	}
	if len(lines) > 0 {
		b.WriteString(strings.Join(lines, "\n") + "\n")
	}
	if r.Description != "" {
		b.WriteString(wrapPrefixed(st.faint.Render("the model says: "+esc(r.Description)), "", "  ", width) + "\n")
	}
	if r.Reason != "" {
		why := r.Reason
		if r.Rule != "" {
			why += " (rule " + r.Rule + ")"
		}
		b.WriteString(wrapPrefixed(st.faint.Render(esc(why)), "", "", width) + "\n")
	}
	b.WriteString("\n" + d.m.view(st, width))
	return b.String()
}

// previewLines shows what a call will do, whole, as rows of at most width
// cells: the command of Bash (wrapped), the file and change of Edit, Write
// and NotebookEdit, the URL of WebFetch, else the input as JSON.
func previewLines(st *styles, name string, input json.RawMessage, width int) []string {
	pv := interaction.Preview(name, input)
	var out string
	switch {
	case pv.Command != "":
		out = st.code.Render(wrapPrefixed(esc(strings.TrimRight(pv.Command, "\n")), "$ ", "  ", width))
	case pv.Path != "":
		head := st.bold.Render(esc(pv.Path))
		if pv.ReplaceAll {
			head += st.faint.Render(" (every occurrence)")
		}
		rows := []string{head}
		for _, l := range interaction.DiffLines(pv.Removed, pv.Added) {
			style := st.add.Render
			if strings.HasPrefix(l, "- ") {
				style = st.del.Render
			}
			rows = append(rows, style(wrapPrefixed(expandTabs(esc(l)), "", "  ", width)))
		}
		out = strings.Join(rows, "\n")
	case pv.URL != "":
		out = st.link.Render(wrapPrefixed(esc(pv.URL), "", "", width))
	case pv.Input != "":
		out = st.faint.Render(wrapPrefixed(esc(pv.Input), "", "", width))
	}
	if out == "" {
		return nil
	}
	return strings.Split(out, "\n")
}

// --- questions ------------------------------------------------------------

type questionDialog struct {
	r       *interaction.QuestionRequest
	i       int
	m       *menu
	answers map[string]string
}

func newQuestionDialog(r *interaction.QuestionRequest) *questionDialog {
	d := &questionDialog{r: r, answers: map[string]string{}}
	d.open()
	return d
}

func (d *questionDialog) open() {
	q := d.r.Questions[d.i]
	var items []item
	for _, o := range q.Options {
		items = append(items, item{label: esc(o.Label), hint: esc(o.Description)})
	}
	items = append(items, item{label: "Something else…", text: true, placeholder: "your answer"})
	d.m = newMenu(items, q.MultiSelect)
}

func (d *questionDialog) key(msg tea.KeyPressMsg) (step, tea.Cmd) {
	if msg.String() == "esc" && !d.m.typing {
		// Questions left unanswered; the turn stops.
		return step{done: true, ans: &interaction.QuestionAnswer{Answers: d.answers}, interrupt: true}, nil
	}
	p, cmd := d.m.key(msg)
	if !p.done {
		return step{}, cmd
	}
	q := d.r.Questions[d.i]
	switch {
	case p.index == len(q.Options): // free answer
		if p.text == "" {
			return step{}, cmd // nothing typed: choose again
		}
		d.answers[q.Question] = p.text
	case p.index >= 0:
		d.answers[q.Question] = q.Options[p.index].Label
	default: // multi-select submit
		var labels []string
		for _, i := range d.m.chosen() {
			if i < len(q.Options) {
				labels = append(labels, q.Options[i].Label)
			}
		}
		if len(labels) == 0 {
			return step{}, cmd
		}
		d.answers[q.Question] = interaction.JoinLabels(labels)
	}
	d.i++
	if d.i == len(d.r.Questions) {
		return step{done: true, ans: &interaction.QuestionAnswer{Answers: d.answers}}, cmd
	}
	d.open()
	return step{}, cmd
}

func (d *questionDialog) view(st *styles, width int) string {
	var b strings.Builder
	if n := len(d.r.Questions); n > 1 {
		var chips []string
		for i, q := range d.r.Questions {
			c := esc(q.Header)
			switch {
			case i == d.i:
				c = st.selected.Render("▸ " + c)
			case i < d.i:
				c = st.ok.Render("✓ " + c)
			default:
				c = st.faint.Render("  " + c)
			}
			chips = append(chips, c)
		}
		b.WriteString(truncate(strings.Join(chips, "  "), width) + "\n")
	}
	q := d.r.Questions[d.i]
	head := "Question"
	if q.Header != "" {
		head = esc(q.Header)
	}
	b.WriteString(st.accent.Render(head) + st.faint.Render(whoLabel(d.r.Who)) + "\n")
	b.WriteString(wrapPrefixed(st.bold.Render(esc(q.Question)), "", "", width) + "\n\n")
	b.WriteString(d.m.view(st, width))
	if o := d.m.cur; o < len(q.Options) && q.Options[o].Preview != "" && !d.m.typing {
		b.WriteString("\n" + st.code.Render(wrapPrefixed(esc(clipLines(q.Options[o].Preview, 6)), "│ ", "│ ", width)))
	}
	return b.String()
}

// --- plan -----------------------------------------------------------------

type planDialog struct {
	r     *interaction.PlanRequest
	m     *menu
	modes []tool.Mode
}

func newPlanDialog(r *interaction.PlanRequest) *planDialog {
	d := &planDialog{r: r}
	back := r.ReturnMode
	if back == "" {
		back = tool.ModeDefault
	}
	items := []item{{label: "Yes, and auto-accept edits"}}
	d.modes = []tool.Mode{tool.ModeAcceptEdits}
	if back != tool.ModeAcceptEdits {
		items = append(items, item{label: "Yes, and ask before each edit (" + string(back) + " mode)"})
		d.modes = append(d.modes, back)
	}
	items = append(items, item{label: "No, keep planning", text: true, placeholder: "what should change in the plan"})
	d.m = newMenu(items, false)
	d.m.cur = len(items) - 1 // Enter alone never approves (approving may turn on auto-accepted edits)
	return d
}

func (d *planDialog) key(msg tea.KeyPressMsg) (step, tea.Cmd) {
	if msg.String() == "esc" && !d.m.typing {
		return step{done: true, ans: &interaction.PlanAnswer{Approved: false, Feedback: "The user interrupted before deciding on the plan."}, interrupt: true}, nil
	}
	p, cmd := d.m.key(msg)
	if !p.done {
		return step{}, cmd
	}
	if p.index < len(d.modes) {
		return step{done: true, ans: &interaction.PlanAnswer{Approved: true, Mode: d.modes[p.index]}}, cmd
	}
	fb := p.text
	if fb == "" {
		fb = "The user did not approve the plan; ask what should change."
	}
	return step{done: true, ans: &interaction.PlanAnswer{Approved: false, Feedback: fb}}, cmd
}

func (d *planDialog) view(st *styles, width int) string {
	var b strings.Builder
	b.WriteString(st.accent.Render("Ready to carry out the plan?") + st.faint.Render(whoLabel(d.r.Who)) + "\n")
	where := "the plan is shown above"
	if d.r.PlanFile != "" {
		where += "; saved to " + esc(d.r.PlanFile)
	}
	b.WriteString(wrapPrefixed(st.faint.Render(where), "", "", width) + "\n\n")
	b.WriteString(d.m.view(st, width))
	return b.String()
}

// --- elicitation ----------------------------------------------------------

type elicitDialog struct {
	r       *interaction.ElicitationRequest
	fields  []interaction.FormField
	i       int // the field being asked; -1 the first choice
	m       *menu
	content map[string]any
	problem string
}

func newElicitDialog(r *interaction.ElicitationRequest) *elicitDialog {
	d := &elicitDialog{r: r, i: -1, content: map[string]any{}}
	// A schema that does not parse has no fields: the form can only be
	// declined or cancelled (or accepted empty, which the server checks).
	d.fields, _ = interaction.FormFields(r.Schema)
	label := "Accept"
	if r.URL == "" && len(d.fields) > 0 {
		label = "Fill in the form"
	}
	d.m = newMenu([]item{{label: label}, {label: "Decline"}, {label: "Cancel"}}, false)
	return d
}

func (d *elicitDialog) key(msg tea.KeyPressMsg) (step, tea.Cmd) {
	if msg.String() == "esc" && !d.m.typing {
		return step{done: true, ans: &interaction.ElicitationAnswer{Action: interaction.ElicitCancel}}, nil
	}
	p, cmd := d.m.key(msg)
	if !p.done {
		return step{}, cmd
	}
	if d.i < 0 {
		switch p.index {
		case 1:
			return step{done: true, ans: &interaction.ElicitationAnswer{Action: interaction.ElicitDecline}}, cmd
		case 2:
			return step{done: true, ans: &interaction.ElicitationAnswer{Action: interaction.ElicitCancel}}, cmd
		}
		if d.r.URL != "" || len(d.fields) == 0 {
			return step{done: true, ans: &interaction.ElicitationAnswer{Action: interaction.ElicitAccept}}, cmd
		}
		d.i = 0
		return step{}, d.askField()
	}
	f := d.fields[d.i]
	var v any
	var err error
	switch {
	case len(f.Enum) > 0:
		v = f.Enum[p.index]
	case p.text == "" && f.Default != nil:
		v = f.Default
	case p.text == "" && f.Required:
		err = fmt.Errorf("%s is required", f.Label())
	case p.text != "":
		v, err = f.Parse(p.text)
	}
	if err != nil {
		d.problem = err.Error()
		return step{}, d.askField()
	}
	d.problem = ""
	if v != nil {
		d.content[f.Name] = v
	}
	d.i++
	if d.i == len(d.fields) {
		return step{done: true, ans: &interaction.ElicitationAnswer{Action: interaction.ElicitAccept, Content: d.content}}, cmd
	}
	return step{}, d.askField()
}

// askField shows the menu of the current field: its enum values, or a text
// input.
func (d *elicitDialog) askField() tea.Cmd {
	f := d.fields[d.i]
	if len(f.Enum) > 0 {
		var items []item
		for _, e := range f.Enum {
			items = append(items, item{label: esc(fmt.Sprint(e))})
		}
		d.m = newMenu(items, false)
		return nil
	}
	hint := f.Type
	switch {
	case f.Default != nil:
		hint += ", empty for " + fmt.Sprint(f.Default)
	case !f.Required:
		hint += ", optional: empty to skip"
	}
	d.m = newMenu([]item{{label: esc(f.Label()), text: true, placeholder: esc(hint)}}, false)
	_, cmd := d.m.choose()
	return cmd
}

func (d *elicitDialog) view(st *styles, width int) string {
	var b strings.Builder
	b.WriteString(st.accent.Render("MCP server "+esc(d.r.Server)+" asks") + st.faint.Render(whoLabel(d.r.Who)) + "\n")
	b.WriteString(wrapPrefixed(esc(d.r.Message), "", "", width) + "\n")
	if d.r.URL != "" {
		b.WriteString(st.link.Render(esc(d.r.URL)) + "\n")
	}
	if d.i >= 0 {
		f := d.fields[d.i]
		b.WriteString(st.bold.Render(fmt.Sprintf("%s (%d of %d)", esc(f.Label()), d.i+1, len(d.fields))) + "\n")
		if f.Description != "" {
			b.WriteString(wrapPrefixed(st.faint.Render(esc(f.Description)), "", "", width) + "\n")
		}
	}
	if d.problem != "" {
		b.WriteString(st.bad.Render(esc(d.problem)) + "\n")
	}
	b.WriteString("\n" + d.m.view(st, width))
	return b.String()
}

// --- trust ----------------------------------------------------------------

type trustDialog struct {
	r *interaction.TrustRequest
	m *menu
}

func newTrustDialog(r *interaction.TrustRequest) *trustDialog {
	yes, no := "Yes, trust this folder", "No, run without its settings"
	if len(r.Servers) > 0 {
		yes, no = "Yes, approve and start them", "No, leave them off"
	}
	d := &trustDialog{r: r, m: newMenu([]item{{label: yes}, {label: no}}, false)}
	d.m.cur = 1 // Enter alone never trusts
	return d
}

func (d *trustDialog) key(msg tea.KeyPressMsg) (step, tea.Cmd) {
	if msg.String() == "esc" {
		return step{done: true, ans: &interaction.TrustAnswer{Trust: false}}, nil
	}
	p, cmd := d.m.key(msg)
	if !p.done {
		return step{}, cmd
	}
	return step{done: true, ans: &interaction.TrustAnswer{Trust: p.index == 0}}, cmd
}

func (d *trustDialog) view(st *styles, width int) string {
	var b strings.Builder
	if len(d.r.Servers) > 0 {
		b.WriteString(st.accent.Render("Start the MCP servers of "+esc(d.r.Dir)+"?") + "\n")
		for _, s := range d.r.Servers {
			b.WriteString(wrapPrefixed(esc(s), "  • ", "    ", width) + "\n")
		}
	} else {
		if d.r.Changed {
			b.WriteString(st.bad.Render("Its configuration changed since you trusted it; it is ignored until you trust it again.") + "\n")
		}
		b.WriteString(st.accent.Render("Trust the folder "+esc(d.r.Dir)+"?") + "\n")
		b.WriteString(st.faint.Render("Its settings would turn on:") + "\n")
		files := make([]string, 0, len(d.r.Ignored))
		for f := range d.r.Ignored {
			files = append(files, f)
		}
		sort.Strings(files)
		for _, f := range files {
			b.WriteString(wrapPrefixed(esc(f)+": "+esc(strings.Join(d.r.Ignored[f], ", ")), "  • ", "    ", width) + "\n")
		}
	}
	b.WriteString("\n" + d.m.view(st, width))
	return b.String()
}
