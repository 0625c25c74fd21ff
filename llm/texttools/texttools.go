// Package texttools lets models without native tool calling use tools: a
// [Provider] wrapper that describes the request's tools in the system
// prompt as Markdown (toolset.Markdown) together with a call syntax of
// XML-like tags, sends no native tools, and turns the model's streamed text
// back into the events of the native path.
//
// The model writes a call as
//
//	<Read>
//	<file_path>/src/main.go</file_path>
//	</Read>
//
// anywhere in its reply, several calls per reply if it likes. Text outside
// calls is text ([llm.EventTextDelta]); a call is [llm.EventToolUseStart],
// [llm.EventToolUseDelta] with its input as partial JSON while the tags
// arrive (so a UI can show the call building up), and
// [llm.EventToolUseEnd] the moment its closing tag arrives, so a streaming
// executor starts it at once. Every parameter value is a JSON string; the
// executor coerces it to the schema's type ("3" to 3, "true" to true, a JSON
// array or object written as text to the value). Values are verbatim: code
// with < and & needs no escaping, and only the parameter's own closing tag
// ends it. One newline right after the opening tag and one right before the
// closing tag are dropped. A call that breaks the syntax ends with
// [llm.Event.InputErr] set to an explanation quoting [Syntax]; the agent
// hands it to the model as the call's error result.
//
// In the conversation sent on, earlier calls are written back as the same
// tags, and tool results become user-turn text in an envelope:
//
//	<tool_result tool="Read" id="toolu_…">
//	…
//	</tool_result>
//
// (status="error" marks a failed call). Images in results follow as image
// blocks.
//
// Only tags named after a tool of the request open a call, so prose and
// code mentioning other tags stay text; a model that calls a tool it was
// not given writes text.
package texttools

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"sync"

	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/tool"
	"github.com/gantry-dev/gantry/toolset"
)

// Protocol is how tools reach the model.
type Protocol string

const (
	// Native sends tools through the provider's tool-calling API (the
	// default; "" means Native).
	Native Protocol = "native"
	// Text describes tools in the system prompt and parses calls from the
	// reply's text (see the package documentation).
	Text Protocol = "text"
	// Auto uses Text for models that lack native tool calls (see
	// [LacksNativeTools]) and for a model whose server refuses a request
	// with tools as a bad request mentioning tools; Native otherwise.
	Auto Protocol = "auto"
)

// ParseProtocol checks s, one of "native", "text", "auto" or "" (native).
func ParseProtocol(s string) (Protocol, error) {
	switch p := Protocol(strings.ToLower(strings.TrimSpace(s))); p {
	case "", Native:
		return Native, nil
	case Text, Auto:
		return p, nil
	}
	return "", fmt.Errorf("texttools: unknown tool protocol %q (want native, text or auto)", s)
}

// Wrap returns p speaking protocol proto: p itself for Native, a text
// [Provider] for Text, and for Auto a provider that decides per model.
func Wrap(p llm.Provider, proto Protocol) (llm.Provider, error) {
	switch proto {
	case "", Native:
		return p, nil
	case Text:
		return New(p), nil
	case Auto:
		return &autoProvider{native: p, text: New(p)}, nil
	}
	return nil, fmt.Errorf("texttools: unknown tool protocol %q (want native, text or auto)", proto)
}

// noNativeTools are model-name fragments (lower case) of open models
// commonly served without a tool-calling template.
var noNativeTools = []string{"deepseek-r1", "gemma", "phi3", "phi-3", "llama2", "llama-2", "codellama", "tinyllama", "starcoder", "orca-mini"}

// LacksNativeTools reports whether model is known to lack native tool
// calls: its name (case-insensitive) contains one of deepseek-r1, gemma,
// phi3, phi-3, llama2, llama-2, codellama, tinyllama, starcoder or
// orca-mini. The rule is deliberately small; set the protocol to Text for
// any other model.
func LacksNativeTools(model string) bool {
	m := strings.ToLower(model)
	for _, f := range noNativeTools {
		if strings.Contains(m, f) {
			return true
		}
	}
	return false
}

// Provider is the text tool protocol over another provider. Create it with
// [New]; it is safe for concurrent use. Share one between sessions, as the
// provider it wraps: it renders each tool's description once per content
// and keeps it for every request, turn and session that sends the tool.
type Provider struct {
	inner llm.Provider
	// sections holds each tool's part of the prompt (its Markdown
	// section, variant sectionVariant; its first required parameter,
	// variant paramVariant), rendered once per tool content.
	sections llm.ToolEncodings
}

// New returns the text tool protocol over p.
func New(p llm.Provider) *Provider { return &Provider{inner: p} }

// Stream sends req with its tools described in the system prompt and none
// sent natively, and parses calls from the reply's text.
func (t *Provider) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	if len(req.Tools) == 0 && !hasToolBlocks(req.Messages) {
		return t.inner.Stream(ctx, req)
	}
	r, names := rewrite(req, &t.sections)
	inner := t.inner.Stream(ctx, r)
	return func(yield func(llm.Event, error) bool) {
		c := converter{p: newParserTags(names, toolTags(req.Tools, &t.sections)), remap: map[int]int{}, text: -1}
		for ev, err := range inner {
			if err != nil {
				yield(llm.Event{}, err)
				return
			}
			if !c.event(ev, yield) {
				return
			}
		}
	}
}

// converter turns the inner stream's events into the native path's.
type converter struct {
	p     *parser
	next  int         // next block index
	remap map[int]int // inner index → ours, for non-text blocks
	text  int         // index of the open text block, or -1
	call  int         // index of the open call
	id    string
	calls int
}

func (c *converter) event(ev llm.Event, yield func(llm.Event, error) bool) bool {
	switch ev.Type {
	case llm.EventTextDelta:
		return c.pieces(c.p.feed(ev.Text), yield)
	case llm.EventMessageEnd:
		if !c.pieces(c.p.finish(), yield) {
			return false
		}
		if c.calls > 0 && (ev.StopReason == llm.StopEndTurn || ev.StopReason == llm.StopSequence || ev.StopReason == "") {
			ev.StopReason = llm.StopToolUse
		}
		return yield(ev, nil)
	case llm.EventThinkingDelta, llm.EventRedactedThinking, llm.EventToolUseStart, llm.EventToolUseDelta, llm.EventToolUseEnd:
		i, ok := c.remap[ev.Index]
		if !ok {
			i = c.next
			c.next++
			c.remap[ev.Index] = i
			c.text = -1
		}
		ev.Index = i
		return yield(ev, nil)
	}
	return yield(ev, nil)
}

func (c *converter) pieces(ps []piece, yield func(llm.Event, error) bool) bool {
	for _, p := range ps {
		var ev llm.Event
		switch p.kind {
		case pieceText:
			if c.text < 0 {
				c.text = c.next
				c.next++
			}
			ev = llm.Event{Type: llm.EventTextDelta, Index: c.text, Text: p.text}
		case pieceStart:
			c.text = -1
			c.call = c.next
			c.next++
			c.id = newID()
			ev = llm.Event{Type: llm.EventToolUseStart, Index: c.call, ID: c.id, Name: p.name}
		case pieceDelta:
			ev = llm.Event{Type: llm.EventToolUseDelta, Index: c.call, Text: p.text}
		case pieceEnd:
			c.calls++
			ev = llm.Event{Type: llm.EventToolUseEnd, Index: c.call, ID: c.id, Name: p.name, Input: p.input, InputErr: p.err}
		}
		if !yield(ev, nil) {
			return false
		}
	}
	return true
}

func newID() string {
	var b [12]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return "toolu_" + hex.EncodeToString(b[:])
}

// Rewrite returns req as the text protocol sends it: the tools described in
// a system block after req.System, no native tools, earlier calls written
// as tags and tool results as text envelopes. names are the tools whose
// calls the reply may hold (none under [llm.ToolChoiceNone]).
func Rewrite(req *llm.Request) (out *llm.Request, names []string) { return rewrite(req, nil) }

// rewrite is [Rewrite], with the tools' sections of the prompt taken from
// sections (nil: rendered afresh).
func rewrite(req *llm.Request, sections *llm.ToolEncodings) (out *llm.Request, names []string) {
	r := *req
	r.Tools, r.ToolChoice = nil, llm.ToolChoice{}
	r.Cache.Tools = false
	if len(req.Tools) > 0 && req.ToolChoice.Mode != llm.ToolChoiceNone {
		r.System = append(slices.Clip(req.System), llm.SystemBlock{Text: prompt(req.Tools, req.ToolChoice, sections)})
		for _, s := range req.Tools {
			names = append(names, s.Name)
		}
	}
	r.Messages = rewriteMessages(req.Messages, req.Encodings, toolTags(req.Tools, sections))
	return &r, names
}

// toolTags returns the parameter aliases of the tools that have some,
// taken from sections (nil: computed afresh).
func toolTags(specs []*tool.Spec, sections *llm.ToolEncodings) map[string]*paramTags {
	var m map[string]*paramTags
	for _, s := range specs {
		t := tagsOf
		if sections != nil {
			t = func(s *tool.Spec) *paramTags {
				b, _ := sections.Get(s, tagsVariant, func(s *tool.Spec) ([]byte, error) { return tagsOf(s).encode(), nil })
				return decodeTags(b)
			}
		}
		if t := t(s); t != nil {
			if m == nil {
				m = map[string]*paramTags{}
			}
			m[s.Name] = t
		}
	}
	return m
}

// Prompt returns the system prompt section of the text protocol: how to
// call, then the tools in Markdown.
func Prompt(specs []*tool.Spec, choice llm.ToolChoice) string { return prompt(specs, choice, nil) }

// The variants of a tool's entries in [Provider.sections].
const (
	sectionVariant uint8 = iota
	paramVariant
	tagsVariant
)

// prompt is [Prompt], with each tool's Markdown section and first
// parameter taken from sections (nil: rendered afresh).
func prompt(specs []*tool.Spec, choice llm.ToolChoice, sections *llm.ToolEncodings) string {
	get := func(s *tool.Spec, variant uint8) []byte {
		render := func(s *tool.Spec) ([]byte, error) {
			if variant == paramVariant {
				return []byte(firstParam(s)), nil
			}
			return []byte(section(s)), nil
		}
		if sections == nil {
			b, _ := render(s)
			return b
		}
		b, _ := sections.Get(s, variant, render) // render never fails
		return b
	}
	var b strings.Builder
	b.WriteString("# Tool use\n\nYou can call tools. Tool calls are written in your reply as XML-style tags: the tool's name as the outer tag and one tag per parameter:\n\n")
	b.WriteString(Syntax)
	b.WriteString("\n\nFor example:\n\n<")
	name, param := "tool_name", "parameter_name"
	if len(specs) > 0 {
		name = specs[0].Name
		if p := get(specs[0], paramVariant); len(p) > 0 {
			param = string(p)
		}
	}
	fmt.Fprintf(&b, "%s>\n<%s>value</%s>\n</%s>\n\n", name, param, param, name)
	b.WriteString(`Rules:
- Values are written as they are: no escaping, no quotes. Code containing < and & is fine.
- Numbers and booleans are written as text (3, true); arrays and objects as JSON.
- Leave out optional parameters you do not need.
- You may make several calls in one reply; they run in order of their closing tags. After your calls, end your reply and wait: the results come back in the next user message as <tool_result tool="name" id="…"> … </tool_result>, with status="error" when the call failed.
- Never write a tool result yourself.
`)
	switch choice.Mode {
	case llm.ToolChoiceAny:
		b.WriteString("- In this reply you must call at least one tool.\n")
	case llm.ToolChoiceTool:
		fmt.Fprintf(&b, "- In this reply you must call the tool %s.\n", choice.Name)
	}
	if choice.DisableParallel {
		b.WriteString("- Make at most one call per reply.\n")
	}
	b.WriteString("\n")
	// toolset.Markdown(specs), one section a tool.
	parts := make([][]byte, len(specs))
	n := b.Len() + len(markdownHead)
	for i, s := range specs {
		parts[i] = get(s, sectionVariant)
		n += len(parts[i])
	}
	b.Grow(n - b.Len())
	b.WriteString(markdownHead)
	for _, p := range parts {
		b.Write(p)
	}
	return b.String()
}

// section is a tool's part of the tools prompt: toolset.Markdown's
// section, with the name people see (when the tool has one other than its
// name) under its heading, and each parameter whose name is not a tag
// named with the tag to write it as.
func section(s *tool.Spec) string {
	md := strings.TrimPrefix(toolset.Markdown([]*tool.Spec{s}), markdownHead)
	if d := s.DisplayName(); d != "" && d != s.Name {
		head := "\n## " + s.Name + "\n\n"
		if strings.HasPrefix(md, head) {
			md = head + "Shown to the user as: " + strings.Join(strings.Fields(d), " ") + "\n\n" + md[len(head):]
		}
	}
	if t := tagsOf(s); t != nil {
		for k, tag := range t.toTag {
			// toolset.Markdown starts a top-level parameter's line with
			// "- `name` (".
			md = strings.Replace(md, "\n- `"+k+"` (", "\n- `"+k+"` (write it as <"+tag+">…</"+tag+">; ", 1)
		}
	}
	return md
}

// markdownHead starts toolset.Markdown's rendering; each tool's section
// follows it.
const markdownHead = "# Available tools\n"

func firstParam(s *tool.Spec) string {
	var sch struct {
		Required []string `json:"required"`
	}
	if json.Unmarshal(s.InputSchema, &sch) == nil && len(sch.Required) > 0 {
		return tagsOf(s).tag(sch.Required[0])
	}
	return ""
}

func hasToolBlocks(msgs []llm.Message) bool {
	for _, m := range msgs {
		for _, b := range m.Content {
			if b.Type == llm.TypeToolUse || b.Type == llm.TypeToolResult {
				return true
			}
		}
	}
	return false
}

// rewriteLayer names the text protocol's rewrites in an
// [llm.MessageEncodings].
const rewriteLayer = "texttools"

// rewriteMessages writes the tool blocks of msgs as text. With a cache
// (the request's Encodings), a message rewritten for an earlier request
// is reused as it was, so that its encoding is reused too: a turn
// rewrites and encodes only what it adds.
func rewriteMessages(msgs []llm.Message, enc *llm.MessageEncodings, tags map[string]*paramTags) []llm.Message {
	if enc == nil && !hasToolBlocks(msgs) {
		return msgs
	}
	return enc.Rewrite(rewriteLayer, msgs, func(i int) (llm.Message, bool) { return rewriteMessage(msgs, i, tags) })
}

// rewriteMessage writes message i's tool calls as tags and its tool
// results as envelopes; a message without tool blocks is returned as it
// is. usesPrefix reports whether the result depends on earlier messages
// (a tool result is named after the call it answers).
func rewriteMessage(msgs []llm.Message, i int, tags map[string]*paramTags) (m llm.Message, usesPrefix bool) {
	m = msgs[i]
	if !hasToolBlocks(msgs[i : i+1]) {
		return m, false // as it is, so that its encoding is reused (llm.MessageEncodings)
	}
	nm := llm.Message{Role: m.Role, Content: make([]llm.Block, 0, len(m.Content))}
	for k, b := range m.Content {
		switch b.Type {
		case llm.TypeToolUse:
			nm.Content = appendText(nm.Content, formatCall(b.Name, b.Input, tags[b.Name]), true)
		case llm.TypeToolResult:
			usesPrefix = true
			text, images := formatResult(callName(msgs, i, k, b.ToolUseID), b)
			nm.Content = appendText(nm.Content, text, true)
			nm.Content = append(nm.Content, images...)
		default:
			nm.Content = append(nm.Content, b)
		}
	}
	return nm, usesPrefix
}

// callName is the name of the tool the result at block k of message i
// answers: the latest call with that id before it ("" if none).
func callName(msgs []llm.Message, i, k int, id string) string {
	for ; i >= 0; i-- {
		c := msgs[i].Content
		if k < 0 {
			k = len(c)
		}
		for k--; k >= 0; k-- {
			if c[k].Type == llm.TypeToolUse && c[k].ID == id {
				return c[k].Name
			}
		}
	}
	return ""
}

// appendText adds s to the last block when it is text (on a line of its
// own when own is set), else as a new text block.
func appendText(blocks []llm.Block, s string, own bool) []llm.Block {
	if k := len(blocks) - 1; k >= 0 && blocks[k].Type == llm.TypeText {
		prev := blocks[k].Text
		if own && prev != "" && !strings.HasSuffix(prev, "\n") {
			prev += "\n"
		}
		blocks[k].Text = prev + s
		return blocks
	}
	return append(blocks, llm.Text(s))
}

// FormatCall writes a call of name with input (a JSON object) in the text
// protocol's syntax, the way the parser reads it back: string values
// verbatim, other values as JSON, multi-line values on lines of their own,
// each parameter under its tag ([ParamTag]: Grep's "-i" as <i>).
func FormatCall(name string, input json.RawMessage) string {
	return formatCall(name, input, nil)
}

// formatCall is [FormatCall] with the tool's aliases (nil: every
// parameter whose name is not a tag under [ParamTag]'s alias).
func formatCall(name string, input json.RawMessage, tags *paramTags) string {
	var b strings.Builder
	b.WriteString("<" + name + ">\n")
	var obj map[string]json.RawMessage
	keys, err := objectKeys(input)
	if err == nil {
		err = json.Unmarshal(input, &obj)
	}
	if err == nil {
		for _, k := range keys {
			raw := obj[k]
			var v string
			if json.Unmarshal(raw, &v) != nil {
				v = string(raw)
			}
			if strings.Contains(v, "\n") || strings.HasPrefix(v, "\n") {
				v = "\n" + v + "\n"
			}
			tag := ParamTag(k)
			if tags != nil {
				tag = tags.tag(k)
			}
			fmt.Fprintf(&b, "<%s>%s</%s>\n", tag, v, tag)
		}
	}
	b.WriteString("</" + name + ">\n")
	return b.String()
}

// objectKeys returns the keys of a JSON object in document order.
func objectKeys(raw json.RawMessage) ([]string, error) {
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("not an object")
	}
	var keys []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, _ := t.(string)
		keys = append(keys, k)
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

// formatResult writes a tool result as the text envelope, and returns its
// images as blocks to follow it.
func formatResult(name string, b llm.Block) (string, []llm.Block) {
	var s strings.Builder
	if name == "" {
		name = "unknown"
	}
	status := ""
	if b.IsError {
		status = ` status="error"`
	}
	fmt.Fprintf(&s, "<tool_result tool=%q id=%q%s>\n", name, b.ToolUseID, status)
	var images []llm.Block
	for _, c := range b.Content {
		switch c.Type {
		case tool.TypeImage:
			images = append(images, llm.Image(c.Data, c.MIMEType))
			fmt.Fprintf(&s, "[image %d (%s) follows this result]\n", len(images), c.MIMEType)
		case tool.TypeText, tool.TypeResource:
			if c.Text != "" {
				s.WriteString(c.Text)
				if !strings.HasSuffix(c.Text, "\n") {
					s.WriteByte('\n')
				}
			}
		case tool.TypeResourceLink:
			fmt.Fprintf(&s, "[resource %s]\n", c.URI)
		default:
			fmt.Fprintf(&s, "[%s content omitted]\n", c.Type)
		}
	}
	s.WriteString("</tool_result>\n")
	return s.String(), images
}

// autoProvider picks the protocol per model.
type autoProvider struct {
	native, text llm.Provider
	mu           sync.Mutex
	textModels   map[string]bool // models found to refuse native tools
}

func (a *autoProvider) useText(model string) bool {
	if LacksNativeTools(model) {
		return true
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.textModels[model]
}

func (a *autoProvider) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	if len(req.Tools) == 0 && !hasToolBlocks(req.Messages) {
		return a.native.Stream(ctx, req)
	}
	if a.useText(req.Model) {
		return a.text.Stream(ctx, req)
	}
	return func(yield func(llm.Event, error) bool) {
		started := false
		for ev, err := range a.native.Stream(ctx, req) {
			if err != nil && !started && refusesTools(err) && len(req.Tools) > 0 {
				a.mu.Lock()
				if a.textModels == nil {
					a.textModels = map[string]bool{}
				}
				a.textModels[req.Model] = true
				a.mu.Unlock()
				for ev, err := range a.text.Stream(ctx, req) {
					if !yield(ev, err) || err != nil {
						return
					}
				}
				return
			}
			started = true
			if !yield(ev, err) || err != nil {
				return
			}
		}
	}
}

// refusesTools reports whether err is a bad request whose message mentions
// tools (Ollama: "… does not support tools").
func refusesTools(err error) bool {
	if !errors.Is(err, llm.ErrBadRequest) {
		return false
	}
	return strings.Contains(strings.ToLower(err.Error()), "tool")
}
