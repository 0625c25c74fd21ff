package agent

import "context"

// Compact summarises the older part of the conversation now, as automatic
// compaction does near the context limit (PreCompact hooks run with
// trigger "manual"); instructions, if any, say what the summary should keep.
// It returns the [CompactEvent] of the change, or nil (and no error) when
// the conversation is too short to compact or a hook blocked it. It waits
// for a running Run to end. Its usage and cost count for the session.
func (a *Agent) Compact(ctx context.Context, instructions string) (*CompactEvent, error) {
	a.runMu.Lock()
	defer a.runMu.Unlock()
	var ev *CompactEvent
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r := &run{a: a, cancel: cancel, start: a.now(), yield: func(e Event, _ error) bool {
		if c, ok := e.(*CompactEvent); ok {
			ev = c
		}
		return true
	}}
	if err := r.compact(ctx, "manual", instructions); err != nil {
		return nil, err
	}
	return ev, nil
}
