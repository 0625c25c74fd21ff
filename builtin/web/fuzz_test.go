package web

import (
	"net/url"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/netguard"
)

// FuzzParseURL checks that whatever the model sends, an accepted URL is
// http(s) with a host, no credentials, no fragment, https unless it names
// a loopback host the policy allows, and re-parses to itself.
func FuzzParseURL(f *testing.F) {
	for _, s := range []string{
		"https://go.dev/doc", "http://example.com:8080/a?b#c", "file:///etc/passwd", "gopher://x",
		"http://user:pw@x.io/", "http://[::1]:80/", "http://127.0.0.1/", "HTTP://X.IO./", "//x.io/a",
		"http://localhost/", "http://a.localhost/", "https://%65xample.com/", "http://[::ffff:127.0.0.1]/",
	} {
		f.Add(s, false)
		f.Add(s, true)
	}
	strict, local := newFetcher(Options{}), newFetcher(Options{Network: loopback})
	f.Fuzz(func(t *testing.T, raw string, allowLoopback bool) {
		fe := strict
		if allowLoopback {
			fe = local
		}
		u, err := fe.parseURL(raw)
		if err != nil {
			return
		}
		if u.Scheme != "https" && u.Scheme != "http" {
			t.Fatalf("%q: scheme %q", raw, u.Scheme)
		}
		if u.Scheme == "http" && !(allowLoopback && fe.loopbackAllowed(u.Hostname())) {
			t.Fatalf("%q: http kept for %q", raw, u.Hostname())
		}
		if u.Hostname() == "" || u.User != nil || u.Fragment != "" {
			t.Fatalf("%q: accepted as %#v", raw, u)
		}
		again, err := url.Parse(u.String())
		if err != nil || again.Hostname() != u.Hostname() {
			t.Fatalf("%q: %q does not re-parse to the same host: %v", raw, u.String(), err)
		}
	})
}

// FuzzDomains checks the domain matchers against their definitions.
func FuzzDomains(f *testing.F) {
	for _, s := range [][2]string{
		{"x.io", "x.io"}, {"*.x.io", "a.x.io"}, {"*.x.io", "x.io"}, {"x.io", "evilx.io"}, {"X.IO.", "x.io"},
		{"*", "a"}, {"https://x.io/path", "docs.x.io"}, {"x.io:443", "x.io"}, {"[::1]", "::1"}, {"", "x"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, host string) {
		h := netguard.NormHost(host)
		m := MatchHost(pattern, host)
		// Case and a trailing dot never change the answer (for ASCII
		// names, whose case folds both ways).
		if ascii(pattern) && ascii(host) && h != "" && !strings.HasSuffix(strings.TrimSpace(host), ".") {
			if MatchHost(strings.ToUpper(pattern), strings.ToUpper(strings.TrimSpace(host))+".") != m {
				t.Fatalf("MatchHost(%q, %q) changes with case or a trailing dot", pattern, host)
			}
		}
		// A "*." pattern never covers its own apex, and covers only
		// names ending in ".apex".
		cp, _ := netguard.CanonPattern(pattern)
		if apex, ok := strings.CutPrefix(cp, "*."); ok && m {
			if h == apex || !strings.HasSuffix(h, "."+apex) {
				t.Fatalf("MatchHost(%q, %q): subdomain pattern matched %q", pattern, host, h)
			}
		}
		// An exact pattern covers exactly its host.
		if p := cp; m && p != "*" && !strings.HasPrefix(p, "*.") && p != h {
			t.Fatalf("MatchHost(%q, %q) matched another host", pattern, host)
		}
		// InDomain covers the domain and its subdomains only.
		if InDomain(pattern, host) {
			d := domainHost(pattern)
			base := strings.TrimPrefix(d, "*.")
			if h != base && !strings.HasSuffix(h, "."+base) {
				t.Fatalf("InDomain(%q, %q): %q is not inside %q", pattern, host, h, base)
			}
		}
	})
}

// FuzzSameSite checks that a followed redirect never leaves the host (a
// leading www. aside), never changes port, never downgrades and never
// carries credentials.
func FuzzSameSite(f *testing.F) {
	f.Add("https://x.io/a", "https://www.x.io/b")
	f.Add("https://x.io/a", "https://x.io:444/b")
	f.Add("http://x.io/a", "https://x.io/b")
	f.Add("https://x.io/a", "http://x.io/b")
	f.Add("https://x.io/", "https://u:p@x.io/")
	f.Fuzz(func(t *testing.T, a, b string) {
		ua, err1 := url.Parse(a)
		ub, err2 := url.Parse(b)
		if err1 != nil || err2 != nil || !sameSite(ua, ub) {
			return
		}
		ha := strings.TrimPrefix(netguard.NormHost(ua.Hostname()), "www.")
		hb := strings.TrimPrefix(netguard.NormHost(ub.Hostname()), "www.")
		if ha != hb || ub.User != nil || (ua.Scheme == "https" && ub.Scheme != "https") {
			t.Fatalf("sameSite(%q, %q) followed a redirect off the site", a, b)
		}
	})
}

func ascii(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
