package executor

import (
	"log/slog"
	"os"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/gantry-dev/gantry/hook"
	"github.com/gantry-dev/gantry/permission"
	"github.com/gantry-dev/gantry/tool"
)

// Defaults of the options.
const (
	// DefaultMaxConcurrency is the number of concurrency-safe calls that
	// may run at once, unless GANTRY_MAX_TOOL_CONCURRENCY or
	// [Options.MaxConcurrency] says otherwise.
	DefaultMaxConcurrency = 10
	// DefaultTimeout is the deadline of a call whose tool sets no
	// [tool.Spec.Timeout].
	DefaultTimeout = 10 * time.Minute
	// DefaultAbandonAfter is how long the executor waits for a call that
	// ignores the cancellation of its context before it gives up on it and
	// returns an error result (the call's goroutine is left to finish).
	DefaultAbandonAfter = 5 * time.Second
	// DefaultPreviewChars is the size of the preview of an oversized
	// result.
	DefaultPreviewChars = 2000
	// DefaultPartialInterval is the least time between two partial inputs
	// delivered to one call's [tool.PartialObserver].
	DefaultPartialInterval = 100 * time.Millisecond
	// partialStatusBytes is how much a streaming input must grow before the
	// next WAIT status event shows it (repairing the prefix costs its
	// length).
	partialStatusBytes = 512
	// DefaultSignalThreshold is how many times the same error (or
	// consecutive timeouts of one tool) raise a [Signal].
	DefaultSignalThreshold = 3
)

// EnvMaxConcurrency is the environment variable read by [New] for the
// concurrency cap when [Options.MaxConcurrency] is zero.
const EnvMaxConcurrency = "GANTRY_MAX_TOOL_CONCURRENCY"

// Options configure an [Executor]. The zero value is an executor with the
// permission engine's defaults, no ask callback (an ask is a deny), no
// hooks, no status events and the default limits.
type Options struct {
	// Decider is the permission decider. Nil means a [permission.Engine]
	// with no rules, using each call's mode and working directory: reads
	// inside the working directories run, everything else asks (a bare
	// executor without CanUseTool therefore denies it).
	Decider permission.Decider
	// CanUseTool answers decisions that came out as Ask, through
	// [permission.ResolveAsk]. Nil turns an Ask into a deny with a message
	// telling the model that nobody can approve the call. The executor calls
	// it for one call at a time (a person answers one question at a time).
	CanUseTool permission.CanUseTool
	// Hooks runs PreToolUse, PostToolUse and PostToolUseFailure hooks. Nil
	// runs none.
	Hooks hook.Runner
	// Status receives status events (WAIT → DOING → SUCCESS | ERROR). It is
	// called synchronously from the goroutine that runs the call (or calls
	// [Stream.Partial] / [Stream.Add]) and must not block for long. Nil
	// sends none.
	Status tool.StatusFunc
	// MaxConcurrency caps how many concurrency-safe calls run at once. Zero
	// means $GANTRY_MAX_TOOL_CONCURRENCY, else [DefaultMaxConcurrency];
	// negative means 1.
	MaxConcurrency int
	// DefaultTimeout is the deadline of calls whose tool sets no
	// [tool.Spec.Timeout] (zero = [DefaultTimeout]).
	DefaultTimeout time.Duration
	// TimeoutCap caps the deadline of every call, whatever the tool or the
	// input asks for, and is the cap of per-call timeouts of tools that set
	// no [tool.Spec.MaxTimeout]. Zero means no global cap.
	TimeoutCap time.Duration
	// AbandonAfter is how long the executor waits, after a call's context
	// was cancelled (deadline, interrupt, sibling failure), for the call to
	// return before it stops waiting (zero = [DefaultAbandonAfter]).
	AbandonAfter time.Duration
	// TracerProvider, when set, makes every call an OpenTelemetry span
	// named "execute_tool <name>" with GenAI semantic-convention
	// attributes. Nil makes no spans (and nothing global is used).
	TracerProvider trace.TracerProvider
	// Logger receives debug lines (one per call) and the stacks of tools
	// that panicked. Nil discards.
	Logger *slog.Logger
	// Now is the clock used for status times and durations (nil =
	// time.Now).
	Now func() time.Time
	// OnSignal receives every [Signal] as it is raised (it is called
	// synchronously from the goroutine finishing the call). Signals are
	// also listed in [Batch.Signals]. Nil means they are only listed.
	OnSignal func(Signal)
	// PartialInterval is the least time between two partial inputs
	// delivered to one call's [tool.PartialObserver]. Zero means
	// [DefaultPartialInterval]; negative delivers every change.
	PartialInterval time.Duration
	// Getenv reads GANTRY_MAX_TOOL_CONCURRENCY (nil = os.Getenv).
	Getenv func(string) string
	// DenialsAsGiven gives the model the reason of a denial decided by a
	// person or a program (decision source "user", "callback" or "hook")
	// and a PreToolUse hook's block reason exactly as given, as the Agent
	// SDK does. Off (the default), and for every other denial (rules, the
	// mode, nobody to ask, a denial without a reason), Gantry words the
	// result: what was denied, why, and not to retry.
	DenialsAsGiven bool
}

type config struct {
	decider         permission.Decider
	canUse          permission.CanUseTool
	hooks           hook.Runner
	status          tool.StatusFunc
	maxConc         int
	defaultTimeout  time.Duration
	timeoutCap      time.Duration
	abandonAfter    time.Duration
	previewChars    int
	tracerProvider  trace.TracerProvider
	logger          *slog.Logger
	now             func() time.Time
	signal          func(Signal)
	errorThreshold  int
	timeoutThreshol int
	getenv          func(string) string
	partialEvery    time.Duration
	asGiven         bool
}

// config returns the options with their defaults filled in.
func (o Options) config() config {
	c := config{
		decider:         o.Decider,
		canUse:          o.CanUseTool,
		hooks:           o.Hooks,
		status:          o.Status,
		maxConc:         o.MaxConcurrency,
		defaultTimeout:  o.DefaultTimeout,
		timeoutCap:      o.TimeoutCap,
		abandonAfter:    o.AbandonAfter,
		previewChars:    DefaultPreviewChars,
		tracerProvider:  o.TracerProvider,
		logger:          o.Logger,
		now:             o.Now,
		signal:          o.OnSignal,
		errorThreshold:  DefaultSignalThreshold,
		timeoutThreshol: DefaultSignalThreshold,
		getenv:          o.Getenv,
		partialEvery:    max(o.PartialInterval, 0),
		asGiven:         o.DenialsAsGiven,
	}
	if o.PartialInterval == 0 {
		c.partialEvery = DefaultPartialInterval
	}
	if c.maxConc < 0 {
		c.maxConc = 1
	}
	if c.getenv == nil {
		c.getenv = os.Getenv
	}
	if c.now == nil {
		c.now = time.Now
	}
	if c.defaultTimeout <= 0 {
		c.defaultTimeout = DefaultTimeout
	}
	if c.abandonAfter <= 0 {
		c.abandonAfter = DefaultAbandonAfter
	}
	return c
}
