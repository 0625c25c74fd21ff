package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"time"
)

// Sentinel errors callers branch on with [errors.Is]. An [*APIError]
// matches the sentinel its status and type imply.
var (
	// ErrOverloaded: the provider is overloaded (HTTP 529, or an
	// overloaded_error). Transient.
	ErrOverloaded = errors.New("llm: provider overloaded")
	// ErrRateLimited: too many requests (HTTP 429). Transient; honour
	// [APIError.RetryAfter].
	ErrRateLimited = errors.New("llm: rate limited")
	// ErrServer: a 5xx other than 529. Transient.
	ErrServer = errors.New("llm: server error")
	// ErrContextLength: the prompt does not fit the model's context window.
	// Not transient: compact the conversation and try again.
	ErrContextLength = errors.New("llm: context length exceeded")
	// ErrAuth: the API key is missing, wrong, or lacks permission (HTTP 401,
	// 403). Not transient.
	ErrAuth = errors.New("llm: authentication failed")
	// ErrBadRequest: the provider rejected the request (HTTP 400, 404, 413,
	// 422). Not transient.
	ErrBadRequest = errors.New("llm: bad request")
	// ErrConnection: the request did not get a response (connection refused
	// or reset, a broken body before the first event). Transient.
	ErrConnection = errors.New("llm: connection failed")
	// ErrInterrupted: the stream broke after events were yielded, or ended
	// without a message end. The reply is incomplete: discard it (the orphan
	// rule, see [Provider]) and send the request again.
	ErrInterrupted = errors.New("llm: stream interrupted")
)

// APIError is an error response from a provider.
type APIError struct {
	// Provider names the adapter ("anthropic", "openai").
	Provider string
	// StatusCode is the HTTP status; 200 for an error event inside a stream.
	StatusCode int
	// Type is the provider's error type ("overloaded_error",
	// "invalid_request_error", "rate_limit_exceeded", …), if any.
	Type string
	// Code is the provider's error code (OpenAI's "context_length_exceeded"),
	// if any.
	Code string
	// Message is the provider's message, or the raw body if it had none.
	Message string
	// RequestID is the provider's request id, for support.
	RequestID string
	// RetryAfter is what the retry-after-ms or retry-after header asked for;
	// zero if neither was sent.
	RetryAfter time.Duration
	// Err is the SDK's error.
	Err error
}

func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: ", e.Provider)
	if e.StatusCode != 0 {
		fmt.Fprintf(&b, "%d ", e.StatusCode)
	}
	if e.Type != "" {
		b.WriteString(e.Type)
	} else {
		b.WriteString("error")
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	if e.RequestID != "" {
		fmt.Fprintf(&b, " (request-id %s)", e.RequestID)
	}
	return b.String()
}

// Unwrap returns the SDK's error.
func (e *APIError) Unwrap() error { return e.Err }

// Is reports whether e is of the kind target names.
func (e *APIError) Is(target error) bool {
	switch target {
	case ErrOverloaded:
		return e.StatusCode == 529 || e.Type == "overloaded_error"
	case ErrRateLimited:
		return e.StatusCode == 429 || e.Type == "rate_limit_error"
	case ErrServer:
		return e.StatusCode >= 500 && e.StatusCode != 529 || e.Type == "api_error" || e.Type == "server_error"
	case ErrAuth:
		return e.StatusCode == 401 || e.StatusCode == 403 ||
			e.Type == "authentication_error" || e.Type == "permission_error"
	case ErrBadRequest:
		switch e.StatusCode {
		case 400, 404, 413, 422:
			return true
		}
	case ErrContextLength:
		return isContextLength(e)
	}
	return false
}

// isContextLength recognises the providers' ways of saying the prompt is too
// long: OpenAI's code context_length_exceeded, Anthropic's "prompt is too
// long", and the wordings of common OpenAI-compatible servers.
func isContextLength(e *APIError) bool {
	if e.Code == "context_length_exceeded" || e.Type == "context_length_exceeded" {
		return true
	}
	if e.StatusCode != 400 && e.StatusCode != 413 && e.StatusCode != 200 {
		return false
	}
	m := strings.ToLower(e.Message)
	for _, s := range []string{
		"prompt is too long",
		"context length",
		"context_length",
		"context window",
		"maximum context",
		"too many tokens",
	} {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}

// Retryable reports whether err is transient: overloaded, rate limited, a
// server error, a connection failure or an interrupted stream. A cancelled
// or expired context is never retryable.
func Retryable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var ae *APIError
	if errors.As(err, &ae) {
		// 408 request timeout and 409 conflict (lock contention) are
		// transient at both providers.
		if ae.StatusCode == 408 || ae.StatusCode == 409 {
			return true
		}
		return ae.Is(ErrOverloaded) || ae.Is(ErrRateLimited) || ae.Is(ErrServer)
	}
	return errors.Is(err, ErrConnection) || errors.Is(err, ErrInterrupted)
}

// RetryAfter returns the delay the provider asked for in err, or zero.
func RetryAfter(err error) time.Duration {
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.RetryAfter
	}
	return 0
}

// IsConnError reports whether err is a transport failure: a network error,
// a reset or refused connection, or a body that ended early. Adapters use it
// to wrap such errors in [ErrConnection] or [ErrInterrupted].
func IsConnError(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var ne net.Error
	return errors.As(err, &ne) ||
		errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, io.EOF) ||
		errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, net.ErrClosed) ||
		strings.Contains(err.Error(), "connection reset") ||
		strings.Contains(err.Error(), "unexpected EOF")
}

// ParseErrorBody extracts the type, code and message from a provider error
// body: {"error": {"type", "code", "message"}} (Anthropic, OpenAI and most
// compatible servers), {"error": "message"} (some local servers), or
// {"message": …}. If body is not JSON, the message is the body itself
// (trimmed, at most 500 bytes).
func ParseErrorBody(body []byte) (typ, code, msg string) {
	var env struct {
		Type    string          `json:"type"`
		Message string          `json:"message"`
		Error   json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		s := strings.TrimSpace(string(body))
		if len(s) > 500 {
			s = s[:500]
		}
		return "", "", s
	}
	msg = env.Message
	if env.Type != "error" {
		typ = env.Type
	}
	if len(env.Error) > 0 {
		var inner struct {
			Type    string `json:"type"`
			Code    any    `json:"code"`
			Message string `json:"message"`
		}
		var s string
		switch {
		case json.Unmarshal(env.Error, &inner) == nil:
			if inner.Type != "" {
				typ = inner.Type
			}
			if inner.Message != "" {
				msg = inner.Message
			}
			switch c := inner.Code.(type) {
			case string:
				code = c
			case float64:
				code = fmt.Sprint(c)
			}
		case json.Unmarshal(env.Error, &s) == nil:
			msg = s
		}
	}
	return typ, code, msg
}
