package web

import (
	"net"
	"net/url"
	"strings"

	"github.com/gantry-dev/gantry/netguard"
)

// normHost is [netguard.NormHost]: the canonical form of a host, "" when
// it has none.
func normHost(h string) string { return netguard.NormHost(h) }

// MatchHost reports whether a WebFetch(domain:…) specifier covers host;
// see [netguard.MatchHost], the one home of that rule.
func MatchHost(spec, host string) bool { return netguard.MatchHost(spec, host) }

// InDomain reports whether host is domain or a subdomain of it (the
// search filters' semantics: "x.io" covers docs.x.io; "*.x.io" covers the
// subdomains only). domain may be given as a URL or with a path; only its
// host counts.
func InDomain(domain, host string) bool {
	d := domainHost(domain)
	host = normHost(host)
	if d == "" || host == "" {
		return false
	}
	if sub, ok := strings.CutPrefix(d, "*."); ok {
		return strings.HasSuffix(host, "."+sub)
	}
	return host == d || strings.HasSuffix(host, "."+d)
}

// domainHost extracts the host of a filter entry: "x.io", "https://x.io/a",
// "x.io/docs", "x.io:443".
func domainHost(d string) string {
	d = strings.TrimSpace(d)
	if i := strings.Index(d, "://"); i >= 0 {
		if u, err := url.Parse(d); err == nil {
			return normPattern(u.Hostname())
		}
		d = d[i+3:]
	}
	if i := strings.IndexAny(d, "/?#"); i >= 0 {
		d = d[:i]
	}
	if h, _, err := net.SplitHostPort(d); err == nil {
		d = h
	}
	return normPattern(d)
}

// normPattern is [netguard.CanonPattern] ("*.x.io" or a host), "" when d
// has no canonical form.
func normPattern(d string) string {
	c, err := netguard.CanonPattern(d)
	if err != nil {
		return ""
	}
	return c
}

// sameSite reports whether a redirect from a to b stays on the same host:
// same host name (a leading "www." added or removed is the same host, as
// the reference agent treats it), same port, and no downgrade from https.
func sameSite(a, b *url.URL) bool {
	if b.User != nil {
		return false
	}
	if a.Scheme == "https" && b.Scheme != "https" {
		return false
	}
	if effectivePort(a) != effectivePort(b) && !(a.Scheme == "http" && b.Scheme == "https" && a.Port() == "" && b.Port() == "") {
		return false
	}
	ha, hb := normHost(a.Hostname()), normHost(b.Hostname())
	return strings.TrimPrefix(ha, "www.") == strings.TrimPrefix(hb, "www.")
}

func effectivePort(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if u.Scheme == "http" {
		return "80"
	}
	return "443"
}
