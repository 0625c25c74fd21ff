package executor

import (
	"log/slog"
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
	// [WithMaxConcurrency] says otherwise.
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
// concurrency cap when no [WithMaxConcurrency] option is given.
const EnvMaxConcurrency = "GANTRY_MAX_TOOL_CONCURRENCY"

// Option configures an [Executor].
type Option func(*config)

type config struct {
	decider         permission.Decider
	canUse          permission.CanUseTool
	hooks           hook.Runner
	status          tool.StatusFunc
	maxConc         int
	defaultTimeout  time.Duration
	timeoutCap      time.Duration
	abandonAfter    time.Duration
	resultsDir      string
	previewChars    int
	tracerProvider  trace.TracerProvider
	logger          *slog.Logger
	now             func() time.Time
	signal          func(Signal)
	errorThreshold  int
	timeoutThreshol int
	getenv          func(string) string
	partialEvery    time.Duration
}

// WithDecider sets the permission decider. The default is a
// [permission.Engine] with no rules, using each call's mode and working
// directory: reads inside the working directories run, everything else
// asks (a bare executor without [WithCanUseTool] therefore denies it).
func WithDecider(d permission.Decider) Option { return func(c *config) { c.decider = d } }

// WithCanUseTool sets the callback that answers decisions that came out as
// Ask, through [permission.ResolveAsk]. Without one, Ask is turned into a
// deny with a message telling the model that nobody can approve the call. The executor calls it for one call
// at a time (a person answers one question at a time).
func WithCanUseTool(f permission.CanUseTool) Option { return func(c *config) { c.canUse = f } }

// WithHooks sets the runner of PreToolUse, PostToolUse and
// PostToolUseFailure hooks. The default runs no hooks.
func WithHooks(r hook.Runner) Option { return func(c *config) { c.hooks = r } }

// WithStatus sets the receiver of status events (WAIT → DOING → SUCCESS |
// ERROR). It is called synchronously from the goroutine that runs the call
// (or calls [Stream.Partial] / [Stream.Add]) and must not block for long.
func WithStatus(f tool.StatusFunc) Option { return func(c *config) { c.status = f } }

// WithMaxConcurrency caps how many concurrency-safe calls run at once
// (n < 1 means 1). It overrides GANTRY_MAX_TOOL_CONCURRENCY.
func WithMaxConcurrency(n int) Option {
	return func(c *config) {
		if n < 1 {
			n = 1
		}
		c.maxConc = n
	}
}

// WithDefaultTimeout sets the deadline of calls whose tool sets no
// [tool.Spec.Timeout] (default [DefaultTimeout]).
func WithDefaultTimeout(d time.Duration) Option { return func(c *config) { c.defaultTimeout = d } }

// WithTimeoutCap caps the deadline of every call, whatever the tool or the
// input asks for, and is the cap of per-call timeouts of tools that set no
// [tool.Spec.MaxTimeout]. Zero (the default) means no global cap.
func WithTimeoutCap(d time.Duration) Option { return func(c *config) { c.timeoutCap = d } }

// WithAbandonAfter sets how long the executor waits, after a call's context
// was cancelled (deadline, interrupt, sibling failure), for the call to
// return before it stops waiting (default [DefaultAbandonAfter]).
func WithAbandonAfter(d time.Duration) Option { return func(c *config) { c.abandonAfter = d } }

// WithResultsDir sets the directory for oversized results when the call's
// [tool.Env.ToolResultsDir] is empty. The default is
// $TMPDIR/gantry-tool-results/<session id>.
func WithResultsDir(dir string) Option { return func(c *config) { c.resultsDir = dir } }

// WithPreviewChars sets the size of the preview the model gets of an
// oversized result (default [DefaultPreviewChars]).
func WithPreviewChars(n int) Option { return func(c *config) { c.previewChars = n } }

// WithTracerProvider makes every call an OpenTelemetry span named
// "execute_tool <name>" with GenAI semantic-convention attributes. Without it
// no spans are made (and nothing global is used).
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(c *config) { c.tracerProvider = tp }
}

// WithLogger sets the logger for debug lines (one per call) and panic
// stacks. The default discards.
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.logger = l } }

// WithClock sets the clock used for status times and durations (tests).
func WithClock(now func() time.Time) Option { return func(c *config) { c.now = now } }

// WithSignal sets a callback receiving every [Signal] as it is raised (it
// is called synchronously from the goroutine finishing the call). Signals
// are also listed in [Batch.Signals].
func WithSignal(f func(Signal)) Option { return func(c *config) { c.signal = f } }

// WithSignalThresholds sets how many times the same error signature
// (errors) and how many consecutive timeouts of one tool (timeouts) raise a
// [Signal]. Values < 1 keep the default ([DefaultSignalThreshold]).
func WithSignalThresholds(errors, timeouts int) Option {
	return func(c *config) {
		if errors >= 1 {
			c.errorThreshold = errors
		}
		if timeouts >= 1 {
			c.timeoutThreshol = timeouts
		}
	}
}

// WithPartialInterval sets the least time between two partial inputs
// delivered to one call's [tool.PartialObserver] (default
// [DefaultPartialInterval]); zero or less delivers every change.
func WithPartialInterval(d time.Duration) Option {
	return func(c *config) { c.partialEvery = max(d, 0) }
}

// WithGetenv sets the function used to read GANTRY_MAX_TOOL_CONCURRENCY
// (default os.Getenv), for tests.
func WithGetenv(f func(string) string) Option { return func(c *config) { c.getenv = f } }
