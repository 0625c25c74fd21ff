package web

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"golang.org/x/net/html/charset"

	"github.com/gantry-dev/gantry/builtin/file"
	"github.com/gantry-dev/gantry/netguard"
)

// maxURLLen bounds the URLs WebFetch accepts.
const maxURLLen = 2000

// page is one fetched and converted response, as cached.
type page struct {
	url    string // the requested URL, after the https upgrade
	final  string // the URL the content came from (after same-host redirects)
	status int
	mime   string // the media type, lower-case, without parameters
	kind   string // "markdown", "text", "pdf", "image", "redirect"
	title  string
	text   string // Markdown or text; for a PDF the extracted text
	chars  int    // utf8.RuneCountInString(text)
	image  []byte
	bytes  int // body size
	pdfN   int // page count of a PDF

	// redirect is the target of a redirect to another host, which is not
	// followed (kind "redirect").
	redirect string
}

func (p *page) cost() int64 {
	return int64(len(p.text)+len(p.image)+len(p.url)+len(p.final)+len(p.title)+len(p.redirect)) + 256
}

// fetcher fetches and converts pages. It is safe for concurrent use.
type fetcher struct {
	opts   Options
	client *http.Client
	guard  *netguard.Dialer
	cache  *cache
	conv   *converter.Converter
}

func newFetcher(o Options) *fetcher {
	o = o.withDefaults()
	f := &fetcher{opts: o, conv: newConverter()}
	f.guard = &netguard.Dialer{Policy: o.Network, Resolver: o.Resolver, Dial: o.dial}
	tr := &http.Transport{
		Proxy: nil, // a proxy would be dialled instead of the checked host
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			ctx, cancel := context.WithTimeout(ctx, o.ConnectTimeout)
			defer cancel()
			return f.guard.DialContext(ctx, network, addr)
		},
		TLSClientConfig:        &tls.Config{RootCAs: o.rootCAs, MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:    o.ConnectTimeout,
		ForceAttemptHTTP2:      true,
		DisableKeepAlives:      true, // nothing idles after a call; every fetch dials (and checks) anew
		MaxResponseHeaderBytes: 1 << 20,
	}
	f.client = &http.Client{Transport: tr, CheckRedirect: f.checkRedirect}
	if o.CacheTTL > 0 {
		f.cache = newCache(o.CacheTTL, o.CacheBytes, o.Now)
	}
	return f
}

func (f *fetcher) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > f.opts.MaxRedirects {
		return fmt.Errorf("more than %d redirects", f.opts.MaxRedirects)
	}
	if !sameSite(via[len(via)-1].URL, req.URL) {
		return http.ErrUseLastResponse
	}
	return nil
}

// parseURL checks and normalises a URL the model gave: http or https only,
// a host, no credentials, at most 2,000 characters, the fragment dropped,
// http upgraded to https unless the host is a loopback host the policy
// allows.
func (f *fetcher) parseURL(raw string) (*url.URL, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return nil, errors.New("url is empty")
	}
	if len(raw) > maxURLLen {
		return nil, fmt.Errorf("url is %d characters long; at most %d are accepted", len(raw), maxURLLen)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("url %q does not parse: %w", raw, err)
	}
	u.Scheme = strings.ToLower(u.Scheme)
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("url %q: only http and https URLs can be fetched", raw)
	}
	if u.Hostname() == "" {
		return nil, fmt.Errorf("url %q has no host", raw)
	}
	if u.User != nil {
		return nil, fmt.Errorf("url %q carries credentials; WebFetch does not send them", raw)
	}
	u.Fragment, u.RawFragment = "", ""
	// The host in its one canonical form (netguard.CanonHost: IDNA,
	// fullwidth and odd IP spellings, case, trailing dot): what rules and
	// the SSRF guard check is what is fetched; a host with no canonical
	// form is refused.
	host, err := netguard.CanonHost(u.Hostname())
	if err != nil {
		return nil, fmt.Errorf("url %q: %w", raw, err)
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port := u.Port(); port != "" {
		host += ":" + port
	}
	u.Host = host
	if u.Scheme == "http" && !f.loopbackAllowed(u.Hostname()) {
		u.Scheme = "https"
	}
	return u, nil
}

// loopbackAllowed reports whether host is a loopback host the policy lets
// WebFetch reach (then http stays http: a local test server has no
// certificate).
func (f *fetcher) loopbackAllowed(host string) bool {
	host = normHost(host)
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return f.opts.Network.AllowsClass(netguard.Loopback)
	}
	a, err := netip.ParseAddr(host)
	return err == nil && netguard.Classify(a) == netguard.Loopback && f.opts.Network.Allows(a)
}

// fetch returns the page at u, from the cache when it is fresh.
func (f *fetcher) fetch(ctx context.Context, u *url.URL) (p *page, cached bool, err error) {
	key := u.String()
	if p, ok := f.cache.get(key); ok {
		return p, true, nil
	}
	p, err = f.get(ctx, u)
	if err != nil {
		return nil, false, err
	}
	f.cache.put(key, p)
	return p, false, nil
}

func (f *fetcher) get(parent context.Context, u *url.URL) (*page, error) {
	ctx, cancel := context.WithTimeout(parent, f.opts.Timeout)
	defer cancel()
	wrap := func(err error) error {
		var be *netguard.BlockedError
		switch {
		case errors.As(err, &be):
			return fmt.Errorf("%w (the address policy allows public addresses only unless configured otherwise)", be)
		case parent.Err() != nil:
			return parent.Err()
		case ctx.Err() != nil:
			return fmt.Errorf("fetching %s took longer than %s; gave up", u, f.opts.Timeout)
		}
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", f.opts.UserAgent)
	req.Header.Set("Accept", "text/markdown, text/html;q=0.9, text/plain;q=0.8, application/json;q=0.8, application/pdf;q=0.7, image/*;q=0.6, */*;q=0.1")
	resp, err := f.client.Do(req)
	if err != nil {
		return nil, wrap(err)
	}
	defer resp.Body.Close()
	p := &page{url: u.String(), final: resp.Request.URL.String(), status: resp.StatusCode}
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		loc, err := resp.Location()
		if err != nil {
			return nil, fmt.Errorf("%s answered %s without a usable Location", p.final, resp.Status)
		}
		loc.Fragment, loc.RawFragment = "", ""
		p.kind, p.redirect = "redirect", loc.String()
		return p, nil
	}
	if resp.StatusCode >= 400 {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		return nil, fmt.Errorf("%s answered %s", p.final, resp.Status)
	}
	max := f.opts.MaxBodyBytes
	if resp.ContentLength > max {
		return nil, fmt.Errorf("%s is %s, over the %s limit of WebFetch", p.final, size(resp.ContentLength), size(max))
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil {
		return nil, wrap(err)
	}
	if int64(len(body)) > max {
		return nil, fmt.Errorf("%s is larger than the %s limit of WebFetch; stopped reading", p.final, size(max))
	}
	p.bytes = len(body)
	ct := resp.Header.Get("Content-Type")
	mt, _, _ := mime.ParseMediaType(ct)
	if mt == "" || mt == "application/octet-stream" {
		ct = http.DetectContentType(body)
		mt, _, _ = mime.ParseMediaType(ct)
	}
	p.mime = strings.ToLower(mt)
	if err := f.convert(ctx, p, body, ct); err != nil {
		return nil, wrap(err)
	}
	return p, nil
}

// convert fills in p's content from body by media type.
func (f *fetcher) convert(ctx context.Context, p *page, body []byte, contentType string) error {
	mt := p.mime
	switch {
	case mt == "text/html" || mt == "application/xhtml+xml":
		r, err := charset.NewReader(bytes.NewReader(body), contentType)
		if err != nil {
			r = bytes.NewReader(body)
		}
		md, title, err := htmlToMarkdown(ctx, f.conv, r, p.final)
		if err != nil {
			return fmt.Errorf("converting %s to Markdown: %w", p.final, err)
		}
		p.kind, p.text, p.title = "markdown", md, title
	case isText(mt):
		text := body
		if !utf8.Valid(body) {
			if r, err := charset.NewReader(bytes.NewReader(body), contentType); err == nil {
				if b, err := io.ReadAll(r); err == nil {
					text = b
				}
			}
		}
		p.kind, p.text = "text", strings.ToValidUTF8(string(text), "\uFFFD")
	case mt == "application/pdf":
		text, n, err := file.PDFText(body, 1, DefaultMaxPDFPages)
		if err != nil {
			return fmt.Errorf("PDF %s: %w", p.final, err)
		}
		p.kind, p.text, p.pdfN = "pdf", text, n
	case mt == "image/png" || mt == "image/jpeg" || mt == "image/gif" || mt == "image/webp":
		if int64(len(body)) > f.opts.MaxImageBytes {
			return fmt.Errorf("%s is a %s image of %s, over the %s limit for an image", p.final, mt, size(int64(len(body))), size(f.opts.MaxImageBytes))
		}
		p.kind, p.image = "image", body
	default:
		return fmt.Errorf("%s is %s content, which WebFetch cannot read (it reads HTML, text, JSON, XML, PDF and PNG/JPEG/GIF/WebP images)", p.final, orUnknown(mt))
	}
	p.chars = utf8.RuneCountInString(p.text)
	return nil
}

func isText(mt string) bool {
	if strings.HasPrefix(mt, "text/") {
		return true
	}
	switch mt {
	case "application/json", "application/xml", "application/javascript", "application/ecmascript",
		"application/x-javascript", "application/yaml", "application/x-yaml", "application/toml",
		"application/x-sh", "application/sql", "application/graphql", "application/x-ndjson", "application/ld+json":
		return true
	}
	return strings.HasSuffix(mt, "+json") || strings.HasSuffix(mt, "+xml")
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// size formats a byte count.
func size(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
