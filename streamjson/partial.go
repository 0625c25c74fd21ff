package streamjson

import (
	"github.com/gantry-dev/gantry/llm"
)

// partialState turns Gantry's stream events back into the Messages API's
// raw stream events: message_start, content_block_start / _delta / _stop,
// message_delta, message_stop. Gantry's events carry the block index; a
// text or thinking block is opened by its first delta and closed when
// another block starts or the message ends.
type partialState struct {
	open    bool // a text or thinking block is open
	openIdx int
	id      string
	model   string
}

// events returns the raw events for ev (none for events without an API
// twin).
func (p *partialState) events(ev llm.Event) []any {
	var out []any
	closeOpen := func() {
		if p.open {
			out = append(out, map[string]any{"type": "content_block_stop", "index": p.openIdx})
			p.open = false
		}
	}
	openBlock := func(idx int, block map[string]any) {
		if p.open && p.openIdx == idx {
			return
		}
		closeOpen()
		out = append(out, map[string]any{"type": "content_block_start", "index": idx, "content_block": block})
		p.open, p.openIdx = true, idx
	}
	switch ev.Type {
	case llm.EventMessageStart:
		*p = partialState{id: ev.ID, model: ev.Model}
		out = append(out, map[string]any{"type": "message_start", "message": map[string]any{
			"id": ev.ID, "type": "message", "role": "assistant", "model": ev.Model, "content": []any{},
			"stop_reason": nil, "stop_sequence": nil, "usage": usageShape(ev.Usage),
		}})
	case llm.EventTextDelta:
		openBlock(ev.Index, map[string]any{"type": "text", "text": ""})
		out = append(out, map[string]any{"type": "content_block_delta", "index": ev.Index, "delta": map[string]any{"type": "text_delta", "text": ev.Text}})
	case llm.EventThinkingDelta:
		openBlock(ev.Index, map[string]any{"type": "thinking", "thinking": "", "signature": ""})
		if ev.Text != "" {
			out = append(out, map[string]any{"type": "content_block_delta", "index": ev.Index, "delta": map[string]any{"type": "thinking_delta", "thinking": ev.Text}})
		}
		if ev.Signature != "" {
			out = append(out, map[string]any{"type": "content_block_delta", "index": ev.Index, "delta": map[string]any{"type": "signature_delta", "signature": ev.Signature}})
		}
	case llm.EventRedactedThinking:
		closeOpen()
		out = append(out,
			map[string]any{"type": "content_block_start", "index": ev.Index, "content_block": map[string]any{"type": "redacted_thinking", "data": ev.Redacted}},
			map[string]any{"type": "content_block_stop", "index": ev.Index})
	case llm.EventToolUseStart:
		closeOpen()
		out = append(out, map[string]any{"type": "content_block_start", "index": ev.Index, "content_block": map[string]any{"type": "tool_use", "id": ev.ID, "name": ev.Name, "input": map[string]any{}}})
	case llm.EventToolUseDelta:
		out = append(out, map[string]any{"type": "content_block_delta", "index": ev.Index, "delta": map[string]any{"type": "input_json_delta", "partial_json": ev.Text}})
	case llm.EventToolUseEnd:
		out = append(out, map[string]any{"type": "content_block_stop", "index": ev.Index})
	case llm.EventMessageEnd:
		closeOpen()
		var stop any
		if ev.StopReason != "" {
			stop = string(ev.StopReason)
		}
		out = append(out,
			map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": usageShape(ev.Usage)},
			map[string]any{"type": "message_stop"})
	}
	return out
}
