package tui

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"

	"github.com/gantry-dev/gantry/agent"
	"github.com/gantry-dev/gantry/builtin/todo"
	"github.com/gantry-dev/gantry/interaction"
	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/slash"
	"github.com/gantry-dev/gantry/store"
	"github.com/gantry-dev/gantry/tool"
)

// Messages of the UI's event loop.
type (
	openedMsg struct {
		sess   *Session
		err    error
		req    OpenRequest
		resume bool // show the conversation so far
		clear  bool
	}
	evMsg struct {
		gen int
		ev  agent.Event
	}
	runDoneMsg struct {
		gen int
		err error
	}
	compactDoneMsg struct {
		ev  *agent.CompactEvent
		err error
	}
	sessionsMsg struct {
		list []SessionInfo
		err  error
	}
	tickMsg    struct{}
	flushedMsg struct{}
)

var spinner = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

const (
	// exitWindow is how soon a second Ctrl-C must follow the first.
	exitWindow = 2 * time.Second
	// pasteThreshold: a paste longer than this many bytes or lines is kept
	// aside and shown as a placeholder in the input.
	pasteBytes, pasteLines = 800, 8
)

// model is the UI's state. Update runs on the event loop only; the
// agent's run, the interaction channel and session opening talk to it
// through the bus.
type model struct {
	ctx  context.Context
	opts *Options
	st   *styles
	bus  *bus
	now  func() time.Time

	width, height int

	input   textarea.Model
	history []string
	histPos int // len(history) when not browsing
	draft   string
	pastes  map[string]string

	sess    *Session
	opening bool
	queue   []string
	model   string
	mode    tool.Mode
	startIn tool.Mode // the mode the session opened in (bypass joins the cycle only then)
	session string
	workDir string // the session's working directory (InitEvent): cards show paths relative to it
	usage   llm.Usage
	cost    float64
	runBase struct {
		usage llm.Usage
		cost  float64
	}
	running  bool
	gen      int
	cancel   context.CancelFunc
	runStart time.Time
	bg       sync.WaitGroup // the run and open goroutines

	reply    strings.Builder
	shown    int // bytes of reply already printed (before a dialog)
	thinking string
	cards    map[string]*card
	order    []string
	todos    []store.Todo

	asks   []*pending
	dlg    dialog
	dlgAt  time.Time // when dlg was shown
	picker *pickerState

	ctrlC      time.Time
	notice     string
	logLine    string // the latest line of log output (Log), shown above the status line
	errShown   bool   // the run's error was printed (its result): runDone does not repeat it
	frame      int
	ticking    bool
	outbox     []string
	flushing   bool
	quitting   bool
	compacting bool
	rewinding  bool

	// printed, when set (tests), receives everything written to the
	// transcript.
	printed func(string)
}

// pickerState is a choice shown in place of the input: the /resume
// session list, the /rewind checkpoint list and its confirmations.
type pickerState struct {
	title string
	body  string // shown above the choices (already rendered)
	m     *menu
	// pick handles the chosen item (its index); nil closes the picker.
	pick func(i int) tea.Cmd
}

func newModel(ctx context.Context, opts *Options, b *bus, color bool) *model {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	in := textarea.New()
	in.Prompt = "› "
	in.Placeholder = "Ask anything · / for commands · shift+tab to change mode"
	in.ShowLineNumbers = false
	in.CharLimit = 0
	in.DynamicHeight = true
	in.MinHeight = 1
	in.MaxHeight = 8
	in.MaxContentHeight = 5000
	in.KeyMap.InsertNewline = key.NewBinding(key.WithKeys("shift+enter", "alt+enter", "ctrl+j"))
	in.SetWidth(79)
	st := newStyles(color)
	in.SetStyles(st.area)
	in.Focus()
	m := &model{
		ctx: ctx, opts: opts, st: st, bus: b, now: now,
		width: 80, height: 24, input: in, pastes: map[string]string{},
		cards: map[string]*card{}, model: opts.Model, mode: opts.First.Mode,
	}
	m.history = loadHistory(opts.HistoryFile)
	m.histPos = len(m.history)
	return m
}

// Init opens the first session.
func (m *model) Init() tea.Cmd {
	m.open(m.opts.First, m.opts.First.SessionID != "" || m.opts.First.Continue, false)
	if m.opts.Prompt != "" {
		m.queue = append(m.queue, m.opts.Prompt)
	}
	return tea.Batch(m.tick(), textarea.Blink)
}

// open closes the current session (if any) and opens another, off the
// event loop.
func (m *model) open(req OpenRequest, resume, clear bool) {
	old := m.sess
	m.sess, m.opening = nil, true
	m.bg.Add(1)
	go func() {
		defer m.bg.Done()
		if old != nil {
			old.Agent.Close()
		}
		s, err := m.opts.Open(m.ctx, req)
		if !m.bus.send(openedMsg{sess: s, err: err, req: req, resume: resume, clear: clear}) && s != nil {
			s.Agent.Close()
		}
	}()
}

// shutdown ends what the UI started: the run is cancelled, the goroutines
// are waited for and the session closed.
func (m *model) shutdown() {
	if m.cancel != nil {
		m.cancel()
	}
	m.bus.close()
	m.bg.Wait()
	if m.sess != nil {
		m.sess.Agent.Close()
		m.sess = nil
	}
}

func (m *model) tick() tea.Cmd {
	if m.ticking {
		return nil
	}
	m.ticking = true
	return tea.Tick(100*time.Millisecond, func(time.Time) tea.Msg { return tickMsg{} })
}

// print appends rendered text to the transcript (the terminal's
// scrollback), in order.
func (m *model) print(s string) {
	m.outbox = append(m.outbox, s)
	if m.printed != nil {
		m.printed(s)
	}
}

// Update implements tea.Model.
func (m *model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	cmd := m.update(msg)
	if len(m.outbox) > 0 && !m.flushing {
		text := strings.Join(m.outbox, "\n")
		m.outbox, m.flushing = nil, true
		cmd = tea.Batch(cmd, tea.Sequence(tea.Println(text), func() tea.Msg { return flushedMsg{} }))
	}
	if m.quitting && !m.flushing {
		return m, tea.Batch(cmd, tea.Quit)
	}
	return m, cmd
}

func (m *model) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = max(msg.Width, 20), max(msg.Height, 8)
		m.input.SetWidth(m.width - 1)
		return nil
	case flushedMsg:
		m.flushing = false
		return nil
	case logMsg:
		m.logLine = msg.text
		return nil
	case tickMsg:
		m.ticking = false
		m.frame++
		if m.notice != "" && !m.ctrlC.IsZero() && m.now().Sub(m.ctrlC) > exitWindow {
			m.notice, m.ctrlC = "", time.Time{}
		}
		if m.running || m.opening || m.compacting || m.rewinding || !m.ctrlC.IsZero() {
			return m.tick()
		}
		return nil
	case openedMsg:
		return m.opened(msg)
	case evMsg:
		if msg.gen == m.gen {
			m.event(msg.ev)
		}
		return nil
	case runDoneMsg:
		if msg.gen == m.gen {
			return m.runDone(msg.err)
		}
		return nil
	case compactDoneMsg:
		m.compacting = false
		switch {
		case msg.err != nil:
			m.print(m.st.bad.Render("✗ compaction failed: " + esc(msg.err.Error())))
		case msg.ev == nil:
			m.print(m.st.faint.Render("… the conversation is too short to compact"))
		default:
			m.print(m.st.faint.Render(fmt.Sprintf("… compacted the conversation (%d → %d messages)", msg.ev.Before, msg.ev.After)))
		}
		return m.next()
	case sessionsMsg:
		return m.showPicker(msg)
	case rewindListMsg:
		return m.showRewindPicker(msg)
	case rewindPlanMsg:
		return m.showRewindPlan(msg)
	case rewindDoneMsg:
		return m.rewound(msg)
	case askMsg:
		m.asks = append(m.asks, msg.p)
		return m.showAsk()
	case notifyMsg:
		return m.notified(msg.r)
	case askGoneMsg:
		for i, p := range m.asks {
			if p.id == msg.id {
				m.asks = append(m.asks[:i], m.asks[i+1:]...)
				if i == 0 {
					m.dlg = nil
					return m.showAsk()
				}
				break
			}
		}
		return nil
	case tea.PasteMsg:
		if m.dlg != nil || m.picker != nil {
			return nil
		}
		return m.paste(msg.Content)
	case tea.KeyPressMsg:
		return m.key(msg)
	}
	if m.dlg == nil && m.picker == nil {
		var cmd tea.Cmd
		m.input, cmd = m.input.Update(msg)
		return cmd
	}
	return nil
}

// showAsk shows the first waiting request as a dialog. A plan is printed
// to the transcript first (it may be long: the scrollback holds it).
func (m *model) showAsk() tea.Cmd {
	if m.dlg != nil || len(m.asks) == 0 {
		return nil
	}
	p := m.asks[0]
	// What the model wrote before asking goes to the transcript first.
	if r := m.reply.String()[m.shown:]; strings.TrimSpace(r) != "" {
		m.print(renderMarkdown(m.st, strings.TrimSpace(r), m.width-2))
		m.shown = m.reply.Len()
	}
	if r, ok := p.req.(*interaction.PlanRequest); ok {
		m.print(m.st.accent.Render("Plan") + m.st.faint.Render(whoLabel(r.Who)) + "\n" + renderMarkdown(m.st, r.Plan, m.width-2))
	}
	m.dlg = newDialog(p.req)
	m.dlgAt = m.now()
	m.input.Blur()
	return nil
}

// answer replies to the shown request and moves on to the next.
func (m *model) answer(s step) tea.Cmd {
	p := m.asks[0]
	m.asks = m.asks[1:]
	m.dlg = nil
	p.reply <- result{ans: s.ans, err: s.err}
	m.print(m.answerNote(p.req, s.ans))
	if s.interrupt {
		m.interrupt()
	}
	if len(m.asks) == 0 {
		return m.input.Focus()
	}
	return m.showAsk()
}

// answerNote is the transcript line recording a decision.
func (m *model) answerNote(req interaction.Request, ans interaction.Answer) string {
	st := m.st
	switch a := ans.(type) {
	case *interaction.PermissionAnswer:
		r := req.(*interaction.PermissionRequest)
		name, rest := callTitle(r.ToolName, r.Description)
		what := strings.TrimSpace(name + " " + rest)
		switch a.Choice {
		case interaction.AllowOnce:
			return st.faint.Render(truncate("  allowed once: "+what, m.width))
		case interaction.AllowSession:
			return st.faint.Render(truncate("  allowed for this session: "+esc(strings.Join(r.Suggestions, ", ")), m.width))
		case interaction.AllowAlways:
			return st.faint.Render(truncate("  always allowed ("+string(a.Scope)+" settings): "+esc(strings.Join(r.Suggestions, ", ")), m.width))
		}
		note := "  denied: " + what
		if a.Message != "" && !a.Interrupt {
			note += " — " + esc(oneLine(a.Message))
		}
		return st.warn.Render(truncate(note, m.width))
	case *interaction.QuestionAnswer:
		r := req.(*interaction.QuestionRequest)
		var lines []string
		for _, q := range r.Questions {
			if v, ok := a.Answers[q.Question]; ok {
				lines = append(lines, wrapPrefixed(st.faint.Render(esc(q.Question)+" → ")+esc(v), "  ", "    ", m.width))
			} else {
				lines = append(lines, wrapPrefixed(st.faint.Render(esc(q.Question)+" → (not answered)"), "  ", "    ", m.width))
			}
		}
		return strings.Join(lines, "\n")
	case *interaction.PlanAnswer:
		if a.Approved {
			mode := string(a.Mode)
			if mode == "" {
				mode = "the previous mode"
			}
			return st.ok.Render("  plan approved") + st.faint.Render(" — continuing in "+mode)
		}
		return st.warn.Render(truncate("  plan not approved — "+esc(oneLine(a.Feedback)), m.width))
	case *interaction.ElicitationAnswer:
		return st.faint.Render("  form: " + a.Action)
	case *interaction.TrustAnswer:
		if a.Trust {
			return st.faint.Render("  trusted")
		}
		return st.faint.Render("  not trusted")
	}
	return ""
}

func (m *model) opened(msg openedMsg) tea.Cmd {
	m.opening = false
	if msg.err != nil {
		m.print(m.st.bad.Render("✗ could not open the session: " + esc(msg.err.Error())))
		if m.sess == nil && msg.req.SessionID != "" {
			// A failed /resume or /model: nothing is open; try a new
			// session so the person can go on.
			req := OpenRequest{Model: msg.req.Model, Mode: m.mode}
			if msg.req.Model != "" && msg.req.SessionID == m.session {
				req.Model = m.model // /model failed: keep the session with the old model
				req.SessionID = m.session
			}
			if req != msg.req {
				m.open(req, req.SessionID != "", false)
			}
		}
		return nil
	}
	s := msg.sess
	m.sess = s
	if s.Model != "" {
		m.model = s.Model
	}
	env := s.Agent.Env()
	m.mode, m.startIn = env.Mode, env.Mode
	m.session = s.Agent.SessionID()
	var cmd tea.Cmd
	if msg.clear {
		cmd = tea.ClearScreen
	}
	if msg.resume {
		m.printHistory(s.Agent.Messages())
	}
	return tea.Batch(cmd, m.next())
}

// next starts the next queued prompt if the session is idle.
func (m *model) next() tea.Cmd {
	if m.running || m.sess == nil || m.compacting || m.rewinding || len(m.queue) == 0 {
		return nil
	}
	p := m.queue[0]
	m.queue = m.queue[1:]
	return m.startRun(p)
}

func (m *model) startRun(prompt string) tea.Cmd {
	m.print(m.userLine(prompt))
	m.gen++
	gen := m.gen
	ctx, cancel := context.WithCancel(m.ctx)
	m.cancel, m.running, m.runStart = cancel, true, m.now()
	m.runBase.usage, m.runBase.cost = m.usage, m.cost
	m.notice, m.logLine, m.errShown = "", "", false
	ag := m.sess.Agent
	c, args := m.customCommand(prompt)
	m.bg.Add(1)
	go func() {
		defer m.bg.Done()
		defer cancel()
		if c != nil {
			defer slash.Apply(ag, c)()
			var err error
			if prompt, err = c.Prepare(ctx, ag, args); err != nil {
				m.bus.send(runDoneMsg{gen: gen, err: err})
				return
			}
		}
		var last error
		for ev, err := range ag.Run(ctx, prompt) {
			if err != nil {
				last = err
				continue
			}
			if !m.bus.send(evMsg{gen: gen, ev: ev}) {
				return
			}
		}
		m.bus.send(runDoneMsg{gen: gen, err: last})
	}()
	return m.tick()
}

func (m *model) userLine(prompt string) string {
	return wrapPrefixed(m.st.user.Render(esc(prompt)), m.st.user.Render("> "), "  ", m.width)
}

// interrupt stops the running turn (Esc): calls that finished keep their
// results; the agent records the interruption.
func (m *model) interrupt() {
	if m.running && m.cancel != nil {
		m.cancel()
		m.notice = "interrupting…"
	}
}

// event renders one agent event.
func (m *model) event(ev agent.Event) {
	st := m.st
	switch e := ev.(type) {
	case *agent.InitEvent:
		m.session = e.SessionID
		if e.WorkDir != "" {
			m.workDir = e.WorkDir
		}
		if e.Model != "" {
			m.model = e.Model
		}
		m.mode = e.Mode
	case *agent.TextDelta:
		m.reply.WriteString(e.Text)
		m.thinking = ""
	case *agent.ThinkingDelta:
		t := m.thinking + e.Text
		if len(t) > 400 {
			t = t[len(t)-400:]
		}
		m.thinking = t
	case *agent.ToolStatus:
		c := m.card(e.Status.ToolUseID, e.Status.Name)
		c.apply(e.Status)
	case *agent.MessageEvent:
		if e.Message.Role == llm.RoleAssistant {
			m.flushReply(e.Message.Text())
		}
	case *agent.ToolResultEvent:
		o := e.Outcome
		if o == nil {
			return
		}
		c := m.card(o.ID, o.Name)
		if len(o.Input) > 0 {
			c.input = o.Input
		}
		c.result = o.Result
		if c.dur == 0 {
			c.dur = o.Duration
		}
		if o.Result != nil && o.Result.IsError {
			c.phase = tool.PhaseError
		} else {
			c.phase = tool.PhaseSuccess
		}
		m.print(c.final(st, m.width))
		m.dropCard(o.ID)
		if o.Name == todo.Name && o.Result != nil && !o.Result.IsError {
			if r, ok := o.Result.Structured.(todo.Result); ok {
				m.todos = r.NewTodos
			}
		}
	case *agent.SubagentEvent:
		c := m.cards[e.ParentToolUseID]
		if c == nil {
			return
		}
		if s, ok := e.Event.(*agent.ToolStatus); ok && s.Status.Phase == tool.PhaseDoing {
			line := esc(e.AgentType) + ": " + esc(s.Status.Name)
			if s.Status.Description != "" {
				line += " " + esc(oneLine(s.Status.Description))
			}
			c.sub = append(c.sub, line)
			if len(c.sub) > 3 {
				c.sub = c.sub[len(c.sub)-3:]
			}
		}
	case *agent.ModeEvent:
		m.mode = e.To
		m.print(st.faint.Render(fmt.Sprintf("… permission mode %s → %s", e.From, e.To)))
	case *agent.NoticeEvent:
		m.print(wrapPrefixed(st.warn.Render(esc(e.Text)), st.warn.Render("! "), "  ", m.width))
	case *agent.RetryEvent:
		m.reply.Reset()
		m.shown = 0
		m.print(st.faint.Render(fmt.Sprintf("… the model's reply broke off; retrying (%d)", e.Attempt)))
	case *agent.CompactEvent:
		m.print(st.faint.Render(fmt.Sprintf("… compacted the conversation (%d → %d messages)", e.Before, e.After)))
	case *agent.TurnEnd:
		m.usage = m.usage.Add(e.Usage)
		m.cost += e.CostUSD
	case *agent.ResultEvent:
		m.session = e.SessionID
		// The result's totals include subagents and compaction.
		m.usage = m.runBase.usage.Add(e.Usage)
		m.cost = m.runBase.cost + e.CostUSD
		m.flushLeftovers()
		switch {
		case e.Subtype == agent.SubtypeInterrupted:
			m.print(st.warn.Render("■ interrupted") + st.faint.Render(" — what do you want to do instead?"))
		case e.IsError:
			m.print(wrapPrefixed(st.bad.Render(esc(e.Text)), st.bad.Render("✗ "), "  ", m.width))
			m.errShown = true
		}
	}
}

func (m *model) card(id, name string) *card {
	c := m.cards[id]
	if c == nil {
		c = &card{id: id, name: name, dir: m.workDir, display: m.displayName(name)}
		m.cards[id] = c
		m.order = append(m.order, id)
	}
	return c
}

// displayName is the name people see of the session's tool called name
// (its title or Doc.DisplayName: an MCP tool's "Create issue" rather than
// mcp__github__create_issue), or "" when it has none of its own.
func (m *model) displayName(name string) string {
	if m.sess == nil || m.sess.Agent == nil || m.sess.Agent.Pool() == nil {
		return ""
	}
	t, ok := m.sess.Agent.Pool().Lookup(name)
	if !ok || t == nil {
		return ""
	}
	if d := t.Spec().DisplayName(); d != name {
		return d
	}
	return ""
}

func (m *model) dropCard(id string) {
	delete(m.cards, id)
	for i, x := range m.order {
		if x == id {
			m.order = append(m.order[:i], m.order[i+1:]...)
			break
		}
	}
}

// flushReply prints the finished reply text (the message's, which is
// authoritative; the streamed deltas were only for the live view).
func (m *model) flushReply(text string) {
	if m.shown > 0 {
		if streamed := m.reply.String()[:m.shown]; strings.HasPrefix(text, streamed) {
			text = text[len(streamed):]
		}
	}
	m.reply.Reset()
	m.shown = 0
	m.thinking = ""
	if strings.TrimSpace(text) == "" {
		return
	}
	m.print(renderMarkdown(m.st, strings.TrimSpace(text), m.width-2))
}

func (m *model) runDone(err error) tea.Cmd {
	m.running = false
	if m.cancel != nil {
		m.cancel()
		m.cancel = nil
	}
	m.flushLeftovers()
	m.logLine = "" // a retry's note is stale once the turn ended
	if err != nil && m.ctx.Err() == nil && !m.errShown {
		m.print(wrapPrefixed(m.st.bad.Render(esc(err.Error())), m.st.bad.Render("✗ "), "  ", m.width))
	}
	if m.notice == "interrupting…" {
		m.notice = ""
	}
	return m.next()
}

// flushLeftovers prints what an interrupted turn left live: the reply as
// far as it came and the calls that never finished.
func (m *model) flushLeftovers() {
	if t := strings.TrimSpace(m.reply.String()[m.shown:]); t != "" {
		m.print(renderMarkdown(m.st, t, m.width-2) + m.st.faint.Render(" (interrupted)"))
	}
	m.reply.Reset()
	m.shown = 0
	m.thinking = ""
	for _, id := range m.order {
		m.print(m.cards[id].final(m.st, m.width))
	}
	m.cards, m.order = map[string]*card{}, nil
}

// printHistory shows a resumed conversation: the prompts, the replies and
// one line per tool call.
func (m *model) printHistory(msgs []llm.Message) {
	st := m.st
	if len(msgs) == 0 {
		m.print(st.faint.Render("… resumed session " + m.session + " (empty)"))
		return
	}
	m.print(st.faint.Render(fmt.Sprintf("… resumed session %s (%d messages)", m.session, len(msgs))))
	for _, msg := range msgs {
		for _, b := range msg.Content {
			switch {
			case b.Type == llm.TypeText && msg.Role == llm.RoleUser:
				m.print(m.userLine(b.Text))
			case b.Type == llm.TypeText:
				m.print(renderMarkdown(st, strings.TrimSpace(b.Text), m.width-2))
			case b.Type == llm.TypeToolUse:
				m.print(truncate(st.faint.Render("● ")+st.bold.Render(esc(b.Name))+" "+st.faint.Render(esc(oneLine(summarizeInput(b.Name, b.Input)))), m.width))
			}
		}
	}
}
