// Package openai is the [llm.Provider] for the OpenAI Chat Completions API
// and the many servers that speak it (Ollama, vLLM, llama.cpp, LM Studio,
// OpenRouter …), over the official SDK (github.com/openai/openai-go/v3).
//
// It streams replies with usage (stream_options.include_usage; cached
// prompt tokens from prompt_tokens_details), reassembles tool calls from
// their deltas robustly (servers that give every parallel call index 0 are
// handled: a new id at the same index is a new call; each call is completed
// as soon as the next one starts, so that an executor can run it while the
// model streams the rest — see assemble.go), reads reasoning text
// from reasoning_content or reasoning as thinking, and maps the
// conversation:
//
//   - the system prompt ([llm.Request.System] and system messages) becomes
//     one system message, sent first;
//   - tool results become "tool" messages, in order, right after the
//     assistant turn; an error result's text is prefixed with "Error: "
//     (the API has no is_error); images in tool results, which tool
//     messages cannot carry, follow in one user message; audio, which
//     they cannot carry either, is sent as a note naming it ("[audio clip,
//     N bytes, audio/wav]");
//   - images become image_url parts with data URLs;
//   - thinking blocks are not sent back (the API has no field for them).
//
// Configuration: [Options]; APIKey and BaseURL win over OPENAI_API_KEY and
// OPENAI_BASE_URL (lookup injectable with Options.LookupEnv); no other
// environment variable is read. The API key may be empty for local servers
// (http://localhost:11434/v1): no Authorization header is sent then. The
// SDK's retries are off; retries follow one [llm.RetryPolicy].
package openai

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"strings"
	"time"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/shared"

	"github.com/gantry-dev/gantry/internal/offstack"
	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/llm/internal/endpoint"
	"github.com/gantry-dev/gantry/tool"
)

const (
	// DefaultBaseURL is the API's address when neither Options.BaseURL nor
	// OPENAI_BASE_URL says otherwise.
	DefaultBaseURL = "https://api.openai.com/v1/"
	// DefaultMaxTokens is the token limit of a request that sets none.
	DefaultMaxTokens = 8192
)

// Provider streams replies from a Chat Completions API. It is safe for
// concurrent use.
type Provider struct {
	client      sdk.Client
	tools       llm.ToolEncodings // tool definitions encoded once, shared by every request
	model       string
	maxTokens   int
	legacyLimit bool
	retry       llm.RetryPolicy
	now         func() time.Time
}

var _ llm.Provider = (*Provider)(nil)

// Options configure a [Provider]. The zero value talks to the OpenAI API
// with the key in OPENAI_API_KEY, with a limit of [DefaultMaxTokens],
// through a shared HTTP client, and retries as the zero [llm.RetryPolicy]
// does; it has no default model (set Model or name one per request).
type Options struct {
	// APIKey is sent as a bearer token; "" means OPENAI_API_KEY (unset or
	// empty: no Authorization header, as local servers want).
	APIKey string
	// BaseURL is the API's address (for example http://localhost:11434/v1);
	// "" means OPENAI_BASE_URL when set and not empty, else
	// [DefaultBaseURL].
	BaseURL string
	// LookupEnv reads OPENAI_API_KEY and OPENAI_BASE_URL (nil:
	// [os.LookupEnv]). No other variable is read, by Gantry or the SDK.
	LookupEnv func(string) (string, bool)
	// HTTPClient sends the requests (nil: a clone of
	// http.DefaultTransport with 64 connections per host, shared by the
	// provider's sessions, no overall timeout: streams are long).
	HTTPClient *http.Client
	// Model is the model of requests that name none. There is no default:
	// a request without a model fails unless this is set.
	Model string
	// MaxTokens is the token limit of requests that set none (0:
	// [DefaultMaxTokens]).
	MaxTokens int
	// LegacyMaxTokens sends the limit as max_tokens instead of
	// max_completion_tokens, for servers that know only the older field.
	LegacyMaxTokens bool
	// Retry is the retry policy; Retry.MaxAttempts 1 disables retries.
	Retry llm.RetryPolicy
	// RequestOptions are extra SDK options (headers, organization,
	// middleware) for every request.
	RequestOptions []option.RequestOption
}

// New returns a provider configured by o.
func New(o Options) *Provider {
	ep := endpoint.Resolve(endpoint.Options{APIKey: o.APIKey, BaseURL: o.BaseURL, LookupEnv: o.LookupEnv, HTTPClient: o.HTTPClient},
		endpoint.Vars{KeyVar: "OPENAI_API_KEY", URLVar: "OPENAI_BASE_URL", DefaultURL: DefaultBaseURL})
	if o.MaxTokens <= 0 {
		o.MaxTokens = DefaultMaxTokens
	}
	ropts := []option.RequestOption{
		option.WithHTTPClient(ep.HTTPClient),
		option.WithBaseURL(ep.BaseURL),
		option.WithMaxRetries(0),
		option.WithAPIKey(ep.APIKey),
	}
	ropts = append(ropts, o.RequestOptions...)
	// The client is built without sdk.NewClient so that the SDK reads no
	// environment variable of its own.
	return &Provider{
		client: sdk.Client{Options: ropts},
		model:  o.Model, maxTokens: o.MaxTokens, legacyLimit: o.LegacyMaxTokens,
		retry: o.Retry, now: time.Now,
	}
}

// Stream sends req and streams the reply; see [llm.Provider].
//
// The request body is assembled from pieces the SDK encodes (see
// [Provider.Body]); every attempt sends the same bytes.
func (p *Provider) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	// The SDK's encoder grows a goroutine's stack past its initial size for
	// a conversation with tool results (deeper than Anthropic's): off the
	// caller's stack (see package offstack), which waits for the reply with
	// whatever stack this leaves it.
	body, err := offstack.Call(ctx, func() (*llm.Body, error) { return p.body(req) })
	if err != nil {
		return func(yield func(llm.Event, error) bool) { yield(llm.Event{}, err) }
	}
	return llm.Retry(ctx, p.retry, func(ctx context.Context) iter.Seq2[llm.Event, error] {
		return p.attempt(ctx, body)
	})
}

// streamState turns chunks into events.
type streamState struct {
	blocks    int
	text      int // block index of the text, -1 before any
	thinking  int
	tools     *assembler
	finish    string
	finished  bool
	usage     llm.Usage
	haveUsage bool
}

func newStreamState() *streamState {
	s := &streamState{text: -1, thinking: -1}
	s.tools = newAssembler(func() int { s.blocks++; return s.blocks - 1 })
	return s
}

// chunk appends the events of one chunk to evs.
func (s *streamState) chunk(evs []llm.Event, ch *chunk) []llm.Event {
	if ch.promptTokens > 0 || ch.completionTokens > 0 {
		s.haveUsage = true
		cached, written := int(ch.cachedTokens), int(ch.cacheWriteTokens)
		s.usage = llm.Usage{
			InputTokens:              max(int(ch.promptTokens)-cached-written, 0),
			OutputTokens:             int(ch.completionTokens),
			CacheReadInputTokens:     cached,
			CacheCreationInputTokens: written,
		}
	}
	for i := range ch.choices {
		c := &ch.choices[i]
		if c.index != 0 {
			continue // n > 1 is not used
		}
		if c.reasoning != "" {
			if s.thinking < 0 {
				s.thinking = s.blocks
				s.blocks++
			}
			evs = append(evs, llm.Event{Type: llm.EventThinkingDelta, Index: s.thinking, Text: c.reasoning})
		}
		text := c.content
		if text == "" {
			text = c.refusal
		}
		if text != "" {
			if s.text < 0 {
				s.text = s.blocks
				s.blocks++
			}
			evs = append(evs, llm.Event{Type: llm.EventTextDelta, Index: s.text, Text: text})
		}
		for _, tc := range ch.tools[c.toolsFrom:c.toolsTo] {
			// The id and name outlive the event's data: copies.
			evs = s.tools.add(evs, tc.index, strings.Clone(tc.id), strings.Clone(tc.name), tc.args)
		}
		if c.finish != "" {
			s.finish = strings.Clone(c.finish)
			s.finished = true
			evs = s.tools.finish(evs)
		}
	}
	return evs
}

func (s *streamState) end() llm.Event {
	var stop llm.StopReason
	switch s.finish {
	case "stop":
		stop = llm.StopEndTurn
	case "tool_calls", "function_call":
		stop = llm.StopToolUse
	case "length":
		stop = llm.StopMaxTokens
	case "content_filter":
		stop = llm.StopRefusal
	default:
		stop = llm.StopReason(s.finish)
	}
	if s.tools.count() > 0 && stop == llm.StopEndTurn {
		stop = llm.StopToolUse // some servers say "stop" after tool calls
	}
	return llm.Event{Type: llm.EventMessageEnd, StopReason: stop, Usage: s.usage}
}

// classify turns an SDK error (or a stream that ended early, err == nil)
// into an llm error.
func (p *Provider) classify(ctx context.Context, err error, yielded bool) error {
	if ctx.Err() != nil {
		return fmt.Errorf("openai: %w", context.Cause(ctx))
	}
	var out *llm.APIError
	var ae *sdk.Error
	var se *ssestream.StreamError
	switch {
	case errors.As(err, &ae):
		out = &llm.APIError{Provider: "openai", StatusCode: ae.StatusCode, Type: ae.Type, Code: ae.Code, Message: ae.Message, Err: err}
		if out.Message == "" || out.Type == "" {
			typ, code, msg := llm.ParseErrorBody([]byte(ae.RawJSON()))
			out.Type = cmpOr(out.Type, typ)
			out.Code = cmpOr(out.Code, code)
			out.Message = cmpOr(out.Message, msg)
		}
		if ae.Response != nil {
			out.RetryAfter = llm.ParseRetryAfter(ae.Response.Header, p.now())
			out.RequestID = ae.Response.Header.Get("x-request-id")
			if out.RequestID == "" {
				out.RequestID = ae.Response.Header.Get("request-id")
			}
		}
	case errors.As(err, &se):
		out = &llm.APIError{Provider: "openai", StatusCode: http.StatusOK, Err: err}
		out.Type, out.Code, out.Message = llm.ParseErrorBody(se.Event.Data)
	}
	if out != nil {
		if yielded {
			return fmt.Errorf("%w: %w", llm.ErrInterrupted, out)
		}
		return out
	}
	switch {
	case err == nil && yielded:
		return fmt.Errorf("openai: %w: the stream ended without a finish reason", llm.ErrInterrupted)
	case err == nil:
		return fmt.Errorf("openai: %w: the stream ended without events", llm.ErrConnection)
	case yielded:
		return fmt.Errorf("openai: %w: %w", llm.ErrInterrupted, err)
	case llm.IsConnError(err):
		return fmt.Errorf("openai: %w: %w", llm.ErrConnection, err)
	}
	return fmt.Errorf("openai: %w", err)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// Params converts a request to the SDK's parameters (exported for tests and
// for callers that want to inspect or extend the request). [Provider.Stream]
// sends the same request, encoded by [Provider.Body].
func (p *Provider) Params(req *llm.Request) (sdk.ChatCompletionNewParams, error) {
	params, err := p.head(req)
	if err != nil {
		return params, err
	}
	for _, spec := range req.Tools {
		params.Tools = append(params.Tools, ToolParam(spec))
	}
	params.Messages, err = messages(req)
	return params, err
}

// Body returns the JSON request body [Provider.Stream] sends for req: the
// parameters of [Provider.Params] with "stream": true. The SDK encodes
// every piece; the tool definitions are encoded once per distinct content
// and provider (see [llm.ToolEncodings]) and the tools array once per
// distinct list ([llm.ToolEncodings.Array]), which is spliced in, so a
// turn does not re-encode the tool list, and a request in flight
// references the shared array rather than holding a copy.
func (p *Provider) Body(req *llm.Request) ([]byte, error) {
	b, err := p.body(req)
	if err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func (p *Provider) body(req *llm.Request) (*llm.Body, error) {
	head, err := p.head(req)
	if err != nil {
		return nil, err
	}
	hb, err := head.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("openai: encode request: %w", err)
	}
	encMsgs, err := encodeMessages(req)
	if err != nil {
		return nil, err
	}
	encTools := make([][]byte, len(req.Tools))
	for i, spec := range req.Tools {
		if encTools[i], err = p.tools.Get(spec, 0, encodeTool); err != nil {
			return nil, fmt.Errorf("openai: encode tool %q: %w", spec.Name, err)
		}
	}
	b, err := llm.StreamBody(hb, encMsgs, p.tools.Array(encTools))
	if err != nil {
		return nil, fmt.Errorf("openai: %w", err)
	}
	return b, nil
}

func encodeTool(spec *tool.Spec) ([]byte, error) { return ToolParam(spec).MarshalJSON() }

// head converts everything of a request but its tools and messages.
func (p *Provider) head(req *llm.Request) (sdk.ChatCompletionNewParams, error) {
	model := req.Model
	if model == "" {
		model = p.model
	}
	if model == "" {
		return sdk.ChatCompletionNewParams{}, errors.New("openai: no model (set Request.Model or WithModel)")
	}
	if req.WebSearch != nil {
		return sdk.ChatCompletionNewParams{}, errors.New("openai: the Chat Completions API has no server-side web search tool (Request.WebSearch)")
	}
	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = p.maxTokens
	}
	params := sdk.ChatCompletionNewParams{
		Model:         shared.ChatModel(model),
		StreamOptions: sdk.ChatCompletionStreamOptionsParam{IncludeUsage: sdk.Bool(true)},
	}
	if p.legacyLimit {
		params.MaxTokens = sdk.Int(int64(maxTokens))
	} else {
		params.MaxCompletionTokens = sdk.Int(int64(maxTokens))
	}
	if req.Temperature != nil {
		params.Temperature = sdk.Float(*req.Temperature)
	}
	if len(req.StopSequences) > 0 {
		params.Stop = sdk.ChatCompletionNewParamsStopUnion{OfStringArray: req.StopSequences}
	}
	if b := req.ThinkingBudget; b > 0 {
		switch {
		case b < 4096:
			params.ReasoningEffort = shared.ReasoningEffortLow
		case b < 16384:
			params.ReasoningEffort = shared.ReasoningEffortMedium
		default:
			params.ReasoningEffort = shared.ReasoningEffortHigh
		}
	}
	if len(req.OutputSchema) > 0 {
		var schema map[string]any
		if err := json.Unmarshal(req.OutputSchema, &schema); err != nil {
			return params, fmt.Errorf("openai: output schema: %w", err)
		}
		params.ResponseFormat = sdk.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
			JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: "StructuredOutput", Strict: sdk.Bool(true), Schema: schema},
		}}
	}
	switch req.ToolChoice.Mode {
	case llm.ToolChoiceAuto:
	case llm.ToolChoiceAny:
		params.ToolChoice.OfAuto = sdk.String("required")
	case llm.ToolChoiceNone:
		params.ToolChoice.OfAuto = sdk.String("none")
	case llm.ToolChoiceTool:
		if req.ToolChoice.Name == "" {
			return params, errors.New("openai: tool choice \"tool\" without a name")
		}
		params.ToolChoice = sdk.ToolChoiceOptionFunctionToolChoice(sdk.ChatCompletionNamedToolChoiceFunctionParam{Name: req.ToolChoice.Name})
	default:
		return params, fmt.Errorf("openai: unknown tool choice %q", req.ToolChoice.Mode)
	}
	if req.ToolChoice.DisableParallel && len(req.Tools) > 0 {
		params.ParallelToolCalls = sdk.Bool(false)
	}
	return params, nil
}

// messages converts the conversation: one system message first (the
// request's system blocks and the conversation's system messages), then
// the user and assistant turns.
func messages(req *llm.Request) ([]sdk.ChatCompletionMessageParamUnion, error) {
	out := make([]sdk.ChatCompletionMessageParamUnion, 0, len(req.Messages)+1)
	if sys := systemText(req); sys != "" {
		out = append(out, sdk.SystemMessage(sys))
	}
	for i, m := range req.Messages {
		var err error
		if out, err = appendMessage(out, m); err != nil {
			return out, fmt.Errorf("openai: messages[%d]: %w", i, err)
		}
	}
	return out, nil
}

// systemText is the text of the one system message: the request's system
// blocks and the conversation's system messages, in order.
func systemText(req *llm.Request) string {
	var system []string
	for _, s := range req.System {
		if s.Text != "" {
			system = append(system, s.Text)
		}
	}
	for _, m := range req.Messages {
		if m.Role == llm.RoleSystem {
			if t := m.Text(); t != "" {
				system = append(system, t)
			}
		}
	}
	return strings.Join(system, "\n\n")
}

// appendMessage appends what m is sent as: nothing for a system message
// (see [systemText]), one or more messages for the others.
func appendMessage(out []sdk.ChatCompletionMessageParamUnion, m llm.Message) ([]sdk.ChatCompletionMessageParamUnion, error) {
	switch m.Role {
	case llm.RoleSystem:
		return out, nil
	case llm.RoleUser:
		return appendUser(out, m)
	case llm.RoleAssistant:
		return appendAssistant(out, m), nil
	}
	return out, fmt.Errorf("unknown role %q", m.Role)
}

// messagesFormat names this adapter's encoding of messages in an
// [llm.MessageEncodings].
const messagesFormat = "openai.chat"

// encodeMessages encodes the conversation the way [messages] converts it:
// the system message (encoded on every request: it gathers the system
// messages of the whole conversation), then each message on its own, so
// that req.Encodings can keep each one's encoding for the next request.
func encodeMessages(req *llm.Request) ([]llm.Piece, error) {
	out := make([]llm.Piece, 0, len(req.Messages)+1)
	if sys := systemText(req); sys != "" {
		enc, err := sdk.SystemMessage(sys).MarshalJSON()
		if err != nil {
			return nil, fmt.Errorf("openai: encode the system message: %w", err)
		}
		out = append(out, llm.BytesPiece(enc))
	}
	return req.Encodings.Encode(out, messagesFormat, req.Messages, nil, func(i int, _ uint8) ([][]byte, error) {
		ms, err := appendMessage(nil, req.Messages[i])
		if err != nil {
			return nil, fmt.Errorf("openai: messages[%d]: %w", i, err)
		}
		pieces := make([][]byte, len(ms))
		for j := range ms {
			if pieces[j], err = ms[j].MarshalJSON(); err != nil {
				return nil, fmt.Errorf("openai: encode messages[%d]: %w", i, err)
			}
		}
		return pieces, nil
	})
}

func dataURL(data []byte, mime string) string {
	return "data:" + mime + ";base64," + base64.StdEncoding.EncodeToString(data)
}

func imagePart(data []byte, mime string) sdk.ChatCompletionContentPartUnionParam {
	return sdk.ImageContentPart(sdk.ChatCompletionContentPartImageImageURLParam{URL: dataURL(data, mime)})
}

// appendUser sends a user turn: its tool results first, as tool messages,
// then the images those results held, then the rest of the turn.
func appendUser(msgs []sdk.ChatCompletionMessageParamUnion, m llm.Message) ([]sdk.ChatCompletionMessageParamUnion, error) {
	var parts, images []sdk.ChatCompletionContentPartUnionParam
	onlyText := true
	for _, b := range m.Content {
		switch b.Type {
		case llm.TypeText:
			if b.Text != "" {
				parts = append(parts, sdk.TextContentPart(b.Text))
			}
		case llm.TypeImage:
			parts = append(parts, imagePart(b.Data, b.MIMEType))
			onlyText = false
		case llm.TypeToolResult:
			text, imgs := toolResultContent(b)
			msgs = append(msgs, sdk.ToolMessage(text, b.ToolUseID))
			if len(imgs) > 0 {
				images = append(images, sdk.TextContentPart(fmt.Sprintf("Images from the result of tool call %s:", b.ToolUseID)))
				images = append(images, imgs...)
			}
		case llm.TypeThinking, llm.TypeRedactedThinking:
		default:
			return msgs, fmt.Errorf("block type %q in a user message", b.Type)
		}
	}
	if len(images) > 0 {
		msgs = append(msgs, sdk.UserMessage(images))
	}
	switch {
	case len(parts) == 0:
	case onlyText:
		var sb strings.Builder
		for i, p := range parts {
			if i > 0 {
				sb.WriteString("\n\n")
			}
			sb.WriteString(p.OfText.Text)
		}
		msgs = append(msgs, sdk.UserMessage(sb.String()))
	default:
		msgs = append(msgs, sdk.UserMessage(parts))
	}
	return msgs, nil
}

// toolResultContent returns the text of a tool result (prefixed with
// "Error: " for an error, unless its text already says so) and its images as
// image parts.
func toolResultContent(b llm.Block) (string, []sdk.ChatCompletionContentPartUnionParam) {
	var sb strings.Builder
	var imgs []sdk.ChatCompletionContentPartUnionParam
	if b.IsError && !strings.HasPrefix(strings.TrimSpace(tool.JoinText(b.Content)), "Error") {
		sb.WriteString("Error: ")
	}
	n := 0
	add := func(s string) {
		if n > 0 {
			sb.WriteByte('\n')
		}
		sb.WriteString(s)
		n++
	}
	for _, c := range b.Content {
		if c.IsImage() {
			imgs = append(imgs, imagePart(c.Data, c.MIMEType))
			add(fmt.Sprintf("[image %d attached below]", len(imgs)))
			continue
		}
		// Audio (input_audio parts are not allowed in tool messages),
		// binary resources and links are sent as a note.
		add(c.AsText())
	}
	return sb.String(), imgs
}

func appendAssistant(msgs []sdk.ChatCompletionMessageParamUnion, m llm.Message) []sdk.ChatCompletionMessageParamUnion {
	var a sdk.ChatCompletionAssistantMessageParam
	if t := m.Text(); t != "" {
		a.Content.OfString = sdk.String(t)
	}
	for _, b := range m.Content {
		if b.Type != llm.TypeToolUse {
			continue
		}
		in := string(b.Input)
		if in == "" {
			in = "{}"
		}
		a.ToolCalls = append(a.ToolCalls, sdk.ChatCompletionMessageToolCallUnionParam{
			OfFunction: &sdk.ChatCompletionMessageFunctionToolCallParam{
				ID:       b.ID,
				Function: sdk.ChatCompletionMessageFunctionToolCallFunctionParam{Name: b.Name, Arguments: in},
			},
		})
	}
	if a.Content.OfString.Valid() || len(a.ToolCalls) > 0 {
		msgs = append(msgs, sdk.ChatCompletionMessageParamUnion{OfAssistant: &a})
	}
	return msgs
}
