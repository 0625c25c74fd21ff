package tool

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// ContentType names the kind of a [Content] block.
type ContentType string

const (
	TypeText         ContentType = "text"
	TypeImage        ContentType = "image"
	TypeAudio        ContentType = "audio"
	TypeResourceLink ContentType = "resource_link"
	TypeResource     ContentType = "resource" // an embedded resource
)

// Content is one block of a result. Which fields are set depends on Type:
//
//   - text: Text.
//   - image: Data (raw bytes; base64 in JSON) and MIMEType.
//   - audio: Data (raw bytes; base64 in JSON) and MIMEType ("audio/wav").
//     Model APIs take no audio in tool results: the LLM adapters send a
//     text note naming it instead; MCP serving sends it as audio.
//   - resource_link: URI, optional Name, Title, Description, MIMEType.
//   - resource: URI, MIMEType, and Text or Data (the embedded contents).
//
// Use the constructors [Text], [Image], [Audio], [ResourceLink],
// [EmbeddedText] and [EmbeddedBlob].
type Content struct {
	Type        ContentType `json:"type"`
	Text        string      `json:"text,omitempty"`
	Data        []byte      `json:"data,omitempty"`
	MIMEType    string      `json:"mime_type,omitempty"`
	URI         string      `json:"uri,omitempty"`
	Name        string      `json:"name,omitempty"`
	Title       string      `json:"title,omitempty"`
	Description string      `json:"description,omitempty"`
}

// Text returns a text block.
func Text(s string) Content { return Content{Type: TypeText, Text: s} }

// Image returns an image block.
func Image(data []byte, mimeType string) Content {
	return Content{Type: TypeImage, Data: data, MIMEType: mimeType}
}

// Audio returns an audio block holding raw (not base64) bytes.
func Audio(data []byte, mimeType string) Content {
	return Content{Type: TypeAudio, Data: data, MIMEType: mimeType}
}

// ResourceLink returns a link to a resource the client may fetch.
func ResourceLink(uri, name, mimeType string) Content {
	return Content{Type: TypeResourceLink, URI: uri, Name: name, MIMEType: mimeType}
}

// EmbeddedText returns an embedded text resource.
func EmbeddedText(uri, mimeType, text string) Content {
	return Content{Type: TypeResource, URI: uri, MIMEType: mimeType, Text: text}
}

// EmbeddedBlob returns an embedded binary resource.
func EmbeddedBlob(uri, mimeType string, data []byte) Content {
	return Content{Type: TypeResource, URI: uri, MIMEType: mimeType, Data: data}
}

// Result is what one call produced.
//
// Content is what the model reads; Display is what a person sees (a diff, a
// rendered table). A nil Display means "show Content". Structured holds data
// matching the tool's output schema, if it has one. Messages are extra
// messages the agent appends to the conversation after the tool results
// (for example a skill's instructions). ContextModifier, if set, is applied
// to the session's environment after the call (a `cd`, a mode change); the
// executor applies it only for calls that are not concurrency-safe, in the
// model's order. Meta is protocol metadata that travels with the result
// and is never shown to the model: an MCP server's _meta (progress tokens,
// vendor keys), kept for hooks, stream-json consumers and UIs and sent
// back out when the tool is served over MCP.
type Result struct {
	Content         []Content      `json:"content"`
	Display         []Content      `json:"display,omitempty"`
	IsError         bool           `json:"is_error,omitempty"`
	Structured      any            `json:"structured,omitempty"`
	Messages        []Message      `json:"messages,omitempty"`
	Meta            map[string]any `json:"_meta,omitempty"`
	ContextModifier func(*Env)     `json:"-"`
}

// Message is an extra conversation message a tool adds.
type Message struct {
	Role    string    `json:"role"` // "user" or "assistant"
	Content []Content `json:"content"`
}

// TextResult returns a result with one text block.
func TextResult(s string) *Result { return &Result{Content: []Content{Text(s)}} }

// Errorf returns an error result with a formatted text block.
func Errorf(format string, args ...any) *Result {
	return &Result{Content: []Content{Text(fmt.Sprintf(format, args...))}, IsError: true}
}

// ErrorResult returns an error result carrying err's text.
func ErrorResult(err error) *Result {
	return &Result{Content: []Content{Text(err.Error())}, IsError: true}
}

// WithDisplay sets the display channel and returns r.
func (r *Result) WithDisplay(c ...Content) *Result {
	r.Display = c
	return r
}

// DisplayContent returns the blocks a person should see: Display if set, else
// Content.
func (r *Result) DisplayContent() []Content {
	if r.Display != nil {
		return r.Display
	}
	return r.Content
}

// TextContent joins the text of every text and embedded-text block of the
// model channel with newlines.
func (r *Result) TextContent() string { return JoinText(r.Content) }

// JoinText joins the text of text blocks and embedded text resources.
func JoinText(blocks []Content) string {
	if n := len(blocks); n > 0 && textBlock(blocks[0]) {
		// One text block and nothing else of text (the usual result):
		// its text as is, not a copy of it.
		only := true
		for _, c := range blocks[1:] {
			only = only && !textBlock(c)
		}
		if only {
			return blocks[0].Text
		}
	}
	var b strings.Builder
	for _, c := range blocks {
		if !textBlock(c) {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(c.Text)
	}
	return b.String()
}

// TextLen returns the number of characters (runes) of text in blocks, the
// unit of [Spec.MaxResultChars].
func TextLen(blocks []Content) int {
	n := 0
	for _, c := range blocks {
		n += runeCount(c.Text)
	}
	return n
}

// textBlock reports whether JoinText takes c's text.
func textBlock(c Content) bool {
	return c.Type == TypeText || (c.Type == TypeResource && c.Text != "")
}

// runeCount is utf8.RuneCountInString (an invalid byte counts as one
// rune), 32 bytes a step where they are ASCII: a tool's result is counted
// on every call, and most results are mostly ASCII (BenchmarkTextLen).
func runeCount(s string) int {
	n, i := 0, 0
	for i < len(s) {
		if len(s)-i >= 32 {
			w := binary.LittleEndian.Uint64([]byte(s[i:i+8])) | binary.LittleEndian.Uint64([]byte(s[i+8:i+16])) |
				binary.LittleEndian.Uint64([]byte(s[i+16:i+24])) | binary.LittleEndian.Uint64([]byte(s[i+24:i+32]))
			if w&0x8080808080808080 == 0 {
				n += 32
				i += 32
				continue
			}
		}
		if s[i] < utf8.RuneSelf {
			i++
		} else {
			_, w := utf8.DecodeRuneInString(s[i:])
			i += w
		}
		n++
	}
	return n
}

// JSONResult is a helper for tools returning JSON text: a result holding v
// marshalled with two-space indentation.
func JSONResult(v any) (*Result, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("tool: marshal result: %w", err)
	}
	return TextResult(string(b)), nil
}

// IsImage reports whether c is a picture a model can look at: an image
// block, or an embedded binary resource with an image MIME type.
func (c Content) IsImage() bool {
	return c.Type == TypeImage ||
		c.Type == TypeResource && c.Text == "" && len(c.Data) > 0 && strings.HasPrefix(c.MIMEType, "image/")
}

// AsText returns what c reads as where only text can go (a model's tool
// result, a terminal): the text of a text block or embedded text resource,
// else a one-line note naming the block — "[audio clip, 16 bytes,
// audio/wav]", "[image, 120 bytes, image/png]", "[resource file:///b
// (application/pdf, 2048 bytes)]", "[resource link name: uri]".
func (c Content) AsText() string {
	mime := c.MIMEType
	if mime == "" {
		mime = "unknown type"
	}
	switch {
	case c.Type == TypeAudio:
		return fmt.Sprintf("[audio clip, %d bytes, %s]", len(c.Data), mime)
	case c.Type == TypeImage:
		return fmt.Sprintf("[image, %d bytes, %s]", len(c.Data), mime)
	case c.Type == TypeResourceLink:
		name := c.Name
		if name == "" {
			name = c.URI
		}
		return fmt.Sprintf("[resource link %s: %s]", name, c.URI)
	case c.Type == TypeResource && c.Text == "":
		return fmt.Sprintf("[resource %s (%s, %d bytes)]", c.URI, mime, len(c.Data))
	}
	return c.Text
}
