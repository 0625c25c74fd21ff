package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"strings"

	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/tidwall/gjson"

	"github.com/gantry-dev/gantry/internal/sse"
	"github.com/gantry-dev/gantry/llm"
)

// The reply is decoded here, not by the SDK: the SDK's stream
// (ssestream.Stream[ChatCompletionChunk]) decodes every chunk by
// reflection into the SDK's chunk type (~25 allocations an event) in a
// large frame on the stack of the session waiting for the reply. This
// decoder reads the SSE framing with pooled buffers (package sse) and picks
// the fields Gantry uses out of each chunk with gjson (which the SDK uses
// too), reading loose values as the SDK's decoder reads them. The request
// side stays the SDK's: params types, auth, headers, base URL, error
// responses. A test compares the two chunk by chunk.

// post sends a request body through the SDK's client (its headers, auth,
// base URL and middleware; its retries are off) and returns the response,
// as the SDK's ChatCompletionService.NewStreaming does for params it
// encodes itself.
func (p *Provider) post(ctx context.Context, body *llm.Body) (*http.Response, error) {
	var raw *http.Response
	err := p.client.Post(ctx, "chat/completions", body.Reader(), &raw, option.WithMiddleware(
		func(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
			body.SetOn(r)
			return next(r)
		}))
	if err == nil && (raw == nil || raw.Body == nil) {
		err = errors.New("openai: a response without a body")
	}
	return raw, err
}

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

// drainEvents is how many events after [DONE] are read, looking for the
// end of the body, before the body is closed anyway.
const drainEvents = 8

// events yields the events of a streamed response, then its error, if
// any, and closes its body. As the SDK's stream does, it skips events
// without data, ends at data "[DONE]", turns a chunk with an "error"
// field into an [ssestream.StreamError] (which [Provider.classify]
// reads), and decodes the others as chunks.
func (p *Provider) events(ctx context.Context, resp *http.Response, yield func(llm.Event, error) bool) {
	r := sse.NewReader(resp.Body)
	defer r.Close()
	o := newOutput()
	var ch chunk
	for {
		ev, err := r.Next()
		if err != nil {
			if err == io.EOF {
				err = nil // the stream ended without [DONE]: the finish reason decides
			}
			o.end(ctx, p, err, yield)
			return
		}
		llm.Touch(ctx) // the idle watchdog: the provider is alive
		if len(ev.Data) == 0 {
			continue
		}
		if bytes.HasPrefix(ev.Data, doneData) {
			sse.Drain(r, drainEvents)
			o.end(ctx, p, nil, yield)
			return
		}
		if e := gjson.GetBytes(ev.Data, "error"); e.Exists() {
			o.end(ctx, p, &ssestream.StreamError{
				Message: fmt.Sprintf("received error while streaming: %s", e.String()),
				Event:   ssestream.Event{Type: string(ev.Name), Data: bytes.Clone(ev.Data)},
			}, yield)
			return
		}
		if err := ch.decode(ev.Name, ev.Data); err != nil {
			o.end(ctx, p, err, yield)
			return
		}
		if !o.chunk(&ch, yield) {
			return
		}
	}
}

var doneData = []byte("[DONE]")

// output turns chunks into events and yields them, holding the message
// start until the first event.
type output struct {
	st      *streamState
	yielded bool
	start   *llm.Event
	evs     []llm.Event
}

func newOutput() *output { return &output{st: newStreamState()} }

// chunk yields the events of one chunk; false means stop.
func (o *output) chunk(ch *chunk, yield func(llm.Event, error) bool) bool {
	if o.start == nil && !o.yielded {
		o.start = &llm.Event{Type: llm.EventMessageStart, ID: strings.Clone(ch.id), Model: strings.Clone(ch.model)}
	}
	o.evs = o.st.chunk(o.evs[:0], ch)
	for _, ev := range o.evs {
		if o.start != nil {
			s := *o.start
			o.start = nil
			o.yielded = true
			if !yield(s, nil) {
				return false
			}
		}
		o.yielded = true
		if !yield(ev, nil) {
			return false
		}
	}
	return true
}

// end yields the message end, when the stream ended well after a finish
// reason, or the error.
func (o *output) end(ctx context.Context, p *Provider, err error, yield func(llm.Event, error) bool) {
	if err == nil && o.st.finished {
		if o.start != nil {
			if !yield(*o.start, nil) {
				return
			}
		}
		yield(o.st.end(), nil)
		return
	}
	yield(llm.Event{}, p.classify(ctx, err, o.yielded))
}

// chunk is what Gantry reads of a chat.completion.chunk. Its strings are
// substrings of the event's data (one string per event); what outlives
// the event (ids, names) is cloned by whoever keeps it. Its slices are
// reused from one chunk to the next.
type chunk struct {
	id, model                      string
	promptTokens, completionTokens int64
	cachedTokens, cacheWriteTokens int64
	choices                        []choice
	tools                          []toolDelta // the tool call deltas of every choice
}

type choice struct {
	index                    int64
	content, refusal, finish string
	reasoning                string
	toolsFrom, toolsTo       int // the choice's deltas in chunk.tools
}

type toolDelta struct {
	index          int64
	id, name, args string
}

// decode reads the data of one event into c. An event named "thread.*"
// is wrapped by the SDK into an object of its own, which has none of a
// chunk's fields: it decodes as an empty chunk, as it did there.
func (c *chunk) decode(name, data []byte) error {
	*c = chunk{choices: c.choices[:0], tools: c.tools[:0]}
	if bytes.HasPrefix(name, []byte("thread.")) {
		return nil
	}
	if !json.Valid(data) {
		var v json.RawMessage
		if err := json.Unmarshal(data, &v); err != nil {
			return err // the SDK's error: encoding/json's syntax error
		}
		return errors.New("malformed chunk")
	}
	r := gjson.Parse(string(data))
	if r.Type == gjson.Null {
		return nil
	}
	if !r.IsObject() {
		kind := map[gjson.Type]string{gjson.String: "string", gjson.Number: "number", gjson.True: "bool", gjson.False: "bool"}[r.Type]
		if r.IsArray() {
			kind = "array"
		}
		return fmt.Errorf("json: cannot unmarshal %s into a chat completion chunk", kind)
	}
	c.id, c.model = str(r.Get("id")), str(r.Get("model"))
	u := r.Get("usage")
	c.promptTokens, c.completionTokens = num(u.Get("prompt_tokens")), num(u.Get("completion_tokens"))
	c.cachedTokens, c.cacheWriteTokens = num(u.Get("prompt_tokens_details.cached_tokens")), num(u.Get("prompt_tokens_details.cache_write_tokens"))
	chs := r.Get("choices")
	if !objects(chs) {
		return nil
	}
	chs.ForEach(func(_, v gjson.Result) bool {
		d := v.Get("delta")
		ch := choice{
			index: num(v.Get("index")), finish: str(v.Get("finish_reason")),
			content: str(d.Get("content")), refusal: str(d.Get("refusal")),
			reasoning: reasoningText(d),
			toolsFrom: len(c.tools),
		}
		if tcs := d.Get("tool_calls"); objects(tcs) {
			tcs.ForEach(func(_, t gjson.Result) bool {
				f := t.Get("function")
				c.tools = append(c.tools, toolDelta{
					index: num(t.Get("index")), id: str(t.Get("id")),
					name: str(f.Get("name")), args: raw(f.Get("arguments")),
				})
				return true
			})
		}
		ch.toolsTo = len(c.tools)
		c.choices = append(c.choices, ch)
		return true
	})
	return nil
}

// objects reports whether r is an array of objects only (the SDK's
// decoder drops an array holding anything else as a whole).
func objects(r gjson.Result) bool {
	if !r.IsArray() {
		return false
	}
	ok := true
	r.ForEach(func(_, v gjson.Result) bool {
		ok = v.IsObject()
		return ok
	})
	return ok
}

// reasoningText is the reasoning of a delta: reasoning_content (DeepSeek,
// vLLM, llama.cpp) or reasoning (Ollama, OpenRouter), the first that is a
// non-empty string.
func reasoningText(d gjson.Result) string {
	for _, k := range [...]string{"reasoning_content", "reasoning"} {
		if v := d.Get(k); v.Type == gjson.String && v.Str != "" {
			return v.Str
		}
	}
	return ""
}

// str is r as a string field of the SDK's types reads it: a string's
// value, a number's or a boolean's JSON text, "" for null or absent.
func str(r gjson.Result) string {
	switch r.Type {
	case gjson.String:
		return r.Str
	case gjson.Number, gjson.True, gjson.False:
		return r.Raw
	}
	return ""
}

// raw is r as the SDK reads a string field that holds an object or an
// array: its JSON text; other values as [str].
func raw(r gjson.Result) string {
	if r.IsObject() || r.IsArray() {
		return r.Raw
	}
	return str(r)
}

// num is r as an integer field of the SDK's types reads it: a number
// (truncated), or a string holding one.
func num(r gjson.Result) int64 {
	switch r.Type {
	case gjson.Number, gjson.String:
		return r.Int()
	}
	return 0
}
