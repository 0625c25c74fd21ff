package console

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// FuzzLocalPath: a redirect target is either the default or a path of
// this site — never another origin (an open redirect).
func FuzzLocalPath(f *testing.F) {
	for _, s := range []string{"/", "/runs/1?x=y", "//evil.example", "/\\evil.example", "https://evil.example/", "/a\r\nSet-Cookie: x", "/\t/evil.example", "", "javascript:alert(1)", "/%2F%2Fevil"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		got := localPath(p, "/def")
		if got == "/def" {
			return
		}
		u, err := url.Parse(got)
		if err != nil {
			t.Fatalf("%q: kept a path that does not parse: %v", p, err)
		}
		if u.Scheme != "" || u.Host != "" || u.User != nil || !strings.HasPrefix(got, "/") || strings.ContainsAny(got, "\r\n") {
			t.Fatalf("%q: kept %q, which leaves the site", p, got)
		}
		// What a browser makes of it: backslashes count as slashes, tabs
		// and newlines are dropped.
		b := strings.Map(func(r rune) rune {
			if r == '\t' || r == '\n' || r == '\r' {
				return -1
			}
			return r
		}, strings.ReplaceAll(got, `\`, "/"))
		if strings.HasPrefix(b, "//") {
			t.Fatalf("%q: kept %q, a protocol-relative URL for a browser", p, got)
		}
	})
}

// FuzzHostAllowed: only the loopback names and the configured ones pass
// the Host check, whatever the port, case or brackets.
func FuzzHostAllowed(f *testing.F) {
	for _, s := range []string{"localhost:7777", "LOCALHOST", "127.0.0.1:1", "[::1]:7777", "::1", "gantry.internal:443", "evil.example",
		"127.0.0.1.nip.io:7777", "localhost.evil.example", "[evil]:1", "gantry.internal.:80", ""} {
		f.Add(s)
	}
	c, err := New(Options{API: http.NotFoundHandler(), Hosts: []string{"gantry.internal"}})
	if err != nil {
		f.Fatal(err)
	}
	allowed := map[string]bool{"localhost": true, "127.0.0.1": true, "::1": true, "gantry.internal": true}
	f.Fuzz(func(t *testing.T, host string) {
		name := hostName(host)
		if c.hosts[name] != allowed[name] {
			t.Fatalf("%q → %q: allowed %v", host, name, c.hosts[name])
		}
		if c.hosts[name] {
			// The name must really be the host part of the header.
			h := strings.ToLower(strings.TrimSpace(host))
			if !strings.HasPrefix(strings.TrimPrefix(h, "["), name) {
				t.Fatalf("%q passes as %q", host, name)
			}
		}
	})
}

// FuzzSameOrigin: a POST passes the Origin check only when its Origin is
// exactly this server's scheme and host.
func FuzzSameOrigin(f *testing.F) {
	for _, s := range []string{"http://127.0.0.1:7777", "http://127.0.0.1:7777/", "https://127.0.0.1:7777", "http://evil.example", "null",
		"http://user@127.0.0.1:7777", "http://127.0.0.1:7777.evil.example", "HTTP://127.0.0.1:7777"} {
		f.Add(s)
	}
	c, _ := New(Options{API: http.NotFoundHandler()})
	f.Fuzz(func(t *testing.T, origin string) {
		r, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1:7777/new", nil)
		r.Header.Set("Origin", origin)
		if c.sameOrigin(r) && !strings.EqualFold(strings.TrimSuffix(origin, ""), "http://127.0.0.1:7777") {
			t.Fatalf("Origin %q passes for http://127.0.0.1:7777", origin)
		}
	})
}

// FuzzSignedCookie: a signed login cookie is accepted only as the signer
// made it: any other value (the real one changed anywhere) is refused,
// and parsing never panics.
func FuzzSignedCookie(f *testing.F) {
	s := newSigner(make([]byte, keyLen), "token")
	id := strings.Repeat("ab", keyLen)
	good := s.cookie(id, time.Unix(1_900_000_000, 0))
	for _, v := range []string{good, good + "0", "", ".", "..", id, id + ".1.", strings.Replace(good, "19", "29", 1)} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v string) {
		gotID, exp, ok := s.parse(v)
		if !ok {
			return
		}
		if v != s.cookie(gotID, exp) {
			t.Fatalf("%q accepted, but the signer makes %q for its login", v, s.cookie(gotID, exp))
		}
	})
}

// BenchmarkSignedCookie is the check of a signed login that every console
// request makes.
func BenchmarkSignedCookie(b *testing.B) {
	s := newSigner(make([]byte, keyLen), "token")
	v := s.cookie(strings.Repeat("ab", keyLen), time.Unix(1_900_000_000, 0))
	for b.Loop() {
		if _, _, ok := s.parse(v); !ok {
			b.Fatal("refused")
		}
	}
}
