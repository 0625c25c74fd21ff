package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"
	"sync"
	"time"
	"unique"

	"github.com/gantry-dev/gantry/checkpoint"
	"github.com/gantry-dev/gantry/executor"
	"github.com/gantry-dev/gantry/hook"
	"github.com/gantry-dev/gantry/interaction"
	"github.com/gantry-dev/gantry/internal/offstack"
	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/llm/texttools"
	"github.com/gantry-dev/gantry/permission"
	"github.com/gantry-dev/gantry/subagent"
	"github.com/gantry-dev/gantry/tool"
	"github.com/gantry-dev/gantry/toolset"
	"github.com/gantry-dev/gantry/transcript"
	"github.com/gantry-dev/gantry/workspace"
)

// Defaults of [Options].
const (
	DefaultMaxTurns         = 100
	DefaultContextWindow    = 200_000
	DefaultCompactThreshold = 0.8
	// DefaultKeepMessages is how many of the most recent messages compaction
	// keeps verbatim (at least; it extends to a clean boundary).
	DefaultKeepMessages = 6
	// maxStreamRetries bounds how often a turn whose stream broke part-way
	// is sent again.
	maxStreamRetries = 2
)

// Options configure an [Agent]: the loop's own settings — model, system
// prompt, limits, compaction, events. The session it runs in (working
// directory, safety layer, tools, transcripts, checkpoints, reminders) is
// the [workspace.Workspace]'s. Provider is required; every other zero value
// is a sensible default.
type Options struct {
	// Provider is the model API (llm/anthropic, llm/openai, or a fake).
	Provider llm.Provider
	// Model is passed to the provider ("" = the provider's default).
	Model string
	// MaxTokens bounds each reply (0 = the provider's default).
	MaxTokens int
	// ThinkingBudget turns on extended thinking where the provider has it,
	// with this many tokens (0 = off).
	ThinkingBudget int
	// ToolProtocol is how tools reach the model: texttools.Native ("",
	// the provider's tool-calling API), texttools.Text (tools described in
	// the system prompt, calls written as XML-style tags in the reply; for
	// models without native tool calls) or texttools.Auto (Text for models
	// known or found to lack native tool calls). See package
	// llm/texttools. Subagents share it.
	ToolProtocol texttools.Protocol
	// OutputSchema, if set, is a JSON Schema the run's final answer must
	// match: the final-answer tool StructuredOutput (its input schema is
	// this one; a schema whose type is not "object" is wrapped in an object
	// with one "output" property) is offered with the pool's tools and
	// named in the system prompt. Its input is validated (and the common
	// mistakes coerced) by the executor like any tool's; a valid call ends
	// the run with the answer in [ResultEvent.Structured], an invalid one
	// gives the model the validation error. A turn that ends in text gets a
	// reminder. Each failed attempt — an invalid call or a turn ended in
	// text — counts; after OutputRetries (0 = DefaultOutputRetries) the run
	// ends with SubtypeMaxStructuredRetries. [PromptAs] sets the schema
	// for one run from a Go type. Subagents get their type's schema
	// (subagent.Definition.OutputSchema), never this one.
	OutputSchema  json.RawMessage
	OutputRetries int
	// OutputStrategy chooses how the answer arrives: OutputTool (the
	// default) or OutputNative, the provider's structured-output mode
	// (see the constants).
	OutputStrategy OutputStrategy
	// SmallModel is a small, fast model of the same provider (a
	// Haiku-class model): the model of agent types whose model is
	// subagent.ModelFast, such as the built-in Explore ("" = Model for
	// those). WebFetch's side model is the workspace's
	// (workspace.Options.Summarizer).
	SmallModel string

	// SystemPrompt replaces the built-in instructions; AppendSystemPrompt is
	// added after the environment facts and memory files.
	SystemPrompt       string
	AppendSystemPrompt string
	// NoMemoryFiles skips AGENTS.md / CLAUDE.md / GANTRY.md; NoEnvFacts
	// skips the environment section (git status, date, platform).
	NoMemoryFiles bool
	NoEnvFacts    bool

	// Workspace is the session the agent runs in (package workspace): the
	// working directory, settings, permission engine, hooks, interaction
	// channel, services, MCP servers, tool pool and agent types, and what
	// keeps the session — transcripts (and which one to resume),
	// checkpoints, the durable store, the reminders. The agent uses it and
	// does not close it (add it to Closers for that). Nil means
	// workspace.Open(ctx, workspace.Options{}): the CLI's defaults in the
	// process's directory (settings read, built-in tools, nothing kept on
	// disk), closed by [Agent.Close].
	Workspace *workspace.Workspace

	// MaxAgentDepth is how deep subagents nest: 1 (the default, 0) lets
	// the agent start subagents that cannot start their own; 2 lets them
	// start one more level; negative turns subagents off.
	MaxAgentDepth int
	// SubagentMaxTurns bounds the turns of a subagent whose type sets no
	// maxTurns (0 = DefaultSubagentMaxTurns).
	SubagentMaxTurns int
	// WaitForBackground makes Run wait, when the model ends its turn, for
	// the background agents it started: their results are given to the
	// model (a new turn), within MaxTurns; at the turn limit they are
	// stopped. Headless runs (gantry -p) set it. Otherwise a finished
	// background agent is reported at the next turn or Run.
	WaitForBackground bool

	// Closers are closed, in order, when the agent is closed (for example
	// the workspace, to tie their lifetimes). Nil means none.
	Closers []io.Closer

	// ExecutorOptions configure the agent's executor (concurrency,
	// timeouts, tracing, logging); the zero value is the executor's
	// defaults. Status is the agent's own; Decider, CanUseTool and Hooks,
	// when nil, are the workspace's decider, the agent's ask path and the
	// workspace's hooks (with checkpoints).
	ExecutorOptions executor.Options

	// MaxTurns bounds the model turns of one Run (0 = DefaultMaxTurns).
	MaxTurns int
	// MaxBudgetUSD and MaxBudgetTokens stop a run once the session's cost or
	// total tokens reach them (0 = no limit). Cost uses Prices.
	MaxBudgetUSD    float64
	MaxBudgetTokens int
	// Prices is the price table (nil = the table of DefaultPrices, one
	// read-only copy shared by every agent).
	Prices PriceTable

	// ContextWindow is the model's context size in tokens (0 =
	// DefaultContextWindow); CompactThreshold is the fraction of it at which
	// older turns are summarised (0 = DefaultCompactThreshold, negative =
	// never); KeepMessages is how many recent messages compaction keeps.
	ContextWindow    int
	CompactThreshold float64
	KeepMessages     int

	// StopOnSignal stops a run when the executor signals that the same tool
	// error or timeout keeps repeating. The default (false) tells the model
	// instead and stops only at the second signal.
	StopOnSignal bool

	// StreamEvents makes Run yield the provider's raw stream events as
	// [*StreamEvent] (the Agent SDKs' --include-partial-messages). Off by
	// default.
	StreamEvents bool

	// Now is the clock (nil = time.Now).
	Now func() time.Time
}

// A Reminder adds context at turn boundaries; it is [tool.Reminder] (one
// definition, so that session services below the agent can offer one).
type Reminder = tool.Reminder

// Agent runs prompts through a model and its tools, one run at a time, over
// one session. Create it with [New] and release it with [Agent.Close].
type Agent struct {
	opts     Options
	provider llm.Provider
	pool     *toolset.Pool
	exec     *executor.Executor
	resolver *resolver // the pool, plus StructuredOutput during a structured run
	execSess *executor.SharedEnv
	ws       *workspace.Workspace
	ownWS    *workspace.Workspace // opened by New, closed by Close
	canUse   permission.CanUseTool
	facts    EnvFacts
	memory   []MemoryFile
	sub      *subState // set for a subagent
	kids     kids      // subagents' events, usage, background tasks and notes
	// teams is the team runner of the workspace when this agent leads
	// teams (a root agent that may start subagents); nil otherwise.
	teams subagent.Teams
	sess  *transcript.Transcript // nil without a store
	// The session's facts, from the workspace (a subagent's are its
	// own): working directory, initial mode, safety layer, the channel
	// through which a person decides and this agent's label on it (zero
	// for the main agent).
	workDir     string
	mode        tool.Mode
	decider     permission.Decider
	hooks       hook.Runner
	interaction interaction.Channel
	who         interaction.Who
	// The workspace's transcript and checkpoint stores (nil: none; a
	// subagent in a worktree has no checkpoints).
	transcripts *transcript.Store
	checkpoints *checkpoint.Store
	id          string
	system      string
	// systemRef keeps the interned prompt's entry alive while the agent
	// is (a string alone does not: the table holds its entries weakly
	// through their handles).
	systemRef unique.Handle[string]
	prices    PriceTable
	now       func() time.Time

	runMu    sync.Mutex // one run at a time
	history  []llm.Message
	notices  []string // for the user at the start of the next run (a repaired transcript)
	poolErr  string   // the pool's build errors last reported (a tool left out)
	usage    llm.Usage
	cost     float64
	turns    int
	lastSize int // prompt+output tokens of the last turn
	signals  int

	qmu       sync.Mutex
	queue     []tool.Status
	model     string  // the model of the runs (opts.Model outside a run)
	baseModel string  // the model New was given
	nextModel *string // set by SetModel, taken by the next run
	// nextThinking is set by SetThinkingBudget, taken by the next run;
	// baseThinking is the budget New was given.
	nextThinking *int
	baseThinking int
	notify       chan struct{}

	closeOnce sync.Once
	closeErr  error
}

// New creates an agent: it opens or creates the session, assembles the tool
// pool for the session's environment, builds the executor and the system
// prompt.
func New(ctx context.Context, opts Options) (*Agent, error) {
	// The assembly is deep (the workspace's frames are large): off the
	// caller's stack, which is often the session's (see package offstack).
	return offstack.Call(ctx, func() (*Agent, error) { return newAgent(ctx, &opts) })
}

// InlineDeepCalls returns a copy of ctx under which the deep calls a session
// runs on a short-lived goroutine of their own — the request body, the
// session's assembly, a tool call's validation, so that an idle session's
// stack stays small — run on the calling goroutine instead. Pass it to
// [New] and [Agent.Prompt] (the provider sees the prompt's context) in a
// process that runs one session and exits, such as `gantry -p`: there is no
// idle stack to keep small, and each helper goroutine's stack growth reads
// the function metadata of every frame on it (binary pages a short process
// need not touch; docs/scale.md). Without it (the default) deep calls run
// off the session's stack.
func InlineDeepCalls(ctx context.Context) context.Context { return offstack.Inline(ctx) }

func newAgent(ctx context.Context, optsp *Options) (*Agent, error) {
	opts := *optsp
	if opts.Provider == nil {
		return nil, errors.New("agent: Options.Provider is required")
	}
	provider, perr := texttools.Wrap(opts.Provider, opts.ToolProtocol)
	if perr != nil {
		return nil, fmt.Errorf("agent: %w", perr)
	}
	if len(opts.OutputSchema) > 0 {
		if _, err := outputTool(opts.OutputSchema); err != nil {
			return nil, err
		}
	}
	a := &Agent{opts: opts, provider: provider, notify: make(chan struct{}, 1), now: opts.Now, prices: opts.Prices, model: opts.Model, baseModel: opts.Model, baseThinking: opts.ThinkingBudget}
	a.kids.wake = make(chan struct{}, 1)
	if a.now == nil {
		a.now = time.Now
	}
	if a.prices == nil {
		a.prices = defaultPrices // shared, read-only
	}
	ws := opts.Workspace
	if ws == nil {
		var err error
		if ws, err = workspace.Open(ctx, workspace.Options{}); err != nil {
			return nil, fmt.Errorf("agent: %w", err)
		}
		a.ownWS = ws
	}
	wd := ws.Dir()
	a.workDir = wd
	fail := func(err error) (*Agent, error) {
		if a.ownWS != nil {
			a.ownWS.Close()
		}
		return nil, err
	}

	// The environment facts (a `git status`) are gathered while the
	// session and workspace are opened.
	var factsCh chan EnvFacts
	if !opts.NoEnvFacts {
		factsCh = make(chan EnvFacts, 1)
		now := a.now()
		go func() { factsCh <- GatherEnvFacts(ctx, wd, now) }()
		defer func() {
			if factsCh != nil {
				<-factsCh // an error return: no goroutine outlives New
			}
		}()
	}

	a.transcripts, a.checkpoints = ws.Transcripts(), ws.Checkpoints()
	source := "startup"
	if err := a.openSession(ws.Resume()); err != nil {
		return fail(err)
	}
	if len(a.history) > 0 {
		source = "resume"
	}
	sessionDir := filepath.Join(os.TempDir(), "gantry-sessions", a.id)
	if a.transcripts != nil {
		sessionDir = filepath.Join(a.transcripts.Dir(wd), a.id)
	}
	resultsDir := filepath.Join(sessionDir, "tool-results")
	a.ws = ws
	a.mode, a.decider, a.hooks = ws.Mode(), ws.Decider(), ws.Hooks()
	if ch, err := tool.Use[interaction.Channel](&tool.Env{Services: ws.Services()}); err == nil {
		a.interaction = ch
	}
	if a.maxDepth() >= 1 {
		// A root agent that may start subagents leads teams: it is the
		// lead in the workspace's services, where the team runner and the
		// pool's enabled checks look (subagents inherit it; the runner
		// refuses them).
		tool.Provide[subagent.Lead](ws.Services(), lead{a})
		if t, err := tool.Use[subagent.Teams](&tool.Env{Services: ws.Services()}); err == nil {
			a.teams = t
		}
	}
	env := &tool.Env{
		WorkDir:        wd,
		SessionID:      a.id,
		Mode:           a.mode,
		SessionDir:     sessionDir,
		ToolResultsDir: resultsDir,
		AdditionalDirs: ws.Env().AdditionalDirs,
		Files:          tool.NewFileCache(0),
		Services:       a.services(ws.Services(), 0),
	}
	a.pool = ws.Pool()
	if a.maxDepth() < 1 {
		a.pool = a.pool.Derive(env, allBut(a.pool, subagent.ToolName)...)
	}
	a.canUse = a.canUseTool(a.decider)
	a.setupExecutor(env)

	if factsCh != nil {
		a.facts = <-factsCh
		factsCh = nil
	} else {
		a.facts = EnvFacts{WorkDir: wd}
	}
	if !opts.NoMemoryFiles {
		home := ""
		if a.transcripts != nil {
			home = a.transcripts.Home()
		}
		a.memory = FindMemoryFiles(wd, home)
	}
	facts, memory := a.facts, a.memory
	// Interned: sessions of one program built alike have the same prompt,
	// held once (the standard library's canonical-value table; an entry
	// goes when no session refers to it).
	a.systemRef = unique.Make(BuildSystemPrompt(opts.SystemPrompt, facts, memory, opts.AppendSystemPrompt))
	a.system = a.systemRef.Value()
	a.hook(ctx, &hook.Input{Event: hook.SessionStart, Source: source})
	return a, nil
}

// setupExecutor builds the executor session over env and the executor over
// the agent's pool with the safety layer.
func (a *Agent) setupExecutor(env *tool.Env) {
	a.execSess = executor.NewSharedEnv(env)
	xo := a.opts.ExecutorOptions
	xo.Status = a.onStatus
	if xo.Decider == nil {
		xo.Decider = a.decider
	}
	if xo.CanUseTool == nil && a.canUse != nil {
		xo.CanUseTool = a.canUse
	}
	a.resolver = &resolver{pool: a.pool}
	if xo.Hooks == nil {
		if a.checkpoints != nil {
			xo.Hooks = checkpointHooks{inner: a.hooks, a: a}
		} else if a.hooks != nil {
			xo.Hooks = a.hooks
		}
	}
	if inner := xo.Hooks; inner != nil {
		// The executor builds the tool events' input from the tool
		// environment, which has no transcript: add it, as a.hook does.
		xo.Hooks = transcriptHooks{inner: inner, a: a}
	}
	a.exec = executor.New(a.resolver, xo)
}

// transcriptHooks fills a hook input's transcript_path.
type transcriptHooks struct {
	inner hook.Runner
	a     *Agent
}

func (h transcriptHooks) Run(ctx context.Context, in *hook.Input) (*hook.Output, error) {
	if in.TranscriptPath == "" {
		in.TranscriptPath = h.a.transcriptPath()
	}
	return h.inner.Run(ctx, in)
}

// Handles implements [hook.EventFilter] as the wrapped runner does.
func (h transcriptHooks) Handles(ev hook.Event) bool { return hook.Handles(h.inner, ev) }

// transcriptPath is the transcript hooks are told about: the session's,
// or for a subagent its parent's ("" without one).
func (a *Agent) transcriptPath() string {
	s := a
	if a.sub != nil {
		s = a.sub.parent
	}
	if s.sess == nil {
		return ""
	}
	return s.sess.Path
}

// openSession opens the transcript r asks for in the workspace's store,
// or names a new session without one.
func (a *Agent) openSession(r workspace.Resume) error {
	st := a.transcripts
	switch {
	case st == nil:
		if r.ID != "" || r.Continue {
			return errors.New("agent: resuming a session needs a transcript store")
		}
		if a.id == "" {
			a.id = cmpOr(r.NewID, transcript.NewUUID())
		}
		return nil
	case r.ID != "" || r.Continue:
		id := r.ID
		if id == "" {
			var err error
			if id, err = st.Latest(a.workDir); err != nil {
				return fmt.Errorf("agent: continue: %w", err)
			}
		}
		var s *transcript.Transcript
		var err error
		if r.Fork {
			s, err = st.Fork(a.workDir, id)
		} else {
			s, err = st.Open(a.workDir, id)
		}
		if err != nil {
			return fmt.Errorf("agent: resume: %w", err)
		}
		a.sess, a.id = s, s.ID
		a.history, a.notices = historyFromRecords(s.Records(), s.Skipped())
		return nil
	case r.NewID != "":
		s, err := st.CreateID(a.workDir, r.NewID)
		if err != nil {
			return fmt.Errorf("agent: %w", err)
		}
		a.sess, a.id = s, s.ID
		return nil
	default:
		s, err := st.Create(a.workDir)
		if err != nil {
			return fmt.Errorf("agent: %w", err)
		}
		a.sess, a.id = s, s.ID
		return nil
	}
}

// canUseTool answers decisions that came out as Ask: PermissionRequest
// hooks first (their allow or deny answers), then the interaction channel
// (see [permission.AskChannel]; rules go to decider when it is a
// [permission.Updater]). With neither, nil: the executor denies what nobody
// can approve.
func (a *Agent) canUseTool(decider permission.Decider) permission.CanUseTool {
	var user permission.CanUseTool
	if a.interaction != nil {
		up, _ := decider.(permission.Updater)
		who := a.who
		if who.SessionID == "" {
			who.SessionID = a.id
		}
		user = permission.AskChannel(a.interaction, up, who)
	}
	if a.hooks == nil {
		return user
	}
	return func(ctx context.Context, req *permission.Request, suggested permission.Decision) (permission.Decision, error) {
		out := a.hook(ctx, &hook.Input{Event: hook.PermissionRequest, ToolName: req.Name, ToolInput: req.Input, ToolUseID: req.Env.ToolUseID})
		if out != nil {
			switch out.Decision {
			case tool.Allow:
				return permission.Decision{Behavior: tool.Allow, Source: "hook", Reason: out.Reason, UpdatedInput: out.UpdatedInput}, nil
			case tool.Deny:
				return permission.Decision{Behavior: tool.Deny, Source: "hook", Reason: out.Reason, Interrupt: out.Continue != nil && !*out.Continue}, nil
			}
		}
		if user != nil {
			return user(ctx, req, suggested)
		}
		return permission.Decision{}, interaction.ErrNobody
	}
}

// SessionID returns the session's id.
func (a *Agent) SessionID() string { return a.id }

// Pool returns the agent's tool pool.
func (a *Agent) Pool() *toolset.Pool { return a.pool }

// Executor returns the agent's executor (for its statistics).
func (a *Agent) Executor() *executor.Executor { return a.exec }

// Env returns a copy of the session's current environment (working
// directory, mode, …).
func (a *Agent) Env() *tool.Env { return a.execSess.Env() }

// SetModel changes the model of the next runs (a run in progress keeps
// its model); "" means the model the agent was created with.
func (a *Agent) SetModel(model string) {
	a.qmu.Lock()
	defer a.qmu.Unlock()
	if model == "" {
		model = a.baseModel
	}
	a.nextModel = &model
}

// Model returns the model of the next run.
func (a *Agent) Model() string {
	a.qmu.Lock()
	defer a.qmu.Unlock()
	if a.nextModel != nil {
		return *a.nextModel
	}
	return a.model
}

// takeModel applies a model set with SetModel (the caller holds runMu).
func (a *Agent) takeModel() {
	a.qmu.Lock()
	defer a.qmu.Unlock()
	if a.nextModel != nil {
		a.opts.Model, a.model, a.nextModel = *a.nextModel, *a.nextModel, nil
	}
	if a.nextThinking != nil {
		a.opts.ThinkingBudget, a.nextThinking = *a.nextThinking, nil
	}
}

// SetThinkingBudget changes the extended-thinking budget (Options.
// ThinkingBudget) of the next runs; a negative n means the budget the
// agent was created with, 0 turns thinking off.
func (a *Agent) SetThinkingBudget(n int) {
	a.qmu.Lock()
	defer a.qmu.Unlock()
	if n < 0 {
		n = a.baseThinking
	}
	a.nextThinking = &n
}

// SetMode changes the permission mode for the next calls.
func (a *Agent) SetMode(m tool.Mode) { a.execSess.Update(func(e *tool.Env) { e.Mode = m }) }

// Messages returns a copy of the conversation.
func (a *Agent) Messages() []llm.Message {
	a.runMu.Lock()
	defer a.runMu.Unlock()
	return append([]llm.Message(nil), a.history...)
}

// SystemPrompt returns the system prompt the agent sends.
func (a *Agent) SystemPrompt() string { return a.system }

// Close ends the session: SessionEnd hooks run, the closers (background
// tasks) are closed and the transcript is flushed and closed.
func (a *Agent) Close() error {
	a.closeOnce.Do(func() {
		a.stopBackground(context.Background())
		if a.teams != nil {
			a.teams.StopAll(context.Background(), a.id)
		}
		a.hook(context.Background(), &hook.Input{Event: hook.SessionEnd, Reason: "close"})
		var errs []error
		for _, c := range a.opts.Closers {
			if err := c.Close(); err != nil {
				errs = append(errs, err)
			}
		}
		if a.ownWS != nil {
			errs = append(errs, a.ownWS.Close())
		}
		errs = append(errs, a.closeSession())
		a.closeErr = errors.Join(errs...)
	})
	return a.closeErr
}

func (a *Agent) closeSession() error {
	if a.sess == nil {
		return nil
	}
	err := errors.Join(a.sess.Sync(), a.sess.Close())
	if a.sub != nil {
		a.sub.parent.childClosed(a.id)
	}
	return err
}

// onStatus queues a status event for the run goroutine to deliver (the
// executor calls it from its own goroutines).
func (a *Agent) onStatus(s tool.Status) {
	a.qmu.Lock()
	a.queue = append(a.queue, s)
	a.qmu.Unlock()
	select {
	case a.notify <- struct{}{}:
	default:
	}
}

func (a *Agent) takeStatuses() []tool.Status {
	a.qmu.Lock()
	defer a.qmu.Unlock()
	q := a.queue
	a.queue = nil
	return q
}

// hook runs an agent-level hook event; nil runner or error gives nil.
func (a *Agent) hook(ctx context.Context, in *hook.Input) *hook.Output {
	if a.hooks == nil {
		return nil
	}
	env := a.execSess.Env()
	in.SessionID = a.id
	in.CWD = env.WorkDir
	in.PermissionMode = env.Mode
	if a.sess != nil {
		in.TranscriptPath = a.sess.Path
	}
	if a.sub != nil {
		// A subagent's session events are the parent's Subagent events.
		switch in.Event {
		case hook.SessionStart, hook.SessionEnd:
			return nil
		case hook.Stop:
			in.Event = hook.SubagentStop
		}
		in.AgentID, in.AgentType, in.AgentTranscriptPath = a.id, a.sub.def.Name, in.TranscriptPath
		p := a.sub.parent
		in.SessionID, in.TranscriptPath = p.id, ""
		if p.sess != nil {
			in.TranscriptPath = p.sess.Path
		}
	}
	out, err := a.hooks.Run(ctx, in)
	if err != nil {
		return &hook.Output{SystemMessage: fmt.Sprintf("%s hook failed: %v", in.Event, err)}
	}
	return out
}

// record appends a message to the transcript.
func (a *Agent) record(typ string, m llm.Message) error { return a.recordAs(typ, m, "") }

// recordAs appends a message to the transcript under uuid ("" = a new
// one).
func (a *Agent) recordAs(typ string, m llm.Message, uuid string) error {
	if a.sess == nil {
		return nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("agent: encode message: %w", err)
	}
	_, err = a.sess.Append(transcript.Record{Type: typ, Message: b, UUID: uuid})
	return err
}

func (a *Agent) recordSystem(subtype string, data any) {
	if a.sess == nil {
		return
	}
	b, _ := json.Marshal(data)
	_, _ = a.sess.Append(transcript.Record{Type: transcript.TypeSystem, Subtype: subtype, Data: b})
}

// Prompt runs prompt to the end and returns the final result, discarding the
// intermediate events.
func (a *Agent) Prompt(ctx context.Context, prompt string) (*ResultEvent, error) {
	var res *ResultEvent
	var last error
	for ev, err := range a.Run(ctx, prompt) {
		if err != nil {
			last = err
			continue
		}
		if r, ok := ev.(*ResultEvent); ok {
			res = r
		}
	}
	return res, last
}

// Run sends prompt and runs the loop until the model ends its turn, a limit
// is hit, or ctx is cancelled. The iterator yields every event in order; it
// always yields a final [*ResultEvent] (unless the consumer stops early),
// followed by an error if the run failed for a reason other than a limit or
// an interrupt (a provider error, for example). Breaking out of the loop
// cancels the run. Runs of one agent are serialised.
func (a *Agent) Run(ctx context.Context, prompt string) iter.Seq2[Event, error] {
	return a.RunMessage(ctx, llm.Text(prompt))
}

// RunMessage is [Agent.Run] with a prompt of several blocks (text and
// images, as a user message of the Agent SDKs' stream-json input carries).
// UserPromptSubmit hooks see the text of the blocks.
func (a *Agent) RunMessage(ctx context.Context, prompt ...llm.Block) iter.Seq2[Event, error] {
	return a.run(ctx, prompt, a.opts.OutputSchema)
}

// run is RunMessage with the run's output schema (nil: none).
func (a *Agent) run(ctx context.Context, prompt []llm.Block, schema json.RawMessage) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		a.runMu.Lock()
		defer a.runMu.Unlock()
		a.takeModel()
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		r := &run{a: a, yield: yield, cancel: cancel, start: a.now()}
		if err := r.startOutput(schema); err != nil {
			r.finish(SubtypeDuringExecution, true, err.Error(), err)
			return
		}
		defer r.endOutput()
		r.loop(ctx, prompt)
	}
}

// Stats is what a session used so far in this process.
type Stats struct {
	// Usage and CostUSD add up every model call of the session's runs
	// (CostUSD is 0 where the price is unknown); Turns counts them.
	Usage   llm.Usage
	CostUSD float64
	Turns   int
	// ContextTokens is the size of the last model exchange (prompt and
	// output as the provider counted them; 0 before the first or right
	// after a compaction); ContextWindow the window it is measured
	// against.
	ContextTokens, ContextWindow int
	// MemoryFiles are the paths of the memory files in the system prompt.
	MemoryFiles []string
}

// Stats returns what the session used so far. It waits for a running
// run to end: call it between runs.
func (a *Agent) Stats() Stats {
	a.runMu.Lock()
	defer a.runMu.Unlock()
	window := a.opts.ContextWindow
	if window <= 0 {
		window = DefaultContextWindow
	}
	s := Stats{Usage: a.usage, CostUSD: a.cost, Turns: a.turns, ContextTokens: a.lastSize, ContextWindow: window}
	for _, m := range a.memory {
		s.MemoryFiles = append(s.MemoryFiles, m.Path)
	}
	return s
}

// Provider returns the model API the session talks to (Options.Provider).
func (a *Agent) Provider() llm.Provider { return a.opts.Provider }
