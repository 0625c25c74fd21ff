package httpclient

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/gantry-dev/gantry/llm"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// body is a spliced request body the size of a conversation's request.
func body(n int) *llm.Body {
	var b llm.Body
	for i := range n {
		b.AppendString(fmt.Sprintf(`{"role":"user","content":%q},`, strings.Repeat(string(rune('a'+i%26)), 700)))
	}
	return &b
}

var serverBufs = sync.Pool{New: func() any { return new([32 << 10]byte) }}

// server answers with the SHA-256 of the request body and the protocol.
func server(t testing.TB, proto string) *httptest.Server {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := sha256.New()
		buf := serverBufs.Get().(*[32 << 10]byte) // the server's copying is not what is measured
		defer serverBufs.Put(buf)
		if _, err := io.CopyBuffer(h, r.Body, buf[:]); err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		fmt.Fprintf(w, "%x %s", h.Sum(nil), r.Proto)
	}))
	var p http.Protocols
	switch proto {
	case "h2c":
		p.SetUnencryptedHTTP2(true)
	case "tls":
		p.SetHTTP1(true)
		p.SetHTTP2(true)
	default:
		p.SetHTTP1(true)
	}
	srv.Config.Protocols = &p
	if proto == "tls" {
		srv.EnableHTTP2 = true
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return srv
}

// client is New's client set for srv's protocol.
func client(srv *httptest.Server, proto string) *http.Client {
	c := New()
	tr := c.Transport.(*http.Transport)
	switch proto {
	case "h2c":
		var p http.Protocols
		p.SetUnencryptedHTTP2(true)
		tr.Protocols = &p
	case "tls":
		tr.TLSClientConfig = srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
	}
	return c
}

func post(t testing.TB, c *http.Client, url string, b *llm.Body) string {
	req, err := http.NewRequest(http.MethodPost, url, b.Reader())
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = b.Len()
	req.GetBody = func() (io.ReadCloser, error) { return b.Reader(), nil }
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("%s: %s %v", resp.Status, out, err)
	}
	return string(out)
}

// TestBodies: bodies of every size arrive whole over HTTP/1.1, h2c and
// HTTP/2 over TLS (which the wrapped connection must not keep from
// negotiating h2).
func TestBodies(t *testing.T) {
	for _, tc := range []struct{ proto, want string }{{"http1", "HTTP/1.1"}, {"h2c", "HTTP/2.0"}, {"tls", "HTTP/2.0"}} {
		t.Run(tc.proto, func(t *testing.T) {
			srv := server(t, tc.proto)
			c := client(srv, tc.proto)
			defer c.CloseIdleConnections()
			for _, n := range []int{0, 1, 5, 50, 120} { // up to ~86 KB: past the 32 KB buffer
				b := body(n)
				got := post(t, c, srv.URL, b)
				want := fmt.Sprintf("%x %s", sha256.Sum256(b.Bytes()), tc.want)
				if got != want {
					t.Fatalf("%d pieces: got %q, want %q", n, got, want)
				}
			}
		})
	}
}

func TestConnCloseWrite(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if err := (Conn{a}).CloseWrite(); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("CloseWrite on a pipe: %v, want ErrUnsupported", err)
	}
}

// BenchmarkPost: what a request of a 30 KB body allocates over
// HTTP/1.1, the client and the in-process server together, with New's
// client against a clone of http.DefaultTransport. The difference is the
// buffer net/http's TCP ReadFrom allocates per request (B/op).
func BenchmarkPost(b *testing.B) {
	bd := body(40)
	for _, proto := range []string{"http1", "h2c"} {
		srv := server(b, proto)
		for _, kind := range []string{"New", "DefaultTransport"} {
			c := client(srv, proto)
			if kind == "DefaultTransport" {
				tr := http.DefaultTransport.(*http.Transport).Clone()
				tr.Protocols = c.Transport.(*http.Transport).Protocols
				c = &http.Client{Transport: tr}
			}
			b.Run(proto+"/"+kind, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					post(b, c, srv.URL, bd)
				}
			})
			c.CloseIdleConnections()
		}
	}
}

// TestConnsBounded: 200 concurrent requests over HTTP/1.1 use at most
// MaxConnsPerHost connections, and all complete.
func TestConnsBounded(t *testing.T) {
	var mu sync.Mutex
	conns, active, peak := 0, 0, 0
	release := make(chan struct{})
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		active++
		peak = max(peak, active)
		mu.Unlock()
		<-release
		mu.Lock()
		active--
		mu.Unlock()
		io.WriteString(w, "ok")
	}))
	srv.Config.ConnState = func(c net.Conn, st http.ConnState) {
		if st == http.StateNew {
			mu.Lock()
			conns++
			mu.Unlock()
		}
	}
	srv.Start()
	defer srv.Close()
	c := New()
	defer c.CloseIdleConnections()
	var wg sync.WaitGroup
	errs := make(chan error, 200)
	for range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := c.Get(srv.URL)
			if err != nil {
				errs <- err
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}()
	}
	// Wait until the bound is reached, then let everything through.
	for {
		mu.Lock()
		a := active
		mu.Unlock()
		if a >= MaxConnsPerHost {
			break
		}
		runtime.Gosched()
	}
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if conns > MaxConnsPerHost || peak > MaxConnsPerHost {
		t.Fatalf("%d connections, %d requests at once; bound %d", conns, peak, MaxConnsPerHost)
	}
}
