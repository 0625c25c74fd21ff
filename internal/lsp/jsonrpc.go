package lsp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/textproto"
	"strconv"
	"strings"
	"sync"
)

// This file is a small JSON-RPC 2.0 client over the LSP base protocol
// (Content-Length framed messages on a byte stream). It is written here
// rather than taken from a library: see docs/design.md ("LSP client").

// maxMessage bounds one incoming message; a server sending more is broken.
const maxMessage = 64 << 20

// ErrClosed is wrapped by the errors of requests that could not complete
// because the connection ended (the server exited or crashed).
var ErrClosed = errors.New("language server connection closed")

// RPCError is an error response of the server.
type RPCError struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *RPCError) Error() string { return fmt.Sprintf("%s (code %d)", e.Message, e.Code) }

// JSON-RPC and LSP error codes used here.
const (
	codeMethodNotFound   = -32601
	codeRequestCancelled = -32800
)

type wireMsg struct {
	JSONRPC string           `json:"jsonrpc"`
	ID      *json.RawMessage `json:"id,omitempty"`
	Method  string           `json:"method,omitempty"`
	Params  json.RawMessage  `json:"params,omitempty"`
	Result  json.RawMessage  `json:"result,omitempty"`
	Error   *RPCError        `json:"error,omitempty"`
}

// handler answers the server's requests (result, error) and receives its
// notifications (the result is ignored).
type handler func(method string, params json.RawMessage, isRequest bool) (any, error)

// conn is one JSON-RPC connection. Requests may be sent concurrently.
type conn struct {
	w       io.WriteCloser
	handle  handler
	wmu     sync.Mutex
	mu      sync.Mutex
	nextID  int64
	pending map[int64]chan *wireMsg
	done    chan struct{}
	err     error // why the connection ended; set before done is closed
}

func newConn(r io.Reader, w io.WriteCloser, h handler) *conn {
	c := &conn{w: w, handle: h, pending: make(map[int64]chan *wireMsg), done: make(chan struct{})}
	go c.read(bufio.NewReaderSize(r, 64<<10))
	return c
}

// Done is closed when the connection has ended.
func (c *conn) Done() <-chan struct{} { return c.done }

func (c *conn) write(m *wireMsg) error {
	m.JSONRPC = "2.0"
	b, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("lsp: encode %s: %w", m.Method, err)
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if _, err := fmt.Fprintf(c.w, "Content-Length: %d\r\n\r\n", len(b)); err != nil {
		return fmt.Errorf("%w: %v", ErrClosed, err)
	}
	if _, err := c.w.Write(b); err != nil {
		return fmt.Errorf("%w: %v", ErrClosed, err)
	}
	return nil
}

// Notify sends a notification.
func (c *conn) Notify(method string, params any) error {
	raw, err := json.Marshal(params)
	if err != nil {
		return fmt.Errorf("lsp: encode %s: %w", method, err)
	}
	return c.write(&wireMsg{Method: method, Params: raw})
}

// Call sends a request and waits for its response, the end of the
// connection or ctx. When ctx ends first, $/cancelRequest is sent and the
// late response is dropped.
func (c *conn) Call(ctx context.Context, method string, params, result any) error {
	raw, err := json.Marshal(params)
	if err != nil {
		return fmt.Errorf("lsp: encode %s: %w", method, err)
	}
	ch := make(chan *wireMsg, 1)
	c.mu.Lock()
	if c.pending == nil {
		c.mu.Unlock()
		return fmt.Errorf("%s: %w: %v", method, ErrClosed, c.err)
	}
	c.nextID++
	id := c.nextID
	c.pending[id] = ch
	c.mu.Unlock()
	idRaw := json.RawMessage(strconv.FormatInt(id, 10))
	if err := c.write(&wireMsg{ID: &idRaw, Method: method, Params: raw}); err != nil {
		c.forget(id)
		return fmt.Errorf("%s: %w", method, err)
	}
	select {
	case m := <-ch:
		if m == nil {
			return fmt.Errorf("%s: %w: %v", method, ErrClosed, c.err)
		}
		if m.Error != nil {
			return fmt.Errorf("%s: %w", method, m.Error)
		}
		if result != nil && len(m.Result) > 0 {
			if err := json.Unmarshal(m.Result, result); err != nil {
				return fmt.Errorf("%s: bad result: %w", method, err)
			}
		}
		return nil
	case <-ctx.Done():
		c.forget(id)
		_ = c.Notify("$/cancelRequest", map[string]int64{"id": id})
		return fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

func (c *conn) forget(id int64) {
	c.mu.Lock()
	delete(c.pending, id)
	c.mu.Unlock()
}

// Close closes the writing side; the reader ends when the server closes its
// output.
func (c *conn) Close() error { return c.w.Close() }

func (c *conn) read(r *bufio.Reader) {
	err := c.readLoop(r)
	c.mu.Lock()
	c.err = err
	pending := c.pending
	c.pending = nil
	c.mu.Unlock()
	// Done before the waiting calls hear of it: a caller that retries on
	// ErrClosed must already see the connection as ended.
	close(c.done)
	for _, ch := range pending {
		ch <- nil
	}
}

func (c *conn) readLoop(r *bufio.Reader) error {
	tp := textproto.NewReader(r)
	for {
		hdr, err := tp.ReadMIMEHeader()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return io.EOF
			}
			return fmt.Errorf("read header: %w", err)
		}
		n, err := strconv.ParseInt(strings.TrimSpace(hdr.Get("Content-Length")), 10, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("bad Content-Length %q", hdr.Get("Content-Length"))
		}
		if n > maxMessage {
			return fmt.Errorf("message of %d bytes is over the %d-byte limit", n, maxMessage)
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(r, body); err != nil {
			return fmt.Errorf("read body: %w", err)
		}
		var m wireMsg
		if err := json.Unmarshal(body, &m); err != nil {
			return fmt.Errorf("bad message: %w", err)
		}
		switch {
		case m.Method != "" && m.ID != nil:
			go c.answer(m)
		case m.Method != "":
			if c.handle != nil {
				_, _ = c.handle(m.Method, m.Params, false)
			}
		case m.ID != nil:
			id, err := strconv.ParseInt(string(*m.ID), 10, 64)
			if err != nil {
				continue // not one of ours
			}
			c.mu.Lock()
			ch, ok := c.pending[id]
			delete(c.pending, id)
			c.mu.Unlock()
			if ok {
				ch <- &m
			}
		}
	}
}

// answer replies to a request of the server.
func (c *conn) answer(m wireMsg) {
	var res any
	err := error(&RPCError{Code: codeMethodNotFound, Message: "method not supported: " + m.Method})
	if c.handle != nil {
		res, err = c.handle(m.Method, m.Params, true)
	}
	reply := &wireMsg{ID: m.ID}
	if err != nil {
		var re *RPCError
		if !errors.As(err, &re) {
			re = &RPCError{Code: -32603, Message: err.Error()}
		}
		reply.Error = re
	} else {
		raw, mErr := json.Marshal(res)
		if mErr != nil {
			raw = json.RawMessage("null")
		}
		reply.Result = raw
		if len(reply.Result) == 0 {
			reply.Result = json.RawMessage("null")
		}
	}
	_ = c.write(reply)
}
