package llm

import (
	"bytes"
	"errors"
	"hash/maphash"
	"io"
	"net"
	"slices"
	"sync"

	"github.com/gantry-dev/gantry/tool"
)

// maxEncodedTools bounds a [ToolEncodings] cache. Real programs send a few
// hundred distinct tool definitions at most; the bound only protects
// against a program that makes tools with fresh content forever (the cache
// is then emptied and refilled).
const maxEncodedTools = 4096

// ToolEncodings memoises a provider adapter's wire encoding of tool specs
// by content: the same definition is encoded once and its bytes are shared
// by every request, turn and session that sends it (an adapter keeps one
// per provider, and sessions share the provider). The key is the content
// the encoding depends on — [tool.Spec.Name], Description, Prompt, Doc and
// InputSchema — plus a small variant number the adapter chooses (with or
// without a cache breakpoint, deferred or not), so a spec that is rebuilt
// with the same content hits, and one whose content changed misses.
//
// The returned bytes are shared: callers must not modify them. The zero
// value is ready to use; it is safe for concurrent use.
type ToolEncodings struct {
	once sync.Once
	seed maphash.Seed
	mu   sync.RWMutex
	m    map[uint64][]*encodedTool
	n    int
}

type encodedTool struct {
	name, desc, prompt, schema string
	doc                        *tool.Doc // a copy
	variant                    uint8
	enc                        []byte
}

func (e *encodedTool) is(s *tool.Spec, variant uint8) bool {
	return e.variant == variant && e.name == s.Name && e.desc == s.Description &&
		e.prompt == s.Prompt && e.schema == string(s.InputSchema) && docEqual(e.doc, s.Doc)
}

func docEqual(a, b *tool.Doc) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.DisplayName == b.DisplayName && a.Short == b.Short && a.Long == b.Long &&
		slices.Equal(a.UsageNotes, b.UsageNotes) && slices.Equal(a.Important, b.Important) &&
		slices.EqualFunc(a.Examples, b.Examples, func(x, y tool.Example) bool {
			return x.Description == y.Description && bytes.Equal(x.Input, y.Input)
		})
}

func hashDoc(h *maphash.Hash, d *tool.Doc) {
	if d == nil {
		h.WriteByte(0)
		return
	}
	h.WriteByte(1)
	for _, s := range [...]string{d.DisplayName, d.Short, d.Long} {
		h.WriteString(s)
		h.WriteByte(0)
	}
	for _, l := range [][]string{d.UsageNotes, d.Important} {
		for _, s := range l {
			h.WriteString(s)
			h.WriteByte(0)
		}
		h.WriteByte(1)
	}
	for _, x := range d.Examples {
		h.WriteString(x.Description)
		h.WriteByte(0)
		h.Write(x.Input)
		h.WriteByte(0)
	}
}

func cloneDoc(d *tool.Doc) *tool.Doc {
	if d == nil {
		return nil
	}
	c := *d
	c.UsageNotes, c.Important = slices.Clone(d.UsageNotes), slices.Clone(d.Important)
	c.Examples = make([]tool.Example, len(d.Examples))
	for i, x := range d.Examples {
		c.Examples[i] = tool.Example{Description: x.Description, Input: bytes.Clone(x.Input)}
	}
	return &c
}

// Get returns the encoding of spec in the given variant, calling encode
// only for content not seen before. An error from encode is returned and
// not cached.
func (c *ToolEncodings) Get(spec *tool.Spec, variant uint8, encode func(*tool.Spec) ([]byte, error)) ([]byte, error) {
	c.once.Do(func() { c.seed = maphash.MakeSeed() })
	var h maphash.Hash
	h.SetSeed(c.seed)
	h.WriteString(spec.Name)
	h.WriteByte(0)
	h.WriteString(spec.Description)
	h.WriteByte(0)
	h.WriteString(spec.Prompt)
	h.WriteByte(0)
	h.Write(spec.InputSchema)
	h.WriteByte(0)
	hashDoc(&h, spec.Doc)
	h.WriteByte(variant)
	key := h.Sum64()

	c.mu.RLock()
	for _, e := range c.m[key] {
		if e.is(spec, variant) {
			c.mu.RUnlock()
			return e.enc, nil
		}
	}
	c.mu.RUnlock()

	enc, err := encode(spec)
	if err != nil {
		return nil, err
	}
	e := &encodedTool{name: spec.Name, desc: spec.Description, prompt: spec.Prompt, schema: string(spec.InputSchema), doc: cloneDoc(spec.Doc), variant: variant, enc: enc}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, old := range c.m[key] {
		if old.is(spec, variant) {
			return old.enc, nil
		}
	}
	if c.m == nil || c.n >= maxEncodedTools {
		c.m, c.n = make(map[uint64][]*encodedTool), 0
	}
	c.m[key] = append(c.m[key], e)
	c.n++
	return enc, nil
}

// Len returns the number of encodings held.
func (c *ToolEncodings) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.n
}

// Body is a request body assembled from byte slices without copying them:
// pre-encoded pieces shared across requests (see [ToolEncodings]) are
// referenced, not duplicated, so a request in flight holds only what is
// its own. It can be read any number of times (one reader per attempt).
// The zero value is an empty body.
type Body struct {
	parts [][]byte
	n     int64
}

// Append adds p to the body; p must not be modified afterwards.
func (b *Body) Append(p []byte) {
	if len(p) > 0 {
		b.parts = append(b.parts, p)
		b.n += int64(len(p))
	}
}

// AppendString adds s to the body.
func (b *Body) AppendString(s string) { b.Append([]byte(s)) }

// Len returns the body's length in bytes.
func (b *Body) Len() int64 { return b.n }

// Reader returns a new reader of the whole body.
func (b *Body) Reader() io.ReadCloser {
	bufs := net.Buffers(slices.Clone(b.parts)) // Read consumes its own copy
	return io.NopCloser(&bufs)
}

// Bytes returns the body as one slice (a copy).
func (b *Body) Bytes() []byte { return bytes.Join(b.parts, nil) }

// StreamBody splices a streaming request body from encoded pieces: head
// (the request's other fields as one JSON object), then a "messages"
// array of the encoded messages, then a "tools" array when there are
// tools, then "stream": true. The pieces are referenced, not copied, and
// must not be modified afterwards. Each adapter encodes the pieces in its
// own provider's format; the splice is shared.
func StreamBody(head []byte, messages, tools [][]byte) (*Body, error) {
	head = bytes.TrimSpace(head)
	if len(head) < 2 || head[0] != '{' || head[len(head)-1] != '}' {
		return nil, errors.New("llm: request head is not a JSON object")
	}
	var b Body
	open := head[:len(head)-1] // without the closing brace
	b.Append(open)
	sep := ","
	if len(bytes.TrimSpace(open)) == 1 { // "{}": no fields before ours
		sep = ""
	}
	b.appendArray(sep, "messages", messages)
	if len(tools) > 0 {
		b.appendArray(",", "tools", tools)
	}
	b.AppendString(`,"stream":true}`)
	return &b, nil
}

// appendArray appends sep"key":[items…].
func (b *Body) appendArray(sep, key string, items [][]byte) {
	b.AppendString(sep + `"` + key + `":[`)
	for i, it := range items {
		if i > 0 {
			b.AppendString(",")
		}
		b.Append(it)
	}
	b.AppendString("]")
}
