package llm

import (
	"context"
	"errors"
	"iter"
)

// WithFallbackModel returns a Provider that sends a request again with
// model when p fails on it, before any event was streamed, with an error
// another model may not have: overloaded, rate limited, a server error,
// or the model not found (404). The request's other fields are kept;
// errors after the first event, and every other error (authentication,
// a bad request, a cancelled ctx), are returned as they are. An empty
// model returns p. The result is a [ModelLister] when p is one.
func WithFallbackModel(p Provider, model string) Provider {
	if model == "" {
		return p
	}
	return &fallback{p: p, model: model}
}

// fallback is the Provider of [WithFallbackModel].
type fallback struct {
	p     Provider
	model string
}

// ListModels lists the models of the wrapped provider.
func (f *fallback) ListModels(ctx context.Context) ([]ModelInfo, error) { return ListModels(ctx, f.p) }

// Stream sends req, then with the fallback model if it failed.
func (f *fallback) Stream(ctx context.Context, req *Request) iter.Seq2[Event, error] {
	p, model := f.p, f.model
	return func(yield func(Event, error) bool) {
		started := false
		var failed error
		for ev, err := range p.Stream(ctx, req) {
			if err != nil && !started && req.Model != model && fallbackWorthy(ctx, err) {
				failed = err
				break
			}
			started = true
			if !yield(ev, err) || err != nil {
				return
			}
		}
		if failed == nil {
			return
		}
		r := *req
		r.Model = model
		for ev, err := range p.Stream(ctx, &r) {
			if !yield(ev, err) || err != nil {
				return
			}
		}
	}
}

func fallbackWorthy(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	if errors.Is(err, ErrOverloaded) || errors.Is(err, ErrRateLimited) || errors.Is(err, ErrServer) {
		return true
	}
	var ae *APIError
	return errors.As(err, &ae) && ae.StatusCode == 404
}
