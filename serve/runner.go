package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/gantry-dev/gantry/agent"
	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/runqueue"
	"github.com/gantry-dev/gantry/sandbox"
	"github.com/gantry-dev/gantry/store"
	"github.com/gantry-dev/gantry/streamjson"
	"github.com/gantry-dev/gantry/transcript"
	"github.com/gantry-dev/gantry/workspace"
)

// AgentRunner is the [runqueue.Runner] of `gantry serve`: each run is an
// agent session assembled by package workspace in the request's directory
// (its settings, hooks, MCP servers and sandbox), with the request's
// permission mode and rules on top, its asks sent to the run queue (where
// the API answers them), its events written as stream-json lines by the
// same encoder as `gantry -p --output-format stream-json`.
type AgentRunner struct {
	// NewProvider returns the provider and the model name for a run's
	// model option ("" = the default model). Required. It is called once
	// per distinct model option (of the last 16): the runs share the
	// provider — its HTTP client and connections, and the tool definitions
	// it encoded — as the many-sessions pattern does, so the provider must
	// be safe for concurrent use (the adapters are).
	NewProvider func(ctx context.Context, model string) (llm.Provider, string, error)
	// Store is the durable store the runs' tools share (todo lists, task
	// lists, cron jobs, triggers); nil gives each run an in-memory one.
	Store store.Store
	// Sessions keeps the runs' transcripts (nil = none kept; then
	// Options.Resume cannot be used).
	Sessions *transcript.Store
	// Workspace, when set, adjusts each run's workspace options after the
	// request's are applied (the environment lookup, a warning sink, MCP
	// client options, …). It must not widen the request's permissions.
	// Runs share their built-in tools through one [workspace.Shared]
	// (Options.Shared, keyed by what the directory's settings change in
	// them); an adjustment that sets Options.Builtin differently from run
	// to run must set Options.Shared to nil.
	Workspace func(*workspace.Options)
	// Agent, when set, adjusts each run's agent options (the loop's: the
	// small model, limits, compaction, …; the session's are the
	// workspace's, see Workspace).
	Agent func(*agent.Options)

	// Ledger, when set, records the runs' running shell commands so that
	// the next serve process kills what they left if this one dies
	// (set by [New] from Options.Procs).
	Ledger *sandbox.Ledger

	shared workspace.Shared // the runs' built-in tools

	mu        sync.Mutex
	providers map[string]providerModel // by the runs' model option
}

type providerModel struct {
	p     llm.Provider
	model string
}

// maxProviders bounds the providers an AgentRunner keeps.
const maxProviders = 16

// provider returns the provider for a run's model option, made once.
func (r *AgentRunner) provider(ctx context.Context, option string) (llm.Provider, string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if pm, ok := r.providers[option]; ok {
		return pm.p, pm.model, nil
	}
	p, model, err := r.NewProvider(ctx, option)
	if err != nil {
		return nil, "", err
	}
	if r.providers == nil || len(r.providers) >= maxProviders {
		r.providers = make(map[string]providerModel)
	}
	r.providers[option] = providerModel{p, model}
	return p, model, nil
}

var _ runqueue.Runner = (*AgentRunner)(nil)

// Run implements [runqueue.Runner].
func (r *AgentRunner) Run(ctx context.Context, req runqueue.Request, x runqueue.Exec) (*runqueue.Result, error) {
	if r.NewProvider == nil {
		return nil, errors.New("serve: AgentRunner.NewProvider is required")
	}
	prov, model, err := r.provider(ctx, req.Options.Model)
	if err != nil {
		return nil, fmt.Errorf("serve: model: %w", err)
	}
	wo := workspace.Options{Dir: req.Dir, Mode: req.Options.Mode, Allow: req.Options.Allow, Deny: req.Options.Deny,
		Interaction: x.Channel, Store: r.Store, Shared: &r.shared,
		Transcripts: r.Sessions, ResumeID: req.Options.Resume}
	wo.Builtin.Shell.Ledger = r.Ledger
	if r.Workspace != nil {
		r.Workspace(&wo)
	}
	// The request's permissions are applied last: an adjustment cannot
	// replace them.
	wo.Dir, wo.Mode, wo.Allow, wo.Deny, wo.Interaction = req.Dir, req.Options.Mode, req.Options.Allow, req.Options.Deny, x.Channel
	wo.ResumeID = req.Options.Resume
	ws, err := workspace.Open(ctx, wo)
	if err != nil {
		return nil, err
	}
	ao := agent.Options{
		Provider: prov, Model: model, Workspace: ws, Closers: []io.Closer{ws},
		SystemPrompt: req.Options.SystemPrompt, AppendSystemPrompt: req.Options.AppendSystemPrompt,
		MaxTurns: req.Options.MaxTurns, MaxBudgetUSD: req.Options.MaxBudgetUSD,
		// Unattended: background agents report before the run ends.
		WaitForBackground: true,
	}
	if r.Agent != nil {
		r.Agent(&ao)
	}
	ag, err := agent.New(ctx, ao)
	if err != nil {
		ws.Close()
		return nil, err
	}
	defer ag.Close()

	w := streamjson.NewWriter(x.Emit, streamjson.WriterOptions{Model: model})
	var res *agent.ResultEvent
	var runErr error
	for ev, err := range ag.Run(ctx, req.Prompt) {
		if err != nil {
			runErr = err
			continue
		}
		switch e := ev.(type) {
		case *agent.InitEvent:
			x.Started(e.SessionID)
		case *agent.ResultEvent:
			res = e
			continue // written last, by Result
		}
		w.Event(ev)
	}
	w.Result(res, runErr)
	if err := w.Err(); err != nil && runErr == nil {
		runErr = err
	}
	if res == nil {
		if runErr == nil {
			runErr = errors.New("the run ended without a result")
		}
		return nil, runErr
	}
	return &runqueue.Result{Subtype: res.Subtype, IsError: res.IsError, Text: res.Text, NumTurns: res.NumTurns,
		CostUSD: res.CostUSD, DurationMS: res.Duration.Milliseconds()}, nil
}
