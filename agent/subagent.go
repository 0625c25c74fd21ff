package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/gantry-dev/gantry/hook"
	"github.com/gantry-dev/gantry/interaction"
	"github.com/gantry-dev/gantry/internal/textutil"
	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/subagent"
	"github.com/gantry-dev/gantry/tool"
	"github.com/gantry-dev/gantry/toolset"
	"github.com/gantry-dev/gantry/transcript"
)

// DefaultSubagentMaxTurns bounds the turns of a subagent whose type sets
// no maxTurns.
const DefaultSubagentMaxTurns = 50

// SubagentEvent is an event of a subagent's run (started by the Agent tool
// in the foreground), delivered in the parent's event stream while the
// Agent call runs. Events of a subagent's own subagents arrive as they are,
// each naming its own parent call.
type SubagentEvent struct {
	// ParentToolUseID is the id of the Agent call that started the
	// subagent (stream-json's parent_tool_use_id).
	ParentToolUseID string
	AgentID         string
	AgentType       string
	Event           Event
}

func (*SubagentEvent) isEvent() {}

// subState is what a subagent knows of its parent.
type subState struct {
	parent    *Agent
	def       subagent.Definition
	depth     int
	toolUseID string
	worktree  *worktree
}

// kids is an agent's bookkeeping of its subagents: events to forward to the
// run goroutine, usage to roll up, running background tasks, and the notes
// (background results, messages) delivered at the next turn.
type kids struct {
	mu     sync.Mutex
	events []Event
	usage  llm.Usage
	cost   float64
	bg     map[string]*Subagent // running background subagents by task id
	live   map[string]bool      // ids of the subagents whose transcript is open
	inbox  []string
	wake   chan struct{} // signalled when inbox or bg changes
}

func (k *kids) signal() {
	select {
	case k.wake <- struct{}{}:
	default:
	}
}

func (k *kids) addUsage(u llm.Usage, cost float64) {
	k.mu.Lock()
	k.usage, k.cost = k.usage.Add(u), k.cost+cost
	k.mu.Unlock()
}

func (k *kids) takeUsage() (llm.Usage, float64) {
	k.mu.Lock()
	defer k.mu.Unlock()
	u, c := k.usage, k.cost
	k.usage, k.cost = llm.Usage{}, 0
	return u, c
}

func (k *kids) takeEvents() []Event {
	k.mu.Lock()
	defer k.mu.Unlock()
	e := k.events
	k.events = nil
	return e
}

func (k *kids) takeInbox() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	n := k.inbox
	k.inbox = nil
	return n
}

// waiting reports whether background subagents run or notes wait.
func (k *kids) waiting() (running int, notes int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, s := range k.bg {
		if !s.idle.Load() {
			running++
		}
	}
	return running, len(k.inbox)
}

func (k *kids) running() []*Subagent {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := make([]*Subagent, 0, len(k.bg))
	for _, s := range k.bg {
		out = append(out, s)
	}
	return out
}

// Notify queues a message for the model: it is added to the conversation
// at the start of the agent's next turn (of the current Run, or of the
// next one). Background agents report their results this way; a team
// delivers its members' messages this way. Safe for concurrent use.
func (a *Agent) Notify(text string) {
	a.kids.mu.Lock()
	a.kids.inbox = append(a.kids.inbox, text)
	a.kids.mu.Unlock()
	a.kids.signal()
	a.wakeRun()
}

func (a *Agent) wakeRun() {
	select {
	case a.notify <- struct{}{}:
	default:
	}
}

// maxDepth is how deep subagents may nest under the root agent.
func (a *Agent) maxDepth() int {
	switch d := a.opts.MaxAgentDepth; {
	case d < 0:
		return 0
	case d == 0:
		return 1
	default:
		return d
	}
}

func (a *Agent) depth() int {
	if a.sub == nil {
		return 0
	}
	return a.sub.depth
}

// services returns the tools' services of an agent at depth: base's, plus
// the subagent runner when the agent may start subagents.
func (a *Agent) services(base *tool.Services, depth int) *tool.Services {
	s := base.Clone()
	if depth < a.maxDepth() {
		tool.Provide[subagent.Runner](s, runner{a})
	}
	return s
}

// allBut returns the names of p's tools except the excluded ones.
func allBut(p *toolset.Pool, excluded ...string) []string {
	var out []string
	for _, t := range p.All() {
		s := t.Spec()
		if s.Name == toolset.ToolSearchName || slices.Contains(excluded, s.Name) {
			continue
		}
		out = append(out, s.Name)
	}
	return out
}

// childTools returns the names of the tools of parent's pool a subagent of
// def may use: those matching def.Tools (all when empty), minus
// def.DisallowedTools, minus Agent unless the child may nest.
func childTools(p *toolset.Pool, def subagent.Definition, canNest bool) []string {
	match := func(pats []string, names []string) bool {
		for _, pat := range pats {
			if i := strings.IndexByte(pat, '('); i > 0 {
				pat = pat[:i] // a rule's specifier is the permission layer's
			}
			for _, n := range names {
				if toolset.MatchName(pat, n) {
					return true
				}
			}
		}
		return false
	}
	var out []string
	for _, t := range p.All() {
		s := t.Spec()
		names := s.Names()
		switch {
		case s.Name == toolset.ToolSearchName:
		case s.Name == subagent.ToolName && !canNest:
		case len(def.Tools) > 0 && !match(def.Tools, names):
		case match(def.DisallowedTools, names):
		default:
			out = append(out, s.Name)
		}
	}
	return out
}

// childMode is the mode of a subagent: the definition's when it is not
// wider than the parent's, else the parent's.
func childMode(def, parent tool.Mode) tool.Mode {
	if def == "" || !def.Valid() || def.Wider(parent) {
		return parent
	}
	return def
}

// spawn builds a subagent for req: its own session (beside the parent's
// transcript, linked by id), environment, narrowed pool and executor on
// the parent's decider, hooks and approval callback.
func (a *Agent) spawn(ctx context.Context, req subagent.Request, extra *SubagentOptions) (*Agent, error) {
	depth := a.depth() + 1
	if depth > a.maxDepth() {
		return nil, fmt.Errorf("subagents may not start subagents here (nesting depth limit %d)", a.maxDepth())
	}
	def := req.Definition
	var resumed *transcript.Transcript
	if req.Resume != "" {
		s, typ, err := a.openChild(req.Resume)
		if err != nil {
			return nil, err
		}
		if req.Isolation != "" {
			s.Close()
			a.childClosed(req.Resume)
			return nil, errors.New("resume continues an agent where it ran: isolation cannot be given with it")
		}
		d, ok := a.ws.Agents().Get(typ)
		if !ok {
			s.Close()
			a.childClosed(req.Resume)
			return nil, fmt.Errorf("agent %s ran as type %q, which is no longer defined", req.Resume, typ)
		}
		// The call may narrow the resumed agent's mode and turns, as it
		// narrows a new one's.
		if req.Definition.PermissionMode != "" {
			d.PermissionMode = req.Definition.PermissionMode
		}
		if m := req.Definition.MaxTurns; m > 0 && (d.MaxTurns == 0 || m < d.MaxTurns) {
			d.MaxTurns = m
		}
		def, resumed = d, s
	}
	penv := a.execSess.Env()
	dir := penv.WorkDir
	var wt *worktree
	switch req.Isolation {
	case "":
	case "worktree":
		var err error
		if wt, err = createWorktree(ctx, a.ws, dir, cmpOr(req.Name, def.Name)); err != nil {
			return nil, err
		}
		dir = wt.Path
	default:
		return nil, fmt.Errorf("unknown isolation %q (want worktree)", req.Isolation)
	}
	model := SubagentModel(req.Model, def.Model, a.opts.Model, a.opts.SmallModel)
	maxTurns := def.MaxTurns
	if maxTurns <= 0 {
		maxTurns = cmpOrInt(a.opts.SubagentMaxTurns, DefaultSubagentMaxTurns)
	}
	c := &Agent{
		provider: a.provider, now: a.now, prices: a.prices, ws: a.ws, canUse: a.canUse,
		memory: a.memory, notify: make(chan struct{}, 1),
		transcripts: a.transcripts, checkpoints: a.checkpoints,
		workDir: a.workDir, decider: a.decider, hooks: a.hooks, interaction: a.interaction,
	}
	c.kids.wake = make(chan struct{}, 1)
	c.opts = a.opts
	c.opts.Model, c.mode, c.opts.MaxTurns = model, childMode(def.PermissionMode, penv.Mode), maxTurns
	c.opts.SystemPrompt, c.opts.AppendSystemPrompt = def.Prompt, ""
	c.opts.Closers = nil
	c.opts.OutputSchema, c.opts.OutputRetries = def.OutputSchema, 0
	if wt != nil {
		c.checkpoints = nil // a worktree is another tree
	}
	c.opts.WaitForBackground = true
	if a.opts.MaxBudgetUSD > 0 {
		c.opts.MaxBudgetUSD = max(a.opts.MaxBudgetUSD-a.cost, 1e-9)
	}
	c.sub = &subState{parent: a, def: def, depth: depth, toolUseID: req.ToolUseID, worktree: wt}
	fail := func(err error) (*Agent, error) {
		c.closeSession()
		if wt != nil {
			wt.finish(context.WithoutCancel(ctx))
		}
		return nil, err
	}
	sessionDir := ""
	if resumed != nil {
		c.sess, c.id = resumed, resumed.ID
		c.history, c.notices = historyFromRecords(resumed.Records(), resumed.Skipped())
		sessionDir = filepath.Join(a.transcripts.Dir(a.workDir), c.id)
		c.recordSystem("subagent_resumed", map[string]any{
			"parent_session_id": a.id, "parent_tool_use_id": req.ToolUseID, "agent_type": def.Name,
			"description": req.Description,
		})
	} else if st := a.transcripts; st != nil {
		s, err := st.Create(a.workDir)
		if err != nil {
			return fail(fmt.Errorf("agent: subagent transcript: %w", err))
		}
		c.sess, c.id = s, s.ID
		a.markLive(c.id)
		sessionDir = filepath.Join(st.Dir(a.workDir), c.id)
		c.recordSystem("subagent", map[string]any{
			"parent_session_id": a.id, "parent_tool_use_id": req.ToolUseID, "agent_type": def.Name,
			"description": req.Description, "cwd": dir,
		})
	} else {
		c.id = transcript.NewUUID()
		sessionDir = filepath.Join(os.TempDir(), "gantry-sessions", c.id)
	}
	env := &tool.Env{
		WorkDir: dir, SessionID: c.id, Mode: c.mode, SessionDir: sessionDir,
		ToolResultsDir: filepath.Join(sessionDir, "tool-results"),
		AdditionalDirs: penv.AdditionalDirs, Files: tool.NewFileCache(0),
		Services: c.services(a.ws.Services(), depth),
	}
	if a.interaction != nil {
		// The child asks the same person, its requests marked with it.
		c.who = interaction.Who{SessionID: c.id, Agent: def.Name, ParentToolUseID: req.ToolUseID}
		c.interaction = interaction.Label(a.interaction, c.who)
		tool.Provide(env.Services, c.interaction)
		c.canUse = c.canUseTool(c.decider)
	}
	if extra != nil && extra.Services != nil {
		extra.Services(env.Services)
	}
	c.pool = a.pool.Derive(env)
	c.pool.Push(childTools(c.pool, def, depth < c.maxDepth())...)
	c.setupExecutor(env)
	facts := a.facts
	facts.WorkDir = dir
	c.facts = facts
	c.system = BuildSystemPrompt(def.Prompt, facts, a.memory, "")
	return c, nil
}

// openChild reopens the transcript of a's earlier subagent id for resume
// and marks it live until the child is closed; it returns the agent type
// the subagent ran as.
func (a *Agent) openChild(id string) (*transcript.Transcript, string, error) {
	st := a.transcripts
	if st == nil {
		return nil, "", errors.New("resume needs transcripts, and this session keeps none")
	}
	a.kids.mu.Lock()
	if a.kids.live[id] {
		a.kids.mu.Unlock()
		return nil, "", fmt.Errorf("agent %s is still running; wait for it (or stop it with TaskStop) before resuming it", id)
	}
	if a.kids.live == nil {
		a.kids.live = map[string]bool{}
	}
	a.kids.live[id] = true
	a.kids.mu.Unlock()
	fail := func(err error) (*transcript.Transcript, string, error) {
		a.childClosed(id)
		return nil, "", err
	}
	s, err := st.Open(a.workDir, id)
	if err != nil {
		if errors.Is(err, transcript.ErrNotFound) {
			return fail(fmt.Errorf("there is no agent %s to resume (resume takes the agent id an Agent call returned)", id))
		}
		return fail(fmt.Errorf("resume %s: %w", id, err))
	}
	for _, r := range s.Records() {
		if r.Type != transcript.TypeSystem || r.Subtype != "subagent" {
			continue
		}
		var d struct {
			Parent string `json:"parent_session_id"`
			Type   string `json:"agent_type"`
		}
		if json.Unmarshal(r.Data, &d) == nil && d.Parent == a.id && d.Type != "" {
			return s, d.Type, nil
		}
		break
	}
	s.Close()
	return fail(fmt.Errorf("agent %s is not a subagent of this session", id))
}

// childClosed forgets that subagent id's transcript is open.
func (a *Agent) childClosed(id string) {
	a.kids.mu.Lock()
	delete(a.kids.live, id)
	a.kids.mu.Unlock()
}

// hookSubagent runs SubagentStart for a new child.
func (a *Agent) hookSubagentStart(ctx context.Context, c *Agent) {
	in := &hook.Input{Event: hook.SubagentStart, AgentID: c.id, AgentType: c.sub.def.Name}
	if c.sess != nil {
		in.AgentTranscriptPath = c.sess.Path
	}
	if out := a.hook(ctx, in); out != nil && out.AdditionalContext != "" {
		c.Notify(out.AdditionalContext)
	}
}

// drive runs prompt on a subagent and then, while notes arrived after its
// run ended, runs again on them; forward receives every event.
func (c *Agent) drive(ctx context.Context, prompt string, forward func(Event)) *ResultEvent {
	var res *ResultEvent
	var usage llm.Usage
	var cost float64
	turns := 0
	for {
		if res != nil {
			usage, cost, turns = usage.Add(res.Usage), cost+res.CostUSD, turns+res.NumTurns
		}
		res = nil
		var runErr error
		for ev, err := range c.Run(ctx, prompt) {
			if err != nil {
				runErr = err
				continue
			}
			if r, ok := ev.(*ResultEvent); ok {
				res = r
			}
			if forward != nil {
				forward(ev)
			}
		}
		if res == nil {
			text := "the agent ended without a result"
			if runErr != nil {
				text = runErr.Error()
			}
			res = &ResultEvent{Subtype: SubtypeDuringExecution, IsError: true, Text: text, SessionID: c.id}
		}
		if notes := c.kids.takeInbox(); ctx.Err() == nil && len(notes) > 0 {
			prompt = strings.Join(notes, "\n\n")
			continue
		}
		// The result covers every run of this drive.
		r := *res
		r.Usage, r.CostUSD, r.NumTurns = usage.Add(res.Usage), cost+res.CostUSD, turns+res.NumTurns
		return &r
	}
}

// outcome turns a child's result into the Agent tool's outcome and settles
// its worktree.
func (c *Agent) outcome(ctx context.Context, res *ResultEvent) *subagent.Outcome {
	out := &subagent.Outcome{
		AgentID: c.id, AgentType: c.sub.def.Name, Text: res.Text, IsError: res.IsError, Subtype: res.Subtype,
		Structured: res.Structured,
		Turns:      res.NumTurns, Tokens: res.Usage.PromptTokens() + res.Usage.OutputTokens, CostUSD: res.CostUSD,
	}
	if c.sess != nil {
		out.TranscriptPath = c.sess.Path
	}
	if wt := c.sub.worktree; wt != nil {
		kept, err := wt.finish(context.WithoutCancel(ctx))
		out.Worktree = &subagent.Worktree{Path: wt.Top, Branch: wt.Branch, Kept: kept}
		if err != nil {
			out.Text += "\n\n(worktree: " + err.Error() + ")"
		}
	}
	return out
}

// runner is the subagent.Runner of an agent: it runs the agent's
// subagents.
type runner struct{ a *Agent }

func (r runner) RunAgent(ctx context.Context, env *tool.Env, req subagent.Request) (*subagent.Outcome, error) {
	return r.a.runSubagent(ctx, req)
}

func (r runner) StartAgent(ctx context.Context, env *tool.Env, req subagent.Request) (*subagent.Started, error) {
	s, err := r.a.startSubagent(ctx, req, nil)
	if err != nil {
		return nil, err
	}
	return &subagent.Started{TaskID: s.TaskID, AgentID: s.ID, OutputPath: s.OutputPath}, nil
}

// SubagentOptions describe a subagent started from code ([Agent.RunSubagent],
// [Agent.StartSubagent]): the fields of an Agent call.
type SubagentOptions struct {
	// Type is the agent type (default general-purpose).
	Type string
	// Prompt is the task; Description a few words for people and task
	// lists; Name an optional name; Model overrides the type's model.
	Prompt, Description, Name, Model string
	// Isolation "worktree" runs the subagent in a new git worktree.
	Isolation string
	// ParentToolUseID links the subagent's events and transcript to a
	// call of the parent (optional).
	ParentToolUseID string

	// Services, if set, adds to the subagent's own services (for example a
	// store.Scope naming its team and name) before it starts.
	Services func(*tool.Services)
	// Idle, if set, keeps a background subagent alive: each time its run
	// ends with no message queued, Idle is called and should block until
	// the subagent has more work (a message in a durable mailbox that a
	// Reminder will deliver). When it returns nil the subagent runs again
	// with WakePrompt; an error (or the task's cancellation) ends it.
	// Without Idle the subagent ends after its run and the runs its queued
	// messages cause.
	Idle func(ctx context.Context) error
	// WakePrompt is the prompt of a run after Idle returned ("" = "New
	// messages arrived; continue.").
	WakePrompt string
	// OnState, if set, is told the subagent's state: "running" at the
	// start of each run, "idle" before Idle is called, and its end
	// ("completed", "failed" or "killed") with the final result.
	OnState func(state string, res *ResultEvent)
}

func (a *Agent) request(o SubagentOptions) (subagent.Request, error) {
	typ := cmpOr(o.Type, subagent.GeneralPurpose)
	def, ok := a.ws.Agents().Get(typ)
	if !ok {
		return subagent.Request{}, fmt.Errorf("agent: unknown agent type %q (available: %s)", typ, strings.Join(a.ws.Agents().Names(), ", "))
	}
	if strings.TrimSpace(o.Prompt) == "" {
		return subagent.Request{}, errors.New("agent: a subagent needs a prompt")
	}
	return subagent.Request{Definition: def, Prompt: o.Prompt, Description: cmpOr(o.Description, typ), Name: o.Name,
		Model: o.Model, Isolation: o.Isolation, ToolUseID: o.ParentToolUseID}, nil
}

// RunSubagent runs a subagent of this agent to its end, as an Agent call
// does: the parent's permission engine and hooks, a narrowed pool, its own
// limits and transcript; its usage and cost are added to the parent's.
func (a *Agent) RunSubagent(ctx context.Context, o SubagentOptions) (*subagent.Outcome, error) {
	req, err := a.request(o)
	if err != nil {
		return nil, err
	}
	return a.runSubagent(ctx, req)
}

func (a *Agent) runSubagent(ctx context.Context, req subagent.Request) (*subagent.Outcome, error) {
	c, err := a.spawn(ctx, req, nil)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	a.hookSubagentStart(ctx, c)
	typ := req.Definition.Name
	res := c.drive(ctx, req.Prompt, func(ev Event) {
		if se, ok := ev.(*SubagentEvent); ok {
			a.forward(se)
			return
		}
		a.forward(&SubagentEvent{ParentToolUseID: req.ToolUseID, AgentID: c.id, AgentType: typ, Event: ev})
	})
	a.kids.addUsage(res.Usage, res.CostUSD)
	return c.outcome(ctx, res), nil
}

// forward queues a subagent's event for the parent's run goroutine; with a
// parent that is itself a subagent the event travels on up.
func (a *Agent) forward(ev *SubagentEvent) {
	a.kids.mu.Lock()
	a.kids.events = append(a.kids.events, ev)
	a.kids.mu.Unlock()
	a.wakeRun()
}

// Subagent is a background subagent: a task of the session's task manager
// (TaskOutput reads its progress, TaskStop stops it).
type Subagent struct {
	// ID is the subagent's session id; TaskID its task's id; OutputPath
	// the file its progress is written to.
	ID, TaskID, OutputPath string
	// Type is the agent type.
	Type string

	child *Agent
	done  chan struct{}
	out   *subagent.Outcome
	// idle is set while a long-lived subagent waits in Idle: it is not
	// running then, so a parent waiting for background work does not wait
	// for it.
	idle atomic.Bool
}

// Send queues a message for the subagent, delivered at its next turn (a
// subagent whose run has ended runs again on it).
func (s *Subagent) Send(msg string) { s.child.Notify(msg) }

// Done is closed when the subagent has ended.
func (s *Subagent) Done() <-chan struct{} { return s.done }

// Outcome returns the subagent's outcome once Done is closed (nil before).
func (s *Subagent) Outcome() *subagent.Outcome {
	select {
	case <-s.done:
		return s.out
	default:
		return nil
	}
}

// StartSubagent starts a subagent of this agent in the background, as an
// Agent call with run_in_background does, and returns at once. When it
// ends, the parent is told at its next turn ([Agent.Notify]) and its usage
// is added to the parent's. Closing the parent (or the workspace's task
// manager) stops it.
func (a *Agent) StartSubagent(ctx context.Context, o SubagentOptions) (*Subagent, error) {
	req, err := a.request(o)
	if err != nil {
		return nil, err
	}
	return a.startSubagent(ctx, req, &o)
}

func (a *Agent) startSubagent(ctx context.Context, req subagent.Request, o *SubagentOptions) (*Subagent, error) {
	if o == nil {
		o = &SubagentOptions{}
	}
	if a.ws.Tasks() == nil {
		return nil, errors.New("this session has no background-task manager")
	}
	c, err := a.spawn(ctx, req, o)
	if err != nil {
		return nil, err
	}
	a.hookSubagentStart(ctx, c)
	s := &Subagent{ID: c.id, Type: req.Definition.Name, child: c, done: make(chan struct{})}
	ready := make(chan struct{})
	fn := func(tctx context.Context, w io.Writer) error {
		<-ready
		defer c.Close()
		state := func(st string, res *ResultEvent) {
			if o.OnState != nil {
				o.OnState(st, res)
			}
			if s.idle.Swap(st == "idle") != (st == "idle") {
				a.kids.signal()
			}
		}
		prompt := req.Prompt
		var res *ResultEvent
		var total ResultEvent
		for {
			state("running", nil)
			res = c.drive(tctx, prompt, func(ev Event) { writeProgress(w, ev) })
			a.kids.addUsage(res.Usage, res.CostUSD)
			total.Usage, total.CostUSD, total.NumTurns = total.Usage.Add(res.Usage), total.CostUSD+res.CostUSD, total.NumTurns+res.NumTurns
			r := *res
			r.Usage, r.CostUSD, r.NumTurns = total.Usage, total.CostUSD, total.NumTurns
			res = &r
			if o.Idle == nil || tctx.Err() != nil {
				break
			}
			state("idle", res)
			if err := o.Idle(tctx); err != nil || tctx.Err() != nil {
				break
			}
			prompt = cmpOr(o.WakePrompt, "New messages arrived; continue.")
		}
		switch {
		case tctx.Err() != nil:
			state("killed", res)
		case res.IsError:
			state("failed", res)
		default:
			state("completed", res)
		}
		s.out = c.outcome(tctx, res)
		fmt.Fprintf(w, "\n[result: %s]\n%s\n", res.Subtype, s.out.Text)
		if tctx.Err() != nil {
			return tctx.Err()
		}
		if res.IsError {
			return fmt.Errorf("%s: %s", res.Subtype, firstLine(res.Text))
		}
		return nil
	}
	onDone := func(id, status string) {
		text := ""
		if s.out != nil {
			text = s.out.Text
			if w := s.out.Worktree; w != nil && w.Kept {
				text += fmt.Sprintf("\n\nIts changes are in the git worktree %s on branch %s.", w.Path, w.Branch)
			}
		}
		note := TaskNotification(req.Description, s.Type, id, status, text)
		// One step, so that a waiting run never sees the agent gone
		// without its note.
		a.kids.mu.Lock()
		delete(a.kids.bg, id)
		a.kids.inbox = append(a.kids.inbox, note)
		a.kids.mu.Unlock()
		close(s.done)
		a.kids.signal()
		a.wakeRun()
	}
	id, output, err := a.ws.GoBackground(c.execSess.Env().ToolResultsDir, "agent", req.Description, fn, onDone)
	if err != nil {
		close(ready)
		c.Close()
		return nil, err
	}
	s.TaskID, s.OutputPath = id, output
	a.kids.mu.Lock()
	if a.kids.bg == nil {
		a.kids.bg = map[string]*Subagent{}
	}
	a.kids.bg[id] = s
	a.kids.mu.Unlock()
	close(ready)
	return s, nil
}

// stopBackground stops the agent's running background subagents and waits
// for them.
func (a *Agent) stopBackground(ctx context.Context) {
	if a.ws.Tasks() == nil {
		return
	}
	for _, s := range a.kids.running() {
		a.ws.StopBackground(ctx, s.TaskID)
	}
}

// writeProgress renders a background subagent's events for TaskOutput.
func writeProgress(w io.Writer, ev Event) {
	switch e := ev.(type) {
	case *MessageEvent:
		if e.Message.Role != llm.RoleAssistant {
			return
		}
		if t := strings.TrimSpace(e.Message.Text()); t != "" {
			fmt.Fprintln(w, t)
		}
		for _, u := range e.Message.ToolUses() {
			fmt.Fprintf(w, "→ %s %s\n", u.Name, clip(string(u.Input), 200))
		}
	case *NoticeEvent:
		fmt.Fprintln(w, "note:", e.Text)
	}
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return textutil.Truncate(s, n+1)
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func cmpOrInt(a, b int) int {
	if a > 0 {
		return a
	}
	return b
}
