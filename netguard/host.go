package netguard

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// ErrBadHost is wrapped by [CanonHost] and [CanonPattern] for a host they
// cannot put in canonical form. Such a host is refused, never passed on:
// a rule cannot be checked against it.
var ErrBadHost = errors.New("not a valid host name")

// idnaProfile is UTS #46 processing for lookup: characters mapped
// (fullwidth forms to ASCII, the ideographic full stop and its relatives
// to ".", upper to lower case, soft hyphens and zero-width joiners
// removed), labels validated (hyphens, joiners, the bidi rule, valid
// punycode), non-transitional (ß stays ß, as in browsers). STD3 rules are
// off so that "_" (service names) passes; CanonHost applies its own,
// stricter ASCII check to the result.
var idnaProfile = idna.New(
	idna.MapForLookup(),
	idna.BidiRule(),
	idna.Transitional(false),
	idna.StrictDomainName(false),
	idna.VerifyDNSLength(true),
)

// CanonHost returns the one form of a host that Gantry's host rules
// (WebFetch(domain:…), the sandbox's allowed domains), the SSRF guard and
// its dialer compare and use. It is the one home of host normalisation:
//
//   - surrounding blanks, IPv6 brackets and one trailing dot are removed;
//   - an IP literal in any spelling a resolver accepts — dotted quad,
//     IPv6, IPv4-mapped IPv6, and the inet_aton forms (a decimal number
//     2130706433, octal 0177.0.0.1, hex 0x7f.0.0.1, shortened 127.1) —
//     becomes its canonical text (an IPv4-mapped address its IPv4 form); a
//     host whose last label is a number but that is no valid address is
//     refused, as browsers do;
//   - a name is processed by UTS #46 for lookup and converted to ASCII
//     (punycode): fullwidth letters, ideographic full stops and upper case
//     become what DNS would be asked for, so ｅｘａｍｐｌｅ．ｃｏｍ is
//     example.com and bücher.ch is xn--bcher-kva.ch. Each resulting label
//     must be 1–63 characters of a–z, 0–9, "-" and "_" (no leading or
//     trailing "-"), the whole at most 253.
//
// Anything else — an empty host, an IPv6 zone, a character that is no
// part of a host name, a label IDNA rejects — is an error wrapping
// [ErrBadHost].
func CanonHost(h string) (string, error) {
	orig := h
	h = strings.TrimSuffix(strings.TrimSpace(h), ".")
	if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		h = h[1 : len(h)-1]
		a, err := netip.ParseAddr(h)
		if err != nil || !a.Is6() {
			return "", badHost(orig, "not an IPv6 address in brackets")
		}
	}
	if h == "" {
		return "", badHost(orig, "empty")
	}
	if !utf8.ValidString(h) {
		return "", badHost(orig, "not valid UTF-8")
	}
	if strings.Contains(h, ":") {
		a, err := netip.ParseAddr(h)
		if err != nil {
			return "", badHost(orig, "not an IP address")
		}
		if a.Zone() != "" {
			return "", badHost(orig, "an IPv6 zone is not accepted")
		}
		return a.Unmap().String(), nil
	}
	a, err := idnaProfile.ToASCII(h)
	if err != nil {
		return "", badHost(orig, err.Error())
	}
	a = strings.TrimSuffix(a, ".")
	if a == "" {
		return "", badHost(orig, "empty")
	}
	if ip, ok, err := inetAton(a); ok {
		if err != nil {
			return "", badHost(orig, err.Error())
		}
		return ip.String(), nil
	}
	if len(a) > 253 {
		return "", badHost(orig, "longer than 253 characters")
	}
	for label := range strings.SplitSeq(a, ".") {
		if err := checkLabel(label); err != nil {
			return "", badHost(orig, err.Error())
		}
	}
	return a, nil
}

func badHost(h, why string) error {
	return fmt.Errorf("%w: %q: %s", ErrBadHost, h, why)
}

func checkLabel(l string) error {
	switch {
	case l == "":
		return errors.New("empty label")
	case len(l) > 63:
		return fmt.Errorf("label %q is longer than 63 characters", l)
	case l[0] == '-' || l[len(l)-1] == '-':
		return fmt.Errorf("label %q starts or ends with a hyphen", l)
	}
	for i := 0; i < len(l); i++ {
		c := l[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return fmt.Errorf("label %q holds %q, which is no part of a host name", l, c)
		}
	}
	return nil
}

// inetAton parses the IPv4 spellings inet_aton and the URL standard
// accept. ok reports a host whose last label is a number (decimal, or hex
// with 0x): such a host is an IPv4 address or invalid, never a name.
func inetAton(h string) (netip.Addr, bool, error) {
	parts := strings.Split(h, ".")
	if _, isNum := atonPart(parts[len(parts)-1]); !isNum {
		return netip.Addr{}, false, nil
	}
	if len(parts) > 4 {
		return netip.Addr{}, true, errors.New("a numeric host with more than four parts")
	}
	var nums []uint64
	for _, p := range parts {
		n, ok := atonPart(p)
		if !ok {
			return netip.Addr{}, true, fmt.Errorf("%q is no part of an IPv4 address", p)
		}
		nums = append(nums, n)
	}
	last := nums[len(nums)-1]
	if last >= 1<<(8*(5-len(nums))) {
		return netip.Addr{}, true, errors.New("an IPv4 address out of range")
	}
	v := uint32(last)
	for i, n := range nums[:len(nums)-1] {
		if n > 255 {
			return netip.Addr{}, true, errors.New("an IPv4 address part over 255")
		}
		v |= uint32(n) << (8 * (3 - i))
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true, nil
}

// atonPart parses one part of an inet_aton address: decimal, octal with a
// leading 0, hex with 0x. ok is false for anything else.
func atonPart(p string) (uint64, bool) {
	if p == "" {
		return 0, false
	}
	base := 10
	digits := p
	switch {
	case strings.HasPrefix(p, "0x"):
		base, digits = 16, p[2:]
		if digits == "" {
			return 0, true // "0x" is 0 for inet_aton and the URL standard
		}
	case len(p) > 1 && p[0] == '0':
		base, digits = 8, p[1:]
	}
	n, err := strconv.ParseUint(digits, base, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return 1 << 40, true // out of range: caught by the caller
		}
		return 0, false
	}
	return n, true
}

// CanonPattern returns the canonical form of a host pattern ("*", "*.x.io"
// or a host; see [MatchHost]), with the host part put through
// [CanonHost]. A pattern that cannot be put in canonical form is an error
// wrapping [ErrBadHost].
func CanonPattern(p string) (string, error) {
	p = strings.TrimSpace(p)
	switch {
	case p == "*":
		return p, nil
	case strings.HasPrefix(p, "*"):
		for _, dot := range []string{".", "\uff0e", "\u3002", "\uff61"} {
			if rest, ok := strings.CutPrefix(p[1:], dot); ok {
				h, err := CanonHost(rest)
				if err != nil {
					return "", err
				}
				return "*." + h, nil
			}
		}
		return "", badHost(p, "a wildcard is only accepted as \"*\" or a leading \"*.\"")
	}
	return CanonHost(p)
}

// MatchHost reports whether a host pattern covers host, with the semantics
// of the WebFetch(domain:…) permission rule (and of domain allow-lists
// built on it): both are put in canonical form by [CanonPattern] and
// [CanonHost] first (so case, a trailing dot, IPv6 brackets, fullwidth and
// other Unicode spellings, punycode and odd IP spellings do not matter);
// "*" covers any host; "*.x.io" covers every subdomain of x.io but not
// x.io itself; anything else covers exactly that host. A pattern or host
// that has no canonical form matches nothing — so a caller applying a deny
// must refuse such a host itself (check [CanonHost] first), not read "no
// match" as "not denied".
func MatchHost(pattern, host string) bool {
	p, err := CanonPattern(pattern)
	if err != nil {
		return false
	}
	h, err := CanonHost(host)
	if err != nil {
		return false
	}
	return MatchCanon(p, h)
}

// MatchCanon is [MatchHost] for a pattern and host already in canonical
// form (from [CanonPattern] and [CanonHost]): the comparison alone.
func MatchCanon(pattern, host string) bool {
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

// NormHost returns [CanonHost]'s form of h, or "" when h has none (and ""
// matches nothing).
func NormHost(h string) string {
	c, err := CanonHost(h)
	if err != nil {
		return ""
	}
	return c
}
