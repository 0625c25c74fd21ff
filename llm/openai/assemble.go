package openai

import (
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
// arguments so far go out as one delta then); calls still open when the
// choice finishes are completed in the order they started. A call that
// never got an id is given "call_<block index>".
type assembler struct {
	calls   []*call
	byIndex map[int64]*call
	byID    map[string]*call
	next    func() int // allocates a block index
}

type call struct {
	id, name string
	args     []byte
	sent     int // bytes of args already emitted
	block    int
	started  bool
	ended    bool
}

func newAssembler(next func() int) *assembler {
	return &assembler{byIndex: map[int64]*call{}, byID: map[string]*call{}, next: next}
}

func (a *assembler) newCall(index int64, id string) *call {
	c := &call{id: id, block: a.next()}
	a.calls = append(a.calls, c)
	a.byIndex[index] = c
	if id != "" {
		a.byID[id] = c
	}
	return c
}

// add applies one delta and appends the events it produces to evs.
func (a *assembler) add(evs []llm.Event, index int64, id, name, args string) []llm.Event {
	cur := a.byIndex[index]
	var c *call
	switch {
	case id != "" && cur != nil && cur.id == id:
		c = cur
	case id != "" && cur != nil && cur.id == "" && !cur.ended:
		c = cur
		c.id = id
		a.byID[id] = c
	case id != "" && a.byID[id] != nil:
		c = a.byID[id]
	case id != "":
		if cur != nil && !cur.ended {
			evs = a.end(evs, cur)
		}
		c = a.newCall(index, id)
	case cur == nil || cur.ended:
		c = a.newCall(index, "")
	case name != "" && cur.name != "" && name != cur.name:
		evs = a.end(evs, cur)
		c = a.newCall(index, "")
	default:
		c = cur
	}
	if c.ended {
		// A late delta for a call already handed on: its input is final.
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
		evs = a.end(evs, c)
	}
	return evs
}

// count returns the number of calls seen.
func (a *assembler) count() int { return len(a.calls) }
