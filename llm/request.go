package llm

import (
	"encoding/json"

	"github.com/gantry-dev/gantry/tool"
)

// Request is one call to a model. The zero value of every optional field is
// the provider's default.
type Request struct {
	// Model is the provider's model name. Required unless the provider has a
	// default model.
	Model string
	// MaxTokens bounds the reply, thinking included. Zero means the
	// provider's default (see each adapter's DefaultMaxTokens).
	MaxTokens int
	// System is the system prompt, in blocks so that a stable prefix can
	// carry a cache breakpoint of its own.
	System []SystemBlock
	// Messages is the conversation so far, oldest first.
	Messages []Message
	// Encodings, if set, keeps the encoded form of Messages between the
	// requests of one conversation, so that a request encodes only the
	// messages that are new since the previous one (see
	// [MessageEncodings]; use one per conversation). Nil encodes every
	// message on every request.
	Encodings *MessageEncodings
	// Tools are the tools the model may call, in the order they are sent
	// (keep it stable: it is part of the cached prefix).
	Tools []*tool.Spec
	// ToolChoice constrains tool use. The zero value is "auto".
	ToolChoice ToolChoice
	// Temperature, if set, overrides the provider's default sampling
	// temperature. Providers reject a temperature other than 1 together
	// with thinking.
	Temperature *float64
	// StopSequences end the reply when the model produces one of them.
	StopSequences []string
	// ThinkingBudget, if positive, turns on extended thinking with this many
	// tokens (Anthropic requires at least 1024 and less than MaxTokens).
	// OpenAI-compatible servers have no budget; there it only turns on
	// reasoning_effort (see llm/openai).
	ThinkingBudget int
	// Cache asks for prompt-cache breakpoints. Providers that cache
	// automatically (OpenAI) ignore it.
	Cache CacheHints
	// WebSearch, if set, offers the provider's server-side web search
	// tool: the provider runs the searches and the reply reports their
	// results as [EventWebSearchResult] events. Only llm/anthropic has one;
	// other adapters refuse a request that sets it.
	WebSearch *WebSearchTool
	// OutputSchema, if set, asks the provider to constrain the reply's
	// text to JSON matching this JSON Schema: Anthropic's output format,
	// OpenAI's strict json_schema response format. The schema must meet
	// the provider's rules for such schemas (for OpenAI's strict mode:
	// every property required, additionalProperties false). Tools may
	// still be called.
	OutputSchema json.RawMessage
}

// WebSearchTool configures a provider's server-side web search.
type WebSearchTool struct {
	// MaxUses bounds the searches of one request (0 = the provider's
	// default).
	MaxUses int
	// AllowedDomains and BlockedDomains narrow the results (give one or
	// the other).
	AllowedDomains []string
	BlockedDomains []string
}

// WebSearchResult is one result of a server-side web search.
type WebSearchResult struct {
	Title   string `json:"title"`
	URL     string `json:"url"`
	PageAge string `json:"page_age,omitempty"`
}

// SystemBlock is one block of the system prompt.
type SystemBlock struct {
	Text string `json:"text"`
	// Cache puts a cache breakpoint after this block: everything up to and
	// including it is cached. Anthropic allows at most four breakpoints per
	// request, [CacheHints] included.
	Cache bool `json:"cache,omitempty"`
}

// CacheHints are the cache breakpoints of a request: each marks the end of a
// prefix the provider should cache. Turn all three on for an agent loop: the
// tools and the system prompt are the same on every turn, and the
// conversation up to the last user message is the prefix of the next turn.
type CacheHints struct {
	// Tools puts a breakpoint on the last tool.
	Tools bool
	// System puts a breakpoint on the last system block.
	System bool
	// LastUserMessage puts a breakpoint on the last block of the last user
	// message.
	LastUserMessage bool
}

// AllCacheHints turns on every cache breakpoint.
var AllCacheHints = CacheHints{Tools: true, System: true, LastUserMessage: true}

// System returns a system prompt of one block.
func System(text string) []SystemBlock { return []SystemBlock{{Text: text}} }

// ToolChoiceMode says whether and which tool the model must call.
type ToolChoiceMode string

const (
	// ToolChoiceAuto lets the model decide (the default).
	ToolChoiceAuto ToolChoiceMode = ""
	// ToolChoiceAny makes the model call at least one tool.
	ToolChoiceAny ToolChoiceMode = "any"
	// ToolChoiceNone forbids tool calls.
	ToolChoiceNone ToolChoiceMode = "none"
	// ToolChoiceTool makes the model call the tool named in [ToolChoice.Name].
	ToolChoiceTool ToolChoiceMode = "tool"
)

// ToolChoice constrains tool use. The zero value is "auto", parallel calls
// allowed.
type ToolChoice struct {
	Mode ToolChoiceMode
	// Name is the tool to call, for [ToolChoiceTool].
	Name string
	// DisableParallel asks the model for at most one tool call per reply.
	DisableParallel bool
}
