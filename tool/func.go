package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// Func is the body of a typed tool that builds its own [Result].
type Func[In any] func(ctx context.Context, env *Env, in In) (*Result, error)

// TextFunc is the body of a typed tool whose result is text.
type TextFunc[In any] func(ctx context.Context, env *Env, in In) (string, error)

// TypedFunc is the body of a typed tool with a typed output: the output is
// sent to the model as JSON text and kept as [Result.Structured].
type TypedFunc[In, Out any] func(ctx context.Context, env *Env, in In) (Out, error)

// RawFunc is the body of a tool that takes its input as raw JSON.
type RawFunc func(ctx context.Context, env *Env, input json.RawMessage) (*Result, error)

// New returns a tool whose input schema is inferred from In (see
// [InferSchema]) and whose body builds the full result. The input is decoded
// with encoding/json after the executor validated it against the schema.
//
// An inference failure, a bad name or a bad option is returned as an error
// here, never at call time.
func New[In any](name, description string, fn Func[In], opts ...Option) (*FuncTool, error) {
	if fn == nil {
		return nil, fmt.Errorf("tool %q: nil function", name)
	}
	schema, err := InferSchema[In]()
	if err != nil {
		return nil, fmt.Errorf("tool %q: %w", name, err)
	}
	call := func(ctx context.Context, env *Env, raw json.RawMessage) (*Result, error) {
		in, err := decode[In](raw)
		if err != nil {
			return nil, err
		}
		return fn(ctx, env, in)
	}
	return build(name, description, schema, call, opts, schema)
}

// NewText returns a typed tool whose body returns text (see [New]).
func NewText[In any](name, description string, fn TextFunc[In], opts ...Option) (*FuncTool, error) {
	if fn == nil {
		return nil, fmt.Errorf("tool %q: nil function", name)
	}
	return New(name, description, func(ctx context.Context, env *Env, in In) (*Result, error) {
		s, err := fn(ctx, env, in)
		if err != nil {
			return nil, err
		}
		return TextResult(s), nil
	}, opts...)
}

// NewTyped returns a typed tool with a typed output. The output schema is
// inferred from Out (a struct); the model reads the output as indented JSON
// and [Result.Structured] holds the value.
func NewTyped[In, Out any](name, description string, fn TypedFunc[In, Out], opts ...Option) (*FuncTool, error) {
	if fn == nil {
		return nil, fmt.Errorf("tool %q: nil function", name)
	}
	out, err := InferSchema[Out]()
	if err != nil {
		return nil, fmt.Errorf("tool %q: output: %w", name, err)
	}
	opts = append([]Option{func(c *config) { c.spec.OutputSchema = out }}, opts...)
	return New(name, description, func(ctx context.Context, env *Env, in In) (*Result, error) {
		v, err := fn(ctx, env, in)
		if err != nil {
			return nil, err
		}
		r, err := JSONResult(v)
		if err != nil {
			return nil, err
		}
		r.Structured = v
		return r, nil
	}, opts...)
}

// NewNoInput returns a tool that takes no input (its schema is an empty
// object).
func NewNoInput(name, description string, fn func(ctx context.Context, env *Env) (*Result, error), opts ...Option) (*FuncTool, error) {
	if fn == nil {
		return nil, fmt.Errorf("tool %q: nil function", name)
	}
	return build(name, description, EmptyObjectSchema, func(ctx context.Context, env *Env, _ json.RawMessage) (*Result, error) {
		return fn(ctx, env)
	}, opts, EmptyObjectSchema)
}

// NewRaw returns a tool with a hand-written input schema whose body receives
// the raw JSON input. The schema is checked with [CheckSchema] here.
func NewRaw(name, description string, schema json.RawMessage, fn RawFunc, opts ...Option) (*FuncTool, error) {
	if fn == nil {
		return nil, fmt.Errorf("tool %q: nil function", name)
	}
	// build checks the schema (after the options, which may replace it).
	return build(name, description, compact(schema), fn, opts, nil)
}

// Must panics if err is not nil and returns t otherwise, for tools built in
// package-level code or tests.
func Must[T Tool](t T, err error) T {
	if err != nil {
		panic(err)
	}
	return t
}

func decode[In any](raw json.RawMessage) (In, error) {
	var in In
	if len(raw) == 0 {
		raw = json.RawMessage("{}")
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		return in, fmt.Errorf("invalid input: %w", err)
	}
	return in, nil
}

func compact(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return raw
	}
	return b.Bytes()
}

// build makes a FuncTool. valid, when not nil, is a schema this package
// made and knows to be valid (an inferred one, the empty object schema).
func build(name, description string, schema json.RawMessage, call RawFunc, opts []Option, valid json.RawMessage) (*FuncTool, error) {
	c := &config{spec: Spec{Name: name, Description: description, InputSchema: schema}}
	for _, o := range opts {
		o(c)
	}
	if c.err != nil {
		return nil, fmt.Errorf("tool %q: %w", name, c.err)
	}
	for _, n := range c.spec.Names() {
		if !ValidName(n) {
			return nil, fmt.Errorf("tool %q: invalid name %q (want 1-64 of [a-zA-Z0-9_-])", name, n)
		}
	}
	if d := c.spec.Doc; d != nil {
		cp := *d // the option's value may build other tools
		if cp.Long == "" {
			cp.Long = c.spec.Prompt // WithPrompt and WithDoc together
		}
		c.spec.Doc = &cp
	}
	// A schema this package made is valid by construction: it is compiled
	// when an input is first validated against it ([CompileSchema]'s memo),
	// so a process compiles only the schemas of the tools it calls. A schema
	// given by the caller or replaced by an option, and a Doc's examples,
	// are checked here.
	if valid == nil || !bytes.Equal(c.spec.InputSchema, valid) || (c.spec.Doc != nil && len(c.spec.Doc.Examples) > 0) {
		sch, err := compileSchema(c.spec.InputSchema)
		if err != nil {
			return nil, fmt.Errorf("tool %q: %w", name, err)
		}
		if err := checkExamples(sch, c.spec.Doc); err != nil {
			return nil, fmt.Errorf("tool %q: %w", name, err)
		}
	}
	c.spec = *c.spec.Render()
	if c.spec.Description == "" {
		return nil, fmt.Errorf("tool %q: empty description", name)
	}
	if c.spec.Traits.ReadOnly {
		c.spec.Annotations.ReadOnlyHint = true
	}
	return &FuncTool{spec: c.spec, call: call, hooks: c.hooks}, nil
}

// FuncTool is the tool the constructors of this package return. Besides
// [Tool] it implements every optional capability; those not configured by an
// [Option] answer with the neutral default (spec traits, no extra
// validation, no permission opinion, the tool's name, no rule match, no
// per-call timeout, enabled).
type FuncTool struct {
	spec  Spec
	call  RawFunc
	hooks hooks
}

type hooks struct {
	traits   func(json.RawMessage) Traits
	access   func(json.RawMessage) (Access, error)
	validate func(context.Context, *Env, json.RawMessage) error
	perm     func(context.Context, *Env, json.RawMessage) PermissionResult
	describe func(json.RawMessage) string
	match    func(string, json.RawMessage) bool
	timeout  func(json.RawMessage) time.Duration
	enabled  func(context.Context, *Env) bool
	backfill func(*Env, json.RawMessage) json.RawMessage
	session  func(context.Context, *Env) (SessionSpec, error)
}

var (
	_ Tool              = (*FuncTool)(nil)
	_ Traiter           = (*FuncTool)(nil)
	_ InputValidator    = (*FuncTool)(nil)
	_ PermissionChecker = (*FuncTool)(nil)
	_ Describer         = (*FuncTool)(nil)
	_ RuleMatcher       = (*FuncTool)(nil)
	_ Accessor          = (*FuncTool)(nil)
	_ Timeouter         = (*FuncTool)(nil)
	_ Enabler           = (*FuncTool)(nil)
	_ Backfiller        = (*FuncTool)(nil)
	_ SessionDescriber  = (*FuncTool)(nil)
)

// Spec implements [Tool].
func (t *FuncTool) Spec() *Spec { return &t.spec }

// Call implements [Tool].
func (t *FuncTool) Call(ctx context.Context, env *Env, input json.RawMessage) (*Result, error) {
	return t.call(ctx, env, input)
}

// Traits implements [Traiter].
func (t *FuncTool) Traits(input json.RawMessage) Traits {
	if t.hooks.traits != nil {
		return t.hooks.traits(input)
	}
	return t.spec.Traits
}

// ValidateInput implements [InputValidator].
func (t *FuncTool) ValidateInput(ctx context.Context, env *Env, input json.RawMessage) error {
	if t.hooks.validate != nil {
		return t.hooks.validate(ctx, env, input)
	}
	return nil
}

// CheckPermission implements [PermissionChecker].
func (t *FuncTool) CheckPermission(ctx context.Context, env *Env, input json.RawMessage) PermissionResult {
	if t.hooks.perm != nil {
		return t.hooks.perm(ctx, env, input)
	}
	return PermissionResult{}
}

// Access implements [Accessor]: the AccessFunc's answer, else the zero
// Access.
func (t *FuncTool) Access(input json.RawMessage) (Access, error) {
	if t.hooks.access != nil {
		return t.hooks.access(input)
	}
	return Access{}, nil
}

// DescribeCall implements [Describer].
func (t *FuncTool) DescribeCall(input json.RawMessage) string {
	if t.hooks.describe != nil {
		return t.hooks.describe(input)
	}
	return t.spec.Name
}

// MatchRule implements [RuleMatcher].
func (t *FuncTool) MatchRule(specifier string, input json.RawMessage) bool {
	if t.hooks.match != nil {
		return t.hooks.match(specifier, input)
	}
	return false
}

// CallTimeout implements [Timeouter].
func (t *FuncTool) CallTimeout(input json.RawMessage) time.Duration {
	if t.hooks.timeout != nil {
		return t.hooks.timeout(input)
	}
	return 0
}

// Enabled implements [Enabler].
func (t *FuncTool) Enabled(ctx context.Context, env *Env) bool {
	if t.hooks.enabled != nil {
		return t.hooks.enabled(ctx, env)
	}
	return true
}

// BackfillInput implements [Backfiller]: the BackfillFunc's observable
// input, else nil (nothing added).
func (t *FuncTool) BackfillInput(env *Env, input json.RawMessage) json.RawMessage {
	if t.hooks.backfill != nil {
		return t.hooks.backfill(env, input)
	}
	return nil
}

// DescribeSession implements [SessionDescriber]: the SessionFunc's answer,
// else the zero SessionSpec (the static spec).
func (t *FuncTool) DescribeSession(ctx context.Context, env *Env) (SessionSpec, error) {
	if t.hooks.session != nil {
		return t.hooks.session(ctx, env)
	}
	return SessionSpec{}, nil
}
