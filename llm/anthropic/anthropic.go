// Package anthropic is the [llm.Provider] for the Anthropic Messages API,
// over the official SDK (github.com/anthropics/anthropic-sdk-go).
//
// It sends requests through the SDK's client (as Messages.NewStreaming
// does) and decodes the streamed reply itself, without the SDK's reflective
// event union; sets prompt-cache breakpoints from [llm.CacheHints] (the
// last tool, the last system block, the last block of the last user
// message), turns on extended thinking from
// [llm.Request.ThinkingBudget], and sends tool results with their text and
// image blocks and is_error.
//
// Configuration: [Options]; APIKey and BaseURL win over the environment
// variables ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL, and the environment
// lookup is injectable (Options.LookupEnv). The SDK's own environment
// autoload and its retries are off: retries follow one [llm.RetryPolicy]
// (Options.Retry).
package anthropic

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/gantry-dev/gantry/internal/offstack"
	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/llm/internal/endpoint"
	"github.com/gantry-dev/gantry/tool"
)

const (
	// DefaultModel is the model of a request that names none.
	DefaultModel = "claude-sonnet-4-5"
	// DefaultMaxTokens is the max_tokens of a request that sets none.
	DefaultMaxTokens = 8192
	// DefaultBaseURL is the API's address when neither Options.BaseURL nor
	// ANTHROPIC_BASE_URL says otherwise.
	DefaultBaseURL = "https://api.anthropic.com/"
)

// Provider streams replies from the Anthropic Messages API. It is safe for
// concurrent use.
type Provider struct {
	client    sdk.Client
	tools     llm.ToolEncodings // tool definitions encoded once, shared by every request
	model     string
	maxTokens int
	retry     llm.RetryPolicy
	now       func() time.Time
}

var _ llm.Provider = (*Provider)(nil)

// Options configure a [Provider]. The zero value talks to the Anthropic API
// with the key in ANTHROPIC_API_KEY, as [DefaultModel] with
// [DefaultMaxTokens], through a shared HTTP client, and retries as the
// zero [llm.RetryPolicy] does.
type Options struct {
	// APIKey is sent as x-api-key; "" means ANTHROPIC_API_KEY (unset: no
	// key).
	APIKey string
	// BaseURL is the API's address; "" means ANTHROPIC_BASE_URL when set
	// and not empty, else [DefaultBaseURL].
	BaseURL string
	// LookupEnv reads ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL (nil:
	// [os.LookupEnv]). No other variable is read, by Gantry or the SDK.
	LookupEnv func(string) (string, bool)
	// HTTPClient sends the requests (nil: a clone of
	// http.DefaultTransport with 64 connections per host, shared by the
	// provider's sessions, no overall timeout: streams are long).
	HTTPClient *http.Client
	// Model is the model of requests that name none ("": [DefaultModel]).
	Model string
	// MaxTokens is max_tokens of requests that set none (0:
	// [DefaultMaxTokens]).
	MaxTokens int
	// Retry is the retry policy; Retry.MaxAttempts 1 disables retries.
	Retry llm.RetryPolicy
	// RequestOptions are extra SDK options (headers, middleware) for every
	// request.
	RequestOptions []option.RequestOption
}

// New returns a provider configured by o.
func New(o Options) *Provider {
	ep := endpoint.Resolve(endpoint.Options{APIKey: o.APIKey, BaseURL: o.BaseURL, LookupEnv: o.LookupEnv, HTTPClient: o.HTTPClient},
		endpoint.Vars{KeyVar: "ANTHROPIC_API_KEY", URLVar: "ANTHROPIC_BASE_URL", DefaultURL: DefaultBaseURL})
	if o.Model == "" {
		o.Model = DefaultModel
	}
	if o.MaxTokens <= 0 {
		o.MaxTokens = DefaultMaxTokens
	}
	ropts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithHTTPClient(ep.HTTPClient),
		option.WithBaseURL(ep.BaseURL),
		option.WithMaxRetries(0),
	}
	if ep.APIKey != "" {
		ropts = append(ropts, option.WithAPIKey(ep.APIKey))
	}
	ropts = append(ropts, o.RequestOptions...)
	client := sdk.NewClient(ropts...)
	return &Provider{client: client, model: o.Model, maxTokens: o.MaxTokens, retry: o.Retry, now: time.Now}
}

// Stream sends req and streams the reply; see [llm.Provider].
//
// The request body is assembled from pieces the SDK encodes (see
// [Provider.Body]); every attempt sends the same bytes.
func (p *Provider) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	// The SDK's encoder recurses deep for a tool result: off the caller's
	// stack (see package offstack).
	body, err := offstack.Call(ctx, func() (*llm.Body, error) { return p.body(req) })
	if err != nil {
		return func(yield func(llm.Event, error) bool) { yield(llm.Event{}, err) }
	}
	return llm.Retry(ctx, p.retry, func(ctx context.Context) iter.Seq2[llm.Event, error] {
		return p.attempt(ctx, body)
	})
}

// post sends a request body through the SDK's client (its headers, auth,
// base URL and middleware; its retries are off) and returns the response,
// as the SDK's MessageService.NewStreaming does for params it encodes
// itself. The reply's events are decoded by [Provider.attempt], not by the
// SDK (see stream.go).
func (p *Provider) post(ctx context.Context, body *llm.Body) (*http.Response, error) {
	var raw *http.Response
	err := p.client.Post(ctx, "v1/messages", body.Reader(), &raw, option.WithMiddleware(
		func(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
			body.SetOn(r)
			return next(r)
		}))
	if err == nil && (raw == nil || raw.Body == nil) {
		err = errors.New("anthropic: a response without a body")
	}
	return raw, err
}

// classify turns an SDK error (or a stream that ended early, err == nil)
// into an llm error.
func (p *Provider) classify(ctx context.Context, err error, yielded bool) error {
	if ctx.Err() != nil {
		return fmt.Errorf("anthropic: %w", context.Cause(ctx))
	}
	var ae *sdk.Error
	if errors.As(err, &ae) {
		out := &llm.APIError{Provider: "anthropic", StatusCode: ae.StatusCode, RequestID: ae.RequestID, Err: err}
		out.Type, out.Code, out.Message = llm.ParseErrorBody([]byte(ae.RawJSON()))
		if out.Type == "" {
			out.Type = string(ae.Type())
		}
		if ae.Response != nil {
			out.RetryAfter = llm.ParseRetryAfter(ae.Response.Header, p.now())
		}
		if yielded {
			return fmt.Errorf("%w: %w", llm.ErrInterrupted, out)
		}
		return out
	}
	switch {
	case err == nil && yielded:
		return fmt.Errorf("anthropic: %w: the stream ended without message_stop", llm.ErrInterrupted)
	case err == nil:
		return fmt.Errorf("anthropic: %w: the stream ended without events", llm.ErrConnection)
	case yielded:
		return fmt.Errorf("anthropic: %w: %w", llm.ErrInterrupted, err)
	case llm.IsConnError(err):
		return fmt.Errorf("anthropic: %w: %w", llm.ErrConnection, err)
	}
	return fmt.Errorf("anthropic: %w", err)
}

// Params converts a request to the SDK's parameters (exported for tests and
// for callers that want to inspect or extend the request). [Provider.Stream]
// sends the same request, encoded by [Provider.Body].
func (p *Provider) Params(req *llm.Request) (sdk.MessageNewParams, error) {
	params, err := p.head(req)
	if err != nil {
		return params, err
	}
	params.Tools = append(params.Tools, tools(req)...)
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
		return nil, fmt.Errorf("anthropic: encode request: %w", err)
	}
	encTools, err := p.encodedTools(req)
	if err != nil {
		return nil, err
	}
	encMsgs, err := encodeMessages(req)
	if err != nil {
		return nil, err
	}
	b, err := llm.StreamBody(hb, encMsgs, p.tools.Array(encTools))
	if err != nil {
		return nil, fmt.Errorf("anthropic: %w", err)
	}
	return b, nil
}

// messagesFormat names this adapter's encoding of messages in an
// [llm.MessageEncodings].
const messagesFormat = "anthropic.messages"

// Message encoding variants.
const (
	msgPlain  uint8 = iota
	msgCached       // a cache breakpoint on the last block
)

// encodeMessages encodes the conversation the way [messages] converts it,
// one message at a time, so that req.Encodings can keep each message's
// encoding for the next request: a turn encodes the messages it adds,
// plus the one that carried the breakpoint on the last user message
// before (that breakpoint moves on every turn, and a message with it is
// another variant than the same message without).
func encodeMessages(req *llm.Request) ([]llm.Piece, error) {
	marked := -1
	if req.Cache.LastUserMessage {
		marked = lastUser(req.Messages)
	}
	variant := func(i int) uint8 {
		if i == marked {
			return msgCached
		}
		return msgPlain
	}
	return req.Encodings.Encode(make([]llm.Piece, 0, len(req.Messages)), messagesFormat, req.Messages, variant,
		func(i int, v uint8) ([][]byte, error) {
			m := req.Messages[i]
			if m.Role == llm.RoleSystem {
				return nil, nil // in the system prompt
			}
			mp, err := message(m)
			if err != nil {
				return nil, fmt.Errorf("anthropic: messages[%d]: %w", i, err)
			}
			if v == msgCached && len(mp.Content) > 0 {
				setCache(&mp.Content[len(mp.Content)-1])
			}
			enc, err := mp.MarshalJSON()
			if err != nil {
				return nil, fmt.Errorf("anthropic: encode messages[%d]: %w", i, err)
			}
			return [][]byte{enc}, nil
		})
}

// lastUser returns the index of the last user message that is sent with
// content (the one [messages] puts the breakpoint on), or -1.
func lastUser(msgs []llm.Message) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role != llm.RoleUser {
			continue
		}
		for _, b := range msgs[i].Content {
			if b.Type != llm.TypeText || b.Text != "" { // message drops empty text blocks
				return i
			}
		}
	}
	return -1
}

// Tool encoding variants.
const (
	toolPlain uint8 = iota
	toolCached
)

// encodedTools returns the encoded tool definitions of req, in order.
func (p *Provider) encodedTools(req *llm.Request) ([][]byte, error) {
	n := len(req.Tools)
	if req.WebSearch != nil {
		n++
	}
	out := make([][]byte, 0, n)
	for i, spec := range req.Tools {
		v := toolPlain
		if req.Cache.Tools && req.WebSearch == nil && i == len(req.Tools)-1 {
			v = toolCached
		}
		enc, err := p.tools.Get(spec, v, func(spec *tool.Spec) ([]byte, error) {
			u := ToolParam(spec)
			if v == toolCached {
				u.OfTool.CacheControl = sdk.NewCacheControlEphemeralParam()
			}
			return u.MarshalJSON()
		})
		if err != nil {
			return nil, fmt.Errorf("anthropic: encode tool %q: %w", spec.Name, err)
		}
		out = append(out, enc)
	}
	if req.WebSearch != nil {
		enc, err := webSearchTool(req.WebSearch).MarshalJSON()
		if err != nil {
			return nil, fmt.Errorf("anthropic: encode web search tool: %w", err)
		}
		out = append(out, enc)
	}
	return out, nil
}

// head converts everything of a request but its tools and messages.
func (p *Provider) head(req *llm.Request) (sdk.MessageNewParams, error) {
	model := req.Model
	if model == "" {
		model = p.model
	}
	if model == "" {
		return sdk.MessageNewParams{}, errors.New("anthropic: no model")
	}
	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = p.maxTokens
	}
	params := sdk.MessageNewParams{Model: sdk.Model(model), MaxTokens: int64(maxTokens), StopSequences: req.StopSequences}
	if req.Temperature != nil {
		params.Temperature = sdk.Float(*req.Temperature)
	}
	if req.ThinkingBudget > 0 {
		if maxTokens <= req.ThinkingBudget {
			params.MaxTokens = int64(req.ThinkingBudget + p.maxTokens)
		}
		params.Thinking = sdk.ThinkingConfigParamUnion{OfEnabled: &sdk.ThinkingConfigEnabledParam{BudgetTokens: int64(req.ThinkingBudget)}}
	}
	if len(req.OutputSchema) > 0 {
		var schema map[string]any
		if err := json.Unmarshal(req.OutputSchema, &schema); err != nil {
			return params, fmt.Errorf("anthropic: output schema: %w", err)
		}
		params.OutputConfig = sdk.OutputConfigParam{Format: sdk.JSONOutputFormatParam{Schema: schema}}
	}

	// System: the request's blocks, then system messages of the conversation.
	for _, s := range req.System {
		if s.Text == "" {
			continue
		}
		tb := sdk.TextBlockParam{Text: s.Text}
		if s.Cache {
			tb.CacheControl = sdk.NewCacheControlEphemeralParam()
		}
		params.System = append(params.System, tb)
	}
	for _, m := range req.Messages {
		if m.Role != llm.RoleSystem {
			continue
		}
		if t := m.Text(); t != "" {
			params.System = append(params.System, sdk.TextBlockParam{Text: t})
		}
	}
	if req.Cache.System && len(params.System) > 0 {
		params.System[len(params.System)-1].CacheControl = sdk.NewCacheControlEphemeralParam()
	}
	if len(req.Tools) > 0 || req.ToolChoice.Mode != llm.ToolChoiceAuto || req.ToolChoice.DisableParallel {
		tc, err := toolChoice(req.ToolChoice)
		if err != nil {
			return params, err
		}
		params.ToolChoice = tc
	}
	return params, nil
}

// tools converts the tools of a request (the last one carrying the cache
// breakpoint when asked).
func tools(req *llm.Request) []sdk.ToolUnionParam {
	var out []sdk.ToolUnionParam
	for _, spec := range req.Tools {
		out = append(out, ToolParam(spec))
	}
	if ws := req.WebSearch; ws != nil {
		out = append(out, webSearchTool(ws))
	}
	if req.Cache.Tools && len(out) > 0 {
		if t := out[len(out)-1].OfTool; t != nil {
			t.CacheControl = sdk.NewCacheControlEphemeralParam()
		}
	}
	return out
}

func webSearchTool(ws *llm.WebSearchTool) sdk.ToolUnionParam {
	wt := &sdk.WebSearchTool20250305Param{AllowedDomains: ws.AllowedDomains, BlockedDomains: ws.BlockedDomains}
	if ws.MaxUses > 0 {
		wt.MaxUses = sdk.Int(int64(ws.MaxUses))
	}
	return sdk.ToolUnionParam{OfWebSearchTool20250305: wt}
}

// messages converts the conversation (system messages are in the system
// prompt), with the cache breakpoint on the last user message when asked.
func messages(req *llm.Request) ([]sdk.MessageParam, error) {
	out := make([]sdk.MessageParam, 0, len(req.Messages))
	lastUser := -1
	for i, m := range req.Messages {
		if m.Role == llm.RoleSystem {
			continue
		}
		mp, err := message(m)
		if err != nil {
			return out, fmt.Errorf("anthropic: messages[%d]: %w", i, err)
		}
		if m.Role == llm.RoleUser && len(mp.Content) > 0 {
			lastUser = len(out)
		}
		out = append(out, mp)
	}
	if req.Cache.LastUserMessage && lastUser >= 0 {
		c := out[lastUser].Content
		setCache(&c[len(c)-1])
	}
	return out, nil
}

func toolChoice(tc llm.ToolChoice) (sdk.ToolChoiceUnionParam, error) {
	var u sdk.ToolChoiceUnionParam
	var dp = sdk.Bool(true)
	switch tc.Mode {
	case llm.ToolChoiceAuto:
		u.OfAuto = &sdk.ToolChoiceAutoParam{}
		if tc.DisableParallel {
			u.OfAuto.DisableParallelToolUse = dp
		}
	case llm.ToolChoiceAny:
		u.OfAny = &sdk.ToolChoiceAnyParam{}
		if tc.DisableParallel {
			u.OfAny.DisableParallelToolUse = dp
		}
	case llm.ToolChoiceNone:
		u.OfNone = &sdk.ToolChoiceNoneParam{}
	case llm.ToolChoiceTool:
		if tc.Name == "" {
			return u, errors.New("anthropic: tool choice \"tool\" without a name")
		}
		u.OfTool = &sdk.ToolChoiceToolParam{Name: tc.Name}
		if tc.DisableParallel {
			u.OfTool.DisableParallelToolUse = dp
		}
	default:
		return u, fmt.Errorf("anthropic: unknown tool choice %q", tc.Mode)
	}
	return u, nil
}

func message(m llm.Message) (sdk.MessageParam, error) {
	var role sdk.MessageParamRole
	switch m.Role {
	case llm.RoleUser:
		role = sdk.MessageParamRoleUser
	case llm.RoleAssistant:
		role = sdk.MessageParamRoleAssistant
	default:
		return sdk.MessageParam{}, fmt.Errorf("unknown role %q", m.Role)
	}
	mp := sdk.MessageParam{Role: role, Content: make([]sdk.ContentBlockParamUnion, 0, len(m.Content))}
	for _, b := range m.Content {
		var u sdk.ContentBlockParamUnion
		switch b.Type {
		case llm.TypeText:
			if b.Text == "" {
				continue // the API rejects empty text blocks
			}
			u = sdk.NewTextBlock(b.Text)
		case llm.TypeImage:
			u = sdk.ContentBlockParamUnion{OfImage: imageParam(b.Data, b.MIMEType)}
		case llm.TypeToolUse:
			in := b.Input
			if len(in) == 0 {
				in = []byte(`{}`)
			}
			u = sdk.ContentBlockParamUnion{OfToolUse: &sdk.ToolUseBlockParam{ID: b.ID, Name: b.Name, Input: in}}
		case llm.TypeToolResult:
			u = sdk.ContentBlockParamUnion{OfToolResult: toolResult(b)}
		case llm.TypeThinking:
			u = sdk.NewThinkingBlock(b.Signature, b.Text)
		case llm.TypeRedactedThinking:
			u = sdk.NewRedactedThinkingBlock(b.Redacted)
		default:
			return mp, fmt.Errorf("unknown block type %q", b.Type)
		}
		mp.Content = append(mp.Content, u)
	}
	return mp, nil
}

func imageParam(data []byte, mime string) *sdk.ImageBlockParam {
	return &sdk.ImageBlockParam{Source: sdk.ImageBlockParamSourceUnion{OfBase64: &sdk.Base64ImageSourceParam{
		Data: base64.StdEncoding.EncodeToString(data), MediaType: sdk.Base64ImageSourceMediaType(mime),
	}}}
}

// toolResult maps a tool result: text and embedded text become text blocks,
// images (and embedded image blobs) image blocks, audio (the API takes none),
// links and other blobs a line of text naming them.
func toolResult(b llm.Block) *sdk.ToolResultBlockParam {
	tr := &sdk.ToolResultBlockParam{ToolUseID: b.ToolUseID}
	if b.IsError {
		tr.IsError = sdk.Bool(true)
	}
	for _, c := range b.Content {
		if text, ok := contentText(c); ok {
			if text != "" {
				tr.Content = append(tr.Content, sdk.ToolResultBlockParamContentUnion{OfText: &sdk.TextBlockParam{Text: text}})
			}
			continue
		}
		tr.Content = append(tr.Content, sdk.ToolResultBlockParamContentUnion{OfImage: imageParam(c.Data, c.MIMEType)})
	}
	return tr
}

// contentText returns the text a content block is sent as (a note for
// what the API takes no input of: audio, binary resources, links), or false
// for an image.
func contentText(c tool.Content) (string, bool) {
	if c.IsImage() {
		return "", false
	}
	return c.AsText(), true
}

// setCache puts a cache breakpoint on a content block, where the block kind
// takes one (thinking blocks do not).
func setCache(u *sdk.ContentBlockParamUnion) {
	cc := sdk.NewCacheControlEphemeralParam()
	switch {
	case u.OfText != nil:
		u.OfText.CacheControl = cc
	case u.OfImage != nil:
		u.OfImage.CacheControl = cc
	case u.OfToolResult != nil:
		u.OfToolResult.CacheControl = cc
	case u.OfToolUse != nil:
		u.OfToolUse.CacheControl = cc
	case u.OfDocument != nil:
		u.OfDocument.CacheControl = cc
	}
}
