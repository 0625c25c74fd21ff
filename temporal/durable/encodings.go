package durable

import (
	"cmp"
	"slices"

	"github.com/gantry-dev/gantry/llm"
)

// DefaultEncodingCacheBytes bounds the encoded messages a worker keeps
// between the model calls of its runs (see
// [WorkerOptions.EncodingCacheBytes]).
const DefaultEncodingCacheBytes = 64 << 20

// A run's model call is an activity that may run on any worker, and its
// conversation arrives as data, decoded afresh for every call. A worker
// keeps, per run it works on, the messages of the run's last model call
// as the provider encoded them (an llm.MessageEncodings in the run's
// runtime), and gives the equal messages of the next call their identity
// (MessageEncodings.Intern: a comparison of every field), so that a turn
// encodes only the messages it adds:
//
//   - a worker that never saw the run's earlier turns has an empty cache
//     and encodes everything, as without it;
//   - a replayed workflow does not run its completed activities again, and
//     a model call made again (a retry, on this worker or another) meets
//     either the cache of its run on this worker or none;
//   - after a compaction or a rewind the messages that differ at a
//     position are encoded again, because equality is by content, never
//     by a hash or a turn number;
//   - the memory is bounded: a run's cache goes with its runtime (released
//     when the run ends, dropped after IdleRuntime), and over all runs by
//     EncodingCacheBytes — after each model call, the caches of the runs
//     whose model calls are oldest are emptied until the estimate (twice
//     the encoded bytes: the encodings and the messages they were made
//     from) is within the bound. A run whose conversation alone is over
//     the bound keeps nothing.

// encodings returns the cache of rt's model calls, nil when the worker
// keeps none.
func (a *Activities) encodings(rt *runtime) *llm.MessageEncodings {
	if a.opts.EncodingCacheBytes < 0 {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.encClock++
	rt.encUsed = a.encClock
	return &rt.enc
}

// trimEncodings empties the caches of the runs whose model calls are
// oldest until the worker's estimate is within EncodingCacheBytes. The
// sizes are read outside the worker's lock: a run's cache is locked while
// its request is encoded.
func (a *Activities) trimEncodings() {
	if a.opts.EncodingCacheBytes < 0 {
		return
	}
	type held struct {
		rt   *runtime
		used uint64
		size int64
	}
	a.mu.Lock()
	all := make([]held, 0, len(a.runtimes))
	for _, rt := range a.runtimes {
		all = append(all, held{rt: rt, used: rt.encUsed})
	}
	a.mu.Unlock()
	var total int64
	for i := range all {
		all[i].size = 2 * all[i].rt.enc.Size()
		total += all[i].size
	}
	if total <= a.opts.EncodingCacheBytes {
		return
	}
	slices.SortFunc(all, func(x, y held) int { return cmp.Compare(x.used, y.used) })
	for _, h := range all {
		if total <= a.opts.EncodingCacheBytes {
			break
		}
		if h.size > 0 {
			h.rt.enc.Reset()
			total -= h.size
		}
	}
}

// HeldEncodingBytes returns the estimate of the memory the worker's
// message caches hold (twice their encoded bytes), which
// [WorkerOptions.EncodingCacheBytes] bounds.
func (a *Activities) HeldEncodingBytes() int64 {
	a.mu.Lock()
	rts := make([]*runtime, 0, len(a.runtimes))
	for _, rt := range a.runtimes {
		rts = append(rts, rt)
	}
	a.mu.Unlock()
	var total int64
	for _, rt := range rts {
		total += 2 * rt.enc.Size()
	}
	return total
}
