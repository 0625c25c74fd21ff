package llm

import (
	"bytes"
	"errors"
	"io"
	"net/http"
)

// Body is a request body assembled from byte slices without copying them:
// pre-encoded pieces shared across requests (see [ToolEncodings] and
// [MessageEncodings]) are referenced, not duplicated, so a request in
// flight holds only what is its own. It can be read any number of times
// (one reader per attempt). The zero value is an empty body.
//
// A body is a short list of segments, each one slice or a list of slices
// joined by commas (a JSON array's items), so that a request of a long
// conversation holds a few dozen bytes of its own besides the list of its
// encoded messages, not a slice header per piece and per comma.
type Body struct {
	segs []segment
	n    int64
}

// segment is one piece, or items written with a comma between each two.
type segment struct {
	b     []byte
	items []Piece
	list  bool // items, not b
}

// Append adds p to the body; p must not be modified afterwards.
func (b *Body) Append(p []byte) {
	if len(p) > 0 {
		b.segs = append(b.segs, segment{b: p})
		b.n += int64(len(p))
	}
}

// AppendString adds s to the body.
func (b *Body) AppendString(s string) { b.Append([]byte(s)) }

// AppendList adds items with a comma between each two (the inside of a
// JSON array). Neither the items nor the slice holding them may be
// modified afterwards. The texts of the items (see [Piece]) are escaped
// when the body is read, every time it is read.
func (b *Body) AppendList(items []Piece) {
	n := int64(0)
	for _, it := range items {
		n += int64(it.Len())
	}
	if len(items) > 1 {
		n += int64(len(items) - 1)
	}
	if n > 0 {
		b.segs = append(b.segs, segment{items: items, list: true})
		b.n += n
	}
}

// Len returns the body's length in bytes.
func (b *Body) Len() int64 { return b.n }

// Reader returns a new reader of the whole body. It implements
// [io.WriterTo], writing the pieces in place.
func (b *Body) Reader() io.ReadCloser { return &bodyReader{segs: b.segs} }

// SetOn sets r's ContentLength and GetBody for this body (r's Body is a
// [Body.Reader]), so that net/http sends its length and can send it again
// on a new connection.
func (b *Body) SetOn(r *http.Request) {
	r.ContentLength = b.n
	r.GetBody = func() (io.ReadCloser, error) { return b.Reader(), nil }
}

// Bytes returns the body as one slice (a copy).
func (b *Body) Bytes() []byte {
	var buf bytes.Buffer
	buf.Grow(int(b.n))
	_, _ = b.Reader().(io.WriterTo).WriteTo(&buf)
	return buf.Bytes()
}

// bodyReader reads a [Body]'s segments in order without consuming them,
// so that every reader starts from the whole body.
type bodyReader struct {
	segs []segment
	s    int    // the segment to read next
	item int    // in a list: the item, or the comma before it when comma
	part int    // in an item: its bytes (0), its text (1), the bytes after (2)
	off  int    // the offset in the current piece (in a text: in the text)
	pend []byte // the rest of an escape that did not fit the last read
	buf  [6]byte
}

var comma = []byte(",") // shared, never modified

// piece returns the bytes the reader is in, or the text it is in (both
// nil at the end), advancing past empty ones.
func (r *bodyReader) piece() ([]byte, *textPart) {
	for r.s < len(r.segs) {
		sg := &r.segs[r.s]
		if !sg.list {
			if r.off < len(sg.b) {
				return sg.b, nil
			}
		} else if k := r.item; k < 2*len(sg.items)-1 { // item i at 2i, its comma at 2i-1
			if k%2 == 1 {
				if r.off < len(comma) {
					return comma, nil
				}
			} else if it := &sg.items[k/2]; r.part == 0 && r.off < len(it.b) {
				return it.b, nil
			} else if it.t != nil && r.part < 2 {
				if r.part == 0 {
					r.part, r.off = 1, 0
				}
				if r.off < len(it.t.s) {
					return nil, it.t
				}
				r.part, r.off = 2, 0
				continue
			} else if it.t != nil && r.off < len(it.t.after) {
				return it.t.after, nil
			}
			r.item, r.part, r.off = k+1, 0, 0
			continue
		}
		r.s, r.item, r.part, r.off = r.s+1, 0, 0, 0
	}
	return nil, nil
}

func (r *bodyReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if len(r.pend) > 0 {
			c := copy(p[n:], r.pend)
			r.pend = r.pend[c:]
			n += c
			continue
		}
		pc, t := r.piece()
		if t != nil {
			w, used := escapeInto(p[n:], t.s[r.off:], t.html)
			if w == 0 && used == 0 { // the next escape is longer than the room left
				w, used = escapeInto(r.buf[:], t.s[r.off:], t.html)
				r.pend = r.buf[:w]
				w = 0
			}
			n += w
			r.off += used
			continue
		}
		if pc == nil {
			break
		}
		c := copy(p[n:], pc[r.off:])
		n += c
		r.off += c
	}
	if n == 0 && len(p) > 0 {
		return 0, io.EOF
	}
	return n, nil
}

// WriteTo writes the rest of the body to w, piece by piece (a text through
// a small buffer, escaped).
func (r *bodyReader) WriteTo(w io.Writer) (int64, error) {
	var total int64
	if len(r.pend) > 0 {
		n, err := w.Write(r.pend)
		total += int64(n)
		r.pend = r.pend[n:]
		if err != nil {
			return total, err
		}
	}
	var buf []byte
	for {
		pc, t := r.piece()
		if t != nil {
			if buf == nil {
				buf = make([]byte, 2048)
			}
			k, used := escapeInto(buf, t.s[r.off:], t.html)
			n, err := w.Write(buf[:k])
			total += int64(n)
			if err == nil && n < k {
				err = io.ErrShortWrite
			}
			if err != nil {
				return total, err
			}
			r.off += used
			continue
		}
		if pc == nil {
			return total, nil
		}
		n, err := w.Write(pc[r.off:])
		total += int64(n)
		r.off += n
		if err != nil {
			return total, err
		}
	}
}

func (r *bodyReader) Close() error { return nil }

// StreamBody splices a streaming request body from encoded pieces: head
// (the request's other fields as one JSON object), then a "messages"
// array of the encoded messages, then "tools" when tools is not empty (a
// whole JSON array, such as [ToolEncodings.Array] returns), then
// "stream": true. The pieces and the messages slice are referenced, not
// copied, and must not be modified afterwards. Each adapter encodes the
// pieces in its own provider's format; the splice is shared.
func StreamBody(head []byte, messages []Piece, tools []byte) (*Body, error) {
	head = bytes.TrimSpace(head)
	if len(head) < 2 || head[0] != '{' || head[len(head)-1] != '}' {
		return nil, errors.New("llm: request head is not a JSON object")
	}
	b := Body{segs: make([]segment, 0, 6)}
	open := head[:len(head)-1] // without the closing brace
	b.Append(open)
	if len(bytes.TrimSpace(open)) == 1 { // "{}": no fields before ours
		b.Append(messagesKey[1:])
	} else {
		b.Append(messagesKey)
	}
	b.AppendList(messages)
	if len(tools) > 0 {
		b.Append(toolsKey)
		b.Append(tools)
	} else {
		b.Append(closeBracket)
	}
	b.Append(streamTail)
	return &b, nil
}

// The splice's own pieces: shared, never modified.
var (
	messagesKey  = []byte(`,"messages":[`)
	toolsKey     = []byte(`],"tools":`)
	closeBracket = []byte(`]`)
	streamTail   = []byte(`,"stream":true}`)
)
