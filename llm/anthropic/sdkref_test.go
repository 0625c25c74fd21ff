package anthropic

import (
	"context"
	"net/http"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/packages/ssestream"

	"github.com/gantry-dev/gantry/llm"
)

// sdkEvents is the reference the stream decoder is tested against: the
// SDK's own stream (ssestream.Stream[MessageStreamEventUnion], what
// MessageService.NewStreaming returns) and the mapping of its event union
// that the adapter used before it decoded replies itself. It yields what
// [Provider.events] yields for the same response.
func (p *Provider) sdkEvents(ctx context.Context, resp *http.Response, yield func(llm.Event, error) bool) {
	stream := ssestream.NewStream[sdk.MessageStreamEventUnion](ssestream.NewDecoder(resp), nil)
	defer stream.Close()
	d := refDecoder{blocks: map[int]*toolBlock{}}
	for stream.Next() {
		out, ok, end := d.event(stream)
		if !ok {
			continue
		}
		if !d.emit(yield, out) || end {
			return
		}
	}
	yield(llm.Event{}, p.classify(ctx, stream.Err(), d.yielded))
}

type refDecoder struct {
	yielded bool
	start   *llm.Event
	usage   llm.Usage
	stop    llm.StopReason
	blocks  map[int]*toolBlock
}

func (d *refDecoder) emit(yield func(llm.Event, error) bool, ev llm.Event) bool {
	if d.start != nil {
		s := *d.start
		d.start = nil
		d.yielded = true
		if !yield(s, nil) {
			return false
		}
	}
	d.yielded = true
	return yield(ev, nil)
}

func (d *refDecoder) event(stream *ssestream.Stream[sdk.MessageStreamEventUnion]) (out llm.Event, ok, end bool) {
	ev := stream.Current()
	i := int(ev.Index)
	switch ev.Type {
	case "message_start":
		m := &ev.Message
		d.usage = llm.Usage{
			InputTokens:              int(m.Usage.InputTokens),
			OutputTokens:             int(m.Usage.OutputTokens),
			CacheCreationInputTokens: int(m.Usage.CacheCreationInputTokens),
			CacheReadInputTokens:     int(m.Usage.CacheReadInputTokens),
		}
		d.start = &llm.Event{Type: llm.EventMessageStart, ID: m.ID, Model: string(m.Model), Usage: d.usage}
	case "content_block_start":
		cb := &ev.ContentBlock
		switch cb.Type {
		case "text":
			if cb.Text == "" {
				return out, false, false
			}
			return llm.Event{Type: llm.EventTextDelta, Index: i, Text: cb.Text}, true, false
		case "thinking":
			if cb.Thinking == "" && cb.Signature == "" {
				return out, false, false
			}
			return llm.Event{Type: llm.EventThinkingDelta, Index: i, Text: cb.Thinking, Signature: cb.Signature}, true, false
		case "redacted_thinking":
			return llm.Event{Type: llm.EventRedactedThinking, Index: i, Redacted: cb.Data}, true, false
		case "tool_use":
			d.blocks[i] = &toolBlock{id: cb.ID, name: cb.Name}
			return llm.Event{Type: llm.EventToolUseStart, Index: i, ID: cb.ID, Name: cb.Name}, true, false
		case "web_search_tool_result":
			c := &cb.Content
			out := llm.Event{Type: llm.EventWebSearchResult, Index: i}
			if c.ErrorCode != "" {
				out.SearchError = c.ErrorCode
				return out, true, false
			}
			for _, r := range c.OfWebSearchResultBlockArray {
				out.SearchResults = append(out.SearchResults, llm.WebSearchResult{Title: r.Title, URL: r.URL, PageAge: r.PageAge})
			}
			if out.SearchResults == nil {
				out.SearchResults = []llm.WebSearchResult{}
			}
			return out, true, false
		}
	case "content_block_delta":
		dl := &ev.Delta
		switch dl.Type {
		case "text_delta":
			return llm.Event{Type: llm.EventTextDelta, Index: i, Text: dl.Text}, true, false
		case "thinking_delta":
			return llm.Event{Type: llm.EventThinkingDelta, Index: i, Text: dl.Thinking}, true, false
		case "signature_delta":
			return llm.Event{Type: llm.EventThinkingDelta, Index: i, Signature: dl.Signature}, true, false
		case "input_json_delta":
			b := d.blocks[i]
			if b == nil {
				return out, false, false
			}
			b.input = append(b.input, dl.PartialJSON...)
			return llm.Event{Type: llm.EventToolUseDelta, Index: i, Text: dl.PartialJSON}, true, false
		}
	case "content_block_stop":
		b := d.blocks[i]
		if b == nil {
			return out, false, false
		}
		delete(d.blocks, i)
		in, ierr := llm.ParseInput(b.input)
		return llm.Event{Type: llm.EventToolUseEnd, Index: i, ID: b.id, Name: b.name, Input: in, InputErr: ierr}, true, false
	case "message_delta":
		if ev.Delta.StopReason != "" {
			d.stop = llm.StopReason(ev.Delta.StopReason)
		}
		u := &ev.Usage
		d.usage.OutputTokens = int(u.OutputTokens)
		if u.InputTokens > 0 {
			d.usage.InputTokens = int(u.InputTokens)
		}
		if u.CacheCreationInputTokens > 0 {
			d.usage.CacheCreationInputTokens = int(u.CacheCreationInputTokens)
		}
		if u.CacheReadInputTokens > 0 {
			d.usage.CacheReadInputTokens = int(u.CacheReadInputTokens)
		}
	case "message_stop":
		return llm.Event{Type: llm.EventMessageEnd, StopReason: d.stop, Usage: d.usage}, true, true
	}
	return out, false, false
}
