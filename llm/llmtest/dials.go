package llmtest

import (
	"context"
	"net"
	"net/http"
	"sync/atomic"
)

// DialCountingClient returns an HTTP client for the server (HTTP/1.1 or
// h2c, as the server speaks) and the number of connections it has dialled
// so far: a test of connection reuse.
func (s *Server) DialCountingClient() (*http.Client, func() int) {
	var dials atomic.Int32
	tr := s.srv.Client().Transport.(*http.Transport).Clone()
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	return &http.Client{Transport: tr}, func() int { return int(dials.Load()) }
}
