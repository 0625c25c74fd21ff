package llm

import (
	"iter"
	"slices"
	"strings"
)

// Response is a whole reply: the assistant message, why it stopped and what
// it cost.
type Response struct {
	ID         string
	Model      string
	Message    Message
	StopReason StopReason
	Usage      Usage
}

// Accumulator builds a [Response] from the events of a stream. The zero
// value is ready to use. Feed it every event with [Accumulator.Add] while
// consuming the stream yourself (an agent hands each [EventToolUseEnd] to
// its executor as it arrives), or let [Collect] drive it.
type Accumulator struct {
	id, model string
	stop      StopReason
	usage     Usage
	ended     bool
	blocks    map[int]*accBlock
	order     []int
}

type accBlock struct {
	b    Block
	text strings.Builder
	sig  strings.Builder
	done bool // tool use: EventToolUseEnd seen
}

// Add folds ev into the reply.
func (a *Accumulator) Add(ev Event) {
	switch ev.Type {
	case EventMessageStart:
		a.id, a.model = ev.ID, ev.Model
		a.usage = ev.Usage
	case EventTextDelta:
		a.block(ev.Index, TypeText).text.WriteString(ev.Text)
	case EventThinkingDelta:
		b := a.block(ev.Index, TypeThinking)
		b.text.WriteString(ev.Text)
		b.sig.WriteString(ev.Signature)
	case EventRedactedThinking:
		b := a.block(ev.Index, TypeRedactedThinking)
		b.b.Redacted = ev.Redacted
	case EventToolUseStart:
		b := a.block(ev.Index, TypeToolUse)
		b.b.ID, b.b.Name = ev.ID, ev.Name
	case EventToolUseDelta:
		a.block(ev.Index, TypeToolUse).text.WriteString(ev.Text)
	case EventToolUseEnd:
		b := a.block(ev.Index, TypeToolUse)
		b.b.ID, b.b.Name, b.b.Input = ev.ID, ev.Name, ev.Input
		b.done = true
	case EventMessageEnd:
		a.stop = ev.StopReason
		a.usage = ev.Usage
		a.ended = true
	}
}

func (a *Accumulator) block(i int, t BlockType) *accBlock {
	if a.blocks == nil {
		a.blocks = make(map[int]*accBlock)
	}
	b, ok := a.blocks[i]
	if !ok {
		b = &accBlock{b: Block{Type: t}}
		a.blocks[i] = b
		a.order = append(a.order, i)
	}
	return b
}

// Done reports whether [EventMessageEnd] was seen.
func (a *Accumulator) Done() bool { return a.ended }

// Response returns the reply so far. Blocks are in index order. Tool uses
// without [EventToolUseEnd] are left out (the orphan rule: a partial tool
// call is never executed nor sent back), as are empty text blocks.
func (a *Accumulator) Response() *Response {
	r := &Response{ID: a.id, Model: a.model, StopReason: a.stop, Usage: a.usage}
	idx := slices.Clone(a.order)
	slices.Sort(idx)
	r.Message = Message{Role: RoleAssistant, Content: make([]Block, 0, len(idx))}
	for _, i := range idx {
		ab := a.blocks[i]
		b := ab.b
		switch b.Type {
		case TypeText:
			b.Text = ab.text.String()
			if b.Text == "" {
				continue
			}
		case TypeThinking:
			b.Text, b.Signature = ab.text.String(), ab.sig.String()
		case TypeToolUse:
			if !ab.done {
				continue
			}
		}
		r.Message.Content = append(r.Message.Content, b)
	}
	return r
}

// Collect consumes a stream and returns the whole reply. On error it returns
// the reply so far (see [Accumulator.Response]) together with the error.
func Collect(stream iter.Seq2[Event, error]) (*Response, error) {
	var a Accumulator
	for ev, err := range stream {
		if err != nil {
			return a.Response(), err
		}
		a.Add(ev)
	}
	if !a.ended {
		return a.Response(), ErrInterrupted
	}
	return a.Response(), nil
}
