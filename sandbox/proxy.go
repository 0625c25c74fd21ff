package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/gantry-dev/gantry/netguard"
)

// ProxyOptions configure a [Proxy]. The zero value allows nothing.
type ProxyOptions struct {
	// AllowedDomains are the host patterns clients may reach, with the
	// semantics of WebFetch(domain:…) rules ([netguard.MatchHost]).
	AllowedDomains []string
	// Resolver resolves names; nil means net.DefaultResolver.
	Resolver netguard.Resolver
	// Dial, if set, makes the final connection to a checked IP:port
	// (tests); see [netguard.Dialer].
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Logger receives one line per refused request. Nil discards.
	Logger *slog.Logger
}

// Proxy is the filtering HTTP proxy of a sandbox's network: it listens on a
// Unix socket (the only way out of the sandbox's network namespace),
// accepts CONNECT tunnels (HTTPS and anything else over TCP) and plain
// HTTP requests in absolute form, and lets a request through only when its
// host matches AllowedDomains and every address the host resolves to is
// public by the one SSRF rule of Gantry, package netguard (a loopback or
// private address only when the allow-list names that exact IP, or
// "localhost"). The checked address is the one dialled, so a name cannot
// resolve differently between check and use.
// A refusal is a 403 whose body says what to do.
type Proxy struct {
	opt    ProxyOptions
	socket string
	ln     net.Listener
	srv    *http.Server
	fwd    *httputil.ReverseProxy

	mu    sync.Mutex
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

// NewProxy listens on socket (created with mode 0600; an old socket file is
// replaced) and serves until Close.
func NewProxy(socket string, opt ProxyOptions) (*Proxy, error) {
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.DiscardHandler)
	}
	_ = os.Remove(socket)
	ln, err := net.Listen("unix", socket)
	if err != nil {
		return nil, fmt.Errorf("sandbox: proxy: %w", err)
	}
	if err := os.Chmod(socket, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("sandbox: proxy: %w", err)
	}
	p := &Proxy{opt: opt, socket: socket, ln: ln, conns: map[net.Conn]struct{}{}}
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           p.dial,
		ForceAttemptHTTP2:     false,
		ResponseHeaderTimeout: 60 * time.Second,
		IdleConnTimeout:       30 * time.Second,
	}
	p.fwd = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL = pr.In.URL
			pr.Out.Host = pr.In.Host
		},
		Transport: tr,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			p.refuse(w, r.Host, err)
		},
	}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 30 * time.Second}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		_ = p.srv.Serve(ln)
	}()
	return p, nil
}

// Socket is the path of the proxy's Unix socket.
func (p *Proxy) Socket() string { return p.socket }

// Close stops the proxy, closes open tunnels and removes the socket.
func (p *Proxy) Close() error {
	err := p.srv.Close()
	p.mu.Lock()
	for c := range p.conns {
		c.Close()
	}
	p.conns = nil
	p.mu.Unlock()
	p.wg.Wait()
	if t, ok := p.fwd.Transport.(*http.Transport); ok {
		t.CloseIdleConnections()
	}
	_ = os.Remove(p.socket)
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// ErrHostRefused is wrapped by the proxy's refusals.
var ErrHostRefused = errors.New("refused by the sandbox's network policy")

// ServeHTTP implements http.Handler.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect {
		p.tunnel(w, r)
		return
	}
	if !r.URL.IsAbs() || (r.URL.Scheme != "http") {
		http.Error(w, "gantry sandbox proxy: only absolute http:// requests and CONNECT are served", http.StatusBadRequest)
		return
	}
	p.fwd.ServeHTTP(w, r)
}

func (p *Proxy) tunnel(w http.ResponseWriter, r *http.Request) {
	up, err := p.dial(r.Context(), "tcp", r.Host)
	if err != nil {
		p.refuse(w, r.Host, err)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		up.Close()
		http.Error(w, "hijack not supported", http.StatusInternalServerError)
		return
	}
	c, rw, err := hj.Hijack()
	if err != nil {
		up.Close()
		return
	}
	if !p.track(c, up) {
		return
	}
	defer p.untrack(c, up)
	if _, err := io.WriteString(c, "HTTP/1.1 200 Connection Established\r\n\r\n"); err != nil {
		return
	}
	done := make(chan struct{}, 2)
	go func() {
		// Bytes the client sent after the CONNECT head are buffered.
		if n := rw.Reader.Buffered(); n > 0 {
			b, _ := rw.Reader.Peek(n)
			_, _ = up.Write(b)
		}
		_, _ = io.Copy(up, c)
		closeWrite(up)
		done <- struct{}{}
	}()
	go func() {
		_, _ = io.Copy(c, up)
		closeWrite(c)
		done <- struct{}{}
	}()
	<-done
	<-done
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
}

// track registers a tunnel's connections for Close; false if closed.
func (p *Proxy) track(cs ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conns == nil {
		for _, c := range cs {
			c.Close()
		}
		return false
	}
	for _, c := range cs {
		p.conns[c] = struct{}{}
	}
	return true
}

func (p *Proxy) untrack(cs ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		c.Close()
		delete(p.conns, c)
	}
}

// refuse answers 403 with a message a model can act on.
func (p *Proxy) refuse(w http.ResponseWriter, host string, err error) {
	p.opt.Logger.Info("sandbox proxy refused a request", "host", host, "err", err)
	msg := fmt.Sprintf("gantry sandbox: %v. The command has no other network access; ask the user to add the host to sandbox.network.allowedDomains if it needs it.\n", err)
	w.Header().Set("X-Gantry-Sandbox", "refused")
	code := http.StatusForbidden
	if !errors.Is(err, ErrHostRefused) {
		code = http.StatusBadGateway
	}
	http.Error(w, msg, code)
}

// dial checks addr's host and dials one of its checked addresses.
func (p *Proxy) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("bad address %q: %w", addr, err)
	}
	d, err := p.dialer(host)
	if err != nil {
		return nil, err
	}
	c, err := d.DialContext(ctx, network, addr)
	var be *netguard.BlockedError
	if errors.As(err, &be) {
		return nil, fmt.Errorf("%w: %v", ErrHostRefused, be)
	}
	return c, err
}

// Check decides whether host may be reached and returns the addresses to
// use. The error wraps [ErrHostRefused] when the policy refuses.
func (p *Proxy) Check(ctx context.Context, host string) ([]netip.Addr, error) {
	d, err := p.dialer(host)
	if err != nil {
		return nil, err
	}
	addrs, err := d.Resolve(ctx, netguard.NormHost(host))
	var be *netguard.BlockedError
	if errors.As(err, &be) {
		return nil, fmt.Errorf("%w: %v", ErrHostRefused, be)
	}
	return addrs, err
}

// dialer returns the netguard dialer for host, or an error wrapping
// [ErrHostRefused] when host is not in the allow-list. Non-public
// addresses are reachable only for a host the allow-list names exactly as
// an IP literal (that address) or "localhost" (loopback); a wildcard never
// reaches them, and a public name resolving to one is refused (DNS
// rebinding).
func (p *Proxy) dialer(host string) (*netguard.Dialer, error) {
	h := netguard.NormHost(host)
	allowed, exact := false, false
	for _, pat := range p.opt.AllowedDomains {
		if netguard.MatchHost(pat, h) {
			allowed = true
			exact = exact || netguard.NormHost(strings.TrimSpace(pat)) == h
		}
	}
	if !allowed {
		return nil, fmt.Errorf("%w: host %q is not in the allowed domains (%s)", ErrHostRefused, h, strings.Join(p.opt.AllowedDomains, ", "))
	}
	d := &netguard.Dialer{Resolver: p.opt.Resolver, Dial: p.opt.Dial, Dialer: &net.Dialer{Timeout: 10 * time.Second}}
	if exact {
		if ip, err := netip.ParseAddr(h); err == nil {
			d.Policy.AllowPrefixes = []netip.Prefix{netip.PrefixFrom(ip, ip.BitLen())}
		} else if h == "localhost" {
			d.Policy.Allow = []netguard.Class{netguard.Loopback}
		}
	}
	return d, nil
}
