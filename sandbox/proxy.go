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
)

// ProxyOptions configure a [Proxy]. The zero value allows nothing.
type ProxyOptions struct {
	// AllowedDomains are the host patterns clients may reach (see
	// [MatchDomain]).
	AllowedDomains []string
	// LookupNetIP resolves names; default net.DefaultResolver.LookupNetIP.
	LookupNetIP func(ctx context.Context, network, host string) ([]netip.Addr, error)
	// DialContext dials the checked address; default a net.Dialer with a
	// 10 s timeout.
	DialContext func(ctx context.Context, network, addr string) (net.Conn, error)
	// Private classifies addresses that only a host named exactly in
	// AllowedDomains (an IP literal or "localhost") may reach; default
	// [PrivateAddr].
	Private func(netip.Addr) bool
	// Logger receives one line per refused request. Nil discards.
	Logger *slog.Logger
}

// Proxy is the filtering HTTP proxy of a sandbox's network: it listens on a
// Unix socket (the only way out of the sandbox's network namespace),
// accepts CONNECT tunnels (HTTPS and anything else over TCP) and plain
// HTTP requests in absolute form, and lets a request through only when its
// host matches AllowedDomains and every address the host resolves to is
// public (or the host is named exactly). The checked address is the one
// dialled, so a name cannot resolve differently between check and use.
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
	if opt.LookupNetIP == nil {
		opt.LookupNetIP = net.DefaultResolver.LookupNetIP
	}
	if opt.DialContext == nil {
		d := &net.Dialer{Timeout: 10 * time.Second}
		opt.DialContext = d.DialContext
	}
	if opt.Private == nil {
		opt.Private = PrivateAddr
	}
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
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("bad address %q: %w", addr, err)
	}
	ips, err := p.Check(ctx, host)
	if err != nil {
		return nil, err
	}
	var last error
	for _, ip := range ips {
		c, err := p.opt.DialContext(ctx, network, net.JoinHostPort(ip.String(), port))
		if err == nil {
			return c, nil
		}
		last = err
	}
	return nil, fmt.Errorf("connect %s: %w", addr, last)
}

// Check decides whether host may be reached and returns the addresses to
// use. The error wraps [ErrHostRefused] when the policy refuses.
func (p *Proxy) Check(ctx context.Context, host string) ([]netip.Addr, error) {
	h := strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	allowed, exact := false, false
	for _, pat := range p.opt.AllowedDomains {
		if MatchDomain(pat, h) {
			allowed = true
			if strings.TrimSuffix(strings.ToLower(strings.TrimSpace(pat)), ".") == h {
				exact = true
			}
		}
	}
	if !allowed {
		return nil, fmt.Errorf("%w: host %q is not in the allowed domains (%s)", ErrHostRefused, h, strings.Join(p.opt.AllowedDomains, ", "))
	}
	var ips []netip.Addr
	if ip, err := netip.ParseAddr(h); err == nil {
		ips = []netip.Addr{ip.Unmap()}
	} else {
		got, err := p.opt.LookupNetIP(ctx, "ip", h)
		if err != nil {
			return nil, fmt.Errorf("resolve %s: %w", h, err)
		}
		for _, ip := range got {
			ips = append(ips, ip.Unmap())
		}
	}
	if len(ips) == 0 {
		return nil, fmt.Errorf("resolve %s: no addresses", h)
	}
	// Private addresses only for a host named exactly by an IP literal
	// or localhost; a name that resolves to any private address is refused
	// whole (DNS rebinding).
	literal := exact && (h == "localhost" || net.ParseIP(h) != nil)
	for _, ip := range ips {
		if p.opt.Private(ip) && !literal {
			return nil, fmt.Errorf("%w: %s resolves to the private address %s", ErrHostRefused, h, ip)
		}
	}
	return ips, nil
}

// privatePrefixes are the ranges [PrivateAddr] refuses besides what
// netip.Addr's own predicates cover.
var privatePrefixes = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"), // carrier-grade NAT
	netip.MustParsePrefix("192.0.0.0/24"),  // IETF protocol assignments
	netip.MustParsePrefix("192.0.2.0/24"),  // documentation
	netip.MustParsePrefix("198.18.0.0/15"), // benchmarking
	netip.MustParsePrefix("198.51.100.0/24"),
	netip.MustParsePrefix("203.0.113.0/24"),
	netip.MustParsePrefix("240.0.0.0/4"), // reserved, broadcast
	netip.MustParsePrefix("100::/64"),    // discard
	netip.MustParsePrefix("2001:db8::/32"),
}

// PrivateAddr reports whether ip is not a public unicast address:
// loopback, private (RFC 1918, fc00::/7), link-local (169.254/16 — cloud
// metadata — and fe80::/10), unspecified, multicast, carrier-grade NAT,
// reserved and documentation ranges. IPv4-mapped, NAT64 (64:ff9b::/96) and
// 6to4 (2002::/16) addresses are judged by the IPv4 address they carry.
func PrivateAddr(ip netip.Addr) bool {
	ip = ip.Unmap()
	if ip.Is6() {
		b := ip.As16()
		switch {
		case netip.MustParsePrefix("64:ff9b::/96").Contains(ip):
			return PrivateAddr(netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}))
		case netip.MustParsePrefix("2002::/16").Contains(ip):
			return PrivateAddr(netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}))
		}
	}
	if !ip.IsValid() || ip.IsLoopback() || ip.IsPrivate() || ip.IsUnspecified() || ip.IsLinkLocalUnicast() ||
		ip.IsLinkLocalMulticast() || ip.IsInterfaceLocalMulticast() || ip.IsMulticast() {
		return true
	}
	for _, p := range privatePrefixes {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}
