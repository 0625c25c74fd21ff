package llmtest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/tool"
)

func (s *Server) handleAnthropic(w http.ResponseWriter, r *http.Request) {
	s.serve(w, r, api{
		name:   "anthropic",
		decode: decodeAnthropic,
		errorBody: func(typ, msg string) any {
			return map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}}
		},
		stream: anthropicStream,
		whole:  anthropicWhole,
	})
}

// Wire shapes of the Anthropic request, as far as the recorder needs them.
type antRequest struct {
	Model         string            `json:"model"`
	MaxTokens     int               `json:"max_tokens"`
	Stream        bool              `json:"stream"`
	System        json.RawMessage   `json:"system"`
	Messages      []antMessage      `json:"messages"`
	Tools         []json.RawMessage `json:"tools"`
	ToolChoice    json.RawMessage   `json:"tool_choice"`
	Thinking      *antThinking      `json:"thinking"`
	Temperature   *float64          `json:"temperature"`
	StopSequences []string          `json:"stop_sequences"`
	OutputConfig  *struct {
		Format *struct {
			Type   string          `json:"type"`
			Schema json.RawMessage `json:"schema"`
		} `json:"format"`
	} `json:"output_config"`
}

type antThinking struct {
	Type         string `json:"type"`
	BudgetTokens int    `json:"budget_tokens"`
}

type antMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type antTool struct {
	Type         string          `json:"type"`
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"input_schema"`
	CacheControl json.RawMessage `json:"cache_control"`
}

type antBlock struct {
	Type         string          `json:"type"`
	Text         string          `json:"text"`
	Source       *antSource      `json:"source"`
	ID           string          `json:"id"`
	Name         string          `json:"name"`
	Input        json.RawMessage `json:"input"`
	ToolUseID    string          `json:"tool_use_id"`
	Content      json.RawMessage `json:"content"`
	IsError      bool            `json:"is_error"`
	Thinking     string          `json:"thinking"`
	Signature    string          `json:"signature"`
	Data         string          `json:"data"`
	CacheControl json.RawMessage `json:"cache_control"`
}

type antSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type"`
	Data      string `json:"data"`
	URL       string `json:"url"`
}

func decodeAnthropic(body []byte) (Request, error) {
	var w antRequest
	if err := json.Unmarshal(body, &w); err != nil {
		return Request{}, err
	}
	req := Request{
		Model: w.Model, MaxTokens: w.MaxTokens, Stream: w.Stream,
		ToolChoice: w.ToolChoice, Temperature: w.Temperature, StopSequences: w.StopSequences,
	}
	if w.Thinking != nil && w.Thinking.Type == "enabled" {
		req.ThinkingBudget = w.Thinking.BudgetTokens
	}
	if w.OutputConfig != nil && w.OutputConfig.Format != nil && w.OutputConfig.Format.Type == "json_schema" {
		req.OutputSchema = w.OutputConfig.Format.Schema
	}
	// system: a string or text blocks.
	if len(w.System) > 0 && string(w.System) != "null" {
		var str string
		if json.Unmarshal(w.System, &str) == nil {
			req.System = []llm.SystemBlock{{Text: str}}
		} else {
			var blocks []antBlock
			if err := json.Unmarshal(w.System, &blocks); err != nil {
				return req, fmt.Errorf("system: %w", err)
			}
			for i, b := range blocks {
				cached := hasCache(b.CacheControl)
				if cached {
					req.CacheBreakpoints = append(req.CacheBreakpoints, fmt.Sprintf("system[%d]", i))
				}
				req.System = append(req.System, llm.SystemBlock{Text: b.Text, Cache: cached})
			}
		}
	}
	for i, raw := range w.Tools {
		var t antTool
		if err := json.Unmarshal(raw, &t); err != nil {
			return req, fmt.Errorf("tools[%d]: %w", i, err)
		}
		cached := hasCache(t.CacheControl)
		if cached {
			req.CacheBreakpoints = append(req.CacheBreakpoints, fmt.Sprintf("tools[%d]", i))
		}
		req.Tools = append(req.Tools, Tool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema, Cache: cached, Type: t.Type, Raw: raw})
	}
	for i, m := range w.Messages {
		msg := Message{Role: m.Role}
		var str string
		if json.Unmarshal(m.Content, &str) == nil {
			msg.Content = []llm.Block{llm.Text(str)}
			req.Messages = append(req.Messages, msg)
			continue
		}
		var blocks []antBlock
		if err := json.Unmarshal(m.Content, &blocks); err != nil {
			return req, fmt.Errorf("messages[%d]: %w", i, err)
		}
		for j, b := range blocks {
			if hasCache(b.CacheControl) {
				req.CacheBreakpoints = append(req.CacheBreakpoints, fmt.Sprintf("messages[%d].content[%d]", i, j))
			}
			blk, err := b.toBlock()
			if err != nil {
				return req, fmt.Errorf("messages[%d].content[%d]: %w", i, j, err)
			}
			msg.Content = append(msg.Content, blk)
		}
		req.Messages = append(req.Messages, msg)
	}
	return req, nil
}

func hasCache(raw json.RawMessage) bool { return len(raw) > 0 && string(raw) != "null" }

func (b antBlock) toBlock() (llm.Block, error) {
	switch b.Type {
	case "text":
		return llm.Text(b.Text), nil
	case "image":
		return b.image()
	case "tool_use":
		return llm.ToolUse(b.ID, b.Name, b.Input), nil
	case "thinking":
		return llm.Thinking(b.Thinking, b.Signature), nil
	case "redacted_thinking":
		return llm.RedactedThinking(b.Data), nil
	case "tool_result":
		var content []tool.Content
		if len(b.Content) > 0 && string(b.Content) != "null" {
			var str string
			if json.Unmarshal(b.Content, &str) == nil {
				content = []tool.Content{tool.Text(str)}
			} else {
				var parts []antBlock
				if err := json.Unmarshal(b.Content, &parts); err != nil {
					return llm.Block{}, err
				}
				for _, p := range parts {
					switch p.Type {
					case "text":
						content = append(content, tool.Text(p.Text))
					case "image":
						img, err := p.image()
						if err != nil {
							return llm.Block{}, err
						}
						content = append(content, tool.Image(img.Data, img.MIMEType))
					default:
						return llm.Block{}, fmt.Errorf("tool_result content of type %q", p.Type)
					}
				}
			}
		}
		return llm.ToolResult(b.ToolUseID, content, b.IsError), nil
	}
	return llm.Block{}, fmt.Errorf("unknown block type %q", b.Type)
}

func (b antBlock) image() (llm.Block, error) {
	if b.Source == nil {
		return llm.Block{}, fmt.Errorf("image without source")
	}
	if b.Source.Type != "base64" {
		return llm.Block{Type: llm.TypeImage, Text: b.Source.URL}, nil
	}
	data, err := base64.StdEncoding.DecodeString(b.Source.Data)
	if err != nil {
		return llm.Block{}, fmt.Errorf("image data: %w", err)
	}
	return llm.Image(data, b.Source.MediaType), nil
}

func anthropicUsage(u llm.Usage) map[string]any {
	return map[string]any{
		"input_tokens":                u.InputTokens,
		"output_tokens":               u.OutputTokens,
		"cache_creation_input_tokens": u.CacheCreationInputTokens,
		"cache_read_input_tokens":     u.CacheReadInputTokens,
	}
}

func anthropicIDs(r Reply, seq int, req Request) (id, model string) {
	id, model = r.ID, r.Model
	if id == "" {
		id = fmt.Sprintf("msg_%d", seq)
	}
	if model == "" {
		model = req.Model
	}
	return id, model
}

func anthropicWhole(_ *Server, r Reply, seq int, req Request) any {
	id, model := anthropicIDs(r, seq, req)
	content := make([]map[string]any, 0, len(r.AnthropicBlocks)+len(r.Content))
	content = append(content, r.AnthropicBlocks...)
	for _, b := range r.Content {
		content = append(content, anthropicBlockStart(b, true))
	}
	return map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": model,
		"content": content, "stop_reason": stopReason(r), "stop_sequence": nil,
		"usage": anthropicUsage(r.Usage),
	}
}

// anthropicBlockStart returns the content_block of a content_block_start
// event (empty text and input), or the whole block.
func anthropicBlockStart(b llm.Block, whole bool) map[string]any {
	switch b.Type {
	case llm.TypeText:
		t := ""
		if whole {
			t = b.Text
		}
		return map[string]any{"type": "text", "text": t}
	case llm.TypeThinking:
		t, sig := "", ""
		if whole {
			t, sig = b.Text, b.Signature
		}
		return map[string]any{"type": "thinking", "thinking": t, "signature": sig}
	case llm.TypeRedactedThinking:
		return map[string]any{"type": "redacted_thinking", "data": b.Redacted}
	case llm.TypeToolUse:
		in := json.RawMessage(`{}`)
		if whole && len(b.Input) > 0 {
			in = b.Input
		}
		return map[string]any{"type": "tool_use", "id": b.ID, "name": b.Name, "input": in}
	}
	panic(fmt.Sprintf("llmtest: cannot reply with a %q block", b.Type))
}

func anthropicStream(_ *Server, r Reply, seq int, req Request, chunk int) []sse {
	id, model := anthropicIDs(r, seq, req)
	startUsage := anthropicUsage(llm.Usage{
		InputTokens: r.Usage.InputTokens, OutputTokens: min(r.Usage.OutputTokens, 1),
		CacheCreationInputTokens: r.Usage.CacheCreationInputTokens, CacheReadInputTokens: r.Usage.CacheReadInputTokens,
	})
	ev := func(name string, v any) sse { return sse{event: name, data: mustJSON(v)} }
	out := []sse{ev("message_start", map[string]any{
		"type": "message_start",
		"message": map[string]any{
			"id": id, "type": "message", "role": "assistant", "model": model, "content": []any{},
			"stop_reason": nil, "stop_sequence": nil, "usage": startUsage,
		},
	}), ev("ping", map[string]any{"type": "ping"})}
	for i, b := range r.AnthropicBlocks {
		out = append(out,
			ev("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": b}),
			ev("content_block_stop", map[string]any{"type": "content_block_stop", "index": i}))
	}
	for j, b := range r.Content {
		i := j + len(r.AnthropicBlocks)
		out = append(out, ev("content_block_start", map[string]any{
			"type": "content_block_start", "index": i, "content_block": anthropicBlockStart(b, false),
		}))
		delta := func(d map[string]any) {
			out = append(out, ev("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": d}))
		}
		switch b.Type {
		case llm.TypeText:
			for _, p := range split(b.Text, chunk) {
				delta(map[string]any{"type": "text_delta", "text": p})
			}
		case llm.TypeThinking:
			for _, p := range split(b.Text, chunk) {
				delta(map[string]any{"type": "thinking_delta", "thinking": p})
			}
			if b.Signature != "" {
				delta(map[string]any{"type": "signature_delta", "signature": b.Signature})
			}
		case llm.TypeToolUse:
			for _, p := range split(string(b.Input), chunk) {
				delta(map[string]any{"type": "input_json_delta", "partial_json": p})
			}
		}
		out = append(out, ev("content_block_stop", map[string]any{"type": "content_block_stop", "index": i}))
	}
	out = append(out,
		ev("message_delta", map[string]any{
			"type":  "message_delta",
			"delta": map[string]any{"stop_reason": stopReason(r), "stop_sequence": nil},
			"usage": anthropicUsage(r.Usage),
		}),
		ev("message_stop", map[string]any{"type": "message_stop"}),
	)
	return out
}
