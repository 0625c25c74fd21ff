package hook

import (
	"context"
	"errors"
)

// Join returns a Runner that runs every runner (nil ones are skipped) for
// each input, in order, and merges their outputs with [Combine]. An error
// of one runner is returned for PreToolUse (a call whose hooks cannot all
// give a verdict is blocked); for other events it becomes a system
// message and the others' outputs stand, as within a [Manager]. Join of
// no runner, or of one, returns nil or that runner.
func Join(runners ...Runner) Runner {
	var rs []Runner
	for _, r := range runners {
		if r != nil {
			rs = append(rs, r)
		}
	}
	switch len(rs) {
	case 0:
		return nil
	case 1:
		return rs[0]
	}
	return joined(rs)
}

// joined is the Runner of [Join] over two or more runners.
type joined []Runner

// Handles implements [EventFilter]: some runner may handle ev.
func (rs joined) Handles(ev Event) bool {
	for _, r := range rs {
		if Handles(r, ev) {
			return true
		}
	}
	return false
}

// Run implements [Runner].
func (rs joined) Run(ctx context.Context, in *Input) (*Output, error) {
	var outs []*Output
	var errs []error
	for _, r := range rs {
		out, err := r.Run(ctx, in)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		outs = append(outs, out)
	}
	if len(errs) > 0 && in.Event == PreToolUse {
		return nil, errors.Join(errs...)
	}
	if len(outs) == 0 && len(errs) == 0 {
		return nil, nil
	}
	out := Combine(in.Event, outs...)
	for _, err := range errs {
		out.SystemMessage = joinNonEmpty("\n", out.SystemMessage, err.Error())
	}
	return out, nil
}
