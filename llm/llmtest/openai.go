package llmtest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/tool"
)

func (s *Server) handleOpenAI(w http.ResponseWriter, r *http.Request) {
	s.serve(w, r, api{
		name:   "openai",
		decode: decodeOpenAI,
		errorBody: func(typ, msg string) any {
			return map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": typ}}
		},
		stream: openaiStream,
		whole:  openaiWhole,
	})
}

type oaRequest struct {
	Model               string `json:"model"`
	MaxTokens           int    `json:"max_tokens"`
	MaxCompletionTokens int    `json:"max_completion_tokens"`
	Stream              bool   `json:"stream"`
	StreamOptions       *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	Messages        []oaMessage     `json:"messages"`
	Tools           []oaTool        `json:"tools"`
	ToolChoice      json.RawMessage `json:"tool_choice"`
	Temperature     *float64        `json:"temperature"`
	Stop            json.RawMessage `json:"stop"`
	ReasoningEffort string          `json:"reasoning_effort"`
	ResponseFormat  *struct {
		Type       string `json:"type"`
		JSONSchema *struct {
			Name   string          `json:"name"`
			Strict bool            `json:"strict"`
			Schema json.RawMessage `json:"schema"`
		} `json:"json_schema"`
	} `json:"response_format"`
}

type oaMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCalls  []oaToolCall    `json:"tool_calls"`
	ToolCallID string          `json:"tool_call_id"`
}

type oaToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type oaTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

type oaPart struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	ImageURL *struct {
		URL string `json:"url"`
	} `json:"image_url"`
}

func decodeOpenAI(body []byte) (Request, error) {
	var w oaRequest
	if err := json.Unmarshal(body, &w); err != nil {
		return Request{}, err
	}
	req := Request{
		Model: w.Model, MaxTokens: w.MaxCompletionTokens, Stream: w.Stream,
		ToolChoice: w.ToolChoice, Temperature: w.Temperature, ReasoningEffort: w.ReasoningEffort,
	}
	if req.MaxTokens == 0 {
		req.MaxTokens = w.MaxTokens
	}
	if rf := w.ResponseFormat; rf != nil && rf.Type == "json_schema" && rf.JSONSchema != nil && rf.JSONSchema.Strict {
		req.OutputSchema = rf.JSONSchema.Schema
	}
	if w.StreamOptions != nil {
		req.IncludeUsage = w.StreamOptions.IncludeUsage
	}
	if len(w.Stop) > 0 && string(w.Stop) != "null" {
		var one string
		if json.Unmarshal(w.Stop, &one) == nil {
			req.StopSequences = []string{one}
		} else if err := json.Unmarshal(w.Stop, &req.StopSequences); err != nil {
			return req, fmt.Errorf("stop: %w", err)
		}
	}
	for _, t := range w.Tools {
		req.Tools = append(req.Tools, Tool{Name: t.Function.Name, Description: t.Function.Description, InputSchema: t.Function.Parameters})
	}
	for i, m := range w.Messages {
		blocks, err := decodeOpenAIContent(m.Content)
		if err != nil {
			return req, fmt.Errorf("messages[%d]: %w", i, err)
		}
		msg := Message{Role: m.Role}
		switch m.Role {
		case "system", "developer":
			var b strings.Builder
			for _, c := range blocks {
				b.WriteString(c.Text)
			}
			req.System = append(req.System, llm.SystemBlock{Text: b.String()})
			msg.Content = blocks
		case "tool":
			content := make([]tool.Content, 0, len(blocks))
			for _, c := range blocks {
				content = append(content, tool.Text(c.Text))
			}
			msg.Content = []llm.Block{llm.ToolResult(m.ToolCallID, content, false)}
		default:
			msg.Content = blocks
			for _, tc := range m.ToolCalls {
				msg.Content = append(msg.Content, llm.ToolUse(tc.ID, tc.Function.Name, json.RawMessage(tc.Function.Arguments)))
			}
		}
		req.Messages = append(req.Messages, msg)
	}
	return req, nil
}

func decodeOpenAIContent(raw json.RawMessage) ([]llm.Block, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var str string
	if json.Unmarshal(raw, &str) == nil {
		if str == "" {
			return nil, nil
		}
		return []llm.Block{llm.Text(str)}, nil
	}
	var parts []oaPart
	if err := json.Unmarshal(raw, &parts); err != nil {
		return nil, err
	}
	var out []llm.Block
	for _, p := range parts {
		switch p.Type {
		case "text":
			out = append(out, llm.Text(p.Text))
		case "image_url":
			if p.ImageURL == nil {
				return nil, fmt.Errorf("image_url part without image_url")
			}
			out = append(out, decodeDataURL(p.ImageURL.URL))
		default:
			return nil, fmt.Errorf("unknown content part %q", p.Type)
		}
	}
	return out, nil
}

// decodeDataURL turns data:<mime>;base64,<data> into an image block; any
// other URL is kept in Text.
func decodeDataURL(u string) llm.Block {
	rest, ok := strings.CutPrefix(u, "data:")
	if !ok {
		return llm.Block{Type: llm.TypeImage, Text: u}
	}
	meta, data, ok := strings.Cut(rest, ",")
	mime, isB64 := strings.CutSuffix(meta, ";base64")
	if !ok || !isB64 {
		return llm.Block{Type: llm.TypeImage, Text: u}
	}
	b, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		return llm.Block{Type: llm.TypeImage, Text: u}
	}
	return llm.Image(b, mime)
}

func finishReason(r llm.StopReason) string {
	switch r {
	case llm.StopEndTurn, llm.StopSequence:
		return "stop"
	case llm.StopToolUse:
		return "tool_calls"
	case llm.StopMaxTokens:
		return "length"
	case llm.StopRefusal:
		return "content_filter"
	}
	return string(r)
}

func openaiUsage(u llm.Usage) map[string]any {
	prompt := u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens
	return map[string]any{
		"prompt_tokens":     prompt,
		"completion_tokens": u.OutputTokens,
		"total_tokens":      prompt + u.OutputTokens,
		"prompt_tokens_details": map[string]any{
			"cached_tokens":      u.CacheReadInputTokens,
			"cache_write_tokens": u.CacheCreationInputTokens,
		},
	}
}

func openaiIDs(r Reply, seq int, req Request) (id, model string) {
	id, model = r.ID, r.Model
	if id == "" {
		id = fmt.Sprintf("chatcmpl-%d", seq)
	}
	if model == "" {
		model = req.Model
	}
	return id, model
}

func openaiWhole(_ *Server, r Reply, seq int, req Request) any {
	id, model := openaiIDs(r, seq, req)
	var text, reasoning strings.Builder
	var calls []map[string]any
	for _, b := range r.Content {
		switch b.Type {
		case llm.TypeText:
			text.WriteString(b.Text)
		case llm.TypeThinking:
			reasoning.WriteString(b.Text)
		case llm.TypeToolUse:
			calls = append(calls, map[string]any{
				"id": b.ID, "type": "function",
				"function": map[string]any{"name": b.Name, "arguments": string(b.Input)},
			})
		}
	}
	msg := map[string]any{"role": "assistant", "content": text.String()}
	if reasoning.Len() > 0 {
		msg["reasoning_content"] = reasoning.String()
	}
	if len(calls) > 0 {
		msg["tool_calls"] = calls
	}
	return map[string]any{
		"id": id, "object": "chat.completion", "created": 1700000000, "model": model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finishReason(stopReason(r))}},
		"usage":   openaiUsage(r.Usage),
	}
}

func openaiStream(s *Server, r Reply, seq int, req Request, chunk int) []sse {
	id, model := openaiIDs(r, seq, req)
	ev := func(delta map[string]any, finish any) sse {
		return sse{data: mustJSON(map[string]any{
			"id": id, "object": "chat.completion.chunk", "created": 1700000000, "model": model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}},
		})}
	}
	out := []sse{ev(map[string]any{"role": "assistant", "content": ""}, nil)}
	call := 0
	for _, b := range r.Content {
		switch b.Type {
		case llm.TypeText:
			for _, p := range split(b.Text, chunk) {
				out = append(out, ev(map[string]any{"content": p}, nil))
			}
		case llm.TypeThinking:
			for _, p := range split(b.Text, chunk) {
				out = append(out, ev(map[string]any{"reasoning_content": p}, nil))
			}
		case llm.TypeToolUse:
			idx := call
			if s.indexZero {
				idx = 0
			}
			call++
			out = append(out, ev(map[string]any{"tool_calls": []any{map[string]any{
				"index": idx, "id": b.ID, "type": "function",
				"function": map[string]any{"name": b.Name, "arguments": ""},
			}}}, nil))
			for _, p := range split(string(b.Input), chunk) {
				out = append(out, ev(map[string]any{"tool_calls": []any{map[string]any{
					"index": idx, "function": map[string]any{"arguments": p},
				}}}, nil))
			}
		}
	}
	out = append(out, ev(map[string]any{}, finishReason(stopReason(r))))
	if req.IncludeUsage {
		out = append(out, sse{data: mustJSON(map[string]any{
			"id": id, "object": "chat.completion.chunk", "created": 1700000000, "model": model,
			"choices": []any{}, "usage": openaiUsage(r.Usage),
		})})
	}
	return append(out, sse{data: []byte("[DONE]")})
}
