package executor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/gantry-dev/gantry/internal/textutil"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/gantry-dev/gantry/hook"
	"github.com/gantry-dev/gantry/permission"
	"github.com/gantry-dev/gantry/tool"
)

// Causes of a call's context cancellation, told apart with context.Cause.
var (
	errCallTimeout = errors.New("tool call deadline exceeded")
	// ErrInterrupted is the cause of a call's cancellation when the run was
	// stopped by a permission decision with Interrupt or a hook.
	ErrInterrupted = errors.New("executor: run stopped")
	// ErrDiscarded is the cause of a call's cancellation by
	// [Stream.Discard].
	ErrDiscarded = errors.New("executor: stream discarded")
)

// siblingError is the cause of a call's cancellation when a parallel sibling
// failed.
type siblingError struct {
	id, name, text string
}

func (e *siblingError) Error() string {
	return fmt.Sprintf("parallel call %s (%s) failed", e.name, e.id)
}

type jobState int

const (
	stateQueued jobState = iota
	stateRunning
	stateDone
)

// job is one call moving through the pipeline.
type job struct {
	idx   int
	call  Call
	tool  tool.Tool
	spec  *tool.Spec
	input json.RawMessage
	group *group
	state jobState // guarded by Stream.mu

	out  Outcome
	span trace.Span
	done chan struct{}

	mu     sync.Mutex // guards st and final
	st     tool.Status
	final  bool
	status tool.StatusFunc

	part partial // the call while its input streams
}

// partial is the state of a call whose input is still streaming: the
// resolved tool, its per-call instance and the partial delivery.
type partial struct {
	mu       sync.Mutex // held while ObservePartial runs; guards the rest
	resolved bool
	inst     tool.Tool // per-call instance (tool.CallFactory), or nil
	obs      tool.PartialObserver
	env      *tool.Env
	shown    int       // prefix length of the last WAIT status
	last     time.Time // last delivery
	sent     json.RawMessage
	sealed   bool // the call arrived or was dropped: no more deliveries
	released bool
}

// seal ends partial delivery: it waits for a running ObservePartial and
// makes sure no other starts.
func (p *partial) seal() {
	p.mu.Lock()
	p.sealed = true
	p.mu.Unlock()
}

// release drops the per-call instance, telling it if it wants to know
// (tool.Releaser). It runs once.
func (p *partial) release() {
	p.mu.Lock()
	p.sealed = true
	inst := p.inst
	done := p.released
	p.released = true
	p.mu.Unlock()
	if done || inst == nil {
		return
	}
	if r, ok := inst.(tool.Releaser); ok {
		r.Release()
	}
}

// group is a maximal run of consecutive concurrency-safe calls (or one call
// that is not): the unit of sibling cancellation.
type group struct {
	ctx       context.Context
	cancel    context.CancelCauseFunc // nil when no sibling can cancel
	safe      bool
	n         int  // calls in the group
	cancelSib bool // some call's tool cancels its siblings on error
}

func (j *job) emit(edit func(st *tool.Status)) {
	if j.status == nil {
		return
	}
	j.mu.Lock()
	if j.final {
		j.mu.Unlock()
		return
	}
	edit(&j.st)
	cp := j.st
	if cp.Phase.Done() {
		j.final = true
	}
	j.mu.Unlock()
	j.status(cp)
}

// prepare runs the stages that decide how the call may be scheduled: look
// up, schema validation and coercion, traits. It reports false when the call
// already has its (error) outcome.
func (e *Executor) prepare(ctx context.Context, j *job) bool {
	j.out = Outcome{ID: j.call.ID, Name: j.call.Name, Input: j.call.Input}
	if e.tracer != nil {
		_, j.span = e.tracer.Start(ctx, "execute_tool "+j.call.Name, trace.WithSpanKind(trace.SpanKindInternal),
			trace.WithAttributes(
				attribute.String("gen_ai.operation.name", "execute_tool"),
				attribute.String("gen_ai.tool.name", j.call.Name),
				attribute.String("gen_ai.tool.call.id", j.call.ID),
				attribute.String("gen_ai.tool.type", toolType(j.call.Name)),
			))
	}
	j.emit(func(st *tool.Status) {
		st.ToolUseID, st.Name, st.Phase, st.Input = j.call.ID, j.call.Name, tool.PhaseWait, j.call.Input
	})
	t, ok := e.resolver.Lookup(j.call.Name)
	if !ok || t == nil {
		j.out.Kind = KindUnknownTool
		j.out.Result = tool.ErrorResult(unknownToolError(j.call.Name, e.resolver.Names()))
		return false
	}
	j.tool, j.spec = t, t.Spec()
	j.out.Tool = j.spec.Name
	// A stateful tool runs the call on its own instance for this call:
	// the one that saw the partial input, or a new one. The pool's tool
	// keeps answering the checks (traits, validation, access, permission).
	j.part.seal()
	if j.part.inst == nil {
		if f, ok := tool.As[tool.CallFactory](t); ok {
			if j.part.inst = newCall(e, f, j.call.ID, j.spec.Name); j.part.inst == nil {
				j.out.Kind = KindInternal
				j.out.Result = tool.Errorf("Tool %s cannot be used: it made no instance for this call (a bug in the tool, not in your input).", j.spec.Name)
				return false
			}
		}
	}

	in, coerced, err := e.validate(j.spec, j.call.Input)
	if err != nil {
		j.out.Kind, j.out.Err = kindOfValidation(err), err
		j.out.Result = tool.ErrorResult(err)
		if u, ok := e.resolver.(UnloadedReporter); ok && j.out.Kind == KindInvalidInput && u.Unloaded(j.call.Name) {
			j.out.Result = tool.Errorf("%v\n\n%s", err, loadFirstText(j.spec.Name))
		}
		return false
	}
	j.input, j.out.Input, j.out.Coerced = in, in, coerced
	j.out.Traits = tool.TraitsOf(t, in)
	desc := tool.Describe(t, in)
	j.emit(func(st *tool.Status) { st.Input, st.Description = in, desc })
	return true
}

// loadFirstText tells the model to load a deferred tool before calling it.
func loadFirstText(name string) string {
	return fmt.Sprintf("%s is a deferred tool: its input schema was not sent to you yet, so you called it without knowing its parameters. Load it first by calling ToolSearch with query \"select:%s\", then call %s again with an input that follows its schema.", name, name, name)
}

func kindOfValidation(err error) Kind {
	var ie *InputError
	if errors.As(err, &ie) {
		return KindInvalidInput
	}
	return KindInternal
}

var emptyObject = json.RawMessage("{}")

// validate checks raw against the spec's schema, coercing the common model
// mistakes when it fails. It returns the input to use (raw itself when it
// was valid) and whether it was coerced. The error is an *InputError for a
// bad input, another error for an unusable schema.
func (e *Executor) validate(spec *tool.Spec, raw json.RawMessage) (json.RawMessage, bool, error) {
	c := e.schemas.get(spec.InputSchema)
	if c.err != nil {
		return nil, false, fmt.Errorf("tool %s cannot be used: its %w (a bug in the tool, not in your input)", spec.Name, c.err)
	}
	if c.emptyOK && isEmptyObject(raw) {
		if len(raw) == 0 {
			raw = emptyObject
		}
		return raw, false, nil
	}
	v, err := decodeInput(raw)
	if err != nil {
		return nil, false, &InputError{Tool: spec.Name, Syntax: err}
	}
	if _, ok := v.(map[string]any); !ok {
		// A whole input sent as a JSON string holding the object.
		if nv, changed := convert(v, []string{"object"}); changed {
			v = nv
		} else {
			return nil, false, &InputError{Tool: spec.Name, Syntax: fmt.Errorf("got %s", jsonTypeName(v))}
		}
		if verr := c.schema.Validate(v); verr == nil {
			out, err := encodeInput(v)
			return out, true, err
		}
	}
	verr := c.schema.Validate(v)
	if verr == nil {
		if len(raw) == 0 {
			raw = emptyObject
		}
		return raw, false, nil
	}
	fixed, changed := coerce(v, c.schema)
	if changed {
		if err := c.schema.Validate(fixed); err == nil {
			out, err := encodeInput(fixed)
			if err != nil {
				return nil, false, &InputError{Tool: spec.Name, Syntax: err}
			}
			return out, true, nil
		} else {
			verr = err
		}
	}
	return nil, false, &InputError{Tool: spec.Name, Fields: fieldErrors(c.schema, verr)}
}

func isEmptyObject(raw json.RawMessage) bool {
	if len(raw) == 0 {
		return true
	}
	t := bytes.TrimSpace(raw)
	if len(t) < 2 || t[0] != '{' || t[len(t)-1] != '}' {
		return false
	}
	return len(bytes.TrimSpace(t[1:len(t)-1])) == 0
}

func jsonTypeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "number"
}

func toolType(name string) string {
	if strings.HasPrefix(name, "mcp__") {
		return "extension"
	}
	return "function"
}

// execute runs the stages after scheduling. ctx is the call's group context
// (cancelled by the user's interrupt and by sibling failure).
//
// With here, the tool runs on the calling goroutine (a stream's goroutine
// for the call: one goroutine per running call). If such a call ignores
// its cancellation past the abandon delay, the stages after the call and
// the end of the job ([Stream.endExec]) run on the abandon timer's
// goroutine instead, and execute returns false once the tool finally
// returns. Without here (Run,
// on the caller's goroutine), the tool runs on a goroutine of its own, so
// that the caller can leave a call that does not stop; execute then always
// returns true.
func (e *Executor) execute(s *Stream, j *job, here bool) bool {
	ctx := j.group.ctx
	o := &j.out
	t, spec := j.tool, j.spec
	env := s.sess.callEnv(j.call.ID)
	env.MessageID = j.call.MessageID
	env.CanUseTool = e.subCallCheck(env)
	sessProgress := env.Progress
	env.Progress = func(p tool.Progress) {
		j.emit(func(st *tool.Status) { st.Progress = &p })
		if sessProgress != nil {
			sessProgress(p)
		}
	}

	if e.cancelledBeforeRun(ctx, j) {
		return true
	}
	if v, ok := t.(tool.InputValidator); ok {
		if err := v.ValidateInput(ctx, env, j.input); err != nil {
			e.fail(o, KindInvalidInput, err, "Invalid input for tool %s: %v", spec.Name, err)
			return true
		}
	}

	// What hooks, the permission decision and UIs see: the input with the
	// tool's backfilled fields. The tool still gets j.input.
	e.backfill(j, env, false)

	// PreToolUse hooks.
	var hookVerdict tool.Behavior
	var hookReason string
	var extra []string
	if hook.Handles(e.cfg.hooks, hook.PreToolUse) {
		out, err := e.cfg.hooks.Run(ctx, e.hookInput(hook.PreToolUse, env, j))
		if e.cancelledBeforeRun(ctx, j) {
			return true
		}
		if err != nil {
			e.fail(o, KindBlocked, err, "The call to %s was blocked: a PreToolUse hook failed and could not give a verdict (%v). The call did not run.", spec.Name, err)
			return true
		}
		if out != nil {
			if out.SystemMessage != "" {
				o.SystemMessages = append(o.SystemMessages, out.SystemMessage)
			}
			if out.Continue != nil && !*out.Continue {
				o.Stop, o.StopReason = true, firstNonEmpty(out.StopReason, out.Reason, "a PreToolUse hook stopped the run")
				e.fail(o, KindBlocked, nil, "The call to %s was not run: a hook stopped the run (%s).", spec.Name, o.StopReason)
				return true
			}
			if out.Block {
				if e.cfg.asGiven && out.Reason != "" {
					e.fail(o, KindBlocked, nil, "%s", out.Reason)
				} else {
					e.fail(o, KindBlocked, nil, "The call to %s was blocked by a PreToolUse hook: %s", spec.Name, firstNonEmpty(out.Reason, "no reason given"))
				}
				return true
			}
			if len(out.UpdatedInput) > 0 && !j.unchanged(out.UpdatedInput) {
				if !e.replaceInput(j, env, out.UpdatedInput, "a PreToolUse hook") {
					return true
				}
			}
			if out.AdditionalContext != "" {
				extra = append(extra, out.AdditionalContext)
			}
			hookVerdict, hookReason = out.Decision, out.Reason
		}
	}

	// Permission.
	req := &permission.Request{
		Tool: t, Name: j.call.Name, Input: j.observed(), Env: env, Traits: o.Traits,
		HookVerdict: hookVerdict, HookReason: hookReason,
	}
	if pc, ok := t.(tool.PermissionChecker); ok {
		req.ToolCheck = pc.CheckPermission(ctx, env, req.Input)
	}
	d := e.decide(ctx, req)
	o.Decision = &d
	if e.cancelledBeforeRun(ctx, j) {
		return true
	}
	if d.Behavior != tool.Allow {
		if d.Interrupt {
			o.Stop, o.StopReason = true, firstNonEmpty(d.Reason, "the user stopped the run")
		}
		e.fail(o, KindDenied, nil, "%s", e.denyText(spec.Name, d))
		return true
	}
	if len(d.UpdatedInput) > 0 && !j.unchanged(d.UpdatedInput) {
		if !e.replaceInput(j, env, d.UpdatedInput, "the permission decision") {
			return true
		}
	}
	// The files the decision checked: the tool uses those.
	env.Checked = checkedFor(t, j.input, req.Input, d.Checked)

	// The call.
	if !here {
		res, modifier := e.call(ctx, j, env)
		e.afterCall(s, j, env, extra, res, modifier)
		return true
	}
	res, modifier, ok := e.callHere(ctx, j, env, func(res *tool.Result) {
		e.afterCall(s, j, env, extra, res, nil)
		s.endExec(j)
	})
	if !ok {
		return false
	}
	e.afterCall(s, j, env, extra, res, modifier)
	return true
}

// afterCall runs the stages after the tool's call: PostToolUse hooks, the
// hooks' extra context, the tool's context modifier.
func (e *Executor) afterCall(s *Stream, j *job, env *tool.Env, extra []string, res *tool.Result, modifier func(*tool.Env)) {
	o := &j.out
	spec := j.spec
	ctx := j.group.ctx
	o.Result = res

	// PostToolUse / PostToolUseFailure hooks (the input, with the whole
	// result as JSON, only built for a hook that may run).
	failed := o.Kind != KindOK || res.IsError
	ev := hook.PostToolUse
	if failed {
		ev = hook.PostToolUseFailure
	}
	if hook.Handles(e.cfg.hooks, ev) {
		in := e.hookInput(ev, env, j)
		if failed {
			in.Error = res.TextContent()
		} else if b, err := json.Marshal(res); err == nil {
			in.ToolResponse = b
		}
		hctx := ctx
		if ctx.Err() != nil {
			hctx = context.WithoutCancel(ctx)
		}
		out, err := e.cfg.hooks.Run(hctx, in)
		switch {
		case err != nil:
			o.SystemMessages = append(o.SystemMessages, fmt.Sprintf("%s hook failed: %v", in.Event, err))
			e.log.Debug("post hook failed", "tool", spec.Name, "id", j.call.ID, "err", err)
		case out != nil:
			if out.ReplaceResult != nil {
				o.Result = out.ReplaceResult
			}
			if out.Block && out.Reason != "" {
				extra = append(extra, out.Reason)
			}
			if out.AdditionalContext != "" {
				extra = append(extra, out.AdditionalContext)
			}
			if out.SystemMessage != "" {
				o.SystemMessages = append(o.SystemMessages, out.SystemMessage)
			}
			if out.Continue != nil && !*out.Continue {
				o.Stop, o.StopReason = true, firstNonEmpty(out.StopReason, out.Reason, "a PostToolUse hook stopped the run")
			}
		}
	}
	if len(extra) > 0 {
		r := *o.Result
		r.Content = append(append([]tool.Content(nil), r.Content...), tool.Text(strings.Join(extra, "\n")))
		o.Result = &r
	}
	if modifier != nil && !o.Traits.ConcurrencySafe && !s.isDiscarded() {
		applyModifier(e.log, s.sess, modifier, spec.Name)
	}
}

func applyModifier(log *slog.Logger, s *SharedEnv, m func(*tool.Env), name string) {
	defer func() {
		if p := recover(); p != nil {
			log.Error("context modifier panicked", "tool", name, "panic", p, "stack", string(debug.Stack()))
		}
	}()
	s.Update(m)
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// fail sets an error outcome with a model-facing message.
func (e *Executor) fail(o *Outcome, k Kind, err error, format string, args ...any) {
	o.Kind, o.Err = k, err
	o.Result = tool.Errorf(format, args...)
}

// cancelledBeforeRun gives a call whose context ended before the tool ran
// its outcome; it reports whether it did.
func (e *Executor) cancelledBeforeRun(ctx context.Context, j *job) bool {
	if ctx.Err() == nil {
		return false
	}
	k, msg := cancelText(context.Cause(ctx), j.spec.Name, false)
	e.fail(&j.out, k, context.Cause(ctx), "%s", msg)
	return true
}

func cancelText(cause error, name string, started bool) (Kind, string) {
	what := "was not run"
	if started {
		what = "was stopped"
	}
	var se *siblingError
	switch {
	case errors.As(cause, &se):
		return KindSiblingFailed, fmt.Sprintf("The call to %s %s because a parallel call (%s, id %s) failed: %s", name, what, se.name, se.id, textutil.Truncate(se.text, 300))
	case errors.Is(cause, ErrInterrupted):
		return KindCancelled, fmt.Sprintf("The call to %s %s: the run was stopped.", name, what)
	case errors.Is(cause, ErrDiscarded):
		return KindCancelled, fmt.Sprintf("The call to %s %s: the response was discarded.", name, what)
	}
	return KindCancelled, fmt.Sprintf("The call to %s %s: cancelled by the user.", name, what)
}

// replaceInput validates an input rewritten by a hook or a permission
// decision and makes it the call's input.
func (e *Executor) replaceInput(j *job, env *tool.Env, in json.RawMessage, by string) bool {
	o := &j.out
	v, coerced, err := e.validate(j.spec, in)
	if err != nil {
		e.fail(o, kindOfValidation(err), err, "The call to %s was not run: %s rewrote its input into an invalid one.\n%v", j.spec.Name, by, err)
		return false
	}
	if iv, ok := j.tool.(tool.InputValidator); ok {
		if err := iv.ValidateInput(j.group.ctx, env, v); err != nil {
			e.fail(o, KindInvalidInput, err, "The call to %s was not run: %s rewrote its input into an invalid one: %v", j.spec.Name, by, err)
			return false
		}
	}
	j.input, o.Input = v, v
	o.Coerced = o.Coerced || coerced
	o.Traits = tool.TraitsOf(j.tool, v)
	e.backfill(j, env, true)
	return true
}

// backfill computes the observable input of the call's current input
// ([tool.Backfiller]) and shows it in a status event when it differs from
// the input shown (or always, with show).
func (e *Executor) backfill(j *job, env *tool.Env, show bool) {
	obs := tool.Observable(j.tool, env, j.input)
	if bytes.Equal(obs, j.input) {
		obs = nil
	}
	j.out.Observable = obs
	if obs == nil && !show {
		return
	}
	in := j.observed()
	desc := tool.Describe(j.tool, in)
	j.emit(func(st *tool.Status) { st.Input, st.Description = in, desc })
}

// checkedFor keys the files a decision checked ([tool.Env.Checked]) by
// the paths of the tool's own input too: the decision saw the observable
// input (a backfilled absolute path), the tool looks its paths up as its
// input wrote them. Paths pair up by position in the two inputs' accesses
// ([tool.Accessor]); a path the decision did not record stays unrecorded
// (the tool then resolves it itself).
func checkedFor(t tool.Tool, input, observed json.RawMessage, checked map[string]string) map[string]string {
	if len(checked) == 0 || bytes.Equal(input, observed) {
		return checked
	}
	ain, err1 := tool.AccessOf(t, input)
	aobs, err2 := tool.AccessOf(t, observed)
	if err1 != nil || err2 != nil {
		return checked
	}
	out := make(map[string]string, len(checked)+len(ain.Reads)+len(ain.Writes))
	for k, v := range checked {
		out[k] = v
	}
	pair := func(raw, obs []string) {
		if len(raw) != len(obs) {
			return
		}
		for i, r := range raw {
			if v, ok := checked[obs[i]]; ok {
				if _, own := checked[r]; !own {
					out[r] = v
				}
			}
		}
	}
	pair(ain.Reads, aobs.Reads)
	pair(ain.Writes, aobs.Writes)
	return out
}

// observed returns the input as hooks and the permission decision see it.
func (j *job) observed() json.RawMessage {
	if j.out.Observable != nil {
		return j.out.Observable
	}
	return j.input
}

// unchanged reports whether an input a hook or a permission decision
// returned is the call's input or its observable input (a callback that
// echoes what it was shown rewrites nothing: the tool keeps the model's
// input).
func (j *job) unchanged(in json.RawMessage) bool {
	return bytes.Equal(in, j.input) || sameJSON(in, j.input) ||
		(j.out.Observable != nil && (bytes.Equal(in, j.out.Observable) || sameJSON(in, j.out.Observable)))
}

func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

func (e *Executor) hookInput(ev hook.Event, env *tool.Env, j *job) *hook.Input {
	return &hook.Input{
		Event: ev, SessionID: env.SessionID, CWD: env.WorkDir, PermissionMode: env.Mode,
		ToolName: j.spec.Name, ToolInput: j.observed(), ToolUseID: j.call.ID,
	}
}

// decide makes the permission decision: the decider, then the CanUseTool
// callback for an Ask. It never returns Ask or Passthrough.
func (e *Executor) decide(ctx context.Context, req *permission.Request) permission.Decision {
	d, err := e.cfg.decider.Decide(ctx, req)
	if err != nil {
		return permission.Decision{Behavior: tool.Deny, Source: "error",
			Reason: fmt.Sprintf("the permission check failed (%v), so the call was denied", err)}
	}
	switch d.Behavior {
	case tool.Allow, tool.Deny:
		return d
	}
	if e.cfg.canUse != nil {
		// One question at a time: a person answers one call after another.
		e.askMu.Lock()
		defer e.askMu.Unlock()
	}
	return permission.ResolveAsk(ctx, req, d, e.cfg.canUse)
}

// subCallCheck is [tool.Env.CanUseTool] of a call running in env: the
// permission decision, ask included, for a call the tool means to make
// on the model's behalf, in the calling call's environment. PreToolUse
// hooks do not run: they see the sub-call if and when it runs through an
// executor.
func (e *Executor) subCallCheck(env *tool.Env) func(ctx context.Context, name string, input json.RawMessage) (tool.PermissionResult, error) {
	return func(ctx context.Context, name string, input json.RawMessage) (tool.PermissionResult, error) {
		t, ok := e.resolver.Lookup(name)
		if !ok || t == nil {
			return tool.PermissionResult{Behavior: tool.Deny, Reason: unknownToolError(name, e.resolver.Names()).Error()}, nil
		}
		spec := t.Spec()
		in, _, err := e.validate(spec, input)
		if err != nil {
			return tool.PermissionResult{Behavior: tool.Deny, Reason: fmt.Sprintf("invalid input for %s: %v", spec.Name, err)}, nil
		}
		if v, ok := t.(tool.InputValidator); ok {
			if err := v.ValidateInput(ctx, env, in); err != nil {
				return tool.PermissionResult{Behavior: tool.Deny, Reason: fmt.Sprintf("invalid input for %s: %v", spec.Name, err)}, nil
			}
		}
		req := &permission.Request{Tool: t, Name: name, Input: in, Env: env, Traits: tool.TraitsOf(t, in)}
		if pc, ok := t.(tool.PermissionChecker); ok {
			req.ToolCheck = pc.CheckPermission(ctx, env, in)
		}
		d := e.decide(ctx, req)
		if err := ctx.Err(); err != nil {
			return tool.PermissionResult{Behavior: tool.Deny, Reason: "cancelled"}, err
		}
		if d.Behavior != tool.Allow {
			return tool.PermissionResult{Behavior: tool.Deny, Reason: e.denyText(spec.Name, d)}, nil
		}
		return tool.PermissionResult{Behavior: tool.Allow, Reason: d.Reason, UpdatedInput: d.UpdatedInput}, nil
	}
}

// denyText is what the model gets for a denied call (see
// Options.DenialsAsGiven).
func (e *Executor) denyText(name string, d permission.Decision) string {
	if e.cfg.asGiven && d.Reason != "" {
		switch d.Source {
		case "user", "callback", "hook":
			return d.Reason
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Permission to use %s was denied", name)
	if d.Reason != "" {
		b.WriteString(": ")
		b.WriteString(d.Reason)
	}
	if d.Rule != "" {
		fmt.Fprintf(&b, " (rule %s)", d.Rule)
	}
	b.WriteString(".")
	switch {
	case d.Interrupt:
		b.WriteString(" The user stopped the run; do not continue.")
	case d.Source == "default" || d.Source == "mode":
		b.WriteString(" Do not retry the same call. Use a read-only alternative if there is one, or tell the user what you need and why.")
	default:
		b.WriteString(" Do not retry the same call; adjust your approach or ask the user.")
	}
	return b.String()
}

// deadline returns the call's timeout.
func (e *Executor) deadline(t tool.Tool, spec *tool.Spec, input json.RawMessage) time.Duration {
	d := spec.Timeout
	if d <= 0 {
		d = e.cfg.defaultTimeout
	}
	if tt, ok := t.(tool.Timeouter); ok {
		if x := tt.CallTimeout(input); x > 0 {
			limit := spec.MaxTimeout
			if limit <= 0 {
				limit = e.cfg.timeoutCap
			}
			if limit > 0 && x > limit {
				x = limit
			}
			d = x
		}
	}
	if c := e.cfg.timeoutCap; c > 0 && d > c {
		d = c
	}
	return d
}

type callReturn struct {
	r     *tool.Result
	err   error
	panic any
	isPan bool
}

// callContext makes the context of a call: its deadline and, for a tool
// whose interrupt behaviour is block, a base that the user's interrupt
// does not cancel (its deadline and a failing sibling still do). release
// frees the context's resources.
func (e *Executor) callContext(gctx context.Context, j *job) (cctx context.Context, timeout time.Duration, release func()) {
	timeout = e.deadline(j.tool, j.spec, j.input)
	base := gctx
	var cancelBase context.CancelCauseFunc
	var stopAfter func() bool
	if j.spec.Interrupt == tool.InterruptBlock {
		base, cancelBase = context.WithCancelCause(context.WithoutCancel(gctx))
		stopAfter = context.AfterFunc(gctx, func() {
			var se *siblingError
			if c := context.Cause(gctx); errors.As(c, &se) {
				cancelBase(c)
			}
		})
	}
	cctx, cancel := context.WithTimeoutCause(base, timeout, errCallTimeout)
	return cctx, timeout, func() {
		cancel()
		if stopAfter != nil {
			stopAfter()
			cancelBase(nil)
		}
	}
}

// started records the call's start and emits DOING.
func (e *Executor) started(j *job) time.Time {
	start := e.cfg.now()
	j.out.Start = start
	j.emit(func(st *tool.Status) {
		st.Phase, st.Start, st.Input = tool.PhaseDoing, start, j.observed()
	})
	return start
}

// invoke calls the tool (or its per-call instance), recovering a panic.
func (e *Executor) invoke(cctx context.Context, j *job, env *tool.Env) (cr callReturn) {
	defer func() {
		if p := recover(); p != nil {
			e.log.Error("tool panicked", "tool", j.spec.Name, "id", j.call.ID, "panic", p, "stack", string(debug.Stack()))
			cr = callReturn{panic: p, isPan: true}
		}
	}()
	runner := j.tool
	if j.part.inst != nil {
		runner = j.part.inst
	}
	r, err := runner.Call(cctx, env, j.input)
	return callReturn{r: r, err: err}
}

// call runs the tool on a goroutine of its own with its deadline, and
// waits for it on the calling goroutine, which leaves (abandons) a call
// that does not stop within the abandon delay of its cancellation. It
// returns the result (never nil) and the tool's context modifier.
func (e *Executor) call(gctx context.Context, j *job, env *tool.Env) (*tool.Result, func(*tool.Env)) {
	cctx, timeout, release := e.callContext(gctx, j)
	defer release()
	start := e.started(j)
	ch := make(chan callReturn, 1)
	go func() { ch <- e.invoke(cctx, j, env) }()
	var cr callReturn
	abandoned := false
	select {
	case cr = <-ch:
	case <-cctx.Done():
		timer := time.NewTimer(e.cfg.abandonAfter)
		select {
		case cr = <-ch:
		case <-timer.C:
			abandoned = true
		}
		timer.Stop()
	}
	return e.settle(j, cctx, timeout, start, cr, abandoned)
}

// callHere runs the tool on the calling goroutine with its deadline and
// returns the result (never nil), the tool's context modifier and true. A
// call that does not stop within the abandon delay of its cancellation is
// abandoned: the abandon timer's goroutine settles the outcome and passes
// the result to abandoned, and callHere returns false when the tool
// finally returns (its result is dropped).
func (e *Executor) callHere(gctx context.Context, j *job, env *tool.Env, abandoned func(*tool.Result)) (*tool.Result, func(*tool.Env), bool) {
	cctx, timeout, release := e.callContext(gctx, j)
	start := e.started(j)
	const (
		running = iota
		returned
		left
	)
	var (
		mu    sync.Mutex
		state = running
		timer *time.Timer
	)
	stop := context.AfterFunc(cctx, func() {
		mu.Lock()
		defer mu.Unlock()
		if state != running {
			return
		}
		timer = time.AfterFunc(e.cfg.abandonAfter, func() {
			mu.Lock()
			if state != running {
				mu.Unlock()
				return
			}
			state = left
			mu.Unlock()
			res, _ := e.settle(j, cctx, timeout, start, callReturn{}, true)
			release()
			abandoned(res)
		})
	})
	cr := e.invoke(cctx, j, env)
	mu.Lock()
	if state == left {
		mu.Unlock()
		return nil, nil, false
	}
	state = returned
	if timer != nil {
		timer.Stop()
	}
	mu.Unlock()
	stop()
	res, modifier := e.settle(j, cctx, timeout, start, cr, false)
	release()
	return res, modifier, true
}

// settle turns what the call returned (or its abandonment) into the
// outcome. It returns the result (never nil) and the tool's context
// modifier.
func (e *Executor) settle(j *job, cctx context.Context, timeout time.Duration, start time.Time, cr callReturn, abandoned bool) (*tool.Result, func(*tool.Env)) {
	o := &j.out
	spec := j.spec
	o.Duration = e.cfg.now().Sub(start)

	cause := context.Cause(cctx)
	switch {
	case cr.isPan:
		e.fail(o, KindPanic, fmt.Errorf("panic: %v", cr.panic), "Tool %s failed: it panicked: %v. This is a bug in the tool; try another approach.", spec.Name, cr.panic)
	case abandoned || (cctx.Err() != nil && (cr.err != nil || cr.r == nil || cr.r.IsError)):
		note := ""
		if abandoned {
			note = fmt.Sprintf(" It did not stop within %v of being cancelled and was abandoned.", e.cfg.abandonAfter)
		}
		if errors.Is(cause, errCallTimeout) {
			e.fail(o, KindTimeout, context.DeadlineExceeded, "Tool %s timed out after %v.%s Try a smaller or faster operation, or a longer timeout if the tool accepts one.", spec.Name, timeout, note)
		} else {
			k, msg := cancelText(cause, spec.Name, true)
			e.fail(o, k, cause, "%s%s", msg, note)
		}
	case cr.err != nil:
		e.fail(o, KindToolError, cr.err, "%s", errorText(spec.Name, cr.err))
		if cr.r != nil {
			return o.Result, cr.r.ContextModifier
		}
	case cr.r == nil:
		o.Kind, o.Result = KindOK, tool.TextResult("(no output)")
	default:
		o.Result = cr.r
		if cr.r.IsError {
			o.Kind = KindToolError
		}
		return o.Result, cr.r.ContextModifier
	}
	return o.Result, nil
}

func errorText(name string, err error) string {
	msg := err.Error()
	if msg == "" {
		msg = "unknown error"
	}
	return fmt.Sprintf("Error: %s", msg)
}
