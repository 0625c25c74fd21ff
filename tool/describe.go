package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
)

// Doc is a structured description of a tool: the parts a good tool prompt
// has, kept apart so that every format renders them the same way. Set it as
// [Spec.Doc] (or with [WithDoc]); [Spec.Render] turns it into the
// model-facing [Spec.Description] and [Spec.Prompt] in this layout:
//
//	Description: Short
//
//	Prompt:      Long
//
//	             Usage notes:
//	             - one line per note
//
//	             Important:
//	             - one line per item
//
//	             Examples:
//	             - the example's description
//	               {"the":"input, compact JSON"}
//
// Empty parts and their headings are left out. An empty Short falls back
// to the spec's plain Description. With a Doc, the Prompt is rendered from
// the Doc alone ([WithDoc] moves a [WithPrompt] text into an empty Long).
type Doc struct {
	// DisplayName is the tool's name for people ("Read file"). It is not
	// sent to the model; rendering copies it to [Annotations.Title] when the
	// title is empty, which is what MCP clients and UIs show.
	DisplayName string `json:"display_name,omitempty"`
	// Short is the one-line description. Empty means [Spec.Description].
	Short string `json:"short,omitempty"`
	// Long is the usage text: what the tool does, when to use it and when
	// not to.
	Long string `json:"long,omitempty"`
	// UsageNotes are short rules of use, one line each.
	UsageNotes []string `json:"usage_notes,omitempty"`
	// Examples are example calls. Each input must validate against the
	// input schema: [CheckDoc] (run by the constructors of this package
	// and by the pool) rejects one that does not.
	Examples []Example `json:"examples,omitempty"`
	// Important are the points the model must not miss, one line each.
	Important []string `json:"important,omitempty"`
}

// Example is one example call of a tool.
type Example struct {
	// Description says what the example does.
	Description string `json:"description"`
	// Input is the example's input, a JSON object valid for the tool's
	// input schema.
	Input json.RawMessage `json:"input"`
}

// ErrBadExample is wrapped by the errors of [CheckDoc] for an example whose
// input does not validate against the input schema.
var ErrBadExample = errors.New("example input does not match the input schema")

// CheckDoc checks spec's structured description: every example's input
// must be valid JSON that validates against [Spec.InputSchema]. A spec
// without a Doc passes.
func CheckDoc(spec *Spec) error {
	if spec.Doc == nil || len(spec.Doc.Examples) == 0 {
		return nil
	}
	schema := spec.InputSchema
	if len(schema) == 0 {
		schema = EmptyObjectSchema
	}
	sch, err := compileSchema(schema)
	if err != nil {
		return err
	}
	return checkExamples(sch, spec.Doc)
}

func checkExamples(sch *jsonschema.Resolved, d *Doc) error {
	if d == nil {
		return nil
	}
	for i, ex := range d.Examples {
		var v any
		if err := json.Unmarshal(ex.Input, &v); err != nil {
			return fmt.Errorf("example %d (%s): %w: %v", i+1, ex.Description, ErrBadExample, err)
		}
		if err := sch.Validate(v); err != nil {
			return fmt.Errorf("example %d (%s): %w: %v", i+1, ex.Description, ErrBadExample, err)
		}
	}
	return nil
}

// Rendered reports whether s is as [Spec.Render] leaves it: no Doc, or
// Description, Prompt and title already rendered from it (the
// constructors of this package render and check the Doc when they build
// the tool).
func (s *Spec) Rendered() bool {
	if s.Doc == nil {
		return true
	}
	r := s.Render()
	return r.Description == s.Description && r.Prompt == s.Prompt && r.Annotations.Title == s.Annotations.Title
}

// Render returns the spec with its structured description ([Spec.Doc])
// rendered into Description and Prompt (the layout is documented on
// [Doc]), and the display name copied to an empty annotation title. A spec
// without a Doc is returned as is; otherwise the result is a copy (s is
// not changed) that keeps the Doc. Render is idempotent and
// deterministic: the same spec renders to the same bytes.
func (s *Spec) Render() *Spec {
	if s.Doc == nil {
		return s
	}
	c := *s
	d := s.Doc
	if short := strings.TrimSpace(d.Short); short != "" {
		c.Description = short
	}
	c.Prompt = renderPrompt(d)
	if c.Annotations.Title == "" {
		c.Annotations.Title = strings.TrimSpace(d.DisplayName)
	}
	return &c
}

func renderPrompt(d *Doc) string {
	var parts []string
	if l := strings.TrimSpace(d.Long); l != "" {
		parts = append(parts, l)
	}
	list := func(title string, items []string) {
		var b strings.Builder
		for _, it := range items {
			if it = strings.TrimSpace(it); it == "" {
				continue
			}
			if b.Len() == 0 {
				b.WriteString(title)
				b.WriteString(":")
			}
			b.WriteString("\n- ")
			b.WriteString(strings.ReplaceAll(it, "\n", " "))
		}
		if b.Len() > 0 {
			parts = append(parts, b.String())
		}
	}
	list("Usage notes", d.UsageNotes)
	list("Important", d.Important)
	if len(d.Examples) > 0 {
		var b strings.Builder
		b.WriteString("Examples:")
		for _, ex := range d.Examples {
			b.WriteString("\n- ")
			b.WriteString(strings.ReplaceAll(strings.TrimSpace(ex.Description), "\n", " "))
			var in bytes.Buffer
			if json.Compact(&in, ex.Input) != nil {
				in.Reset()
				in.Write(bytes.TrimSpace(ex.Input))
			}
			b.WriteString("\n  ")
			b.Write(in.Bytes())
		}
		parts = append(parts, b.String())
	}
	return strings.Join(parts, "\n\n")
}

// DisplayName returns the tool's name for people: the annotation title,
// else the Doc's display name, else the name.
func (s *Spec) DisplayName() string {
	switch {
	case s.Annotations.Title != "":
		return s.Annotations.Title
	case s.Doc != nil && strings.TrimSpace(s.Doc.DisplayName) != "":
		return strings.TrimSpace(s.Doc.DisplayName)
	}
	return s.Name
}

// SessionDescriber is implemented by tools whose prompt (and, rarely, input
// schema) depends on the session: a database tool listing its tables, an
// Agent tool listing the agent types, a Skill tool listing the skills. The
// pool calls DescribeSession once, when it first builds the tool, with a
// deadline (toolset.Options.SessionTimeout) and the session's environment;
// the answer is frozen for the pool's life, so every request of the session
// carries the same bytes and the provider's prompt cache keeps hitting. An
// error (or the deadline) leaves the tool out of the pool and is reported
// by the pool's Build and Err.
type SessionDescriber interface {
	DescribeSession(ctx context.Context, env *Env) (SessionSpec, error)
}

// DescribesSession reports whether t's description may depend on the
// session: t (or a tool it wraps, see [As]) implements [SessionDescriber],
// except a tool of this package's constructors built without
// [SessionFunc], whose DescribeSession always returns the static spec. A
// pool shares the frozen spec of a tool that does not describe the
// session between its sessions, and asks one that does per session.
func DescribesSession(t Tool) bool {
	sd, ok := As[SessionDescriber](t)
	if !ok {
		return false
	}
	if ft, ok := sd.(*FuncTool); ok {
		return ft.hooks.session != nil
	}
	return true
}

// SessionSpec is what a [SessionDescriber] computed for one session. Each
// empty field keeps the static value.
type SessionSpec struct {
	// Description replaces [Spec.Description] (and [Doc.Short]).
	Description string
	// Prompt replaces [Spec.Prompt] (and [Doc.Long]: usage notes,
	// important points and examples are still rendered after it).
	Prompt string
	// InputSchema replaces [Spec.InputSchema]. It must pass [CheckSchema],
	// and the Doc's examples must validate against it.
	InputSchema json.RawMessage
}

// ApplySession returns a copy of spec with the session's answer applied
// and rendered (see [Spec.Render]). A replaced schema is checked, and the
// Doc's examples are validated against it. spec is not changed.
func ApplySession(spec *Spec, ss SessionSpec) (*Spec, error) {
	c := *spec
	if ss.Description != "" || ss.Prompt != "" {
		if c.Doc != nil {
			d := *c.Doc
			if ss.Description != "" {
				d.Short = ss.Description
			}
			if ss.Prompt != "" {
				d.Long = ss.Prompt
			}
			c.Doc = &d
		}
		if ss.Description != "" {
			c.Description = ss.Description
		}
		if ss.Prompt != "" {
			c.Prompt = ss.Prompt
		}
	}
	if len(ss.InputSchema) > 0 {
		sch, err := compileSchema(ss.InputSchema)
		if err != nil {
			return nil, fmt.Errorf("session input schema: %w", err)
		}
		if err := checkExamples(sch, c.Doc); err != nil {
			return nil, err
		}
		c.InputSchema = compact(ss.InputSchema)
	}
	return c.Render(), nil
}

// PartialObserver is implemented by tools that want to see a call's input
// while the model is still streaming it, to show what they are about to do
// or to prepare (open a file, warm a connection). The executor calls
// ObservePartial with the input streamed so far repaired into a valid JSON
// object (an open string closed as far as it streamed, open objects and
// arrays closed, a key without a value dropped: a string field may be
// incomplete), throttled (at most once per interval, only when the
// repaired input changed), from the goroutine that reads the model's stream,
// so it must return quickly: start any slow preparation on your own
// goroutine bound to ctx, which ends when the model's reply is done or
// abandoned.
//
// A panic in ObservePartial is recovered and logged, and ends the partial
// inputs of that call (the call itself still runs).
//
// A partial input is never validated and never executes: the tool runs
// only through [Tool.Call] with the complete, validated input, and only
// after the last ObservePartial of the call returned. To keep state between
// the partials and the call, implement [CallFactory] too: the same
// instance then sees the partials and the call.
type PartialObserver interface {
	ObservePartial(ctx context.Context, env *Env, partial json.RawMessage)
}

// CallFactory is implemented by stateful tools that need one instance per
// call (the state a [PartialObserver] prepared for the call it will run).
// The executor calls NewCall once per tool-use id, when the call's first
// partial input arrives or, without partials, when the complete call does;
// the instance receives that call's partial inputs ([PartialObserver]) and
// runs its [Tool.Call], and is dropped when the call reaches a final status
// (or never arrives: the reply was discarded or ended without it, or the
// input failed validation). Everything else — the spec, traits,
// validation, access, permission checks, descriptions, backfill — is
// answered by the tool itself (the instance's Spec is not consulted). An
// instance that implements [Releaser] is told when it is dropped.
type CallFactory interface {
	NewCall(toolUseID string) Tool
}

// Releaser is implemented by per-call instances (see [CallFactory]) that
// hold resources. Release is called exactly once, when the executor drops
// the instance.
type Releaser interface {
	Release()
}

// Backfiller is implemented by tools that add derived fields to what
// hooks, permission checks, status events (UIs) and outcomes (transcripts)
// see of a call: an absolute file_path for a relative one, a resolved task
// id. BackfillInput gets the validated input and returns the observable
// input, or nil when it adds nothing. It must be idempotent (backfilling an
// observable input changes nothing), must not fail (input it cannot use
// gives nil) and must not change what the model sent: the tool itself
// still receives the model's input, or a hook's rewrite of it.
type Backfiller interface {
	BackfillInput(env *Env, input json.RawMessage) json.RawMessage
}

// Observable returns the input of a call of t as hooks, permission checks
// and UIs see it: the tool's backfilled input when t implements
// [Backfiller] and adds something, else input.
func Observable(t Tool, env *Env, input json.RawMessage) json.RawMessage {
	if b, ok := t.(Backfiller); ok {
		if out := b.BackfillInput(env, input); len(out) > 0 {
			return out
		}
	}
	return input
}

// Unwrapper is implemented by tools that wrap another tool (a pool's view
// of a tool under another name or with a session-time spec). [As] follows
// it.
type Unwrapper interface {
	Unwrap() Tool
}

// As finds the first tool in t's chain of wrappers ([Unwrapper]) that
// implements the capability C, as errors.As does for errors. Wrappers
// forward the capabilities every call uses; the rarer ones
// ([PartialObserver], [CallFactory]) are found with As.
func As[C any](t Tool) (C, bool) {
	for depth := 0; t != nil && depth < maxUnwrap; depth++ {
		if c, ok := t.(C); ok {
			return c, true
		}
		u, ok := t.(Unwrapper)
		if !ok {
			break
		}
		t = u.Unwrap()
	}
	var zero C
	return zero, false
}

// maxUnwrap bounds the wrapper chains [As] follows (a wrapper that
// unwraps to itself must not hang it).
const maxUnwrap = 32

// DefaultSessionTimeout is the deadline of one [SessionDescriber] call when
// the pool sets none.
const DefaultSessionTimeout = 10 * time.Second
