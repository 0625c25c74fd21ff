package netguard

import "strings"

// MatchHost reports whether a host pattern covers host, with the semantics
// of the WebFetch(domain:…) permission rule (and of domain allow-lists
// built on it): case-insensitive, trailing dots and IPv6 brackets ignored;
// "*" covers any host; "*.x.io" covers every subdomain of x.io but not
// x.io itself; anything else covers exactly that host. An empty pattern
// or host matches nothing.
func MatchHost(pattern, host string) bool {
	pattern, host = NormHost(pattern), NormHost(host)
	switch {
	case host == "" || pattern == "":
		return false
	case pattern == "*":
		return true
	case strings.HasPrefix(pattern, "*."):
		return len(host) > len(pattern)-1 && strings.HasSuffix(host, pattern[1:])
	}
	return pattern == host
}

// NormHost lower-cases a host name and strips surrounding blanks, a
// trailing dot and IPv6 brackets.
func NormHost(h string) string {
	h = strings.TrimSpace(h)
	h = strings.TrimPrefix(strings.TrimSuffix(h, "]"), "[")
	return strings.TrimSuffix(strings.ToLower(h), ".")
}
