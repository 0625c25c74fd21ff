// Package sse reads a text/event-stream body (server-sent events) the way
// the model providers' official SDKs do, with buffers reused across streams
// and small stack frames: a session's goroutine waits in [Reader.Next] for
// most of a reply, so what its frames hold is held by every waiting session.
//
// Framing follows the SDKs' readers (the Anthropic and OpenAI Go SDKs'
// ssestream packages), which the adapters used before: a line ends at "\n",
// and one "\r" before it is dropped; "event:" sets the event's name (the last
// one wins); each "data:" line adds its value and a "\n" to the event's data;
// one space after the colon is dropped; a line starting with ":" is a
// comment; other fields ("id:", "retry:") are ignored; an empty line ends the
// event, unless its name and data are both empty. A last line without "\n" is
// read, but an event not ended by an empty line is not dispatched. A line
// longer than [MaxLine] is an error.
package sse

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
)

// MaxLine is the longest line a [Reader] accepts: 32 MiB, the limit of the
// SDKs' readers (bufio.Scanner with bufio.MaxScanTokenSize<<9).
const MaxLine = bufio.MaxScanTokenSize << 9

// ErrLineTooLong is returned by [Reader.Next] for a line over [MaxLine].
var ErrLineTooLong = fmt.Errorf("sse: a line is longer than %d MiB", MaxLine>>20)

// readSize is the read buffer's size: most events' lines fit (text deltas,
// tool-input deltas, message starts are a few hundred bytes); a longer line
// is gathered in a buffer of its own.
const readSize = 4 << 10

// keepCap is the largest gathered-line or data buffer put back in the pool:
// a reply with a huge event should not pin its buffers in the process.
const keepCap = 64 << 10

// buffers are what a Reader reuses: pooled, so that a process holds them
// only for the streams being read, not for every session.
type buffers struct {
	br   *bufio.Reader
	name []byte // the current event's name
	data []byte // the current event's data
	line []byte // a line longer than the read buffer
}

var pool = sync.Pool{New: func() any { return &buffers{br: bufio.NewReaderSize(nil, readSize)} }}

// Reader reads events from a stream. The zero value is not usable: see
// [NewReader]. A Reader is not safe for concurrent use.
type Reader struct {
	body io.ReadCloser
	b    *buffers
	err  error
}

// NewReader returns a Reader of body. [Reader.Close] closes body and
// returns the Reader's buffers to a pool.
func NewReader(body io.ReadCloser) *Reader {
	b := pool.Get().(*buffers)
	b.br.Reset(body)
	return &Reader{body: body, b: b}
}

// Next reads the next event: its name and data, valid until the next call
// of Next or Close. At the end of the body it returns io.EOF (an event not
// ended by an empty line is dropped); a failed read returns its error,
// which Next then keeps returning.
func (r *Reader) Next() (name, data []byte, err error) {
	if r.err != nil {
		return nil, nil, r.err
	}
	b := r.b
	b.name, b.data = b.name[:0], b.data[:0]
	for {
		line, err := r.readLine()
		if err != nil {
			r.err = err
			return nil, nil, err
		}
		if len(line) == 0 {
			if len(b.name) == 0 && len(b.data) == 0 {
				continue
			}
			return b.name, b.data, nil
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
			if len(b.line)+len(line) > MaxLine+2 {
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
	if len(line) > MaxLine {
		return nil, ErrLineTooLong
	}
	return line, nil
}

var newline, cr = []byte{'\n'}, []byte{'\r'}

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
	pool.Put(b)
	return err
}
