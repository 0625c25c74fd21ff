// Package tool defines the contract every Gantry tool meets: a [Tool] describes
// itself with a [Spec] and runs with [Tool.Call]; optional capabilities
// (per-input traits, input validation, permission checks, call descriptions,
// permission-rule matching, per-call timeouts, an enabled check, a
// session-time description, partial input, per-call instances, observable
// input backfill) are found by type assertion, in the style of io/fs.
//
// A spec's description may be structured ([Doc]: short and long text, usage
// notes, examples checked against the schema, important points, a display
// name); it is rendered once into the model-facing text ([Spec.Render]).
//
// Most tools are written as plain Go functions with [New], [NewText],
// [NewTyped], [NewNoInput] or [NewRaw]; the input schema is inferred from the
// input struct (see [InferSchema]).
//
// Package tool imports nothing else from Gantry. Everything a call needs
// travels in an [Env]; cancellation and deadlines travel in the context.
package tool

import (
	"context"
	"encoding/json"
	"time"
)

// Tool is the contract every tool meets.
//
// Spec must return the same value on every call (the pool caches and
// serialises it). Call runs the tool for one validated input. A returned error
// is a tool failure that the executor turns into an error result the model can
// read; a programmer mistake (bad schema, duplicate name) must be reported when
// the tool is built, never at call time.
type Tool interface {
	Spec() *Spec
	Call(ctx context.Context, env *Env, input json.RawMessage) (*Result, error)
}

// Spec is the static description of a tool. The zero value of every optional
// field is a safe default.
type Spec struct {
	// Name is the name the model calls the tool by. Required; it must match
	// ^[a-zA-Z0-9_-]{1,64}$ (see [ValidName]).
	Name string `json:"name"`
	// Aliases are older names that still resolve to this tool.
	Aliases []string `json:"aliases,omitempty"`
	// Description is the short description sent to the model.
	Description string `json:"description"`
	// Prompt is an optional longer usage text, appended to the description
	// where the provider format allows it.
	Prompt string `json:"prompt,omitempty"`
	// Doc is an optional structured description (short and long text,
	// usage notes, examples, important points, a display name). When set,
	// [Spec.Render] renders it into Description and Prompt; the pool does
	// so once, when it builds the tool. Nil means the plain strings above.
	Doc *Doc `json:"doc,omitempty"`
	// InputSchema is the JSON Schema of the input (an object schema).
	// Required.
	InputSchema json.RawMessage `json:"input_schema"`
	// OutputSchema is the optional JSON Schema of [Result.Structured].
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`
	// Annotations are hints with MCP's names. They never grant permission.
	Annotations Annotations `json:"annotations"`
	// Traits are the traits of every input, used when the tool does not
	// implement [Traiter]. The zero value is the fail-closed default: not
	// read-only, not concurrency-safe, destructive.
	Traits Traits `json:"traits"`
	// Defer holds the deferral hints the pool uses (see toolset).
	Defer Deferral `json:"defer"`
	// MaxResultChars bounds the model-facing text of a result; larger results
	// are written to a file and previewed. Zero means [DefaultMaxResultChars];
	// negative means unlimited.
	MaxResultChars int `json:"max_result_chars,omitempty"`
	// Timeout is the default deadline of one call. Zero means the executor's
	// default.
	Timeout time.Duration `json:"timeout,omitempty"`
	// MaxTimeout caps a per-call timeout requested through [Timeouter]. Zero
	// means the executor's global cap.
	MaxTimeout time.Duration `json:"max_timeout,omitempty"`
	// Interrupt says what happens to a running call when the user interrupts.
	// The zero value is [InterruptCancel].
	Interrupt Interrupt `json:"interrupt,omitempty"`
	// CancelSiblingsOnError asks the executor to cancel the other calls of a
	// parallel batch when a call of this tool fails (Bash does: a failed
	// command usually invalidates its siblings).
	CancelSiblingsOnError bool `json:"cancel_siblings_on_error,omitempty"`
}

// DefaultMaxResultChars is the result budget of a tool whose
// [Spec.MaxResultChars] is zero.
const DefaultMaxResultChars = 30_000

// ResultLimit returns the effective result budget in characters, or -1 for
// unlimited.
func (s *Spec) ResultLimit() int {
	switch {
	case s.MaxResultChars == 0:
		return DefaultMaxResultChars
	case s.MaxResultChars < 0:
		return -1
	}
	return s.MaxResultChars
}

// Names returns the name followed by the aliases.
func (s *Spec) Names() []string {
	return append([]string{s.Name}, s.Aliases...)
}

// Annotations are MCP's tool annotations. Like in MCP they are hints: nothing
// in Gantry grants permission because of them.
type Annotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    bool   `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool  `json:"destructiveHint,omitempty"` // nil means true (MCP's default)
	IdempotentHint  bool   `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitempty"` // nil means true (MCP's default)
}

// Destructive reports the destructive hint with MCP's default (true).
func (a Annotations) Destructive() bool { return a.DestructiveHint == nil || *a.DestructiveHint }

// OpenWorld reports the open-world hint with MCP's default (true).
func (a Annotations) OpenWorld() bool { return a.OpenWorldHint == nil || *a.OpenWorldHint }

// Deferral holds the hints the pool uses to decide whether a tool is sent to
// the model in full or only by name, to be loaded through ToolSearch.
type Deferral struct {
	// ShouldDefer marks a tool that is rarely needed: it is sent by name only.
	ShouldDefer bool `json:"should_defer,omitempty"`
	// AlwaysLoad keeps a tool in full even when deferral of its group (for
	// example all MCP tools above a threshold) is on. It wins over ShouldDefer.
	AlwaysLoad bool `json:"always_load,omitempty"`
	// SearchHint is a 3–10 word phrase that ToolSearch matches and that is
	// shown next to a deferred tool's name.
	SearchHint string `json:"search_hint,omitempty"`
}

// Interrupt is a tool's behaviour when the user interrupts a running call.
type Interrupt int

const (
	// InterruptCancel cancels the call's context at once (the default).
	InterruptCancel Interrupt = iota
	// InterruptBlock lets the call run on until its own deadline; the
	// interrupt takes effect after it returns.
	InterruptBlock
)

func (i Interrupt) String() string {
	if i == InterruptBlock {
		return "block"
	}
	return "cancel"
}

// Traits are the properties of one call that decide how it may run. The zero
// value is the fail-closed default.
type Traits struct {
	// ReadOnly: the call changes nothing outside the process.
	ReadOnly bool `json:"read_only"`
	// ConcurrencySafe: the call may run in parallel with other
	// concurrency-safe calls.
	ConcurrencySafe bool `json:"concurrency_safe"`
	// NonDestructive: the call cannot destroy data (the opposite of MCP's
	// destructive hint, so that the zero value is destructive).
	NonDestructive bool `json:"non_destructive"`
	// Planning: the call changes only the session's own planning state —
	// its plan, todo list, task list or permission mode — or asks the user;
	// nothing the user owns. Plan mode allows such calls although they are
	// not read-only (EnterPlanMode, ExitPlanMode, AskUserQuestion, TodoWrite,
	// the task tools). The permission layer ignores it for MCP tools.
	Planning bool `json:"planning,omitempty"`
}

// Destructive reports whether the call may destroy data.
func (t Traits) Destructive() bool { return !t.NonDestructive }

// ReadOnlyTraits are the traits of a call that only reads: read-only,
// concurrency-safe, non-destructive.
var ReadOnlyTraits = Traits{ReadOnly: true, ConcurrencySafe: true, NonDestructive: true}

// Traiter is implemented by tools whose traits depend on the input (Bash `ls`
// is read-only, `rm` is not). Traits must not fail: input it cannot parse
// gets the zero (fail-closed) Traits.
type Traiter interface {
	Traits(input json.RawMessage) Traits
}

// TraitsOf returns the traits of a call of t with input: the tool's own
// per-input answer if it implements [Traiter], else [Spec.Traits].
func TraitsOf(t Tool, input json.RawMessage) Traits {
	if tr, ok := t.(Traiter); ok {
		return tr.Traits(input)
	}
	return t.Spec().Traits
}

// InputValidator is implemented by tools that check an input beyond its
// schema (a path that must be absolute, two fields that exclude each other).
// The error's text is sent to the model.
type InputValidator interface {
	ValidateInput(ctx context.Context, env *Env, input json.RawMessage) error
}

// PermissionChecker is implemented by tools with their own view of whether a
// call needs permission (a path outside the working directory, a dangerous
// command). The permission layer combines it with rules and mode.
type PermissionChecker interface {
	CheckPermission(ctx context.Context, env *Env, input json.RawMessage) PermissionResult
}

// Describer is implemented by tools that describe a call in one line for
// people ("Read main.go", "Run go test ./...").
type Describer interface {
	DescribeCall(input json.RawMessage) string
}

// RuleMatcher is implemented by tools that understand permission-rule
// specifiers: for the rule Bash(npm run test:*) the permission layer asks the
// Bash tool whether specifier "npm run test:*" matches an input.
type RuleMatcher interface {
	MatchRule(specifier string, input json.RawMessage) bool
}

// Timeouter is implemented by tools that accept a per-call timeout in their
// input (Bash's timeout in milliseconds). Zero means the default.
type Timeouter interface {
	CallTimeout(input json.RawMessage) time.Duration
}

// Enabler is implemented by tools that are available only in some
// environments (a tool that needs git, an API key or a service).
type Enabler interface {
	Enabled(ctx context.Context, env *Env) bool
}

// IsEnabled reports whether t is enabled for env: true unless t implements
// [Enabler] and says no.
func IsEnabled(ctx context.Context, t Tool, env *Env) bool {
	if e, ok := t.(Enabler); ok {
		return e.Enabled(ctx, env)
	}
	return true
}

// Describe returns the one-line description of a call, falling back to the
// tool's name.
func Describe(t Tool, input json.RawMessage) string {
	if d, ok := t.(Describer); ok {
		if s := d.DescribeCall(input); s != "" {
			return s
		}
	}
	return t.Spec().Name
}

// Access is what one call acts on, as the permission layer checks it: the
// files it reads and writes, a shell command line it runs, a network
// address it reaches. Paths are absolute or relative to [Env.WorkDir]; a
// leading ~/ is the home directory. The zero Access names nothing.
type Access struct {
	// Reads are files or directories the call reads.
	Reads []string `json:"reads,omitempty"`
	// Writes are files the call creates or changes.
	Writes []string `json:"writes,omitempty"`
	// Command is a shell command line the call runs (Bash); the
	// permission layer analyses it command by command.
	Command string `json:"command,omitempty"`
	// URL is the address the call fetches.
	URL string `json:"url,omitempty"`
	// Network reports a call that reaches the network (a URL fetch, a
	// web search): it is never approved for being read-only alone.
	Network bool `json:"network,omitempty"`
}

// Accessor is implemented by tools whose calls act on files, commands or
// network addresses named in their input (Read, Write, Edit, Glob, Grep,
// Bash, WebFetch, …). The permission layer applies path rules, the working
// directories, protected paths, the shell analysis and domain rules to what
// it returns, whatever the tool is called; a tool without it is decided by
// rules on its name and by its traits. An error (input that names no
// usable path) makes the call denied.
type Accessor interface {
	Access(input json.RawMessage) (Access, error)
}

// AccessOf returns what a call of t with input acts on: the tool's own
// answer if it implements [Accessor], else the zero Access.
func AccessOf(t Tool, input json.RawMessage) (Access, error) {
	if a, ok := t.(Accessor); ok {
		return a.Access(input)
	}
	return Access{}, nil
}
