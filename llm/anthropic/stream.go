package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"net/http"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/tidwall/gjson"

	"github.com/gantry-dev/gantry/internal/sse"
	"github.com/gantry-dev/gantry/llm"
)

// The reply is decoded here, not by the SDK: the SDK's stream
// (ssestream.Stream[MessageStreamEventUnion]) decodes every event into a
// large union by reflection, allocating for every event, in a large frame,
// and that frame and the union sat on the stack of every session while its
// reply streamed, so that a session's goroutine kept a stack several times
// the initial size (BenchmarkStreamDecode compares the two decoders; the
// figures are in docs/scale.md). This decoder reads the SSE framing with
// pooled buffers (package sse) and picks the few fields Gantry uses out of
// each event with gjson (which the SDK uses too) into [llm.Event]s directly.
// The request side stays the SDK's: params types, auth, headers, base URL.
// Events map as the SDK's union did; a test compares the two event by event.

// attempt sends the request once and yields the reply's events.
func (p *Provider) attempt(ctx context.Context, body *llm.Body) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		resp, err := p.post(ctx, body)
		if err != nil {
			yield(llm.Event{}, p.classify(ctx, err, false))
			return
		}
		p.events(ctx, resp, yield)
	}
}

// events yields the events of a streamed response, then its error, if
// any, and closes its body.
func (p *Provider) events(ctx context.Context, resp *http.Response, yield func(llm.Event, error) bool) {
	r := sse.NewReader(resp.Body)
	defer r.Close()
	d := decoder{resp: resp}
	var out llm.Event
	for {
		ev, err := r.Next()
		if err != nil {
			if err == io.EOF {
				err = nil // the stream ended without message_stop: classify says so
			}
			yield(llm.Event{}, p.classify(ctx, err, d.yielded))
			return
		}
		llm.Touch(ctx) // the idle watchdog: the provider is alive (pings included)
		ok, end, err := d.decode(ev.Name, ev.Data, &out)
		if err != nil {
			yield(llm.Event{}, p.classify(ctx, err, d.yielded))
			return
		}
		if !ok {
			continue
		}
		if !d.emit(yield, &out) {
			return
		}
		if end {
			sse.Drain(r, drainEvents)
			return
		}
	}
}

// drainEvents is how many events after message_stop are read, looking for
// the end of the body, before the body is closed anyway.
const drainEvents = 8

// decoder is the state of one attempt's event decoding.
type decoder struct {
	resp    *http.Response // for the errors of "error" events
	yielded bool
	start   *llm.Event // message_start, held until the next event
	usage   llm.Usage
	stop    llm.StopReason
	blocks  map[int]*toolBlock // tool uses in progress, by index
}

type toolBlock struct {
	id, name string
	input    []byte
}

// emit yields ev, after the held message_start.
func (d *decoder) emit(yield func(llm.Event, error) bool, ev *llm.Event) bool {
	if d.start != nil {
		s := d.start
		d.start = nil
		d.yielded = true
		if !yield(*s, nil) {
			return false
		}
	}
	d.yielded = true
	return yield(*ev, nil)
}

// decode maps one SSE event into *out: ok says there is an event to emit,
// end that it is the last (message_stop). As the SDK's stream does, it
// skips "ping" events and events without a name or without data, turns an
// "error" event into an [sdk.Error] (which [Provider.classify] reads), and
// maps the others by the "type" of their JSON data.
func (d *decoder) decode(name, data []byte, out *llm.Event) (ok, end bool, err error) {
	switch string(name) {
	case "", "ping":
		return false, false, nil
	case "error":
		return false, false, d.streamError(data)
	}
	if len(bytes.TrimSuffix(data, []byte{'\n'})) == 0 {
		return false, false, nil
	}
	if !json.Valid(data) {
		return false, false, malformed(name, data)
	}
	// One string per event: the fields read below are substrings of it, so
	// that what is retained beyond the event (ids, names) is cloned.
	ev := gjson.Parse(string(data))
	if !ev.IsObject() {
		return false, false, fmt.Errorf("anthropic: malformed %q event: not a JSON object", name)
	}
	*out = llm.Event{}
	switch str(ev.Get("type")) {
	case "message_start":
		d.messageStart(ev.Get("message"))
	case "content_block_start":
		return d.blockStart(int(ev.Get("index").Int()), ev.Get("content_block"), out), false, nil
	case "content_block_delta":
		return d.blockDelta(int(ev.Get("index").Int()), ev.Get("delta"), out), false, nil
	case "content_block_stop":
		return d.blockStop(int(ev.Get("index").Int()), out), false, nil
	case "message_delta":
		d.messageDelta(ev)
	case "message_stop":
		*out = llm.Event{Type: llm.EventMessageEnd, StopReason: d.stop, Usage: d.usage}
		return true, true, nil
	}
	return false, false, nil
}

// malformed describes event data that is not JSON.
func malformed(name, data []byte) error {
	var v json.RawMessage
	err := json.Unmarshal(data, &v)
	if err == nil {
		err = fmt.Errorf("not valid JSON")
	}
	return fmt.Errorf("anthropic: malformed %q event: %w", name, err)
}

// streamError is the error of an "error" event, made as the SDK makes it:
// an [sdk.Error] with the response's status and request id and the event's
// JSON, or a plain error when that does not decode.
func (d *decoder) streamError(data []byte) error {
	e := &sdk.Error{
		Request: d.resp.Request, Response: d.resp, StatusCode: d.resp.StatusCode,
		RequestID:   d.resp.Header.Get("request-id"),
		WorkspaceID: d.resp.Header.Get("anthropic-workspace-id"),
	}
	if e.UnmarshalJSON(data) != nil {
		return fmt.Errorf("received error while streaming: %s", data)
	}
	return e
}

func (d *decoder) messageStart(m gjson.Result) {
	d.usage = usage(m.Get("usage"), llm.Usage{}, true)
	d.start = &llm.Event{
		Type: llm.EventMessageStart, Usage: d.usage,
		ID: strings.Clone(str(m.Get("id"))), Model: strings.Clone(str(m.Get("model"))),
	}
}

// usage reads a usage object over u: every count when all, else the
// output tokens and the counts above zero (message_delta's usage).
func usage(r gjson.Result, u llm.Usage, all bool) llm.Usage {
	u.OutputTokens = int(r.Get("output_tokens").Int())
	if v := int(r.Get("input_tokens").Int()); all || v > 0 {
		u.InputTokens = v
	}
	if v := int(r.Get("cache_creation_input_tokens").Int()); all || v > 0 {
		u.CacheCreationInputTokens = v
	}
	if v := int(r.Get("cache_read_input_tokens").Int()); all || v > 0 {
		u.CacheReadInputTokens = v
	}
	return u
}

func (d *decoder) messageDelta(ev gjson.Result) {
	if s := str(ev.Get("delta.stop_reason")); s != "" {
		d.stop = llm.StopReason(strings.Clone(s))
	}
	d.usage = usage(ev.Get("usage"), d.usage, false)
}

func (d *decoder) blockStart(i int, cb gjson.Result, out *llm.Event) bool {
	switch str(cb.Get("type")) {
	case "text":
		text := str(cb.Get("text"))
		if text == "" {
			return false
		}
		*out = llm.Event{Type: llm.EventTextDelta, Index: i, Text: text}
	case "thinking":
		thinking, sig := str(cb.Get("thinking")), str(cb.Get("signature"))
		if thinking == "" && sig == "" {
			return false
		}
		*out = llm.Event{Type: llm.EventThinkingDelta, Index: i, Text: thinking, Signature: sig}
	case "redacted_thinking":
		*out = llm.Event{Type: llm.EventRedactedThinking, Index: i, Redacted: strings.Clone(str(cb.Get("data")))}
	case "tool_use":
		id, name := strings.Clone(str(cb.Get("id"))), strings.Clone(str(cb.Get("name")))
		if d.blocks == nil {
			d.blocks = map[int]*toolBlock{}
		}
		d.blocks[i] = &toolBlock{id: id, name: name}
		*out = llm.Event{Type: llm.EventToolUseStart, Index: i, ID: id, Name: name}
	case "web_search_tool_result":
		webSearchEvent(i, cb.Get("content"), out)
	default: // server tools and other blocks Gantry does not use
		return false
	}
	return true
}

// webSearchEvent maps a web_search_tool_result block: its results, or
// the error code of a failed search.
func webSearchEvent(i int, c gjson.Result, out *llm.Event) {
	*out = llm.Event{Type: llm.EventWebSearchResult, Index: i}
	if code := str(c.Get("error_code")); code != "" {
		out.SearchError = strings.Clone(code)
		return
	}
	out.SearchResults = []llm.WebSearchResult{}
	if !c.IsArray() {
		return
	}
	c.ForEach(func(_, r gjson.Result) bool {
		out.SearchResults = append(out.SearchResults, llm.WebSearchResult{
			Title: strings.Clone(str(r.Get("title"))), URL: strings.Clone(str(r.Get("url"))),
			PageAge: strings.Clone(str(r.Get("page_age"))),
		})
		return true
	})
}

func (d *decoder) blockDelta(i int, dl gjson.Result, out *llm.Event) bool {
	switch str(dl.Get("type")) {
	case "text_delta":
		*out = llm.Event{Type: llm.EventTextDelta, Index: i, Text: str(dl.Get("text"))}
	case "thinking_delta":
		*out = llm.Event{Type: llm.EventThinkingDelta, Index: i, Text: str(dl.Get("thinking"))}
	case "signature_delta":
		*out = llm.Event{Type: llm.EventThinkingDelta, Index: i, Signature: str(dl.Get("signature"))}
	case "input_json_delta":
		b := d.blocks[i]
		if b == nil {
			return false
		}
		partial := str(dl.Get("partial_json"))
		b.input = append(b.input, partial...)
		*out = llm.Event{Type: llm.EventToolUseDelta, Index: i, Text: partial}
	default: // citations
		return false
	}
	return true
}

func (d *decoder) blockStop(i int, out *llm.Event) bool {
	b := d.blocks[i]
	if b == nil {
		return false
	}
	delete(d.blocks, i)
	in, ierr := llm.ParseInput(b.input)
	*out = llm.Event{Type: llm.EventToolUseEnd, Index: i, ID: b.id, Name: b.name, Input: in, InputErr: ierr}
	return true
}

// str is r as a string field of the SDK's types reads it: a string's
// value, a number's or a boolean's JSON text, "" for null or absent.
func str(r gjson.Result) string {
	if r.Type == gjson.String {
		return r.Str
	}
	return r.String()
}
