package openai

import (
	"bytes"
	"fmt"

	"github.com/gantry-dev/gantry/llm"
)

// assembler rebuilds tool calls from Chat Completions deltas. Servers differ:
// OpenAI numbers parallel calls 0, 1, 2 and sends id and name once, first;
// Ollama and some others give every call index 0 and tell them apart only by
// id; some repeat the id or name on every chunk; a few send arguments before
// the id. The rules, in order, for a delta at index i:
//
//  1. an id equal to the current call at i continues it;
//  2. an id while the current call at i has none yet becomes its id;
//  3. an id of an earlier call continues that call;
//  4. any other id starts a new call, and the call it displaces at i is
//     complete (a new id at the same index is a new call);
//  5. no id and no current call at i starts a call whose id comes later;
//  6. no id and a name different from the current call's name starts a
//     new call;
//  7. otherwise the delta continues the current call at i.
//
// A call's start event waits until both its id and name are known (its
// arguments so far go out as one delta then). A call that never got an id
// is given "call_<block index>".
//
// # Completing calls early
//
// Chat Completions streams parallel calls one after the other, so when a
// later call starts, the earlier ones are normally complete. To let a
// streaming executor start them while the model is still writing the next
// calls (the way Anthropic closes each block), a call is completed as soon
// as a later call starts, provided that:
//
//   - it has its id and name (an id or name may still come otherwise), and
//   - its arguments so far are a whole JSON object (not empty: arguments
//     may still come otherwise).
//
// Calls that do not qualify (a server that interleaves the deltas of
// several calls, or sends a call's arguments late) are completed at the
// finish reason, in the order they started, as are the last calls.
//
// Routing (the rules above) does not depend on early completion, so a
// delta meant for an early-completed call still reaches it. Such a delta is
// a protocol violation: JSON text after a whole object is either
// whitespace or makes the input invalid, so the input handed on cannot
// change. The delta is dropped and the call keeps the object it was
// completed with (where assembling at the end would have produced an
// InputErr). Apart from that case, the calls are the same as if every call
// were completed at the finish reason, whatever the chunking (fuzzed).
type assembler struct {
	calls   []*call
	byIndex map[int64]*call
	byID    map[string]*call
	next    func() int // allocates a block index
	// atFinish turns early completion off (every call is completed when
	// displaced or at the finish reason); the reference for tests.
	atFinish bool
	// late counts dropped deltas for early-completed calls (see above).
	late int
}

type call struct {
	id, name string
	args     []byte
	sent     int // bytes of args already emitted
	block    int
	started  bool // start event emitted
	ended    bool // end event emitted
	closed   bool // displaced or finished: takes no more deltas
}

func newAssembler(next func() int) *assembler {
	return &assembler{byIndex: map[int64]*call{}, byID: map[string]*call{}, next: next}
}

// newCall starts a call at index, closing the call it displaces (if any)
// and, first, completing the calls that can be completed early, so that
// end events keep the order the calls started in where they can.
func (a *assembler) newCall(evs []llm.Event, index int64, id string, displaced *call) ([]llm.Event, *call) {
	if !a.atFinish {
		evs = a.endEarly(evs)
	}
	if displaced != nil && !displaced.closed {
		evs = a.close(evs, displaced)
	}
	c := &call{id: id, block: a.next()}
	a.calls = append(a.calls, c)
	a.byIndex[index] = c
	if id != "" {
		a.byID[id] = c
	}
	return evs, c
}

// endEarly completes the open calls that can no longer change (see
// "Completing calls early"); it runs when a new call starts.
func (a *assembler) endEarly(evs []llm.Event) []llm.Event {
	for _, c := range a.calls {
		if c.ended || !c.started || c.id == "" || c.name == "" {
			continue
		}
		if len(bytes.TrimSpace(c.args)) == 0 {
			continue
		}
		if _, err := llm.ParseInput(c.args); err != nil {
			continue // not whole yet (or never will be): wait for the finish
		}
		evs = a.end(evs, c)
	}
	return evs
}

// add applies one delta and appends the events it produces to evs.
func (a *assembler) add(evs []llm.Event, index int64, id, name, args string) []llm.Event {
	cur := a.byIndex[index]
	var c *call
	switch {
	case id != "" && cur != nil && cur.id == id:
		c = cur
	case id != "" && cur != nil && cur.id == "" && !cur.closed:
		c = cur
		c.id = id
		a.byID[id] = c
	case id != "" && a.byID[id] != nil:
		c = a.byID[id]
	case id != "":
		evs, c = a.newCall(evs, index, id, cur)
	case cur == nil || cur.closed:
		evs, c = a.newCall(evs, index, "", nil)
	case name != "" && cur.name != "" && name != cur.name:
		evs, c = a.newCall(evs, index, "", cur)
	default:
		c = cur
	}
	if c.ended {
		// A late delta for a call already handed on: its input is final.
		// Before it was closed, this is a protocol violation (see
		// "Completing calls early").
		if !c.closed && len(bytes.TrimSpace([]byte(args))) > 0 {
			a.late++
		}
		return evs
	}
	if name != "" && c.name == "" {
		c.name = name
	}
	c.args = append(c.args, args...)
	return a.flush(evs, c)
}

// flush emits the start of c once it has an id and a name, and any
// arguments not yet emitted.
func (a *assembler) flush(evs []llm.Event, c *call) []llm.Event {
	if !c.started {
		if c.id == "" || c.name == "" {
			return evs
		}
		c.started = true
		evs = append(evs, llm.Event{Type: llm.EventToolUseStart, Index: c.block, ID: c.id, Name: c.name})
	}
	if c.sent < len(c.args) {
		evs = append(evs, llm.Event{Type: llm.EventToolUseDelta, Index: c.block, Text: string(c.args[c.sent:])})
		c.sent = len(c.args)
	}
	return evs
}

// close closes c to further deltas and completes it.
func (a *assembler) close(evs []llm.Event, c *call) []llm.Event {
	c.closed = true
	return a.end(evs, c)
}

// end completes c.
func (a *assembler) end(evs []llm.Event, c *call) []llm.Event {
	if c.ended {
		return evs
	}
	if c.id == "" {
		c.id = fmt.Sprintf("call_%d", c.block)
		a.byID[c.id] = c
	}
	evs = a.flush(evs, c)
	if !c.started { // no name ever came: the executor reports the unknown tool
		c.started = true
		evs = append(evs, llm.Event{Type: llm.EventToolUseStart, Index: c.block, ID: c.id, Name: c.name})
		if len(c.args) > 0 {
			evs = append(evs, llm.Event{Type: llm.EventToolUseDelta, Index: c.block, Text: string(c.args)})
		}
	}
	c.ended = true
	in, err := llm.ParseInput(c.args)
	return append(evs, llm.Event{Type: llm.EventToolUseEnd, Index: c.block, ID: c.id, Name: c.name, Input: in, InputErr: err})
}

// finish completes every open call in the order they started.
func (a *assembler) finish(evs []llm.Event) []llm.Event {
	for _, c := range a.calls {
		evs = a.close(evs, c)
	}
	return evs
}

// count returns the number of calls seen.
func (a *assembler) count() int { return len(a.calls) }
