package web

import (
	"context"
	"crypto/x509"
	"net"
	"time"

	"github.com/gantry-dev/gantry/netguard"
)

// Default limits of [Options].
const (
	DefaultMaxBodyBytes   = 10 << 20
	DefaultConnectTimeout = 10 * time.Second
	DefaultTimeout        = 60 * time.Second
	DefaultCacheTTL       = 15 * time.Minute
	DefaultCacheBytes     = 64 << 20
	DefaultPageChars      = 25_000
	DefaultSummaryChars   = 100_000
	DefaultMaxRedirects   = 10
	DefaultMaxImageBytes  = 3_750_000
	DefaultMaxPDFPages    = 100
	DefaultUserAgent      = "Gantry-WebFetch/1 (+https://github.com/gantry-dev/gantry)"
)

// Options configure the web tools. The zero value is ready to use: public
// addresses only, the default limits, no preapproved host, no search
// backend (WebSearch is then not offered).
type Options struct {
	// Network is the address policy of every connection. The zero value
	// allows public addresses only; allow [netguard.Loopback] to fetch
	// from a local server (tests, local development). http URLs of a
	// loopback host are not upgraded to https when loopback is allowed.
	Network netguard.Policy
	// Resolver resolves host names. Nil means net.DefaultResolver.
	Resolver netguard.Resolver

	// MaxBodyBytes caps a response body. Default [DefaultMaxBodyBytes]
	// (10 MB).
	MaxBodyBytes int64
	// ConnectTimeout bounds one connect (TCP and TLS). Default
	// [DefaultConnectTimeout] (10 s).
	ConnectTimeout time.Duration
	// Timeout bounds a whole fetch, redirects and body included. Default
	// [DefaultTimeout] (60 s).
	Timeout time.Duration
	// MaxRedirects bounds the same-host redirects followed. Default
	// [DefaultMaxRedirects] (10).
	MaxRedirects int
	// MaxImageBytes caps an image returned as an image block. Default
	// [DefaultMaxImageBytes] (3.75 MB, 5 MB in base64).
	MaxImageBytes int64

	// CacheTTL is how long a fetched page is reused. Default
	// [DefaultCacheTTL] (15 minutes); negative disables the cache.
	CacheTTL time.Duration
	// CacheBytes bounds the cache; the least recently used pages go
	// first. Default [DefaultCacheBytes] (64 MB).
	CacheBytes int64

	// PageChars is the number of characters of a page one call returns
	// when no side model answers the prompt; offset pages on. Default
	// [DefaultPageChars] (25,000).
	PageChars int
	// SummaryChars is the number of characters of a page handed to the
	// side model. Default [DefaultSummaryChars] (100,000).
	SummaryChars int

	// Preapproved lists hosts WebFetch may fetch without a permission
	// rule (deny and ask rules still apply). Same syntax as the
	// WebFetch(domain:…) rule: "go.dev" exact, "*.go.dev" subdomains.
	// Empty by default; [DocsHosts] is a ready list to opt into.
	Preapproved []string

	// Search is the WebSearch backend. Nil means no WebSearch tool.
	Search SearchBackend
	// SearchResults bounds the results WebSearch returns. Default 10.
	SearchResults int

	// UserAgent is sent with every request. Default [DefaultUserAgent].
	UserAgent string
	// Now is the clock of the cache. Nil means time.Now.
	Now func() time.Time

	// dial, when set by tests, replaces the final connect to a checked
	// address; rootCAs, when set by tests, replaces the system roots.
	dial    func(ctx context.Context, network, addr string) (net.Conn, error)
	rootCAs *x509.CertPool
}

func (o Options) withDefaults() Options {
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = DefaultConnectTimeout
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxRedirects <= 0 {
		o.MaxRedirects = DefaultMaxRedirects
	}
	if o.MaxImageBytes <= 0 {
		o.MaxImageBytes = DefaultMaxImageBytes
	}
	if o.CacheTTL == 0 {
		o.CacheTTL = DefaultCacheTTL
	}
	if o.CacheBytes <= 0 {
		o.CacheBytes = DefaultCacheBytes
	}
	if o.PageChars <= 0 {
		o.PageChars = DefaultPageChars
	}
	if o.SummaryChars <= 0 {
		o.SummaryChars = DefaultSummaryChars
	}
	if o.SearchResults <= 0 {
		o.SearchResults = 10
	}
	if o.UserAgent == "" {
		o.UserAgent = DefaultUserAgent
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// DocsHosts is a list of documentation hosts a program may opt into as
// [Options.Preapproved]: language and library references that are read
// often and serve no user content of their own.
var DocsHosts = []string{
	"go.dev", "pkg.go.dev", "golang.org",
	"docs.python.org", "peps.python.org",
	"developer.mozilla.org",
	"doc.rust-lang.org", "docs.rs",
	"nodejs.org", "www.typescriptlang.org",
	"docs.oracle.com", "kotlinlang.org",
	"learn.microsoft.com",
	"en.cppreference.com",
	"docs.anthropic.com", "docs.claude.com", "platform.openai.com",
	"modelcontextprotocol.io",
	"kubernetes.io", "docs.docker.com",
	"www.postgresql.org", "sqlite.org", "www.sqlite.org",
	"react.dev", "vuejs.org", "svelte.dev", "angular.dev",
	"docs.djangoproject.com", "flask.palletsprojects.com", "fastapi.tiangolo.com",
	"git-scm.com", "man7.org",
}
