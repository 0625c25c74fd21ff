// Package httpclient is the HTTP client the model adapters use when the
// caller gives none: one per provider, shared by every session of it.
package httpclient

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// MaxConnsPerHost bounds the connections of the adapters' default client
// to one host. A program that wants another bound gives the adapter its
// own client (anthropic.Options.HTTPClient, openai.Options.HTTPClient).
const MaxConnsPerHost = 64

// New returns a client over a clone of [http.DefaultTransport] with
//
//   - no overall timeout (a stream lasts as long as the reply), but 10
//     minutes at most for the response's headers;
//   - at most [MaxConnsPerHost] (64) connections per host, all kept idle
//     for reuse: many sessions share one provider; without a bound,
//     10,000 sessions over HTTP/1.1 (a local server without TLS, so no
//     HTTP/2) dialed 10,000 connections — each with two transport
//     goroutines and its buffers — and some dials timed out; with it,
//     requests past the bound wait for a connection to come free (over
//     HTTP/2 one connection carries many streams). The default idle
//     count, 2, closed and redialed all but two after every burst;
//   - plain-TCP connections that copy a request body through a pooled
//     buffer (see [Conn]).
//
// It returns a client without a transport of its own when
// http.DefaultTransport is not an *http.Transport.
func New() *http.Client {
	t, ok := http.DefaultTransport.(*http.Transport)
	if !ok {
		return &http.Client{}
	}
	t = t.Clone()
	t.ResponseHeaderTimeout = 10 * time.Minute
	t.MaxConnsPerHost = MaxConnsPerHost
	t.MaxIdleConnsPerHost = MaxConnsPerHost
	dial := t.DialContext
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return Conn{c}, nil
	}
	return &http.Client{Transport: t}
}

// Conn is a connection whose ReadFrom copies through a pooled 32 KB
// buffer. An HTTP/1.1 request with a Content-Length writes its body
// through a size-limited reader into the connection's ReadFrom (net/http's
// buffered writer hands it on once its 4 KB are full), and a TCP
// connection's ReadFrom, unable to splice or sendfile from memory, copies
// through a buffer it allocates: min(32 KB, the body) on every request,
// whatever the body's type. (HTTP/2 copies through pooled frame buffers;
// over TLS the body is written by crypto/tls, which has no ReadFrom.)
type Conn struct{ net.Conn }

var buffers = sync.Pool{New: func() any { return new([32 << 10]byte) }}

// ReadFrom copies r to the connection through a pooled buffer.
func (c Conn) ReadFrom(r io.Reader) (int64, error) {
	b := buffers.Get().(*[32 << 10]byte)
	defer buffers.Put(b)
	return io.CopyBuffer(writerOnly{c.Conn}, r, b[:])
}

// writerOnly hides the connection's own ReadFrom from io.CopyBuffer.
type writerOnly struct{ io.Writer }

// CloseWrite shuts down the writing side of the connection, where the
// connection under c can (a TCP connection).
func (c Conn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return errors.ErrUnsupported
}
