// Package netguard decides which IP addresses an outbound connection may
// reach, and dials only those: the one home of Gantry's rules against
// server-side request forgery (SSRF), shared by WebFetch and the sandbox's
// network proxy.
//
// The rule is an allow-list: an address is reachable when [Classify] calls
// it [Public] (a global unicast address outside every special-purpose
// range), or when a [Policy] explicitly allows its class or a prefix
// holding it. Everything else — loopback, private, link-local, shared
// (CGNAT), multicast, unspecified, cloud metadata, documentation and other
// reserved ranges — is refused by the zero Policy. IPv4 addresses embedded
// in IPv6 (IPv4-mapped ::ffff:a.b.c.d, IPv4-compatible, NAT64 64:ff9b::/96,
// 6to4 2002::/16) are judged by the IPv4 address they carry.
//
// The check belongs in the dialer, after name resolution: [Dialer] resolves
// a name once, checks every address, and connects to a checked address (the
// connection is pinned to what was checked), so DNS rebinding and redirects
// to internal hosts are refused on every connection, not only the first.
package netguard

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
)

// Class is the kind of an IP address, as far as reachability goes.
type Class string

const (
	// Public is a global unicast address outside every special range.
	Public Class = "public"
	// Loopback is 127.0.0.0/8 and ::1.
	Loopback Class = "loopback"
	// Private is 10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16 and fc00::/7.
	Private Class = "private"
	// LinkLocal is 169.254.0.0/16 and fe80::/10 (metadata excepted).
	LinkLocal Class = "link-local"
	// CGNAT is the shared address space 100.64.0.0/10 (metadata excepted).
	CGNAT Class = "shared (CGNAT)"
	// Multicast is 224.0.0.0/4 and ff00::/8.
	Multicast Class = "multicast"
	// Unspecified is 0.0.0.0/8 and ::.
	Unspecified Class = "unspecified"
	// Metadata is a cloud instance-metadata address: 169.254.169.254
	// (AWS, GCP, Azure, OpenStack…), 169.254.170.2 (ECS task metadata),
	// 100.100.100.200 (Alibaba), 192.0.0.192 (Oracle) and fd00:ec2::254
	// (AWS over IPv6). Allowing LinkLocal, CGNAT or Private does not allow
	// these; only allowing Metadata (or a prefix holding one) does.
	Metadata Class = "cloud metadata"
	// Reserved is every other special-purpose range: benchmarking,
	// documentation, protocol assignments, 240.0.0.0/4, the broadcast
	// address, discard-only and documentation IPv6, Teredo, ORCHIDv2, and
	// any IPv6 address outside 2000::/3.
	Reserved Class = "reserved"
	// Invalid is the zero netip.Addr.
	Invalid Class = "invalid"
)

var metadata = []netip.Addr{
	netip.MustParseAddr("169.254.169.254"),
	netip.MustParseAddr("169.254.170.2"),
	netip.MustParseAddr("100.100.100.200"),
	netip.MustParseAddr("192.0.0.192"),
	netip.MustParseAddr("fd00:ec2::254"),
}

type rangeClass struct {
	p netip.Prefix
	c Class
}

func ranges(c Class, prefixes ...string) []rangeClass {
	out := make([]rangeClass, len(prefixes))
	for i, p := range prefixes {
		out[i] = rangeClass{netip.MustParsePrefix(p), c}
	}
	return out
}

// v4Ranges are the IPv4 special-purpose ranges (IANA's registry), most
// specific first where they nest.
var v4Ranges = slices.Concat(
	ranges(Unspecified, "0.0.0.0/8"),
	ranges(Loopback, "127.0.0.0/8"),
	ranges(Private, "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"),
	ranges(LinkLocal, "169.254.0.0/16"),
	ranges(CGNAT, "100.64.0.0/10"),
	ranges(Multicast, "224.0.0.0/4"),
	ranges(Reserved,
		"192.0.0.0/24",    // IETF protocol assignments
		"192.0.2.0/24",    // TEST-NET-1
		"192.88.99.0/24",  // 6to4 relay anycast (deprecated)
		"198.18.0.0/15",   // benchmarking
		"198.51.100.0/24", // TEST-NET-2
		"203.0.113.0/24",  // TEST-NET-3
		"240.0.0.0/4",     // reserved, and 255.255.255.255 broadcast
	),
)

// v6Ranges are the IPv6 special-purpose ranges inside 2000::/3 plus the
// non-global ones outside it that have a class of their own.
var v6Ranges = slices.Concat(
	ranges(Loopback, "::1/128"),
	ranges(Unspecified, "::/128"),
	ranges(Private, "fc00::/7"),
	ranges(LinkLocal, "fe80::/10"),
	ranges(Multicast, "ff00::/8"),
	ranges(Reserved,
		"fec0::/10",     // site-local (deprecated)
		"100::/64",      // discard-only
		"2001::/32",     // Teredo
		"2001:2::/48",   // benchmarking
		"2001:10::/28",  // ORCHID
		"2001:20::/28",  // ORCHIDv2
		"2001:db8::/32", // documentation
		"3fff::/20",     // documentation
		"5f00::/16",     // segment routing SIDs
	),
)

var (
	global6 = netip.MustParsePrefix("2000::/3")
	nat64   = netip.MustParsePrefix("64:ff9b::/96")
	nat64l  = netip.MustParsePrefix("64:ff9b:1::/48")
	sixTo4  = netip.MustParsePrefix("2002::/16")
	compat  = netip.MustParsePrefix("::/96")
)

// Classify returns the class of a. An IPv6 address carrying an IPv4 address
// (mapped, compatible, NAT64, 6to4) has the class of the IPv4 address it
// carries; an IPv4 address carried by NAT64 or 6to4 that is itself public
// makes the IPv6 address public.
func Classify(a netip.Addr) Class {
	if !a.IsValid() {
		return Invalid
	}
	a = a.WithZone("")
	if a.Is4In6() {
		a = a.Unmap()
	}
	if a.Is4() {
		if slices.Contains(metadata, a) {
			return Metadata
		}
		for _, r := range v4Ranges {
			if r.p.Contains(a) {
				return r.c
			}
		}
		return Public
	}
	if slices.Contains(metadata, a) {
		return Metadata
	}
	for _, r := range v6Ranges {
		if r.p.Contains(a) {
			return r.c
		}
	}
	b := a.As16()
	switch {
	case nat64.Contains(a), compat.Contains(a):
		return Classify(netip.AddrFrom4([4]byte(b[12:16])))
	case sixTo4.Contains(a):
		return Classify(netip.AddrFrom4([4]byte(b[2:6])))
	case nat64l.Contains(a):
		return Reserved // local-use NAT64 embeds addresses we cannot read reliably
	case global6.Contains(a):
		return Public
	}
	return Reserved
}

// Policy says which non-public addresses may be reached. The zero value
// allows public addresses only.
type Policy struct {
	// Allow lists the classes allowed besides [Public] (for example
	// [Loopback] for tests and local development, [Private] for an
	// intranet). [Invalid] is never allowed.
	Allow []Class
	// AllowPrefixes lists address ranges allowed whatever their class (for
	// example 10.1.2.0/24 for one internal documentation host).
	AllowPrefixes []netip.Prefix
}

// Allows reports whether a may be reached.
func (p Policy) Allows(a netip.Addr) bool { return p.Check(a) == nil }

// Check returns nil if a may be reached, else a [*BlockedError].
func (p Policy) Check(a netip.Addr) error {
	c := Classify(a)
	if c == Public {
		return nil
	}
	if c != Invalid {
		if slices.Contains(p.Allow, c) {
			return nil
		}
		u := a.WithZone("")
		if u.Is4In6() {
			u = u.Unmap()
		}
		for _, pr := range p.AllowPrefixes {
			if pr.Contains(u) || pr.Contains(a.WithZone("")) {
				return nil
			}
		}
	}
	return &BlockedError{Addr: a, Class: c}
}

// AllowsClass reports whether every address of class c is allowed by class
// (prefixes aside).
func (p Policy) AllowsClass(c Class) bool { return c == Public || slices.Contains(p.Allow, c) }

// BlockedError reports an address a [Policy] refuses.
type BlockedError struct {
	// Host is the name that resolved to Addr ("" for an IP literal).
	Host  string
	Addr  netip.Addr
	Class Class
}

func (e *BlockedError) Error() string {
	if e.Host != "" {
		return fmt.Sprintf("refusing to connect to %s: it resolves to %s, a %s address", e.Host, e.Addr, e.Class)
	}
	return fmt.Sprintf("refusing to connect to %s: a %s address", e.Addr, e.Class)
}

// ParsePolicy builds a Policy from a list of entries, each a class name
// ("loopback", "private", "link-local", "cgnat", "multicast",
// "unspecified", "metadata", "reserved"), an IP address or a CIDR prefix;
// entries may also be comma-separated. An unknown entry is an error.
func ParsePolicy(entries []string) (Policy, error) {
	var p Policy
	names := map[string]Class{
		"loopback": Loopback, "private": Private, "link-local": LinkLocal, "linklocal": LinkLocal,
		"cgnat": CGNAT, "shared": CGNAT, "multicast": Multicast, "unspecified": Unspecified,
		"metadata": Metadata, "reserved": Reserved,
	}
	for _, e := range entries {
		for _, s := range strings.Split(e, ",") {
			s = strings.ToLower(strings.TrimSpace(s))
			if s == "" {
				continue
			}
			if c, ok := names[s]; ok {
				if !slices.Contains(p.Allow, c) {
					p.Allow = append(p.Allow, c)
				}
				continue
			}
			if pr, err := netip.ParsePrefix(s); err == nil {
				p.AllowPrefixes = append(p.AllowPrefixes, pr.Masked())
				continue
			}
			if a, err := netip.ParseAddr(s); err == nil {
				p.AllowPrefixes = append(p.AllowPrefixes, netip.PrefixFrom(a, a.BitLen()))
				continue
			}
			return Policy{}, fmt.Errorf("netguard: %q is not an address class (loopback, private, link-local, cgnat, multicast, unspecified, metadata, reserved), an IP address or a CIDR prefix", s)
		}
	}
	return p, nil
}
