// Package executor runs the tool calls a model makes, every one through the
// same pipeline:
//
//  1. look the tool up by name or alias (an unknown name gives an error
//     result naming the closest tools);
//  2. validate the input against the tool's JSON Schema, reporting every
//     violation; an invalid input is repaired where the model made a common
//     mistake (a boolean, number, object or array sent as a string, null for
//     an optional field) and validated again;
//  3. the tool's own input check ([tool.InputValidator]), then the
//     observable input: the tool's backfilled fields ([tool.Backfiller]),
//     which hooks, the permission decision, status events and
//     [Outcome.Observable] see while the tool gets the input as sent;
//  4. PreToolUse hooks ([hook.Runner]): they may rewrite the input (it is
//     validated again), add context, block, or give a permission verdict; a
//     runner error blocks the call (fail closed);
//  5. the permission decision ([permission.Decider]; an Ask is resolved by
//     [permission.ResolveAsk] with the [permission.CanUseTool] callback, or
//     denied when there is none);
//  6. the call, with a deadline and panic recovery;
//  7. PostToolUse / PostToolUseFailure hooks;
//  8. the result budget (an oversized result is saved to a file and the
//     model gets a preview), stats, signals, status events and a span.
//
// Model mistakes (unknown tool, bad input, denied call, failure, panic,
// timeout) become error results the model can act on: the loop goes on.
//
// [Executor.Run] runs the calls of one model message; [Executor.Stream]
// takes them one by one while the model's reply streams, starting
// concurrency-safe calls at once, and hands the input streamed so far to
// tools that observe it ([tool.PartialObserver]; never running them on
// it). Both return results in the model's order. A tool that needs one
// instance per call ([tool.CallFactory]) gets it for the call's partials
// and the call, and it is dropped at the call's final status.
package executor

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/gantry-dev/gantry/hook"
	"github.com/gantry-dev/gantry/permission"
	"github.com/gantry-dev/gantry/tool"
)

// Resolver finds tools by name or alias. The pool (package toolset)
// implements it. Implementations must be safe for concurrent use.
type Resolver interface {
	// Lookup returns the tool called name (its name or one of its aliases).
	Lookup(name string) (tool.Tool, bool)
	// Names returns the names the model may call, used to suggest the
	// closest ones for an unknown name.
	Names() []string
}

// UnloadedReporter is implemented by resolvers that hold deferred tools
// (the pool): Unloaded reports whether name is a deferred tool whose schema
// the model was not sent yet. A call of such a tool that fails validation
// gets an error telling the model to load it with ToolSearch
// ("select:<name>") first; a call that validates runs (the model may know
// the schema from an earlier load or from the provider's own tool search).
type UnloadedReporter interface {
	Unloaded(name string) bool
}

// MapResolver is a [Resolver] over a fixed set of tools, keyed by every name
// and alias. It is meant for tests and small programs; real agents use the
// pool. Build it with [NewMapResolver]; do not modify it afterwards.
type MapResolver struct {
	byName map[string]tool.Tool
	names  []string
}

// NewMapResolver returns a resolver for tools. A duplicate name or alias is
// an error.
func NewMapResolver(tools ...tool.Tool) (*MapResolver, error) {
	r := &MapResolver{byName: make(map[string]tool.Tool)}
	for _, t := range tools {
		s := t.Spec()
		for _, n := range s.Names() {
			if _, dup := r.byName[n]; dup {
				return nil, errors.New("executor: duplicate tool name " + strconv.Quote(n))
			}
			r.byName[n] = t
		}
		r.names = append(r.names, s.Name)
	}
	return r, nil
}

// Lookup implements [Resolver].
func (r *MapResolver) Lookup(name string) (tool.Tool, bool) {
	t, ok := r.byName[name]
	return t, ok
}

// Names implements [Resolver].
func (r *MapResolver) Names() []string { return r.names }

// Call is one tool call of a model message.
type Call struct {
	// ID is the tool-use id the model gave the call.
	ID string `json:"id"`
	// Name is the tool name the model used (maybe an alias).
	Name string `json:"name"`
	// Input is the model's input, as sent.
	Input json.RawMessage `json:"input"`
	// MessageID is the id of the model message that holds the call, given
	// to the tool as [tool.Env.MessageID] ("" = unknown).
	MessageID string `json:"message_id,omitempty"`
}

// Kind classifies how a call ended.
type Kind string

const (
	// KindOK: the tool ran and returned a result that is not an error.
	KindOK Kind = ""
	// KindUnknownTool: no tool has the name.
	KindUnknownTool Kind = "unknown_tool"
	// KindInvalidInput: the input failed the schema or the tool's own
	// check (after coercion and hook rewrites).
	KindInvalidInput Kind = "invalid_input"
	// KindBlocked: a PreToolUse hook blocked the call (or could not give a
	// verdict).
	KindBlocked Kind = "blocked"
	// KindDenied: the permission decision was deny (or ask with nobody to
	// ask).
	KindDenied Kind = "denied"
	// KindToolError: the tool returned an error or an error result.
	KindToolError Kind = "tool_error"
	// KindPanic: the tool panicked.
	KindPanic Kind = "panic"
	// KindTimeout: the call's deadline passed.
	KindTimeout Kind = "timeout"
	// KindCancelled: the user interrupted (the context was cancelled) or
	// the run was stopped, before or while the call ran.
	KindCancelled Kind = "cancelled"
	// KindSiblingFailed: a parallel sibling whose tool asks for it failed,
	// and this call was cancelled or never started.
	KindSiblingFailed Kind = "sibling_failed"
	// KindInternal: the tool is unusable (its schema does not compile) or
	// the executor could not run it.
	KindInternal Kind = "internal"
)

// Outcome is what became of one call.
type Outcome struct {
	// ID and Name are the call's, as the model sent them; Tool is the
	// resolved tool's name ("" if unknown).
	ID   string `json:"id"`
	Name string `json:"name"`
	Tool string `json:"tool,omitempty"`
	// Input is the final input: validated, maybe coerced or rewritten by a
	// hook or a permission decision. It is the model's input when the call
	// failed before validation. It is what the tool received.
	Input json.RawMessage `json:"input,omitempty"`
	// Observable is the input as hooks, the permission decision and status
	// events saw it: Input with the fields the tool backfilled
	// ([tool.Backfiller]), for transcripts and UIs. Nil when the tool
	// backfilled nothing (then it is Input).
	Observable json.RawMessage `json:"observable_input,omitempty"`
	// Result is never nil: the result to send to the model.
	Result *tool.Result `json:"result"`
	// Kind says how the call ended; Err is the underlying error, if any.
	Kind Kind  `json:"kind,omitempty"`
	Err  error `json:"-"`
	// Coerced is true when the model's input was repaired to validate.
	Coerced bool `json:"coerced,omitempty"`
	// Decision is the permission decision, if the call got that far.
	Decision *permission.Decision `json:"decision,omitempty"`
	// Traits are the call's traits (zero for calls that failed validation).
	Traits tool.Traits `json:"traits"`
	// Stop is true when the run must stop after this call: a permission
	// decision with Interrupt, or a hook with continue=false. StopReason
	// says why.
	Stop       bool   `json:"stop,omitempty"`
	StopReason string `json:"stop_reason,omitempty"`
	// SystemMessages are hooks' warnings for the user.
	SystemMessages []string `json:"system_messages,omitempty"`
	// Start is when the tool started running (zero if it never ran);
	// Duration is how long it ran.
	Start    time.Time     `json:"start,omitzero"`
	Duration time.Duration `json:"duration,omitempty"`
	// ResultPath is the file an oversized result was saved to.
	ResultPath string `json:"result_path,omitempty"`
}

// Batch is the outcome of the calls of one model message.
type Batch struct {
	// Outcomes are in the model's order, one per call.
	Outcomes []*Outcome
	// Stop is true when an outcome asks the run to stop (see
	// [Outcome.Stop]); StopReason is the first reason.
	Stop       bool
	StopReason string
	// Interrupted is true when the context was cancelled during the batch.
	Interrupted bool
	// Signals raised while the batch ran (repeated errors, timeouts).
	Signals []Signal
}

// Results returns the results in the model's order.
func (b *Batch) Results() []*tool.Result {
	rs := make([]*tool.Result, len(b.Outcomes))
	for i, o := range b.Outcomes {
		rs[i] = o.Result
	}
	return rs
}

// SharedEnv is the session-level environment the executor clones for each
// call. The agent loop owns it and may read or change it between and during
// batches; the executor reads a snapshot when a call starts and applies the
// [tool.Result.ContextModifier] of calls that are not concurrency-safe, in
// the model's order, through [SharedEnv.Update]. It is safe for concurrent
// use.
type SharedEnv struct {
	mu  sync.RWMutex
	env tool.Env
}

// NewSharedEnv returns a shared environment holding a copy of env (nil
// means the zero Env).
func NewSharedEnv(env *tool.Env) *SharedEnv {
	s := &SharedEnv{}
	if env != nil {
		s.env = *env.Clone()
	}
	return s
}

// Env returns a copy of the session's environment.
func (s *SharedEnv) Env() *tool.Env {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.env.Clone()
}

// Update changes the session's environment under its lock.
func (s *SharedEnv) Update(fn func(*tool.Env)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fn(&s.env)
}

// callEnv returns the environment of one call, sharing nothing mutable with
// the session's.
func (s *SharedEnv) callEnv(id string) *tool.Env {
	s.mu.RLock()
	e := s.env
	s.mu.RUnlock()
	if len(e.AdditionalDirs) > 0 {
		e.AdditionalDirs = append([]string(nil), e.AdditionalDirs...)
	}
	e.ToolUseID = id
	return &e
}

// Executor runs tool calls. It is safe for concurrent use; one Executor may
// serve many sessions (its stats and signals are per Executor).
type Executor struct {
	resolver Resolver
	cfg      config
	tracer   trace.Tracer
	log      *slog.Logger
	schemas  *schemaCache
	stats    *Stats
	askMu    sync.Mutex
}

// New returns an executor resolving tools through r, configured by o (see
// [Options] for the zero values).
func New(r Resolver, o Options) *Executor {
	c := o.config()
	if c.decider == nil {
		// The permission engine with no rules and the call's own mode:
		// reads inside the working directories run, the rest asks (and
		// with no WithCanUseTool, an ask is a deny).
		eng, err := permission.NewEngine(permission.Options{})
		if err != nil {
			panic("executor: the default permission engine: " + err.Error()) // a zero Config always builds
		}
		c.decider = eng
	}
	if c.maxConc == 0 {
		c.maxConc = DefaultMaxConcurrency
		if v, err := strconv.Atoi(c.getenv(EnvMaxConcurrency)); err == nil && v > 0 {
			c.maxConc = v
		}
	}
	e := &Executor{resolver: r, cfg: c, schemas: sharedSchemas, log: c.logger}
	if e.log == nil {
		e.log = slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelError + 100}))
	}
	if c.tracerProvider != nil {
		e.tracer = c.tracerProvider.Tracer("github.com/gantry-dev/gantry/executor")
	}
	e.stats = newStats(c.errorThreshold, c.timeoutThreshol)
	return e
}

// MaxConcurrency returns the concurrency cap in force.
func (e *Executor) MaxConcurrency() int { return e.cfg.maxConc }

// Stats returns the executor's statistics.
func (e *Executor) Stats() *Stats { return e.stats }

// Run runs the calls of one model message and returns their outcomes in the
// model's order. Maximal runs of consecutive concurrency-safe calls run in
// parallel (up to the concurrency cap); every other call runs alone, in
// order. Every call gets an outcome, also when ctx is cancelled (calls that
// never ran get a "cancelled" error result). The error is non-nil only for
// programmer mistakes (a nil session or resolver).
func (e *Executor) Run(ctx context.Context, s *SharedEnv, calls []Call) (*Batch, error) {
	if s == nil || e.resolver == nil {
		return nil, errors.New("executor: Run needs a session and a resolver")
	}
	return e.runStream(ctx, s, calls), nil
}

// RunOne runs a single call through the pipeline (for callers outside a
// model message, such as a CLI "run this tool" command).
func (e *Executor) RunOne(ctx context.Context, s *SharedEnv, c Call) (*Outcome, error) {
	b, err := e.Run(ctx, s, []Call{c})
	if err != nil {
		return nil, err
	}
	return b.Outcomes[0], nil
}

var _ hook.Runner = hook.RunnerFunc(nil)
