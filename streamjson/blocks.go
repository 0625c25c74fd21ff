package streamjson

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/tool"
)

// Block is a content block in the Anthropic Messages API's shape, as the
// SDK's messages carry them (text, thinking, redacted_thinking, tool_use,
// tool_result, image). Fields a type does not use are left out.
type Block struct {
	Type      string          `json:"type"`
	Text      *string         `json:"text,omitempty"`
	Thinking  *string         `json:"thinking,omitempty"`
	Signature *string         `json:"signature,omitempty"`
	Data      string          `json:"data,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	// Content of a tool_result: a string when the result is text only,
	// else an array of blocks.
	Content any          `json:"content,omitempty"`
	IsError *bool        `json:"is_error,omitempty"`
	Source  *ImageSource `json:"source,omitempty"`
}

// ImageSource is an image block's source.
type ImageSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type,omitempty"`
	Data      string `json:"data,omitempty"`
	URL       string `json:"url,omitempty"`
}

func ptr[T any](v T) *T { return &v }

// APIBlock converts a Gantry block to the API shape. A tool result's
// content is a string when it is text only (the way the reference agent
// sends most results), else an array of text and image blocks; is_error
// is always present.
func APIBlock(b llm.Block) Block {
	switch b.Type {
	case llm.TypeText:
		return Block{Type: "text", Text: ptr(b.Text)}
	case llm.TypeThinking:
		return Block{Type: "thinking", Thinking: ptr(b.Text), Signature: ptr(b.Signature)}
	case llm.TypeRedactedThinking:
		return Block{Type: "redacted_thinking", Data: b.Redacted}
	case llm.TypeToolUse:
		in := b.Input
		if len(bytes.TrimSpace(in)) == 0 {
			in = json.RawMessage(`{}`)
		}
		return Block{Type: "tool_use", ID: b.ID, Name: b.Name, Input: in}
	case llm.TypeToolResult:
		return Block{Type: "tool_result", ToolUseID: b.ToolUseID, Content: resultContent(b.Content), IsError: ptr(b.IsError)}
	case llm.TypeImage:
		return imageBlock(b.Data, b.MIMEType)
	}
	return Block{Type: "text", Text: ptr(fmt.Sprintf("[%s block]", b.Type))}
}

func imageBlock(data []byte, mime string) Block {
	return Block{Type: "image", Source: &ImageSource{Type: "base64", MediaType: mime, Data: base64.StdEncoding.EncodeToString(data)}}
}

// resultContent is a tool result's content: the text when every block is
// text, else the blocks (images kept, everything else as a text note).
func resultContent(cs []tool.Content) any {
	textOnly := true
	var sb strings.Builder
	for _, c := range cs {
		if c.Type != tool.TypeText {
			textOnly = false
			break
		}
		sb.WriteString(c.Text)
	}
	if textOnly {
		return sb.String()
	}
	out := make([]Block, 0, len(cs))
	for _, c := range cs {
		out = append(out, contentBlock(c))
	}
	return out
}

// contentBlock converts a tool's content block: text and images as they
// are, anything else as a text note the SDK can show.
func contentBlock(c tool.Content) Block {
	switch c.Type {
	case tool.TypeText:
		return Block{Type: "text", Text: ptr(c.Text)}
	case tool.TypeImage:
		return imageBlock(c.Data, c.MIMEType)
	}
	note := fmt.Sprintf("[%s", c.Type)
	if c.MIMEType != "" {
		note += " " + c.MIMEType
	}
	if c.URI != "" {
		note += " " + c.URI
	}
	if len(c.Data) > 0 {
		note += fmt.Sprintf(", %d bytes", len(c.Data))
	}
	return Block{Type: "text", Text: ptr(note + "]")}
}

// APIBlocks converts blocks with [APIBlock].
func APIBlocks(bs []llm.Block) []Block {
	out := make([]Block, 0, len(bs))
	for _, b := range bs {
		out = append(out, APIBlock(b))
	}
	return out
}

// ErrContent is returned (wrapped) for a user message whose content
// Gantry cannot take.
var ErrContent = errors.New("streamjson: unsupported message content")

// maxImageBytes bounds one decoded image of an input message.
const maxImageBytes = 20 << 20

// PromptBlocks converts the content of an input user message (a string,
// or an array of text and base64 image blocks) to Gantry blocks. Other
// block types (documents, URL images, tool results) are [ErrContent]:
// refused clearly rather than dropped.
func PromptBlocks(content json.RawMessage) ([]llm.Block, error) {
	content = bytes.TrimSpace(content)
	if len(content) == 0 || string(content) == "null" {
		return nil, fmt.Errorf("%w: the message has no content", ErrContent)
	}
	if content[0] == '"' {
		var s string
		if err := json.Unmarshal(content, &s); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrContent, err)
		}
		return []llm.Block{llm.Text(s)}, nil
	}
	var in []Block
	if err := json.Unmarshal(content, &in); err != nil {
		return nil, fmt.Errorf("%w: content is neither a string nor an array of blocks: %w", ErrContent, err)
	}
	out := make([]llm.Block, 0, len(in))
	for i, b := range in {
		switch b.Type {
		case "text":
			if b.Text != nil {
				out = append(out, llm.Text(*b.Text))
			}
		case "image":
			if b.Source == nil || b.Source.Type != "base64" {
				return nil, fmt.Errorf("%w: block %d: only base64 images are supported", ErrContent, i)
			}
			if base64.StdEncoding.DecodedLen(len(b.Source.Data)) > maxImageBytes {
				return nil, fmt.Errorf("%w: block %d: image over %d MiB", ErrContent, i, maxImageBytes>>20)
			}
			data, err := base64.StdEncoding.DecodeString(b.Source.Data)
			if err != nil {
				return nil, fmt.Errorf("%w: block %d: image data: %w", ErrContent, i, err)
			}
			out = append(out, llm.Image(data, b.Source.MediaType))
		default:
			return nil, fmt.Errorf("%w: block %d has type %q (text and base64 images are supported)", ErrContent, i, b.Type)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: the message has no text or image", ErrContent)
	}
	return out, nil
}
