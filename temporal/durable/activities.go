package durable

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/gantry-dev/gantry/agent"
	"github.com/gantry-dev/gantry/builtin/agenttool"
	"github.com/gantry-dev/gantry/executor"
	"github.com/gantry-dev/gantry/interaction"
	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/permission"
	"github.com/gantry-dev/gantry/store"
	"github.com/gantry-dev/gantry/streamjson"
	"github.com/gantry-dev/gantry/tool"
	"github.com/gantry-dev/gantry/transcript"
	"github.com/gantry-dev/gantry/workspace"
)

// DefaultIdleRuntime is how long a worker keeps the runtime of a run it
// is not working on (see [WorkerOptions.IdleRuntime]).
const DefaultIdleRuntime = 2 * time.Minute

// WorkerOptions configure the activities of a worker. Provider is
// required; every other zero value is a default.
type WorkerOptions struct {
	// Provider is the model API, from the worker's environment (the same
	// choice as gantry's: ANTHROPIC_API_KEY, OPENAI_API_KEY/BASE_URL).
	Provider llm.Provider
	// Model is the model of runs whose spec names none.
	Model string
	// Getenv reads the worker's environment (nil = os.Getenv); UserHome is
	// the home directory for settings ("" = $HOME).
	Getenv   func(string) string
	UserHome string
	// SessionHome is GANTRY_HOME, where transcripts are written ("" = the
	// default, ~/.gantry).
	SessionHome string
	// IdleRuntime is how long the runtime of a run (its workspace: tool
	// pool, permission engine, hooks, MCP servers, file-read cache) is
	// kept between activities (0 = DefaultIdleRuntime). A run that waits
	// for an answer holds none.
	IdleRuntime time.Duration
	// HeartbeatEvery is how often a running tool call heartbeats (0 = a
	// third of the activity's heartbeat timeout).
	HeartbeatEvery time.Duration
	// ExecutorOptions configure every run's executor (zero = the
	// defaults); CanUseTool is the activities' own.
	ExecutorOptions executor.Options
	// Now is the clock (nil = time.Now).
	Now func() time.Time
	// Live receives the stream events of the model calls as they arrive
	// (text deltas for the API's followers; nil = none published). See
	// [Publisher].
	Live Publisher
	// EncodingCacheBytes bounds the memory of the encoded messages the
	// worker keeps between the model calls of its runs, so that a turn
	// encodes only the messages it adds (0 = DefaultEncodingCacheBytes;
	// negative = none kept: every model call encodes the whole
	// conversation). A run's cache goes with its runtime; over the bound,
	// the caches of the runs used least recently are emptied first. See
	// encodings.go.
	EncodingCacheBytes int64
	// CronJobs keeps the durable jobs the runs' CronCreate, CronList and
	// CronDelete tools act on (nil = durable jobs are not available to
	// runs); gantry-temporal worker gives the Temporal Schedules ([Jobs]).
	CronJobs store.CronJobs
}

// Activities are the activities of a worker: prepare a run, call the
// model, run a tool call, write the transcript, release a run. Create them
// with [NewActivities] and close them when the worker stops.
type Activities struct {
	opts WorkerOptions

	mu       sync.Mutex
	runtimes map[string]*runtime
	encClock uint64 // counts model calls, for the LRU order of the message caches
}

// runtime is what a worker holds for a run between activities.
type runtime struct {
	ws   *workspace.Workspace
	used time.Time
	busy int
	// The state that travels (carry.go): the read-state of the session's
	// file tools, and the permission rules granted.
	files  *fileStates
	grants *grants
	// epoch is the compaction count of the run's last tool call here.
	epoch int
	// enc keeps the messages of the run's last model call here as the
	// provider encoded them (encodings.go); encUsed orders the runs for
	// eviction.
	enc     llm.MessageEncodings
	encUsed uint64
}

// NewActivities returns the activities over opts.
func NewActivities(opts WorkerOptions) (*Activities, error) {
	if opts.Provider == nil {
		return nil, errors.New("durable: WorkerOptions.Provider is required")
	}
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	if opts.UserHome == "" {
		opts.UserHome = opts.Getenv("HOME")
	}
	if opts.IdleRuntime <= 0 {
		opts.IdleRuntime = DefaultIdleRuntime
	}
	if opts.EncodingCacheBytes == 0 {
		opts.EncodingCacheBytes = DefaultEncodingCacheBytes
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Activities{opts: opts, runtimes: map[string]*runtime{}}, nil
}

// Close releases every runtime.
func (a *Activities) Close() error {
	a.mu.Lock()
	rts := a.runtimes
	a.runtimes = map[string]*runtime{}
	a.mu.Unlock()
	var errs []error
	for _, rt := range rts {
		errs = append(errs, rt.ws.Close())
	}
	return errors.Join(errs...)
}

// Runtimes is how many runs this worker holds a runtime for.
func (a *Activities) Runtimes() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.runtimes)
}

// acquire returns the run's runtime, opening it on first use, and closes
// the runtimes idle for longer than IdleRuntime.
func (a *Activities) acquire(ctx context.Context, runID string, spec Spec) (*runtime, func(), error) {
	now := a.opts.Now()
	a.mu.Lock()
	var idle []*runtime
	for id, rt := range a.runtimes {
		if id != runID && rt.busy == 0 && now.Sub(rt.used) > a.opts.IdleRuntime {
			idle = append(idle, rt)
			delete(a.runtimes, id)
		}
	}
	rt := a.runtimes[runID]
	if rt != nil {
		rt.busy++
	}
	a.mu.Unlock()
	for _, old := range idle {
		old.ws.Close()
	}
	if rt == nil {
		opened, err := a.open(ctx, runID, spec)
		if err != nil {
			return nil, nil, err
		}
		a.mu.Lock()
		if cur := a.runtimes[runID]; cur != nil {
			// Opened twice at once: keep the first.
			rt = cur
			defer opened.ws.Close()
		} else {
			rt = opened
			a.runtimes[runID] = rt
		}
		rt.busy++
		a.mu.Unlock()
	}
	release := func() {
		a.mu.Lock()
		rt.busy--
		rt.used = a.opts.Now()
		a.mu.Unlock()
	}
	return rt, release, nil
}

// open assembles the run's runtime on this worker from its spec.
func (a *Activities) open(ctx context.Context, runID string, spec Spec) (*runtime, error) {
	if !filepath.IsAbs(spec.WorkDir) {
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("the working directory %q is not absolute", spec.WorkDir), "bad_spec", nil)
	}
	if fi, err := os.Stat(spec.WorkDir); err != nil || !fi.IsDir() {
		// Another worker may have the directory: retry elsewhere.
		return nil, fmt.Errorf("the working directory %s is not a directory on this worker", spec.WorkDir)
	}
	rt := &runtime{files: newFileStates(), grants: &grants{applied: map[string]bool{}}}
	// Asks go to the workflow through askChannel, as the workspace would
	// send them, but the rules a person grants are recorded so that they
	// travel with the run.
	xo := a.opts.ExecutorOptions
	xo.CanUseTool = permission.AskChannel(askChannel{}, rt.grants, interaction.Who{SessionID: runID})
	ws, err := workspace.Open(ctx, workspace.Options{
		Dir: spec.WorkDir, Mode: spec.PermissionMode, Allow: spec.Allow, Deny: spec.Deny,
		Trusted: spec.Trusted, NoSettings: spec.NoSettings,
		Getenv: a.opts.Getenv, UserHome: a.opts.UserHome,
		Store:          new(store.Memory),
		Interaction:    askChannel{},
		SessionID:      runID,
		ToolResultsDir: filepath.Join(os.TempDir(), "gantry-sessions", runID, "tool-results"),
		// Asks are the workflow's: MCP servers of a folder not yet
		// approved are not started rather than asked about.
		ExecutorOptions: xo,
	})
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), "workspace", err)
	}
	rt.ws = ws
	rt.grants.up, _ = ws.Decider().(permission.Updater)
	ws.Session().Update(func(e *tool.Env) { e.Files = rt.files })
	if a.opts.CronJobs != nil {
		tool.Provide(ws.Services(), a.opts.CronJobs)
	}
	if spec.Agent == nil {
		// The Agent tool's subagents are child workflows (subagents.go).
		tool.Provide[agenttool.Runner](ws.Services(), childRunner{})
	}
	if spec.Tools != nil {
		ws.Pool().Push(spec.Tools...) // a subagent's narrowed pool
	}
	return rt, nil
}

func (a *Activities) model(spec Spec) string {
	if spec.Model != "" {
		return spec.Model
	}
	if m := a.opts.Getenv("GANTRY_MODEL"); m != "" {
		return m
	}
	return a.opts.Model
}

// Prepare opens the run's runtime and builds the system prompt (the
// environment facts and memory files as this worker sees the working
// directory). The workflow keeps the prompt, so every turn sends the same.
func (a *Activities) Prepare(ctx context.Context, runID string, spec Spec) (*prepareOutput, error) {
	rt, done, err := a.acquire(ctx, runID, spec)
	if err != nil {
		return nil, err
	}
	defer done()
	facts := agent.EnvFacts{WorkDir: spec.WorkDir}
	if !spec.NoEnvFacts {
		facts = agent.GatherEnvFacts(ctx, spec.WorkDir, a.opts.Now())
	}
	var memory []agent.MemoryFile
	if !spec.NoMemoryFiles {
		memory = agent.FindMemoryFiles(spec.WorkDir, a.sessionHome())
	}
	out := &prepareOutput{
		System: agent.BuildSystemPrompt(spec.SystemPrompt, facts, memory, spec.AppendSystemPrompt),
		Mode:   rt.ws.Mode(),
		Model:  a.model(spec),
	}
	for _, s := range rt.ws.Pool().Specs() {
		out.Tools = append(out.Tools, s.Name)
	}
	return out, nil
}

func (a *Activities) sessionHome() string {
	if a.opts.SessionHome != "" {
		return a.opts.SessionHome
	}
	home, err := transcript.DefaultHome(a.opts.Getenv)
	if err != nil {
		return ""
	}
	return home
}

// Model sends one request and returns the final message. It heartbeats as
// the reply streams, so a worker that dies mid-reply is noticed and the
// call is made again on another worker (a model call has no side effect).
func (a *Activities) Model(ctx context.Context, in modelInput) (*modelOutput, error) {
	rt, done, err := a.acquire(ctx, in.RunID, in.Spec)
	if err != nil {
		return nil, err
	}
	defer done()
	pool := rt.ws.Pool()
	pool.Load(in.Loaded...)
	enc := a.encodings(rt)
	defer a.trimEncodings()
	req := &llm.Request{
		Model:     a.model(in.Spec),
		MaxTokens: in.Spec.MaxTokens,
		System:    []llm.SystemBlock{{Text: in.System, Cache: true}},
		Messages:  enc.Intern(mergeRoles(in.Messages)),
		Encodings: enc,
		Tools:     pool.Specs(),
		Cache:     llm.CacheHints{Tools: true, LastUserMessage: true},
	}
	if in.Summary {
		req.ToolChoice = llm.ToolChoice{Mode: llm.ToolChoiceNone}
	}
	var acc llm.Accumulator
	out := &modelOutput{}
	live := a.live(ctx, in)
	defer live.Close()
	lw := streamjson.NewWriter(func(v any) error {
		if m, ok := v.(streamjson.StreamEventMessage); ok {
			if b, err := json.Marshal(m.Event); err == nil {
				live.Send(b)
			}
		}
		return nil
	}, streamjson.WriterOptions{Partial: true})
	for ev, err := range a.opts.Provider.Stream(ctx, req) {
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if !llm.Retryable(err) && !errors.Is(err, llm.ErrInterrupted) {
				return nil, temporal.NewNonRetryableApplicationError(err.Error(), "model", err)
			}
			return nil, err
		}
		acc.Add(ev)
		lw.Event(&agent.StreamEvent{Event: ev})
		if ev.Type == llm.EventToolUseEnd && ev.InputErr != nil {
			if out.Invalid == nil {
				out.Invalid = map[string]string{}
			}
			out.Invalid[ev.ID] = ev.InputErr.Error()
		}
		activity.RecordHeartbeat(ctx)
	}
	if !acc.Done() {
		return nil, fmt.Errorf("model request: %w", llm.ErrInterrupted)
	}
	resp := acc.Response()
	out.Message, out.StopReason, out.Usage, out.Model = resp.Message, resp.StopReason, resp.Usage, resp.Model
	for _, u := range out.Message.ToolUses() {
		if out.Invalid[u.ID] != "" {
			continue
		}
		if t, ok := pool.Lookup(u.Name); ok {
			if tr := tool.TraitsOf(t, u.Input); tr.ReadOnly && tr.ConcurrencySafe {
				out.Parallel = append(out.Parallel, u.ID)
			}
		}
	}
	if len(out.Parallel) > 1 {
		out.MaxParallel = rt.ws.Executor().MaxConcurrency()
	}
	return out, nil
}

// live opens the live events of a model call: its turn is one more than
// the assistant messages so far, its attempt the activity's.
func (a *Activities) live(ctx context.Context, in modelInput) LiveSink {
	if a.opts.Live == nil || in.Summary {
		return nopSink{} // a compaction summary is not a reply followers see
	}
	turn := 1
	for _, m := range in.Messages {
		if m.Role == llm.RoleAssistant {
			turn++
		}
	}
	return a.opts.Live.Open(ctx, LiveCall{RunID: in.RunID, Turn: turn, Attempt: int(activity.GetInfo(ctx).Attempt)})
}

// mergeRoles joins consecutive messages of one role (providers want
// alternation).
func mergeRoles(msgs []llm.Message) []llm.Message {
	out := make([]llm.Message, 0, len(msgs))
	for _, m := range msgs {
		if n := len(out); n > 0 && out[n-1].Role == m.Role {
			out[n-1] = llm.Message{Role: m.Role, Content: append(append([]llm.Block(nil), out[n-1].Content...), m.Content...)}
			continue
		}
		out = append(out, m)
	}
	return out
}

// Tool runs one tool call through the run's pipeline on this worker. An
// ask the pipeline makes ends the activity with the ask (the workflow
// waits for the answer and runs the call again with it). A side-effecting
// call that already started on a worker that died is not run again
// blindly (see [Activities.recover]).
func (a *Activities) Tool(ctx context.Context, in toolInput) (*toolOutput, error) {
	rt, done, err := a.acquire(ctx, in.RunID, in.Spec)
	if err != nil {
		return nil, err
	}
	defer done()
	pool := rt.ws.Pool()
	pool.Load(in.Loaded...)
	t, found := pool.Lookup(in.Name)
	var traits tool.Traits
	if found {
		traits = tool.TraitsOf(t, in.Input)
	}
	sess := rt.ws.Session()
	if in.Mode != "" {
		sess.Update(func(e *tool.Env) { e.Mode = in.Mode })
	}
	a.mu.Lock()
	if rt.epoch != in.Epoch {
		// The conversation was compacted: the model no longer sees the
		// files it read, so their reads are forgotten (as in-process).
		rt.epoch = in.Epoch
		rt.files = newFileStates()
		sess.Update(func(e *tool.Env) { e.Files = rt.files })
	}
	a.mu.Unlock()
	wd := sess.Env().WorkDir
	info := activity.GetInfo(ctx)
	recovered := ""
	if info.Attempt > 1 && found && !traits.ReadOnly && activity.HasHeartbeatDetails(ctx) {
		var prev progress
		if err := activity.GetHeartbeatDetails(ctx, &prev); err == nil && prev.Started {
			out, rerun := recoverCall(t.Spec().Name, in, prev, a.opts.Now())
			if !rerun {
				out.Mode, out.Loaded = sess.Env().Mode, pool.Loaded()
				return out, nil
			}
			recovered = RecoveredRerun
		}
	}
	// The marker goes to the server before the call starts: the first
	// heartbeat of an attempt is sent at once, not throttled.
	p := progress{Started: true, At: a.opts.Now(), Attempt: info.Attempt}
	if found && !traits.ReadOnly {
		p.Path, p.Before = fileBefore(t.Spec().Name, in.Input, wd)
	}
	activity.RecordHeartbeat(ctx, p)
	stop := a.heartbeat(ctx, p, info.HeartbeatTimeout)
	// What the run learnt on other workers, checked here.
	rt.grants.seed(in.Granted)
	rt.files.seed(in.Files)
	mark := rt.files.mark()
	asks := &askState{answers: in.Answers}
	spawn := &spawnState{parent: in.Spec, pool: pool, getenv: a.opts.Getenv, reply: in.Agent}
	o, err := rt.ws.Executor().RunOne(withSpawn(withAsks(ctx, asks), spawn), sess, executor.Call{ID: in.ID, Name: in.Name, Input: in.Input})
	stop()
	if err != nil {
		return nil, err
	}
	out := &toolOutput{Mode: sess.Env().Mode, Loaded: pool.Loaded(),
		Files: rt.files.since(mark), Granted: rt.grants.newSince(in.Granted)}
	if asks.pending != nil {
		out.Ask = asks.pending
		return out, nil
	}
	if spawn.spawn != nil {
		out.Spawn = spawn.spawn
		return out, nil
	}
	res := &tool.Result{Content: o.Result.Content, IsError: o.Result.IsError}
	for _, m := range o.Result.Messages {
		for _, c := range m.Content {
			out.ExtraText = append(out.ExtraText, c.AsText())
		}
	}
	out.Result = res
	out.Outcome = ToolOutcome{ID: in.ID, Name: in.Name, Kind: string(o.Kind), IsError: res.IsError, Duration: o.Duration, Recovered: recovered}
	out.Stop, out.StopWhy, out.Notices = o.Stop, o.StopReason, o.SystemMessages
	return out, nil
}

// heartbeat keeps heartbeating p until stop is called.
func (a *Activities) heartbeat(ctx context.Context, p progress, timeout time.Duration) (stop func()) {
	every := a.opts.HeartbeatEvery
	if every <= 0 {
		every = timeout / 3
	}
	if every <= 0 {
		every = DefaultHeartbeatTimeout / 3
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				activity.RecordHeartbeat(ctx, p)
			}
		}
	}()
	return func() {
		close(done)
		wg.Wait()
	}
}

// Release closes the run's runtime on this worker (the run ended).
func (a *Activities) Release(ctx context.Context, runID string, _ *Result) error {
	a.mu.Lock()
	rt := a.runtimes[runID]
	if rt != nil && rt.busy == 0 {
		delete(a.runtimes, runID)
	} else {
		rt = nil
	}
	a.mu.Unlock()
	if rt != nil {
		return rt.ws.Close()
	}
	return nil
}

// Transcript appends the run's new messages to its session transcript
// (session id = run id) under the worker's GANTRY_HOME. It is idempotent:
// messages already in the file are not written again.
func (a *Activities) Transcript(ctx context.Context, in transcriptInput) error {
	home := a.sessionHome()
	if home == "" {
		return temporal.NewNonRetryableApplicationError("no GANTRY_HOME or home directory on the worker", "transcript", nil)
	}
	st := transcript.NewStore(home)
	st.NewID = func() string { return in.RunID }
	var s *transcript.Transcript
	var err error
	if _, serr := os.Stat(st.Path(in.WorkDir, in.RunID)); serr == nil {
		s, err = st.Open(in.WorkDir, in.RunID)
	} else {
		s, err = st.Create(in.WorkDir)
	}
	if err != nil {
		return err
	}
	defer s.Close()
	have := 0
	for _, r := range s.Records() {
		if r.Type == transcript.TypeUser || r.Type == transcript.TypeAssistant || r.Type == transcript.TypeSummary {
			have++
		}
	}
	for i, m := range in.Messages {
		if in.From+i < have {
			continue // written by an earlier attempt
		}
		typ := transcript.TypeUser
		switch {
		case i == 0 && in.Summary:
			typ = transcript.TypeSummary
		case m.Role == llm.RoleAssistant:
			typ = transcript.TypeAssistant
		}
		b, err := json.Marshal(m)
		if err != nil {
			return err
		}
		if _, err := s.Append(transcript.Record{Type: typ, Message: b}); err != nil {
			return err
		}
	}
	if in.Result != nil {
		b, _ := json.Marshal(in.Result)
		if _, err := s.Append(transcript.Record{Type: transcript.TypeSystem, Subtype: "result", Data: b}); err != nil {
			return err
		}
	}
	return s.Sync()
}
