package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"time"
)

// Option configures a tool built by [New], [NewText], [NewTyped],
// [NewNoInput] or [NewRaw].
type Option func(*config)

type config struct {
	spec  Spec
	hooks hooks
	err   error
}

// WithAliases adds older names that still resolve to the tool.
func WithAliases(names ...string) Option {
	return func(c *config) { c.spec.Aliases = append(c.spec.Aliases, names...) }
}

// WithPrompt sets the longer usage text.
func WithPrompt(prompt string) Option { return func(c *config) { c.spec.Prompt = prompt } }

// WithDoc sets the structured description (see [Doc]). The tool's
// Description and Prompt are rendered from it when the tool is built, and
// every example input is validated against the input schema then: one that
// does not validate is a build error.
func WithDoc(d Doc) Option { return func(c *config) { c.spec.Doc = &d } }

// WithAnnotations sets MCP-style annotations (hints only).
func WithAnnotations(a Annotations) Option { return func(c *config) { c.spec.Annotations = a } }

// WithTraits sets the traits of every input.
func WithTraits(t Traits) Option { return func(c *config) { c.spec.Traits = t } }

// ReadOnly declares every call read-only, concurrency-safe and
// non-destructive, and sets the read-only annotation.
func ReadOnly() Option {
	return func(c *config) {
		c.spec.Traits = ReadOnlyTraits
		f := false
		c.spec.Annotations.ReadOnlyHint = true
		c.spec.Annotations.DestructiveHint = &f
	}
}

// WithDefer sets the deferral hints.
func WithDefer(d Deferral) Option { return func(c *config) { c.spec.Defer = d } }

// WithMaxResultChars sets the result budget (negative: unlimited).
func WithMaxResultChars(n int) Option { return func(c *config) { c.spec.MaxResultChars = n } }

// WithTimeout sets the default deadline of a call.
func WithTimeout(d time.Duration) Option { return func(c *config) { c.spec.Timeout = d } }

// WithMaxTimeout caps per-call timeouts requested through [TimeoutFunc].
func WithMaxTimeout(d time.Duration) Option { return func(c *config) { c.spec.MaxTimeout = d } }

// WithInterrupt sets the interrupt behaviour.
func WithInterrupt(i Interrupt) Option { return func(c *config) { c.spec.Interrupt = i } }

// CancelSiblingsOnError makes a failing call cancel its parallel siblings.
func CancelSiblingsOnError() Option { return func(c *config) { c.spec.CancelSiblingsOnError = true } }

// WithSpec edits the spec directly, for fields without a dedicated option.
func WithSpec(edit func(*Spec)) Option { return func(c *config) { edit(&c.spec) } }

// EnabledFunc sets the enabled check.
func EnabledFunc(f func(ctx context.Context, env *Env) bool) Option {
	return func(c *config) { c.hooks.enabled = f }
}

// The options below take a function of the typed input. The raw input is
// decoded into In for each use; In should be the tool's input type. An input
// that does not decode gets the fail-closed answer: zero Traits, a
// validation error, an Ask verdict, the tool's name, no rule match, no
// timeout.

// TraitsFunc decides the traits per input.
func TraitsFunc[In any](f func(In) Traits) Option {
	return func(c *config) {
		if f == nil {
			c.err = errors.Join(c.err, errors.New("nil TraitsFunc"))
			return
		}
		c.hooks.traits = func(raw json.RawMessage) Traits {
			in, err := decode[In](raw)
			if err != nil {
				return Traits{}
			}
			return f(in)
		}
	}
}

// AccessFunc declares what a call acts on per input (see [Accessor]). An
// input that does not decode is an error, so the call is denied.
func AccessFunc[In any](f func(In) (Access, error)) Option {
	return func(c *config) {
		if f == nil {
			c.err = errors.Join(c.err, errors.New("nil AccessFunc"))
			return
		}
		c.hooks.access = func(raw json.RawMessage) (Access, error) {
			in, err := decode[In](raw)
			if err != nil {
				return Access{}, err
			}
			return f(in)
		}
	}
}

// ValidateFunc adds an input check beyond the schema.
func ValidateFunc[In any](f func(ctx context.Context, env *Env, in In) error) Option {
	return func(c *config) {
		c.hooks.validate = func(ctx context.Context, env *Env, raw json.RawMessage) error {
			in, err := decode[In](raw)
			if err != nil {
				return err
			}
			return f(ctx, env, in)
		}
	}
}

// PermissionFunc gives the tool's own permission verdict per input.
func PermissionFunc[In any](f func(ctx context.Context, env *Env, in In) PermissionResult) Option {
	return func(c *config) {
		c.hooks.perm = func(ctx context.Context, env *Env, raw json.RawMessage) PermissionResult {
			in, err := decode[In](raw)
			if err != nil {
				return PermissionResult{Behavior: Ask, Reason: err.Error()}
			}
			return f(ctx, env, in)
		}
	}
}

// DescribeFunc describes a call in one line for people.
func DescribeFunc[In any](f func(In) string) Option {
	return func(c *config) {
		name := c.spec.Name
		c.hooks.describe = func(raw json.RawMessage) string {
			in, err := decode[In](raw)
			if err != nil {
				return name
			}
			return f(in)
		}
	}
}

// RuleMatchFunc matches permission-rule specifiers against an input.
func RuleMatchFunc[In any](f func(specifier string, in In) bool) Option {
	return func(c *config) {
		c.hooks.match = func(spec string, raw json.RawMessage) bool {
			in, err := decode[In](raw)
			if err != nil {
				return false
			}
			return f(spec, in)
		}
	}
}

// TimeoutFunc reads a per-call timeout from the input (zero: the default).
func TimeoutFunc[In any](f func(In) time.Duration) Option {
	return func(c *config) {
		c.hooks.timeout = func(raw json.RawMessage) time.Duration {
			in, err := decode[In](raw)
			if err != nil {
				return 0
			}
			return f(in)
		}
	}
}

// BackfillFunc adds derived fields to what hooks, permission checks and UIs
// see of a call (see [Backfiller]): f edits a decoded copy of the input,
// which is encoded again as the observable input. It must be idempotent.
// An input that does not decode is observed as sent.
func BackfillFunc[In any](f func(env *Env, in *In)) Option {
	return func(c *config) {
		if f == nil {
			c.err = errors.Join(c.err, errors.New("nil BackfillFunc"))
			return
		}
		c.hooks.backfill = func(env *Env, raw json.RawMessage) json.RawMessage {
			in, err := decode[In](raw)
			if err != nil {
				return nil
			}
			before, err := json.Marshal(in)
			if err != nil {
				return nil
			}
			f(env, &in)
			out, err := json.Marshal(in)
			if err != nil || bytes.Equal(out, before) {
				return nil // nothing added
			}
			return out
		}
	}
}

// SessionFunc computes the tool's session-time description once per pool
// (see [SessionDescriber]).
func SessionFunc(f func(ctx context.Context, env *Env) (SessionSpec, error)) Option {
	return func(c *config) {
		if f == nil {
			c.err = errors.Join(c.err, errors.New("nil SessionFunc"))
			return
		}
		c.hooks.session = f
	}
}
