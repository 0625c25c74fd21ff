package tui

import (
	"fmt"
	"sort"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/slash"
	"github.com/gantry-dev/gantry/slash/local"
	"github.com/gantry-dev/gantry/workspace"
)

// command is a slash command.
type command struct {
	name, args, help string
	run              func(m *model, arg string) tea.Cmd
}

// slashCommands are the slash commands, in the order /help lists them.
func slashCommands() []command {
	return []command{
		{"/help", "", "key bindings and commands", (*model).cmdHelp},
		{"/clear", "", "start a new session (the current one stays resumable)", (*model).cmdClear},
		{"/compact", "[instructions]", "summarise the older part of the conversation now", (*model).cmdCompact},
		{"/resume", "[id]", "go back to an earlier session of this directory", (*model).cmdResume},
		{"/rewind", "", "restore the files (and optionally the conversation) to before an earlier prompt", (*model).cmdRewind},
		{"/model", "[name]", "show the model, or continue this session with another", (*model).cmdModel},
		{"/permissions", "", "the permission mode and the rules of the settings files", (*model).cmdPermissions},
		{"/mcp", "", "the MCP servers and their state", (*model).cmdMCP},
		{"/agents", "", "the agent types the Agent tool can start", (*model).cmdAgents},
		{"/context", "", "how much of the context window the conversation uses", localCommand("context")},
		{"/cost", "", "the tokens and cost of this session so far", localCommand("cost")},
		{"/memory", "", "the memory files (AGENTS.md, CLAUDE.md, GANTRY.md) in the system prompt", localCommand("memory")},
		{"/init", "", "ask the model to write a CLAUDE.md documenting this codebase", promptCommand("init")},
		{"/review", "[pr-number]", "ask the model to review a pull request or this branch's changes", promptCommand("review")},
		{"/exit", "", "leave gantry (also /quit, Ctrl-D, Ctrl-C twice)", (*model).cmdExit},
	}
}

func (m *model) command(line string) tea.Cmd {
	name, arg, _ := strings.Cut(line, " ")
	arg = strings.TrimSpace(arg)
	if name == "/quit" {
		name = "/exit"
	}
	for _, c := range slashCommands() {
		if c.name == name {
			return c.run(m, arg)
		}
	}
	if c, _ := m.customCommand(line); c != nil {
		// A custom command is a prompt: queued like one, expanded when
		// its turn starts (startRun).
		m.queue = append(m.queue, line)
		return m.next()
	}
	m.print(m.st.warn.Render("unknown command " + esc(name) + " — /help lists them"))
	return nil
}

// localCommand runs a built-in command of package slash/local (its one
// home) and prints its report.
func localCommand(name string) func(m *model, arg string) tea.Cmd {
	return func(m *model, arg string) tea.Cmd {
		if m.busy("/" + name) {
			return nil
		}
		if m.sess == nil {
			m.print(m.st.warn.Render("/" + name + ": no session is open"))
			return nil
		}
		ws := m.workspace()
		c := slash.NewRegistry().Lookup(name)
		if ws != nil {
			c = ws.Commands().Lookup(name)
		}
		text, err := local.Run(m.ctx, local.Request{Command: c, Args: arg, Agent: m.sess.Agent, Workspace: ws})
		if err != nil {
			m.print(m.st.bad.Render("✗ " + esc(err.Error())))
			return nil
		}
		m.print(esc(text))
		return nil
	}
}

// promptCommand queues a built-in prompt command (/init, /review) like a
// prompt: startRun expands it (package slash).
func promptCommand(name string) func(m *model, arg string) tea.Cmd {
	return func(m *model, arg string) tea.Cmd {
		line := strings.TrimSpace("/" + name + " " + arg)
		m.queue = append(m.queue, line)
		return m.next()
	}
}

// customCommand returns the custom command (package slash) a prompt
// invokes and its arguments, or nil.
func (m *model) customCommand(prompt string) (*slash.Command, string) {
	ws := m.workspace()
	if ws == nil {
		return nil, ""
	}
	c, args := ws.Commands().Find(prompt)
	if c == nil || c.Builtin() {
		return nil, ""
	}
	return c, args
}

// matching lists the commands starting with what is typed (a lone word
// starting with /).
func (m *model) matching() []command {
	v := m.input.Value()
	if !strings.HasPrefix(v, "/") || strings.ContainsAny(v, " \n") {
		return nil
	}
	var out []command
	for _, c := range slashCommands() {
		if strings.HasPrefix(c.name, v) {
			out = append(out, c)
		}
	}
	return out
}

func (m *model) completeCommand() string {
	if c := m.matching(); len(c) > 0 {
		return c[0].name
	}
	return ""
}

// keyHelp lists the key bindings, for /help and the docs.
var keyHelp = [][2]string{
	{"enter", "send the prompt (queued while a turn runs)"},
	{"shift+enter, alt+enter, ctrl+j, \\ enter", "new line"},
	{"↑ / ↓", "earlier prompts (on the first / last line)"},
	{"shift+tab", "change the permission mode: default → acceptEdits → plan"},
	{"esc", "interrupt the running turn (finished calls keep their results); in a dialog: no / cancel"},
	{"ctrl+c", "stop what is going on; twice to exit"},
	{"ctrl+d", "exit (on an empty input)"},
	{"tab", "complete a /command"},
	{"in dialogs", "↑/↓ or 1-9 to choose, enter to confirm, space to toggle a multi-select"},
}

func (m *model) cmdHelp(string) tea.Cmd {
	st := m.st
	var b strings.Builder
	b.WriteString(st.accent.Render("Keys") + "\n")
	for _, k := range keyHelp {
		b.WriteString(wrapPrefixed(k[1], "  "+st.key.Render(k[0])+"  ", "    ", m.width) + "\n")
	}
	b.WriteString(st.accent.Render("Commands") + "\n")
	for _, c := range slashCommands() {
		name := c.name
		if c.args != "" {
			name += " " + c.args
		}
		b.WriteString(wrapPrefixed(c.help, "  "+st.key.Render(name)+"  ", "    ", m.width) + "\n")
	}
	b.WriteString(st.faint.Render("Large pastes are kept aside as [pasted text #n] and sent in full."))
	m.print(b.String())
	return nil
}

func (m *model) busy(what string) bool {
	if m.running || m.opening || m.compacting || m.rewinding {
		m.print(m.st.warn.Render(what + ": wait for the current turn to end (esc interrupts it)"))
		return true
	}
	return false
}

func (m *model) cmdClear(string) tea.Cmd {
	if m.busy("/clear") {
		return nil
	}
	m.usage, m.cost, m.todos = llm.Usage{}, 0, nil
	m.open(OpenRequest{Model: m.model, Mode: m.mode}, false, true)
	return m.tick()
}

func (m *model) cmdCompact(arg string) tea.Cmd {
	if m.busy("/compact") || m.sess == nil {
		return nil
	}
	m.compacting = true
	ag := m.sess.Agent
	m.bg.Add(1)
	go func() {
		defer m.bg.Done()
		ev, err := ag.Compact(m.ctx, arg)
		m.bus.send(compactDoneMsg{ev: ev, err: err})
	}()
	m.print(m.st.faint.Render("… compacting the conversation"))
	return m.tick()
}

func (m *model) cmdResume(arg string) tea.Cmd {
	if m.busy("/resume") {
		return nil
	}
	if arg != "" {
		m.open(OpenRequest{SessionID: arg, Model: m.model, Mode: m.mode}, true, false)
		return m.tick()
	}
	if m.opts.Sessions == nil {
		m.print(m.st.warn.Render("/resume ID: this session has no session store to list"))
		return nil
	}
	list := m.opts.Sessions
	return func() tea.Msg {
		l, err := list()
		return sessionsMsg{list: l, err: err}
	}
}

// maxPicker is how many sessions the /resume picker offers.
const maxPicker = 9

func (m *model) showPicker(msg sessionsMsg) tea.Cmd {
	if msg.err != nil {
		m.print(m.st.bad.Render("✗ listing sessions: " + esc(msg.err.Error())))
		return nil
	}
	var list []SessionInfo
	for _, s := range msg.list {
		if s.ID != m.session {
			list = append(list, s)
		}
	}
	if len(list) == 0 {
		m.print(m.st.faint.Render("no earlier session in this directory"))
		return nil
	}
	if len(list) > maxPicker {
		list = list[:maxPicker]
	}
	var items []item
	for _, s := range list {
		title := s.Title
		if title == "" {
			title = "(no prompt)"
		}
		items = append(items, item{label: esc(title), hint: s.Time.Local().Format("2006-01-02 15:04") + " · " + s.ID})
	}
	m.showChoice(&pickerState{title: "Resume a session", m: newMenu(items, false), pick: func(i int) tea.Cmd {
		m.open(OpenRequest{SessionID: list[i].ID, Model: m.model, Mode: m.mode}, true, false)
		return m.tick()
	}})
	return nil
}

// showChoice shows p in place of the input.
func (m *model) showChoice(p *pickerState) {
	m.picker = p
	m.input.Blur()
}

func (m *model) pickerKey(msg tea.KeyPressMsg) tea.Cmd {
	if msg.String() == "esc" {
		m.picker = nil
		return m.input.Focus()
	}
	cur := m.picker
	p, cmd := cur.m.key(msg)
	if !p.done {
		return cmd
	}
	m.picker = nil
	cmds := []tea.Cmd{cmd}
	if cur.pick != nil {
		cmds = append(cmds, cur.pick(p.index))
	}
	if m.picker == nil { // pick may show the next choice
		cmds = append(cmds, m.input.Focus())
	}
	return tea.Batch(cmds...)
}

func (m *model) cmdModel(arg string) tea.Cmd {
	if arg == "" {
		name := m.model
		if name == "" {
			name = "the provider's default"
		}
		m.print(m.st.faint.Render("model: ") + esc(name) + m.st.faint.Render(" — /model NAME continues this session with another"))
		return nil
	}
	if m.busy("/model") {
		return nil
	}
	m.open(OpenRequest{SessionID: m.session, Model: arg, Mode: m.mode}, false, false)
	m.model = arg
	m.print(m.st.faint.Render("… continuing with model " + esc(arg)))
	return m.tick()
}

func (m *model) cmdPermissions(string) tea.Cmd {
	st := m.st
	var b strings.Builder
	b.WriteString(st.accent.Render("Permissions") + st.faint.Render(" — mode ") + string(m.mode) + "\n")
	ws := m.workspace()
	if ws == nil || ws.Settings() == nil {
		b.WriteString(st.faint.Render("  no settings files in this session"))
		m.print(b.String())
		return nil
	}
	any := false
	for _, src := range ws.Settings().Sources {
		p := src.File.Permissions
		if len(p.Allow)+len(p.Deny)+len(p.Ask) == 0 {
			continue
		}
		any = true
		where := string(src.Scope)
		if src.Path != "" {
			where += " " + src.Path
		}
		b.WriteString("  " + st.bold.Render(esc(where)) + "\n")
		for _, r := range p.Allow {
			b.WriteString("    " + st.ok.Render("allow ") + esc(r) + "\n")
		}
		for _, r := range p.Ask {
			b.WriteString("    " + st.warn.Render("ask   ") + esc(r) + "\n")
		}
		for _, r := range p.Deny {
			b.WriteString("    " + st.bad.Render("deny  ") + esc(r) + "\n")
		}
	}
	if !any {
		b.WriteString(st.faint.Render("  no rules in the settings files") + "\n")
	}
	if !ws.Trusted() {
		b.WriteString(st.faint.Render("  this folder is not trusted: its allow rules, hooks and MCP servers are off") + "\n")
	}
	b.WriteString(st.faint.Render("  rules allowed \"for this session\" hold until the session ends"))
	m.print(b.String())
	return nil
}

func (m *model) cmdMCP(string) tea.Cmd {
	st := m.st
	ws := m.workspace()
	if ws == nil || ws.MCP() == nil {
		m.print(st.faint.Render("no MCP servers are configured (.mcp.json, --mcp-config)"))
		return nil
	}
	var b strings.Builder
	b.WriteString(st.accent.Render("MCP servers") + "\n")
	for _, s := range ws.MCP().Servers() {
		state := string(s.State)
		line := fmt.Sprintf("  %s  %s  %d tools", st.bold.Render(esc(s.Name)), state, s.Tools)
		if s.Err != "" {
			line += "  " + st.bad.Render(esc(oneLine(s.Err)))
		}
		b.WriteString(truncate(line, m.width) + "\n")
	}
	m.print(strings.TrimRight(b.String(), "\n"))
	return nil
}

func (m *model) cmdAgents(string) tea.Cmd {
	st := m.st
	ws := m.workspace()
	if ws == nil || ws.Agents() == nil {
		m.print(st.faint.Render("no agent types in this session"))
		return nil
	}
	defs := ws.Agents().List()
	sort.Slice(defs, func(i, j int) bool { return defs[i].Name < defs[j].Name })
	var b strings.Builder
	b.WriteString(st.accent.Render("Agent types") + "\n")
	for _, d := range defs {
		b.WriteString(wrapPrefixed(esc(oneLine(d.Description)), "  "+st.bold.Render(esc(d.Name))+"  ", "    ", m.width) + "\n")
	}
	m.print(strings.TrimRight(b.String(), "\n"))
	return nil
}

func (m *model) cmdExit(string) tea.Cmd { return m.quit() }

func (m *model) workspace() *workspace.Workspace {
	if m.sess == nil {
		return nil
	}
	return m.sess.Workspace
}
