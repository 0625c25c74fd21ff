package streamjson

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
)

// MaxLineBytes bounds one input line (a user message with images can be
// large).
const MaxLineBytes = 64 << 20

// ErrClosed is returned for control requests still waiting when the input
// ends or the Conn is closed.
var ErrClosed = errors.New("streamjson: the connection is closed")

// UserInput is a user message read from the input.
type UserInput struct {
	Type    string `json:"type"` // "user"
	Message struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"message"`
	ParentToolUseID *string `json:"parent_tool_use_id"`
	SessionID       string  `json:"session_id,omitempty"`
	UUID            string  `json:"uuid,omitempty"`
}

// ControlRequest is a control request: Request holds the subtype and the
// subtype's fields.
type ControlRequest struct {
	Type      string          `json:"type"` // "control_request"
	RequestID string          `json:"request_id"`
	Request   json.RawMessage `json:"request"`
}

// Subtype returns the request's subtype ("" if it has none).
func (r *ControlRequest) Subtype() string {
	var s struct {
		Subtype string `json:"subtype"`
	}
	_ = json.Unmarshal(r.Request, &s)
	return s.Subtype
}

// ControlResponse is the answer to a control request.
type ControlResponse struct {
	Type     string       `json:"type"` // "control_response"
	Response ResponseBody `json:"response"`
}

// ResponseBody is a control response's body: success with a response
// object, or error with a message.
type ResponseBody struct {
	Subtype   string          `json:"subtype"` // "success" or "error"
	RequestID string          `json:"request_id"`
	Response  json.RawMessage `json:"response,omitempty"`
	Error     string          `json:"error,omitempty"`
}

// RemoteError is a control request the other side answered with an error.
type RemoteError struct {
	Subtype string
	Message string
}

func (e *RemoteError) Error() string {
	return fmt.Sprintf("streamjson: %s request failed: %s", e.Subtype, e.Message)
}

// Handler answers the control requests of the other side: it returns the
// response object (nil = an empty one) or an error, sent as an error
// response. It runs on its own goroutine; ctx ends when the other side
// cancels the request or the connection closes.
type Handler func(ctx context.Context, req *ControlRequest) (any, error)

// ConnOptions configure a [Conn]. Every zero value is a sensible default.
type ConnOptions struct {
	// Handle answers control requests (nil: every request gets an error
	// response).
	Handle Handler
	// Inspect, if set, sees every control request as it is read, before
	// Handle runs (on the reading goroutine, in input order), so a
	// session can record what an initialize says before the user
	// messages that follow it are seen.
	Inspect func(req *ControlRequest)
	// Answered, if set, is called once the response to a control request
	// of the other side was written.
	Answered func(req *ControlRequest)
	// User receives the user messages, in order, on the reading goroutine
	// (it must not block for long).
	User func(*UserInput)
	// Warn receives what is wrong with the input (a line that is not JSON,
	// an unknown message type); the line is skipped. Nil discards.
	Warn func(msg string)
}

// Conn is one peer of the stream-json protocol over a reader (the other
// side's messages, one JSON object per line) and a writer. Writes are
// serialised; [Conn.Run] reads. Its methods are safe for concurrent use.
type Conn struct {
	in   io.Reader
	out  io.Writer
	opts ConnOptions

	wmu sync.Mutex
	bw  *bufio.Writer

	mu       sync.Mutex
	seq      int
	pending  map[string]chan ResponseBody
	handling map[string]context.CancelFunc
	closed   bool
	wg       sync.WaitGroup
}

// NewConn returns a Conn reading in and writing out.
func NewConn(in io.Reader, out io.Writer, opts ConnOptions) *Conn {
	return &Conn{in: in, out: out, opts: opts, bw: bufio.NewWriter(out),
		pending: map[string]chan ResponseBody{}, handling: map[string]context.CancelFunc{}}
}

// Write writes v as one JSON line and flushes it.
func (c *Conn) Write(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("streamjson: encode %T: %w", v, err)
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.bw.Write(b)
	c.bw.WriteByte('\n')
	return c.bw.Flush()
}

// Request sends a control request (payload is an object with the subtype
// and its fields) and waits for the response object. An error response
// is a [*RemoteError]; a ctx that ends first sends a
// control_cancel_request and returns ctx's error.
func (c *Conn) Request(ctx context.Context, payload any) (json.RawMessage, error) {
	raw, err := json.Marshal(payload)
	if err != nil {
		return nil, fmt.Errorf("streamjson: encode request: %w", err)
	}
	req := &ControlRequest{Type: "control_request", Request: raw}
	ch := make(chan ResponseBody, 1)
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, ErrClosed
	}
	c.seq++
	req.RequestID = "gantry_req_" + strconv.Itoa(c.seq)
	c.pending[req.RequestID] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, req.RequestID)
		c.mu.Unlock()
	}()
	if err := c.Write(req); err != nil {
		return nil, err
	}
	select {
	case resp, ok := <-ch:
		if !ok {
			return nil, ErrClosed
		}
		if resp.Subtype == "error" {
			return nil, &RemoteError{Subtype: req.Subtype(), Message: resp.Error}
		}
		return resp.Response, nil
	case <-ctx.Done():
		_ = c.Write(map[string]string{"type": "control_cancel_request", "request_id": req.RequestID})
		return nil, ctx.Err()
	}
}

// Run reads the input until it ends (nil) or fails, dispatching each
// line; control requests are handled on their own goroutines, which Run
// waits for before it returns. When Run returns, requests still waiting
// for a response fail with [ErrClosed].
func (c *Conn) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer func() {
		cancel()
		c.close()
		c.wg.Wait()
	}()
	br := bufio.NewReaderSize(c.in, 64<<10)
	for n := 1; ; n++ {
		line, err := readLine(br)
		if len(bytes.TrimSpace(line)) > 0 {
			c.dispatch(ctx, n, line)
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("streamjson: reading input: %w", err)
		}
	}
}

// readLine reads one line, at most MaxLineBytes long.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > MaxLineBytes {
			// Skip the rest of the line.
			for err == bufio.ErrBufferFull {
				_, err = br.ReadSlice('\n')
			}
			return nil, fmt.Errorf("an input line is over %d MiB", MaxLineBytes>>20)
		}
		if err != bufio.ErrBufferFull {
			return line, err
		}
	}
}

func (c *Conn) warn(format string, args ...any) {
	if c.opts.Warn != nil {
		c.opts.Warn(fmt.Sprintf(format, args...))
	}
}

func (c *Conn) dispatch(ctx context.Context, n int, line []byte) {
	var head struct {
		Type      string          `json:"type"`
		RequestID string          `json:"request_id"`
		Response  json.RawMessage `json:"response"`
	}
	if err := json.Unmarshal(line, &head); err != nil {
		c.warn("input line %d is not a JSON object (%v); skipped", n, err)
		return
	}
	switch head.Type {
	case "user":
		var u UserInput
		if err := json.Unmarshal(line, &u); err != nil {
			c.warn("input line %d: bad user message (%v); skipped", n, err)
			return
		}
		if c.opts.User != nil {
			c.opts.User(&u)
		}
	case "control_request":
		var req ControlRequest
		if err := json.Unmarshal(line, &req); err != nil || req.RequestID == "" {
			c.warn("input line %d: bad control request; skipped", n)
			return
		}
		if c.opts.Inspect != nil {
			c.opts.Inspect(&req)
		}
		c.handle(ctx, &req)
	case "control_response":
		var body ResponseBody
		if err := json.Unmarshal(head.Response, &body); err != nil {
			c.warn("input line %d: bad control response; skipped", n)
			return
		}
		c.mu.Lock()
		ch := c.pending[body.RequestID]
		delete(c.pending, body.RequestID)
		c.mu.Unlock()
		if ch == nil {
			c.warn("input line %d: a response to unknown request %q; skipped", n, body.RequestID)
			return
		}
		ch <- body
	case "control_cancel_request":
		c.mu.Lock()
		cancel := c.handling[head.RequestID]
		c.mu.Unlock()
		if cancel != nil {
			cancel()
		}
	case "keep_alive":
	default:
		c.warn("input line %d: unknown message type %q; skipped", n, head.Type)
	}
}

// handle answers a control request on its own goroutine.
func (c *Conn) handle(ctx context.Context, req *ControlRequest) {
	hctx, cancel := context.WithCancel(ctx)
	c.mu.Lock()
	c.handling[req.RequestID] = cancel
	c.mu.Unlock()
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer func() {
			cancel()
			c.mu.Lock()
			delete(c.handling, req.RequestID)
			c.mu.Unlock()
		}()
		var resp any
		err := fmt.Errorf("unsupported control request %q", req.Subtype())
		if c.opts.Handle != nil {
			resp, err = c.opts.Handle(hctx, req)
		}
		body := ResponseBody{Subtype: "success", RequestID: req.RequestID}
		if err != nil {
			body.Subtype, body.Error = "error", err.Error()
		} else {
			if resp == nil {
				resp = struct{}{}
			}
			raw, merr := json.Marshal(resp)
			if merr != nil {
				body.Subtype, body.Error = "error", merr.Error()
			} else {
				body.Response = raw
			}
		}
		_ = c.Write(ControlResponse{Type: "control_response", Response: body})
		if c.opts.Answered != nil {
			c.opts.Answered(req)
		}
	}()
}

// close fails the waiting requests and refuses new ones.
func (c *Conn) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	c.closed = true
	for id, ch := range c.pending {
		close(ch)
		delete(c.pending, id)
	}
}
