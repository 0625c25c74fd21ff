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
// oldest until the worker's estimate is within EncodingCacheBytes.
func (a *Activities) trimEncodings() {
	if a.opts.EncodingCacheBytes < 0 {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	type held struct {
		rt   *runtime
		size int64
	}
	var all []held
	var total int64
	for _, rt := range a.runtimes {
		if n := 2 * rt.enc.Size(); n > 0 {
			all = append(all, held{rt, n})
			total += n
		}
	}
	if total <= a.opts.EncodingCacheBytes {
		return
	}
	slices.SortFunc(all, func(x, y held) int { return cmp.Compare(x.rt.encUsed, y.rt.encUsed) })
	for _, h := range all {
		if total <= a.opts.EncodingCacheBytes {
			break
		}
		h.rt.enc.Reset()
		total -= h.size
	}
}

// EncodingCacheBytes returns the estimate of the memory the worker's
// message caches hold (twice their encoded bytes).
func (a *Activities) EncodingCacheBytes() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	var total int64
	for _, rt := range a.runtimes {
		total += 2 * rt.enc.Size()
	}
	return total
}
