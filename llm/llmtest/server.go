// Package llmtest is a scripted fake of the Anthropic Messages API and the
// OpenAI Chat Completions API, served on a loopback [httptest.Server], so
// that tests drive the real SDK clients over HTTP.
//
//	srv := llmtest.NewServer(t)
//	srv.Script(
//		llmtest.Reply{Content: []llm.Block{llm.ToolUse("toolu_1", "Read", json.RawMessage(`{"path":"a.go"}`))}},
//		llmtest.TextReply("done"),
//	)
//	p := anthropic.New(anthropic.Options{BaseURL: srv.URL(), APIKey: "test"})
//	… run the code under test …
//	reqs := srv.Requests() // what the client sent, decoded
//
// Each request takes the next scripted [Reply], whichever API it calls.
// Replies are streamed as server-sent events when the request asks for a
// stream, else sent as one JSON body. A reply can fail on demand (an error
// status with a provider-shaped body and retry-after headers, a dropped
// connection before the headers or part-way through the stream), arrive
// slowly (delays before the headers and between events), and split text and
// tool input into small pieces. [WithIndexZero] makes the OpenAI side give
// every parallel tool call index 0, like Ollama.
//
// The server answers on /v1/messages (Anthropic), and /v1/chat/completions
// and /chat/completions (OpenAI), so [Server.URL] is the base URL for both
// SDKs (use [Server.OpenAIURL] for clients that do not add /v1).
package llmtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/llm"
)

// Reply is one scripted response. The zero value is an empty successful
// reply.
type Reply struct {
	// Content is the assistant's reply in order: text, thinking, redacted
	// thinking and tool-use blocks (llm.Text, llm.Thinking, llm.ToolUse …).
	Content []llm.Block
	// AnthropicBlocks are extra Anthropic content blocks sent whole (in
	// content_block_start) before Content, such as the server_tool_use and
	// web_search_tool_result blocks of a server-side web search. The
	// OpenAI side ignores them.
	AnthropicBlocks []map[string]any
	// StopReason defaults to tool_use when Content has a tool use, else
	// end_turn. OpenAI gets the matching finish_reason.
	StopReason llm.StopReason
	// Usage is reported in the reply (OpenAI: prompt_tokens is the sum of
	// the input, cache-read and cache-write tokens; cached_tokens the cache
	// reads).
	Usage llm.Usage
	// ID and Model default to "msg_<n>" / "chatcmpl-<n>" and the requested
	// model.
	ID, Model string

	// Status, if not 0 or 200, makes the reply an error response with a
	// provider-shaped body: ErrorType (default by status, e.g.
	// "overloaded_error" for 529) and ErrorMessage (default: the status
	// text).
	Status       int
	ErrorType    string
	ErrorMessage string
	// RetryAfter and RetryAfterMs set the retry-after and retry-after-ms
	// headers (of an error response or a success).
	RetryAfter, RetryAfterMs string

	// DropBeforeHeaders closes the connection without a response, like a
	// reset connection.
	DropBeforeHeaders bool
	// DropAfter, if positive, closes the connection abruptly after that many
	// server-sent events of a stream.
	DropAfter int
	// StreamErrorAfter, if positive, ends a stream after that many events
	// with an error event carrying ErrorType (default overloaded_error) and
	// ErrorMessage, the way Anthropic reports overload inside a 200 stream.
	StreamErrorAfter int
	// StallAfter, if positive, stops a stream after that many server-sent
	// events and holds the connection open until the client goes away (for
	// cancellation tests).
	StallAfter int

	// ChunkSize, if positive, overrides the server's chunk size for this
	// reply.
	ChunkSize int
	// HeaderDelay and ChunkDelay, if positive, override the server's delays
	// for this reply.
	HeaderDelay, ChunkDelay time.Duration
}

// TextReply returns a reply of one text block.
func TextReply(text string) Reply { return Reply{Content: []llm.Block{llm.Text(text)}} }

// ToolReply returns a reply of tool-use blocks, each input given as JSON
// text.
func ToolReply(calls ...ToolCall) Reply {
	r := Reply{}
	for _, c := range calls {
		r.Content = append(r.Content, llm.ToolUse(c.ID, c.Name, json.RawMessage(c.Input)))
	}
	return r
}

// ToolCall is one call in a [ToolReply].
type ToolCall struct{ ID, Name, Input string }

// ErrorReply returns an error response with the given status, type and
// message (empty type and message take the defaults).
func ErrorReply(status int, errType, message string) Reply {
	return Reply{Status: status, ErrorType: errType, ErrorMessage: message}
}

// Option configures a [Server].
type Option func(*Server)

// WithChunkSize splits text, thinking and tool input into pieces of at most
// n bytes (whole runes), one event each. Zero (the default) sends each block
// in one piece.
func WithChunkSize(n int) Option { return func(s *Server) { s.chunkSize = n } }

// WithChunkDelay waits d between events.
func WithChunkDelay(d time.Duration) Option { return func(s *Server) { s.chunkDelay = d } }

// WithHeaderDelay waits d before sending the response headers.
func WithHeaderDelay(d time.Duration) Option { return func(s *Server) { s.headerDelay = d } }

// WithIndexZero makes the OpenAI side give every tool call index 0, the way
// Ollama streams parallel calls; each call still has its own id.
func WithIndexZero() Option { return func(s *Server) { s.indexZero = true } }

// WithStrictMessages makes the server refuse, as the real APIs do, a
// request whose conversation breaks their rules (see [CheckConversation]):
// it answers 400 invalid_request_error and consumes no scripted reply.
func WithStrictMessages() Option { return func(s *Server) { s.strict = true } }

// WithResponder answers requests with f instead of the script while f
// returns true: for conversations whose requests arrive concurrently (a
// parent agent and its subagents), where a reply depends on which
// conversation asks rather than on arrival order. f is called concurrently.
func WithResponder(f func(Request) (Reply, bool)) Option {
	return func(s *Server) { s.responder = f }
}

// WithoutRecording keeps no record of the requests ([Server.Requests] and
// [Server.LastRequest] stay empty): for load tests, whose thousands of
// conversations would otherwise stay in memory.
func WithoutRecording() Option { return func(s *Server) { s.noRecord = true } }

// WithoutDecoding makes the server skip decoding requests: it reads each
// body to its end and answers with the next reply, streamed when the
// body ends with "stream":true (as the adapters' bodies do). Nothing is
// recorded and [WithStrictMessages] is off. For benchmarks of a client's
// own cost, which a server that decodes every request — work that grows
// with the conversation — would otherwise blur.
func WithoutDecoding() Option { return func(s *Server) { s.noDecode, s.noRecord = true, true } }

// WithHTTP2 serves HTTP/2 without TLS (h2c, prior knowledge) besides
// HTTP/1.1, and makes [Server.Client] speak it: many concurrent streams
// share one connection, the way the real APIs (HTTP/2 over TLS) serve a
// busy client.
func WithHTTP2() Option { return func(s *Server) { s.h2c = true } }

// WithHTTP2Config sets the server's HTTP/2 settings (flow-control windows,
// concurrent streams, frame size); it implies [WithHTTP2]. A load test
// whose client outruns the fake server uses it to accept request bodies as
// fast as they arrive, so that requests queue in the server (as they do at
// a real API's front end) rather than in the client's flow control.
func WithHTTP2Config(c *http.HTTP2Config) Option {
	return func(s *Server) { s.h2c, s.h2cfg = true, c }
}

// Server is the fake API. Its methods are safe for concurrent use.
type Server struct {
	srv       *httptest.Server
	models    []llm.ModelInfo // what GET /v1/models lists (SetModels)
	responder func(Request) (Reply, bool)

	chunkSize               int
	chunkDelay, headerDelay time.Duration
	indexZero               bool
	strict                  bool
	noRecord                bool
	noDecode                bool
	h2c                     bool
	h2cfg                   *http.HTTP2Config

	mu       sync.Mutex
	script   []Reply
	requests []Request
	served   int
}

// NewServer starts a server on loopback and closes it when the test ends.
func NewServer(t testing.TB, opts ...Option) *Server {
	t.Helper()
	s := Start(opts...)
	t.Cleanup(s.Close)
	return s
}

// Start starts a server on loopback outside a test (a benchmark command, a
// demo); the caller closes it with [Server.Close].
func Start(opts ...Option) *Server {
	s := &Server{}
	for _, o := range opts {
		o(s)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/messages", s.handleAnthropic)
	mux.HandleFunc("POST /v1/chat/completions", s.handleOpenAI)
	mux.HandleFunc("POST /chat/completions", s.handleOpenAI)
	mux.HandleFunc("GET /v1/models", s.handleModels)
	mux.HandleFunc("GET /models", s.handleModels)
	s.srv = httptest.NewUnstartedServer(mux)
	if s.h2c {
		var p http.Protocols
		p.SetHTTP1(true)
		p.SetUnencryptedHTTP2(true)
		s.srv.Config.Protocols = &p
		s.srv.Config.HTTP2 = s.h2cfg
	}
	s.srv.Start()
	if s.h2c {
		if t, ok := s.srv.Client().Transport.(*http.Transport); ok {
			var p http.Protocols
			p.SetUnencryptedHTTP2(true)
			t.Protocols = &p
		}
	}
	return s
}

// URL returns the base URL: pass it to the Anthropic SDK as is, and to the
// OpenAI SDK as is or as [Server.OpenAIURL].
func (s *Server) URL() string { return s.srv.URL }

// OpenAIURL returns the base URL with /v1, the form OpenAI-compatible
// servers document (http://host/v1).
func (s *Server) OpenAIURL() string { return s.srv.URL + "/v1" }

// Client returns an HTTP client for the server.
func (s *Server) Client() *http.Client { return s.srv.Client() }

// Close shuts the server down, cutting open streams. It is called when the
// test ends.
func (s *Server) Close() {
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// Script appends replies to the queue. Each request takes the next one.
func (s *Server) Script(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = append(s.script, replies...)
}

// Pending returns the number of scripted replies not yet served.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.script)
}

// Requests returns the requests received so far, oldest first.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// LastRequest returns the latest request, or a zero Request if none came.
func (s *Server) LastRequest() Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.requests) == 0 {
		return Request{}
	}
	return s.requests[len(s.requests)-1]
}

// next records req and returns the reply to send, its sequence number, and
// whether there was one.
func (s *Server) next(req Request) (Reply, int, bool) {
	if s.responder != nil {
		if r, ok := s.responder(req); ok {
			s.mu.Lock()
			defer s.mu.Unlock()
			if !s.noRecord {
				s.requests = append(s.requests, req)
			}
			s.served++
			return r, s.served, true
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.noRecord {
		s.requests = append(s.requests, req)
	}
	if len(s.script) == 0 {
		return Reply{}, 0, false
	}
	r := s.script[0]
	s.script = s.script[1:]
	s.served++
	return r, s.served, true
}

func (s *Server) settings(r Reply) (chunk int, chunkDelay, headerDelay time.Duration) {
	chunk, chunkDelay, headerDelay = s.chunkSize, s.chunkDelay, s.headerDelay
	if r.ChunkSize > 0 {
		chunk = r.ChunkSize
	}
	if r.ChunkDelay > 0 {
		chunkDelay = r.ChunkDelay
	}
	if r.HeaderDelay > 0 {
		headerDelay = r.HeaderDelay
	}
	return chunk, chunkDelay, headerDelay
}

// api is what differs between the two fakes.
type api struct {
	name      string
	decode    func(body []byte) (Request, error)
	errorBody func(typ, msg string) any
	stream    func(s *Server, r Reply, seq int, req Request, chunk int) []sse
	whole     func(s *Server, r Reply, seq int, req Request) any
}

// sse is one server-sent event.
type sse struct {
	event string // empty: no event line
	data  []byte
}

func (s *Server) serve(w http.ResponseWriter, hr *http.Request, a api) {
	var (
		req  Request
		derr error
	)
	if s.noDecode {
		stream, err := streamSuffix(hr.Body)
		if err != nil {
			return
		}
		req = Request{API: a.name, Path: hr.URL.Path, Stream: stream}
	} else {
		body, err := io.ReadAll(hr.Body)
		if err != nil {
			return
		}
		req, derr = a.decode(body)
		req.API, req.Path, req.Header, req.Body = a.name, hr.URL.Path, hr.Header.Clone(), body
	}
	if s.strict && !s.noDecode && derr == nil {
		if err := CheckConversation(req.Messages); err != nil {
			writeError(w, http.StatusBadRequest, a.errorBody("invalid_request_error", "llmtest: "+err.Error()))
			return
		}
	}
	reply, seq, ok := s.next(req)
	if derr != nil {
		writeError(w, http.StatusBadRequest, a.errorBody("invalid_request_error", "llmtest: cannot decode request: "+derr.Error()))
		return
	}
	if !ok {
		writeError(w, http.StatusBadRequest, a.errorBody("invalid_request_error", "llmtest: no scripted reply left"))
		return
	}
	chunk, chunkDelay, headerDelay := s.settings(reply)
	if !wait(hr, headerDelay) {
		return
	}
	if reply.DropBeforeHeaders {
		panic(http.ErrAbortHandler)
	}
	h := w.Header()
	if reply.RetryAfter != "" {
		h.Set("retry-after", reply.RetryAfter)
	}
	if reply.RetryAfterMs != "" {
		h.Set("retry-after-ms", reply.RetryAfterMs)
	}
	h.Set("request-id", fmt.Sprintf("req_%d", seq))
	if reply.Status != 0 && reply.Status != http.StatusOK {
		typ, msg := reply.ErrorType, reply.ErrorMessage
		if typ == "" {
			typ = defaultErrorType(a.name, reply.Status)
		}
		if msg == "" {
			msg = http.StatusText(reply.Status)
			if msg == "" {
				msg = "Overloaded"
			}
		}
		writeError(w, reply.Status, a.errorBody(typ, msg))
		return
	}
	if !req.Stream {
		b, err := json.Marshal(a.whole(s, reply, seq, req))
		if err != nil {
			writeError(w, http.StatusInternalServerError, a.errorBody("api_error", err.Error()))
			return
		}
		h.Set("content-type", "application/json")
		_, _ = w.Write(b)
		return
	}
	events := a.stream(s, reply, seq, req, chunk)
	h.Set("content-type", "text/event-stream")
	h.Set("cache-control", "no-cache")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	if fl != nil {
		fl.Flush()
	}
	var buf bytes.Buffer
	for i, ev := range events {
		if reply.DropAfter > 0 && i == reply.DropAfter {
			panic(http.ErrAbortHandler)
		}
		if reply.StreamErrorAfter > 0 && i == reply.StreamErrorAfter {
			typ, msg := cmpOr(reply.ErrorType, "overloaded_error"), cmpOr(reply.ErrorMessage, "Overloaded")
			ev := sse{data: mustJSON(a.errorBody(typ, msg))}
			if a.name == "anthropic" {
				ev.event = "error"
			}
			if ev.event != "" {
				_, _ = fmt.Fprintf(w, "event: %s\n", ev.event)
			}
			_, _ = fmt.Fprintf(w, "data: %s\n\n", ev.data)
			return
		}
		if reply.StallAfter > 0 && i == reply.StallAfter {
			<-hr.Context().Done()
			return
		}
		if i > 0 && !wait(hr, chunkDelay) {
			return
		}
		buf.Reset()
		if ev.event != "" {
			buf.WriteString("event: ")
			buf.WriteString(ev.event)
			buf.WriteByte('\n')
		}
		buf.WriteString("data: ")
		buf.Write(ev.data)
		buf.WriteString("\n\n")
		if _, err := w.Write(buf.Bytes()); err != nil {
			return
		}
		if fl != nil {
			fl.Flush()
		}
	}
}

// readBufs holds the buffers [streamSuffix] reads through.
var readBufs = sync.Pool{New: func() any { b := make([]byte, 16<<10); return &b }}

// streamSuffix reads r to its end through a small buffer and reports
// whether it ended with "stream":true} (spaces aside).
func streamSuffix(r io.Reader) (bool, error) {
	const want = `"stream":true}`
	const keep = len(want) + 64
	bp := readBufs.Get().(*[]byte)
	defer readBufs.Put(bp)
	buf := *bp
	tail := make([]byte, 0, 2*keep) // the last bytes read, at most keep
	for {
		n, err := r.Read(buf)
		if n >= keep {
			tail = append(tail[:0], buf[n-keep:n]...)
		} else if n > 0 {
			tail = append(tail, buf[:n]...)
			if len(tail) > keep {
				tail = append(tail[:0], tail[len(tail)-keep:]...)
			}
		}
		if err == io.EOF {
			return bytes.HasSuffix(bytes.TrimSpace(tail), []byte(want)), nil
		}
		if err != nil {
			return false, err
		}
	}
}

// wait sleeps d unless the client goes away first; it reports whether to go
// on.
func wait(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return r.Context().Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-r.Context().Done():
		return false
	case <-t.C:
		return true
	}
}

func writeError(w http.ResponseWriter, status int, body any) {
	b, _ := json.Marshal(body)
	w.Header().Set("content-type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

func defaultErrorType(apiName string, status int) string {
	if apiName == "openai" {
		switch status {
		case 400, 404:
			return "invalid_request_error"
		case 401:
			return "authentication_error"
		case 403:
			return "permission_error"
		case 429:
			return "rate_limit_exceeded"
		}
		return "server_error"
	}
	switch status {
	case 400:
		return "invalid_request_error"
	case 401:
		return "authentication_error"
	case 403:
		return "permission_error"
	case 404:
		return "not_found_error"
	case 413:
		return "request_too_large"
	case 429:
		return "rate_limit_error"
	case 529:
		return "overloaded_error"
	}
	return "api_error"
}

// stopReason returns r's stop reason or its default.
func stopReason(r Reply) llm.StopReason {
	if r.StopReason != "" {
		return r.StopReason
	}
	for _, b := range r.Content {
		if b.Type == llm.TypeToolUse {
			return llm.StopToolUse
		}
	}
	return llm.StopEndTurn
}

// split cuts s into pieces of at most n bytes without splitting a rune. n <=
// 0 gives s whole. An empty s gives no pieces.
func split(s string, n int) []string {
	if s == "" {
		return nil
	}
	if n <= 0 || len(s) <= n {
		return []string{s}
	}
	out := make([]string, 0, len(s)/n+1)
	for len(s) > n {
		cut := n
		for cut > 0 && !runeStart(s[cut]) {
			cut--
		}
		if cut == 0 { // a rune longer than n: take it whole
			cut = n
			for cut < len(s) && !runeStart(s[cut]) {
				cut++
			}
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}

func runeStart(b byte) bool { return b&0xC0 != 0x80 }

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("llmtest: marshal: %v", err))
	}
	return b
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
