package permission

import (
	"context"
	"encoding/json"
	"net/url"
	"testing"

	"github.com/gantry-dev/gantry/netguard"
	"github.com/gantry-dev/gantry/tool"
)

// FuzzWebFetchDomainDeny: whatever spelling a URL gives its host, a
// WebFetch(domain:example.com) deny binds every spelling whose canonical
// form is example.com (or a subdomain, for *.example.com), and a host
// with no canonical form is never allowed — under an allow-all rule, in
// bypass mode.
func FuzzWebFetchDomainDeny(f *testing.F) {
	for _, h := range []string{"example.com", "ｅｘａｍｐｌｅ．ｃｏｍ", "EXAMPLE.com.", "example。com", "docs.example.com",
		"exa\u00admple.com", "a..b", "other.org", "xn--bcher-kva.ch", "2130706433"} {
		f.Add(h)
	}
	w := newWorld(f)
	e, err := NewEngine(Options{Home: w.home, WorkDir: w.work, Rules: []RuleSet{{Source: "project", Root: w.work,
		Allow: []string{"WebFetch(domain:*)"}, Deny: []string{"WebFetch(domain:example.com)", "WebFetch(domain:*.example.com)"}}}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, host string) {
		u := &url.URL{Scheme: "https", Host: host, Path: "/"}
		raw := u.String()
		pu, err := url.Parse(raw)
		if err != nil || pu.Hostname() == "" {
			return // WebFetch rejects it before any rule
		}
		in, _ := json.Marshal(map[string]any{"url": raw, "prompt": "p"})
		d, err := e.Decide(context.Background(), &Request{Tool: named("WebFetch"), Name: "WebFetch", Input: in,
			Env: &tool.Env{WorkDir: w.work, Mode: tool.ModeBypassPermissions}})
		if err != nil {
			t.Fatal(err)
		}
		c, cerr := netguard.CanonHost(pu.Hostname())
		switch {
		case cerr != nil && d.Behavior == tool.Allow:
			t.Fatalf("%q: host with no canonical form allowed: %s", raw, d.Reason)
		case cerr == nil && netguard.MatchCanon("example.com", c) || netguard.MatchCanon("*.example.com", c):
			if d.Behavior != tool.Deny {
				t.Fatalf("%q (canonical %q): %s, want deny (%s)", raw, c, d.Behavior, d.Reason)
			}
		case cerr == nil && d.Behavior != tool.Allow:
			t.Fatalf("%q (canonical %q): %s, want allow (%s)", raw, c, d.Behavior, d.Reason)
		}
	})
}
