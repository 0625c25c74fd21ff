package openai

import (
	"context"
	"encoding/json"
	"net/http"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/gantry-dev/gantry/llm"
)

// sdkEvents is the reference the stream decoder is tested against: the
// SDK's own stream (ssestream.Stream[ChatCompletionChunk], what
// ChatCompletionService.NewStreaming returns), its chunks read the way the
// adapter read them before it decoded replies itself. It yields what
// [Provider.events] yields for the same response.
func (p *Provider) sdkEvents(ctx context.Context, resp *http.Response, yield func(llm.Event, error) bool) {
	stream := ssestream.NewStream[sdk.ChatCompletionChunk](ssestream.NewDecoder(resp), nil)
	defer stream.Close()
	o := newOutput()
	for stream.Next() {
		sc := stream.Current()
		if !o.chunk(fromSDK(&sc), yield) {
			return
		}
	}
	o.end(ctx, p, stream.Err(), yield)
}

// fromSDK is what the adapter read of the SDK's chunk.
func fromSDK(sc *sdk.ChatCompletionChunk) *chunk {
	u := &sc.Usage
	c := &chunk{
		id: sc.ID, model: sc.Model,
		promptTokens: u.PromptTokens, completionTokens: u.CompletionTokens,
		cachedTokens: u.PromptTokensDetails.CachedTokens, cacheWriteTokens: u.PromptTokensDetails.CacheWriteTokens,
	}
	for i := range sc.Choices {
		x := &sc.Choices[i]
		d := &x.Delta
		ch := choice{
			index: x.Index, content: d.Content, refusal: d.Refusal, finish: x.FinishReason,
			reasoning: reasoning(d), toolsFrom: len(c.tools),
		}
		for _, tc := range d.ToolCalls {
			c.tools = append(c.tools, toolDelta{index: tc.Index, id: tc.ID, name: tc.Function.Name, args: tc.Function.Arguments})
		}
		ch.toolsTo = len(c.tools)
		c.choices = append(c.choices, ch)
	}
	return c
}

// reasoning returns the reasoning text of a delta: reasoning_content
// (DeepSeek, vLLM, llama.cpp) or reasoning (Ollama, OpenRouter).
func reasoning(d *sdk.ChatCompletionChunkChoiceDelta) string {
	if len(d.JSON.ExtraFields) == 0 {
		return ""
	}
	for _, k := range [...]string{"reasoning_content", "reasoning"} {
		f, ok := d.JSON.ExtraFields[k]
		if !ok {
			continue
		}
		raw := f.Raw()
		if raw == "" || raw == "null" {
			continue
		}
		var s string
		if json.Unmarshal([]byte(raw), &s) == nil && s != "" {
			return s
		}
	}
	return ""
}
