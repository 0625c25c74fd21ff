// Package offstack runs a deep call on a goroutine of its own while the
// caller waits, so that the caller's stack does not grow for it.
//
// Why: a goroutine's stack grows (doubles) when a call goes deeper than it,
// and shrinks again only at a collection that finds three quarters of it
// unused. A session's goroutine spends its life waiting for the model deep
// in the HTTP client, close to the initial stack's size; once one deep call
// (the SDK's reflective JSON encoder, a recursive schema validator, the
// session's assembly) has pushed it past 8 KB, it keeps a 16 KB stack for good, which with thousands
// of sessions is megabytes. Run on a short-lived goroutine, the deep call's
// stack is freed when it returns.
//
// The cost is a goroutine start and switch and the helper's own
// stack growth; use it for calls that are deep, not for hot loops.
package offstack

import "context"

// inlineKey is the context key of Inline.
type inlineKey struct{}

// Inline returns a copy of ctx under which Call and Do run f on the
// caller's goroutine. A process that runs one session and exits (gantry -p)
// has no idle stacks to keep small, and there each helper goroutine's stack
// growth — from 2 KB, as the collector has not yet sized new stacks — reads
// the stack maps and frame sizes of every function on it: binary pages the
// short run need not touch (docs/scale.md).
func Inline(ctx context.Context) context.Context {
	return context.WithValue(ctx, inlineKey{}, true)
}

// inlined reports whether ctx was made by Inline.
func inlined(ctx context.Context) bool {
	on, _ := ctx.Value(inlineKey{}).(bool)
	return on
}

// Call runs f on a new goroutine and returns its results, or on the
// caller's goroutine when ctx was made by Inline. A panic in f is raised
// again on the caller's goroutine.
func Call[T any](ctx context.Context, f func() (T, error)) (T, error) {
	if inlined(ctx) {
		return f()
	}
	var (
		v   T
		err error
		p   any
		ok  bool
	)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			if !ok {
				p = recover()
			}
		}()
		v, err = f()
		ok = true
	}()
	<-done
	if !ok {
		panic(p)
	}
	return v, err
}

// Do runs f on a new goroutine and waits for it, or on the caller's
// goroutine when ctx was made by Inline. A panic in f is raised again on
// the caller's goroutine.
func Do(ctx context.Context, f func()) {
	_, _ = Call(ctx, func() (struct{}, error) { f(); return struct{}{}, nil })
}
