package llm

import (
	"encoding/json"
	"strings"

	"github.com/gantry-dev/gantry/tool"
)

// Role is the author of a [Message].
type Role string

const (
	// RoleSystem marks instructions from the application. Prefer
	// [Request.System]; a system message inside [Request.Messages] is sent as
	// a system message where the provider has one (OpenAI) and appended to
	// the system prompt where it does not (Anthropic).
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// BlockType names the kind of a [Block].
type BlockType string

const (
	TypeText             BlockType = "text"
	TypeImage            BlockType = "image"
	TypeToolUse          BlockType = "tool_use"
	TypeToolResult       BlockType = "tool_result"
	TypeThinking         BlockType = "thinking"
	TypeRedactedThinking BlockType = "redacted_thinking"
)

// Block is one content block of a [Message]. Which fields are set depends on
// Type:
//
//   - text: Text.
//   - image: Data (raw bytes; base64 in JSON) and MIMEType.
//   - tool_use: ID, Name and Input (a JSON object; never empty once the
//     block is complete).
//   - tool_result: ToolUseID, Content (text and image blocks reach the
//     model; other kinds are sent as their text, if any) and IsError.
//   - thinking: Text and Signature (the provider's proof that the thinking
//     is its own; it must be sent back unchanged).
//   - redacted_thinking: Redacted (opaque data that must be sent back
//     unchanged).
//
// Like [tool.Content], a block is one flat struct so that transcripts
// round-trip through JSON without custom marshalers. Use the constructors
// [Text], [Image], [ToolUse], [ToolResult], [Thinking] and
// [RedactedThinking].
type Block struct {
	Type      BlockType       `json:"type"`
	Text      string          `json:"text,omitempty"`
	Data      []byte          `json:"data,omitempty"`
	MIMEType  string          `json:"mime_type,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   []tool.Content  `json:"content,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
	Signature string          `json:"signature,omitempty"`
	Redacted  string          `json:"redacted,omitempty"`
}

// Text returns a text block.
func Text(s string) Block { return Block{Type: TypeText, Text: s} }

// Image returns an image block holding raw (not base64) bytes.
func Image(data []byte, mimeType string) Block {
	return Block{Type: TypeImage, Data: data, MIMEType: mimeType}
}

// ToolUse returns a tool-use block. An empty input is stored as {}.
func ToolUse(id, name string, input json.RawMessage) Block {
	if len(input) == 0 {
		input = json.RawMessage(`{}`)
	}
	return Block{Type: TypeToolUse, ID: id, Name: name, Input: input}
}

// ToolResult returns the result of the tool use with id toolUseID.
func ToolResult(toolUseID string, content []tool.Content, isError bool) Block {
	return Block{Type: TypeToolResult, ToolUseID: toolUseID, Content: content, IsError: isError}
}

// ResultBlock returns the tool-result block for r, the result of the tool use
// with id toolUseID. A nil r is an empty, successful result.
func ResultBlock(toolUseID string, r *tool.Result) Block {
	if r == nil {
		return ToolResult(toolUseID, nil, false)
	}
	return ToolResult(toolUseID, r.Content, r.IsError)
}

// Thinking returns a thinking block with its signature.
func Thinking(text, signature string) Block {
	return Block{Type: TypeThinking, Text: text, Signature: signature}
}

// RedactedThinking returns a redacted thinking block.
func RedactedThinking(data string) Block {
	return Block{Type: TypeRedactedThinking, Redacted: data}
}

// Message is one turn of a conversation.
type Message struct {
	Role    Role    `json:"role"`
	Content []Block `json:"content"`
}

// UserMessage returns a user message with the given blocks.
func UserMessage(blocks ...Block) Message { return Message{Role: RoleUser, Content: blocks} }

// AssistantMessage returns an assistant message with the given blocks.
func AssistantMessage(blocks ...Block) Message {
	return Message{Role: RoleAssistant, Content: blocks}
}

// UserText returns a user message with one text block.
func UserText(s string) Message { return UserMessage(Text(s)) }

// Text joins the text blocks of m (not thinking) with no separator, the way
// a streamed reply reads.
func (m Message) Text() string {
	var b strings.Builder
	for _, c := range m.Content {
		if c.Type == TypeText {
			b.WriteString(c.Text)
		}
	}
	return b.String()
}

// ToolUses returns the tool-use blocks of m in order.
func (m Message) ToolUses() []Block {
	var out []Block
	for _, c := range m.Content {
		if c.Type == TypeToolUse {
			out = append(out, c)
		}
	}
	return out
}
