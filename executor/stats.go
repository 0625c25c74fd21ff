package executor

import (
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/gantry-dev/gantry/internal/textutil"
)

// reservoirSize is how many recent durations per tool the percentiles are
// computed from.
const reservoirSize = 256

// maxSignatures bounds the error signatures remembered for repetition
// signals.
const maxSignatures = 1024

// Stats are an executor's per-tool statistics. It is safe for concurrent
// use; read it with [Stats.Snapshot].
type Stats struct {
	mu       sync.Mutex
	tools    map[string]*toolStats
	unknown  int
	sigs     map[string]int
	errN     int
	timeoutN int
}

type toolStats struct {
	ToolStats
	consecTimeouts int
	ran            int
	// ring holds the last min(n, reservoirSize) durations; it grows as
	// they come (a session's executor records a few calls per tool, and
	// a full reservoir per tool, allocated up front, weighed on every
	// session).
	ring []time.Duration
	n    int // durations recorded
}

// ToolStats are one tool's figures.
type ToolStats struct {
	// Calls counts every call of the tool that was looked up.
	Calls int `json:"calls"`
	// Successes counts results that are not errors; Errors every error
	// result except denials (so Calls = Successes + Errors + Denials).
	Successes int `json:"successes"`
	Errors    int `json:"errors"`
	// Denials counts calls denied by the permission decision or blocked by
	// a hook.
	Denials int `json:"denials"`
	// Timeouts counts calls that hit their deadline (also in Errors).
	Timeouts int `json:"timeouts"`
	// TotalDuration is the time spent running the tool (calls that never
	// ran count zero); Mean is TotalDuration over the calls that ran.
	TotalDuration time.Duration `json:"total_duration"`
	Mean          time.Duration `json:"mean"`
	// P50 and P95 are percentiles of the last 256 run durations.
	P50 time.Duration `json:"p50"`
	P95 time.Duration `json:"p95"`
}

// Snapshot is a copy of the statistics at one moment.
type Snapshot struct {
	// Tools maps tool names to their figures.
	Tools map[string]ToolStats `json:"tools"`
	// UnknownTools counts calls of names no tool has.
	UnknownTools int `json:"unknown_tools"`
}

// SignalKind names a [Signal].
type SignalKind string

const (
	// SignalRepeatedError: the same error (tool and normalised error text)
	// came back the threshold number of times. The model is probably stuck
	// in a loop.
	SignalRepeatedError SignalKind = "repeated_error"
	// SignalRepeatedTimeout: one tool timed out the threshold number of
	// times in a row.
	SignalRepeatedTimeout SignalKind = "repeated_timeout"
)

// Signal tells the agent loop that something keeps going wrong. The loop
// decides what to do (tell the model, stop, ask the user). A signal is
// raised when a count reaches its threshold; the count then starts again, so
// a loop that goes on raises it again every threshold repetitions.
type Signal struct {
	Kind SignalKind `json:"kind"`
	Tool string     `json:"tool"`
	// Count is the number of repetitions that raised the signal.
	Count int `json:"count"`
	// Signature is the normalised error text (repeated_error).
	Signature string `json:"signature,omitempty"`
	// Message is a one-line explanation for the loop or the model.
	Message string `json:"message"`
	// ToolUseID is the call that raised it.
	ToolUseID string `json:"tool_use_id"`
}

func newStats(errN, timeoutN int) *Stats {
	return &Stats{tools: make(map[string]*toolStats), sigs: make(map[string]int), errN: errN, timeoutN: timeoutN}
}

// record adds one outcome and returns the signals it raised.
func (s *Stats) record(o *Outcome) []Signal {
	s.mu.Lock()
	defer s.mu.Unlock()
	if o.Kind == KindUnknownTool {
		s.unknown++
		return nil
	}
	ts := s.tools[o.Tool]
	if ts == nil {
		ts = &toolStats{}
		s.tools[o.Tool] = ts
	}
	ts.Calls++
	isErr := o.Kind != KindOK || (o.Result != nil && o.Result.IsError)
	switch {
	case o.Kind == KindDenied || o.Kind == KindBlocked:
		ts.Denials++
	case isErr:
		ts.Errors++
	default:
		ts.Successes++
	}
	if !o.Start.IsZero() {
		ts.ran++
		ts.TotalDuration += o.Duration
		if len(ts.ring) < reservoirSize {
			ts.ring = append(ts.ring, o.Duration)
		} else {
			ts.ring[ts.n%reservoirSize] = o.Duration
		}
		ts.n++
	}
	var sigs []Signal
	if o.Kind == KindTimeout {
		ts.Timeouts++
		ts.consecTimeouts++
		if ts.consecTimeouts >= s.timeoutN {
			sigs = append(sigs, Signal{Kind: SignalRepeatedTimeout, Tool: o.Tool, Count: ts.consecTimeouts, ToolUseID: o.ID,
				Message: "tool " + o.Tool + " timed out " + itoa(ts.consecTimeouts) + " times in a row"})
			ts.consecTimeouts = 0
		}
	} else if o.Kind != KindCancelled && o.Kind != KindSiblingFailed {
		ts.consecTimeouts = 0
	}
	if isErr && o.Kind != KindCancelled && o.Kind != KindSiblingFailed && o.Kind != KindTimeout && o.Result != nil {
		sig := normalizeError(o.Result.TextContent())
		key := o.Tool + "\x00" + sig
		if _, ok := s.sigs[key]; !ok && len(s.sigs) >= maxSignatures {
			clear(s.sigs)
		}
		s.sigs[key]++
		if c := s.sigs[key]; c >= s.errN {
			sigs = append(sigs, Signal{Kind: SignalRepeatedError, Tool: o.Tool, Count: c, Signature: sig, ToolUseID: o.ID,
				Message: "tool " + o.Tool + " returned the same error " + itoa(c) + " times: " + textutil.Truncate(sig, 200)})
			delete(s.sigs, key)
		}
	}
	return sigs
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}

// normalizeError reduces an error text to its signature: lower case, runs of
// digits replaced by '#', hex-looking words by 'X', whitespace collapsed, at
// most 500 bytes. Two errors that differ only in numbers, ids or spacing
// have the same signature.
func normalizeError(s string) string {
	if len(s) > 2000 {
		s = s[:2000]
	}
	var b strings.Builder
	for _, w := range strings.Fields(strings.ToLower(s)) {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		if core := strings.TrimFunc(w, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }); isHexID(core) {
			i := strings.Index(w, core)
			b.WriteString(w[:i])
			b.WriteByte('X')
			b.WriteString(w[i+len(core):])
			continue
		}
		digits := false
		for _, r := range w {
			if unicode.IsDigit(r) {
				if !digits {
					b.WriteByte('#')
				}
				digits = true
				continue
			}
			digits = false
			b.WriteRune(r)
		}
		if b.Len() >= 500 {
			break
		}
	}
	return textutil.Truncate(b.String(), 500)
}

func isHexID(w string) bool {
	if len(w) < 8 {
		return false
	}
	letters, digits := 0, 0
	for _, r := range w {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case r >= 'a' && r <= 'f':
			letters++
		case r == '-':
		default:
			return false
		}
	}
	return digits > 0 && letters > 0
}

// Snapshot returns a copy of the figures.
func (s *Stats) Snapshot() Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := Snapshot{Tools: make(map[string]ToolStats, len(s.tools)), UnknownTools: s.unknown}
	for name, ts := range s.tools {
		v := ts.ToolStats
		if ts.ran > 0 {
			v.Mean = ts.TotalDuration / time.Duration(ts.ran)
		}
		k := min(ts.n, reservoirSize)
		if k > 0 {
			d := slices.Clone(ts.ring[:k])
			slices.Sort(d)
			v.P50 = percentile(d, 50)
			v.P95 = percentile(d, 95)
		}
		out.Tools[name] = v
	}
	return out
}

// percentile of sorted durations, nearest rank.
func percentile(sorted []time.Duration, p int) time.Duration {
	rank := (p*len(sorted) + 99) / 100
	if rank < 1 {
		rank = 1
	}
	return sorted[rank-1]
}
