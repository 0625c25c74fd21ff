package anthropic_test

import (
	"testing"

	"github.com/gantry-dev/gantry/llm/anthropic"
	"github.com/gantry-dev/gantry/llm/llmtest"
)

// TestConnectionReused: a reply read to its end leaves its connection to
// the next request, over HTTP/1.1 (where closing a response before its
// end closes the connection) and h2c.
func TestConnectionReused(t *testing.T) {
	for _, h2 := range []bool{false, true} {
		t.Run(map[bool]string{false: "http1", true: "h2c"}[h2], func(t *testing.T) {
			var opts []llmtest.Option
			if h2 {
				opts = append(opts, llmtest.WithHTTP2())
			}
			srv := llmtest.NewServer(t, opts...)
			hc, dials := srv.DialCountingClient()
			defer hc.CloseIdleConnections()
			p := newProvider(t, srv, &sleeps{}, anthropic.WithHTTPClient(hc))
			for i := range 5 {
				srv.Script(llmtest.TextReply("hello there"))
				if _, _, err := collect(t, p, userReq("hi")); err != nil {
					t.Fatalf("request %d: %v", i, err)
				}
			}
			if n := dials(); n != 1 {
				t.Errorf("%d connections dialled for 5 sequential requests, want 1", n)
			}
		})
	}
}
