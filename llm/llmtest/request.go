package llmtest

import (
	"encoding/json"
	"net/http"

	"github.com/gantry-dev/gantry/llm"
)

// Request is a request the server received, decoded into a provider-neutral
// form for assertions. Body holds the raw JSON for anything else.
type Request struct {
	// API is "anthropic" or "openai".
	API    string
	Path   string
	Header http.Header
	Body   []byte

	Model     string
	MaxTokens int
	Stream    bool
	// IncludeUsage is OpenAI's stream_options.include_usage.
	IncludeUsage bool
	// System is the system prompt: Anthropic's system blocks (Cache set
	// where a block has cache_control), or the text of OpenAI's system (and
	// developer) messages, which are also in Messages.
	System   []llm.SystemBlock
	Messages []Message
	Tools    []Tool
	// ToolChoice is the tool_choice value as sent, or nil.
	ToolChoice json.RawMessage
	// ThinkingBudget is Anthropic's thinking.budget_tokens.
	ThinkingBudget int
	// ReasoningEffort is OpenAI's reasoning_effort.
	ReasoningEffort string
	Temperature     *float64
	StopSequences   []string
	// OutputSchema is the structured-output schema asked for: Anthropic's
	// output_config.format (json_schema), OpenAI's strict json_schema
	// response_format.
	OutputSchema json.RawMessage
	// CacheBreakpoints lists where cache_control was set, as paths:
	// "tools[2]", "system[0]", "messages[3].content[1]".
	CacheBreakpoints []string
}

// Message is one message of a recorded request. Role is as sent ("user",
// "assistant", "system", "developer", and "tool" for OpenAI's tool
// results, whose one block is a tool_result).
//
// Blocks are decoded into [llm.Block]: image blocks hold the decoded bytes
// (an OpenAI image_url that is not a data URL keeps the URL in Text), a
// tool_result holds its content as tool.Content blocks.
type Message struct {
	Role    string
	Content []llm.Block
}

// Tool is one tool definition of a recorded request.
type Tool struct {
	Name        string
	Description string
	// InputSchema is Anthropic's input_schema or OpenAI's
	// function.parameters, as sent.
	InputSchema json.RawMessage
	// Cache reports cache_control on the tool (Anthropic).
	Cache bool
	// Type is the type of an Anthropic server tool ("web_search_20250305"),
	// "" for a client tool; Raw is the tool definition as sent.
	Type string
	Raw  json.RawMessage
}

// ToolResults returns the tool_result blocks of every message, in order.
func (r Request) ToolResults() []llm.Block {
	var out []llm.Block
	for _, m := range r.Messages {
		for _, b := range m.Content {
			if b.Type == llm.TypeToolResult {
				out = append(out, b)
			}
		}
	}
	return out
}

// ToolNames returns the names of the tools in the order they were sent.
func (r Request) ToolNames() []string {
	out := make([]string, len(r.Tools))
	for i, t := range r.Tools {
		out[i] = t.Name
	}
	return out
}
