package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"iter"
)

// Provider is a model API. Stream sends req and returns the reply as a
// stream of events.
//
// The stream yields events in order and ends after [EventMessageEnd], or
// with a non-nil error (and a zero Event), after which it yields nothing
// more. Breaking out of the loop early cancels the request and releases its
// connection. The stream is single-use: ranging over it again sends the
// request again.
//
// Errors are classified (see [APIError], [ErrOverloaded], [ErrRateLimited],
// [ErrContextLength], [ErrConnection], [ErrInterrupted]); transient
// failures before the first event of an attempt are retried by the adapters
// (see [RetryPolicy]). A cancelled ctx ends the stream promptly with an
// error wrapping ctx.Err().
//
// The orphan rule: when a stream fails part-way (an error after some
// events), the caller discards the partial reply, in particular any tool use
// that had no [EventToolUseEnd], and may send the request again.
type Provider interface {
	Stream(ctx context.Context, req *Request) iter.Seq2[Event, error]
}

// ProviderFunc adapts a function to [Provider].
type ProviderFunc func(ctx context.Context, req *Request) iter.Seq2[Event, error]

// Stream calls f.
func (f ProviderFunc) Stream(ctx context.Context, req *Request) iter.Seq2[Event, error] {
	return f(ctx, req)
}

// EventType names the kind of an [Event].
type EventType int

const (
	// EventMessageStart opens the reply: ID, Model, and Usage with the input
	// tokens (as far as the provider reports them this early).
	EventMessageStart EventType = iota + 1
	// EventTextDelta carries text of the block at Index in Text.
	EventTextDelta
	// EventThinkingDelta carries thinking text of the block at Index in
	// Text, or a piece of its signature in Signature.
	EventThinkingDelta
	// EventRedactedThinking carries a whole redacted thinking block in
	// Redacted.
	EventRedactedThinking
	// EventToolUseStart opens the tool use at Index: ID and Name.
	EventToolUseStart
	// EventToolUseDelta carries a piece of the tool use's input JSON in
	// Text (partial JSON: do not parse it).
	EventToolUseDelta
	// EventToolUseEnd closes the tool use at Index: ID, Name and Input, the
	// complete input as compact JSON ({} when the model sent none). If the
	// model's input is not valid JSON, Input is {} and InputErr says why:
	// hand it to the model as an error result.
	EventToolUseEnd
	// EventMessageEnd closes the reply: StopReason and Usage (the final,
	// cumulative counts).
	EventMessageEnd
	// EventWebSearchResult reports the results of one server-side web
	// search (see [Request.WebSearch]) in SearchResults, or its failure in
	// SearchError (the provider's error code). The results are not part
	// of the accumulated message.
	EventWebSearchResult
)

var eventNames = [...]string{
	EventMessageStart:     "message_start",
	EventTextDelta:        "text_delta",
	EventThinkingDelta:    "thinking_delta",
	EventRedactedThinking: "redacted_thinking",
	EventToolUseStart:     "tool_use_start",
	EventToolUseDelta:     "tool_use_delta",
	EventToolUseEnd:       "tool_use_end",
	EventMessageEnd:       "message_end",
	EventWebSearchResult:  "web_search_result",
}

func (t EventType) String() string {
	if t > 0 && int(t) < len(eventNames) {
		return eventNames[t]
	}
	return fmt.Sprintf("EventType(%d)", int(t))
}

// Event is one step of a streamed reply. Which fields are set depends on
// Type (see the [EventType] constants). Index is the position of the block
// the event belongs to in the assistant message; blocks may interleave only
// where the provider interleaves them.
type Event struct {
	Type       EventType
	Index      int
	Text       string
	Signature  string
	Redacted   string
	ID         string
	Name       string
	Input      json.RawMessage
	InputErr   error
	Model      string
	StopReason StopReason
	Usage      Usage
	// SearchResults and SearchError belong to [EventWebSearchResult].
	SearchResults []WebSearchResult
	SearchError   string
}

// StopReason is why the model stopped. Values outside the constants are
// passed through from the provider.
type StopReason string

const (
	StopEndTurn      StopReason = "end_turn"
	StopToolUse      StopReason = "tool_use"
	StopMaxTokens    StopReason = "max_tokens"
	StopSequence     StopReason = "stop_sequence"
	StopRefusal      StopReason = "refusal"
	StopPauseTurn    StopReason = "pause_turn"
	StopContextLimit StopReason = "model_context_window_exceeded"
)

// Usage counts tokens. InputTokens excludes cached tokens on every provider:
// the whole prompt is InputTokens + CacheCreationInputTokens +
// CacheReadInputTokens.
type Usage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens,omitempty"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens,omitempty"`
}

// Add returns the sum of u and v.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		InputTokens:              u.InputTokens + v.InputTokens,
		OutputTokens:             u.OutputTokens + v.OutputTokens,
		CacheCreationInputTokens: u.CacheCreationInputTokens + v.CacheCreationInputTokens,
		CacheReadInputTokens:     u.CacheReadInputTokens + v.CacheReadInputTokens,
	}
}

// PromptTokens returns the size of the whole prompt: input, cache writes and
// cache reads.
func (u Usage) PromptTokens() int {
	return u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens
}

// ParseInput turns the accumulated input JSON of a tool use into compact
// JSON. Empty or whitespace-only input is {}. Invalid JSON or a value that
// is not an object gives {} and an error the model can act on.
func ParseInput(raw []byte) (json.RawMessage, error) {
	empty := json.RawMessage(`{}`)
	i := 0
	for i < len(raw) && (raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\n' || raw[i] == '\r') {
		i++
	}
	if i == len(raw) {
		return empty, nil
	}
	if raw[i] != '{' {
		return empty, fmt.Errorf("tool input is not a JSON object: %.80q", raw)
	}
	if !json.Valid(raw) {
		return empty, fmt.Errorf("tool input is not valid JSON: %.80q", raw)
	}
	if isCompact(raw) {
		return json.RawMessage(append([]byte(nil), raw...)), nil
	}
	var buf bytes.Buffer
	buf.Grow(len(raw))
	if err := json.Compact(&buf, raw); err != nil {
		return empty, fmt.Errorf("tool input is not valid JSON: %w", err)
	}
	return json.RawMessage(buf.Bytes()), nil
}

// isCompact reports whether valid JSON raw has no insignificant whitespace.
func isCompact(raw []byte) bool {
	inStr, esc := false, false
	for _, c := range raw {
		switch {
		case esc:
			esc = false
		case inStr && c == '\\':
			esc = true
		case c == '"':
			inStr = !inStr
		case !inStr && (c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			return false
		}
	}
	return true
}
