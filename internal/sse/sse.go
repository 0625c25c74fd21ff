// Package sse reads a text/event-stream body (server-sent events) with
// buffers reused across streams and small stack frames: a session's
// goroutine waits in [Reader.Next] for most of a model's reply, so what its
// frames hold is held by every waiting session. It is the one SSE reader of
// the module: the model adapters read the providers' replies with it, and
// serve's API client its event streams.
//
// Framing follows the model providers' official Go SDKs (the Anthropic and
// OpenAI SDKs' ssestream packages), which the adapters used before, and the
// event-stream format of the HTML standard where they agree: a line ends at
// "\n", and one "\r" before it is dropped; "event:" sets the event's name
// (the last one wins); each "data:" line adds its value and a "\n" to the
// event's data (the SDKs keep the last "\n", the standard drops it: see
// [Event.Text]); "id:" sets the last event ID, which stays set for the
// events after it until another "id:" changes it (a value holding a NUL is
// ignored, as the standard says); one space after the colon is dropped; a
// line starting with ":" is a comment; other fields ("retry:") are
// ignored; an empty line ends the event, unless its name and data are both
// empty. A last line without "\n" is read, but an event not ended by an
// empty line is not dispatched. A line longer than [MaxLine] (or the
// limit set with [Reader.SetMaxLine]) is an error.
package sse

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"sync"
)

// MaxLine is the longest line a [Reader] accepts: 32 MiB, the limit of the
// SDKs' readers (bufio.Scanner with bufio.MaxScanTokenSize<<9).
const MaxLine = bufio.MaxScanTokenSize << 9

// ErrLineTooLong is returned by [Reader.Next] for a line over the limit.
var ErrLineTooLong = errors.New("sse: a line is longer than the limit")

// readSize is the read buffer's size: most events' lines fit (text deltas,
// tool-input deltas, message starts are a few hundred bytes); a longer line
// is gathered in a buffer of its own. Every stream being read holds one,
// so it is small: 1 KB, where 4 KB was a visible share of the live heap
// of many sessions in flight, for no measurable CPU (docs/scale.md).
const readSize = 1 << 10

// keepCap is the largest gathered-line or data buffer put back in the pool:
// a reply with a huge event should not pin its buffers in the process.
const keepCap = 64 << 10

// buffers are what a Reader reuses: pooled, so that a process holds them
// only for the streams being read, not for every session.
type buffers struct {
	br   *bufio.Reader
	name []byte // the current event's name
	data []byte // the current event's data
	id   []byte // the last event ID
	line []byte // a line longer than the read buffer
}

var pool = sync.Pool{New: func() any { return &buffers{br: bufio.NewReaderSize(nil, readSize)} }}

// Reader reads events from a stream. The zero value is not usable: see
// [NewReader]. A Reader is not safe for concurrent use.
type Reader struct {
	body    io.ReadCloser
	b       *buffers
	err     error
	maxLine int
}

// Event is one event of a stream. Its slices are valid until the next
// call of [Reader.Next] or [Reader.Close].
type Event struct {
	// Name is the value of the event's last "event:" line ("" without
	// one; the standard's default name is "message").
	Name []byte
	// Data is the values of the event's "data:" lines, each followed by
	// "\n" (as the SDKs keep them).
	Data []byte
	// ID is the last event ID: the value of the last "id:" line of this
	// event or of an event before it (empty before any).
	ID []byte
}

// Text returns the data as the standard gives it: without its last "\n".
func (e *Event) Text() []byte { return bytes.TrimSuffix(e.Data, newline) }

// NewReader returns a Reader of body. [Reader.Close] closes body and
// returns the Reader's buffers to a pool.
func NewReader(body io.ReadCloser) *Reader {
	b := pool.Get().(*buffers)
	b.br.Reset(body)
	b.id = b.id[:0]
	return &Reader{body: body, b: b, maxLine: MaxLine}
}

// SetMaxLine sets the longest line r accepts (default [MaxLine]); n <= 0
// restores the default.
func (r *Reader) SetMaxLine(n int) {
	if n <= 0 {
		n = MaxLine
	}
	r.maxLine = n
}

// Next reads the next event. At the end of the body it returns io.EOF (an
// event not ended by an empty line is dropped); a failed read returns its
// error, which Next then keeps returning.
func (r *Reader) Next() (Event, error) {
	if r.err != nil {
		return Event{}, r.err
	}
	b := r.b
	b.name, b.data = b.name[:0], b.data[:0]
	for {
		line, err := r.readLine()
		if err != nil {
			r.err = err
			return Event{}, err
		}
		if len(line) == 0 {
			if len(b.name) == 0 && len(b.data) == 0 {
				continue
			}
			return Event{Name: b.name, Data: b.data, ID: b.id}, nil
		}
		field, value, _ := bytes.Cut(line, colon)
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
		switch string(field) {
		case "event":
			b.name = append(b.name[:0], value...)
		case "data":
			b.data = append(append(b.data, value...), '\n')
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				b.id = append(b.id[:0], value...)
			}
		}
	}
}

var colon = []byte{':'}

// readLine returns the next line without its "\n" and one "\r" before it.
func (r *Reader) readLine() ([]byte, error) {
	b := r.b
	line, err := b.br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		b.line = append(b.line[:0], line...)
		for errors.Is(err, bufio.ErrBufferFull) {
			line, err = b.br.ReadSlice('\n')
			if len(b.line)+len(line) > r.maxLine+2 {
				return nil, ErrLineTooLong
			}
			b.line = append(b.line, line...)
		}
		line = b.line
	}
	if err != nil && (err != io.EOF || len(line) == 0) {
		return nil, err
	}
	line = bytes.TrimSuffix(line, newline)
	line = bytes.TrimSuffix(line, cr)
	if len(line) > r.maxLine {
		return nil, ErrLineTooLong
	}
	return line, nil
}

var newline, cr = []byte{'\n'}, []byte{'\r'}

// Drain reads up to max more events, until the end of the body, and
// reports whether it met the end. A reply read to its end leaves its
// connection to the next request: closing a response body before its end
// closes an HTTP/1.1 connection, and makes HTTP/2 reset the stream (a
// frame written under the connection's write lock, which every stream of
// the connection shares). A stream's last event and the end of its body
// normally arrive together, so this rarely waits; a server that keeps the
// stream open after its last event is waited for as long as the caller's
// context lets it (the idle watchdog, for a model's reply).
func Drain(r *Reader, max int) bool {
	for range max + 1 {
		if _, err := r.Next(); err != nil {
			return err == io.EOF
		}
	}
	return false
}

// Close closes the body and returns the buffers to the pool. Calling it
// again does nothing.
func (r *Reader) Close() error {
	if r.b == nil {
		return nil
	}
	b := r.b
	r.b = nil
	if r.err == nil {
		r.err = errors.New("sse: read after close")
	}
	err := r.body.Close()
	b.br.Reset(nil)
	if cap(b.line) > keepCap {
		b.line = nil
	}
	if cap(b.data) > keepCap {
		b.data = nil
	}
	if cap(b.name) > keepCap {
		b.name = nil
	}
	if cap(b.id) > keepCap {
		b.id = nil
	}
	pool.Put(b)
	return err
}
