package llm

import (
	"bytes"
	"hash/maphash"
	"slices"
	"sync"
	"unsafe"

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

	arrays toolArrays // joined arrays of encodings (see [ToolEncodings.Array])
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

// MessageEncodings keeps the wire encoding of one conversation's messages
// from one request to the next, so that a request encodes only the
// messages it did not send before: set [Request.Encodings] to the same
// value on every request of a conversation, and a turn costs the encoding
// of what it adds instead of the whole conversation again. Each adapter
// encodes in its own format (see [MessageEncodings.Encode]); the cache
// only remembers. A layer that rewrites the messages before the adapter
// encodes them (the text tool protocol) keeps its rewrites here too (see
// [MessageEncodings.Rewrite]), so that a rewritten message keeps its
// identity and its encoding from one request to the next.
//
// An encoding is reused when the message at the same position has the
// same role and the same content slice (the same backing array and
// length) as when it was encoded, in the same format and the same variant
// (an adapter's choice, such as with or without a cache breakpoint).
// Appending messages, replacing some (compaction), dropping the tail
// (rewind) or merging two therefore re-encode exactly what changed. A
// message whose blocks are changed in place — the same slice with new
// contents — is not noticed: treat a message as immutable once it was
// sent, or call [MessageEncodings.Reset] after changing one. A
// conversation decoded afresh for every request (a durable workflow's
// activity input) has new slices every time: [MessageEncodings.Intern]
// gives its messages back the identity of the equal ones seen before.
//
// It holds the encodings of the last request's messages and references
// their content (so their memory cannot be reused while it is held); drop
// or reset it when the conversation goes idle to give that back. The zero
// value is ready to use, and a nil *MessageEncodings encodes every message
// on every request. It is safe for concurrent use, although concurrent
// requests of one conversation evict each other's encodings.
type MessageEncodings struct {
	mu      sync.Mutex
	format  string
	entries []encodedMessage
	size    int64 // bytes of the pieces in entries
	layers  []rewriteLayer
	intern  []Message // what the last Intern returned
}

// messageKey is what identifies a message at a position: its role, its
// content slice (identity, not contents) and the adapter's variant.
type messageKey struct {
	role    Role
	content []Block // the message's blocks as met; identity is the key
	variant uint8
}

func (k *messageKey) is(m *Message, variant uint8) bool {
	return k.role == m.Role && k.variant == variant && len(k.content) == len(m.Content) &&
		unsafe.SliceData(k.content) == unsafe.SliceData(m.Content)
}

type encodedMessage struct {
	messageKey
	pieces []Piece
}

// rewriteLayer is what one rewriting layer (such as the text tool
// protocol) made of the last request's messages.
type rewriteLayer struct {
	name    string
	entries []rewrittenMessage
}

type rewrittenMessage struct {
	messageKey
	usesPrefix bool    // the rewrite read earlier messages
	out        Message // the rewritten message, as returned
}

// Encode appends to dst the pieces msgs are sent as, message by message,
// and returns the extended slice. Message i is sent as the zero or more
// pieces encode(i, variant(i)) returns (an adapter may send a message as
// several provider messages, or as none), unless the previous Encode of
// this cache met the same message at position i in the same format and
// variant: then its pieces are reused without calling encode. A nil
// variant means variant 0 for every message. An error from encode is
// returned as is, and the cache keeps what it held for that position.
//
// A piece the cache keeps does not hold a second copy of the message's
// long texts (a tool's output, a reply): where such a text's JSON string
// appears in the encoding exactly as the SDKs' encoders escape it, the
// piece keeps the bytes around it and a reference to the message's string,
// which a [Body] escapes again each time it is read (see [Piece]). A nil
// *MessageEncodings returns the encodings as they are.
//
// format names the adapter's wire format ("anthropic.messages"); a cache
// met with another format forgets what it held. The pieces are shared by
// later requests: encode must return slices it never modifies, and
// callers must not modify the returned ones.
func (c *MessageEncodings) Encode(dst []Piece, format string, msgs []Message, variant func(i int) uint8, encode func(i int, variant uint8) ([][]byte, error)) ([]Piece, error) {
	vOf := func(i int) uint8 {
		if variant == nil {
			return 0
		}
		return variant(i)
	}
	if c == nil {
		for i := range msgs {
			p, err := encode(i, vOf(i))
			if err != nil {
				return dst, err
			}
			for _, b := range p {
				dst = append(dst, Piece{b: b})
			}
		}
		return dst, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.format != format {
		clear(c.entries)
		c.format, c.entries, c.size = format, c.entries[:0], 0
	}
	for i := range msgs {
		m, v := &msgs[i], vOf(i)
		if i < len(c.entries) && c.entries[i].is(m, v) {
			dst = append(dst, c.entries[i].pieces...)
			continue
		}
		enc, err := encode(i, v)
		if err != nil {
			return dst, err
		}
		p := splitTexts(enc, m)
		e := encodedMessage{messageKey{m.Role, m.Content, v}, p}
		c.size += piecesLen(p)
		if i < len(c.entries) {
			c.size -= piecesLen(c.entries[i].pieces)
			c.entries[i] = e
		} else {
			c.entries = append(c.entries, e)
		}
		dst = append(dst, p...)
	}
	for _, e := range c.entries[len(msgs):] { // a shorter conversation: let go of the rest
		c.size -= piecesLen(e.pieces)
	}
	clear(c.entries[len(msgs):])
	c.entries = c.entries[:len(msgs)]
	return dst, nil
}

func piecesLen(p []Piece) int64 {
	var n int64
	for _, b := range p {
		n += int64(b.Len())
	}
	return n
}

// Rewrite returns msgs as the layer named layer rewrites them, message by
// message, keeping each rewritten message from one request to the next
// so that its identity — and with it its encoding — survives: message i
// becomes the message rewrite(i) returns, unless the previous Rewrite of
// this layer met the same message (role and content slice) at position i
// and kept its rewrite. rewrite also reports whether its result depends on
// the messages before i (the text tool protocol names a tool result's
// tool from the call before it); such a rewrite is kept only while every
// earlier message is the same as when it was made, and when it is made
// again and comes out equal, the kept one is returned. A rewrite that
// leaves a message unchanged returns msgs[i] itself.
//
// The returned slice is new; the messages in it are shared by later
// requests and must not be modified. A nil *MessageEncodings calls
// rewrite for every message.
func (c *MessageEncodings) Rewrite(layer string, msgs []Message, rewrite func(i int) (m Message, usesPrefix bool)) []Message {
	out := make([]Message, len(msgs))
	if c == nil {
		for i := range msgs {
			out[i], _ = rewrite(i)
		}
		return out
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var l *rewriteLayer
	for i := range c.layers {
		if c.layers[i].name == layer {
			l = &c.layers[i]
		}
	}
	if l == nil {
		c.layers = append(c.layers, rewriteLayer{name: layer})
		l = &c.layers[len(c.layers)-1]
	}
	samePrefix := true // every message before i is the one met last time
	for i := range msgs {
		m := &msgs[i]
		if i < len(l.entries) && l.entries[i].is(m, 0) {
			if e := &l.entries[i]; !e.usesPrefix || samePrefix {
				out[i] = e.out
				continue
			}
		} else {
			samePrefix = false
		}
		r, uses := rewrite(i)
		e := rewrittenMessage{messageKey{m.Role, m.Content, 0}, uses, r}
		if i < len(l.entries) {
			if old := &l.entries[i]; old.is(m, 0) && messageEqual(&old.out, &r) {
				e.out = old.out // made again from a new prefix, and the same: keep its identity
			}
			l.entries[i] = e
		} else {
			l.entries = append(l.entries, e)
		}
		out[i] = e.out
	}
	clear(l.entries[len(msgs):])
	l.entries = l.entries[:len(msgs)]
	return out
}

// Intern replaces, in place, each message of msgs that equals in role and
// content (every field of every block) the message the previous Intern of
// this cache met at the same position with that earlier message, and
// returns msgs. A conversation decoded afresh for each request — a
// durable workflow passes it to an activity as data — then meets the
// cache with the identities of the first request that held each message,
// and only the messages that differ are encoded again. It costs a
// comparison of the messages' bytes, much less than encoding them. A nil
// *MessageEncodings returns msgs unchanged.
func (c *MessageEncodings) Intern(msgs []Message) []Message {
	if c == nil {
		return msgs
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range msgs {
		if i < len(c.intern) && messageEqual(&c.intern[i], &msgs[i]) {
			msgs[i] = c.intern[i]
		}
	}
	clear(c.intern)
	c.intern = append(c.intern[:0], msgs...)
	return msgs
}

// Reset forgets every encoding held.
func (c *MessageEncodings) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.entries)
	clear(c.layers)
	clear(c.intern)
	c.format, c.entries, c.size, c.layers, c.intern = "", nil, 0, nil, nil
}

// Len returns the number of messages whose encodings are held.
func (c *MessageEncodings) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

// Size returns the bytes of the encodings held. The messages they were
// made from are held as well (about as large again).
func (c *MessageEncodings) Size() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.size
}

// Held returns the bytes the cache holds of its own: the encodings less
// the long texts they reference in their messages (see [Piece]), which
// [MessageEncodings.Size] counts as encoded.
func (c *MessageEncodings) Held() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	var n int64
	for _, e := range c.entries {
		for _, p := range e.pieces {
			n += int64(len(p.b))
			if p.t != nil {
				n += int64(len(p.t.after))
			}
		}
	}
	return n
}

// messageEqual reports whether a and b are the same message: the same
// role and blocks equal in every field, nil and empty told apart (an
// adapter may encode them differently).
func messageEqual(a, b *Message) bool {
	return a.Role == b.Role && sliceEqual(a.Content, b.Content, blockEqual)
}

func blockEqual(a, b *Block) bool {
	return a.Type == b.Type && a.Text == b.Text && bytesSame(a.Data, b.Data) && a.MIMEType == b.MIMEType &&
		a.ID == b.ID && a.Name == b.Name && bytesSame(a.Input, b.Input) && a.ToolUseID == b.ToolUseID &&
		sliceEqual(a.Content, b.Content, contentEqual) && a.IsError == b.IsError &&
		a.Signature == b.Signature && a.Redacted == b.Redacted
}

func contentEqual(a, b *tool.Content) bool {
	return (a.Type == b.Type && a.Text == b.Text && bytesSame(a.Data, b.Data) && a.MIMEType == b.MIMEType &&
		a.URI == b.URI && a.Name == b.Name && a.Title == b.Title && a.Description == b.Description)
}

func bytesSame(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }

func sliceEqual[T any](a, b []T, eq func(a, b *T) bool) bool {
	if len(a) != len(b) || (a == nil) != (b == nil) {
		return false
	}
	if len(a) > 0 && unsafe.SliceData(a) == unsafe.SliceData(b) {
		return true
	}
	for i := range a {
		if !eq(&a[i], &b[i]) {
			return false
		}
	}
	return true
}
