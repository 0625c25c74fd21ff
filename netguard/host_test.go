package netguard

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCanonHost(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"example.com", "example.com"},
		{"EXAMPLE.COM", "example.com"},
		{"example.com.", "example.com"},
		{" example.com ", "example.com"},
		{"ｅｘａｍｐｌｅ．ｃｏｍ", "example.com"},       // fullwidth letters and full stop
		{"example。com", "example.com"},       // ideographic full stop
		{"example｡com", "example.com"},       // halfwidth ideographic full stop
		{"ＥＸＡＭＰＬＥ.com", "example.com"},       // fullwidth upper case
		{"ex\u00adample.com", "example.com"}, // soft hyphen is removed
		{"exa\u200bmple.com", "example.com"}, // zero-width space is removed
		{"ⓔxample.com", "example.com"},       // enclosed letters
		{"bücher.ch", "xn--bcher-kva.ch"},
		{"BÜCHER.ch", "xn--bcher-kva.ch"},
		{"xn--bcher-kva.ch", "xn--bcher-kva.ch"},
		{"XN--BCHER-KVA.CH", "xn--bcher-kva.ch"},
		{"pаypal.com", "xn--pypal-4ve.com"}, // Cyrillic а: another host, never paypal.com
		{"_dmarc.example.com", "_dmarc.example.com"},
		{"localhost", "localhost"},
		{"127.0.0.1", "127.0.0.1"},
		{"2130706433", "127.0.0.1"}, // decimal
		{"0177.0.0.1", "127.0.0.1"}, // octal
		{"0x7f.0.0.1", "127.0.0.1"}, // hex
		{"0x7f000001", "127.0.0.1"}, // one hex number
		{"127.1", "127.0.0.1"},      // shortened
		{"169.254.43518", "169.254.169.254"},
		{"１２７．０．０．１", "127.0.0.1"}, // fullwidth digits
		{"[::1]", "::1"},
		{"::1", "::1"},
		{"[::ffff:127.0.0.1]", "127.0.0.1"}, // IPv4-mapped IPv6
		{"[::FFFF:7F00:1]", "127.0.0.1"},
		{"[2001:DB8::1]", "2001:db8::1"},
	} {
		got, err := CanonHost(c.in)
		if err != nil || got != c.want {
			t.Errorf("CanonHost(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	for _, in := range []string{
		"", " ", ".", "a..b", "-a.com", "a-.com", "a b.com", "ex/ample.com", "ex%2eample.com", "a@b.com",
		"*.x.io", "example.com:80", "[127.0.0.1]", "[fe80::1%eth0]", "fe80::1%25eth0", "1.2.3.4.5", "256.1.1.1",
		"1.2.3.0x100", "4294967296", "example.123", "09.1.1.1", strings.Repeat("a", 64) + ".com",
		strings.Repeat("a.", 127) + "com", "a\u200db.com", "\u05d0a.com", "xn--zz--.com", "exa\x00mple.com",
	} {
		if got, err := CanonHost(in); !errors.Is(err, ErrBadHost) {
			t.Errorf("CanonHost(%q) = %q, %v; want an error wrapping ErrBadHost", in, got, err)
		}
	}
}

func TestMatchHostNormalises(t *testing.T) {
	for _, c := range []struct {
		pattern, host string
		want          bool
	}{
		{"example.com", "ｅｘａｍｐｌｅ．ｃｏｍ", true},
		{"example.com", "example。com", true},
		{"example.com", "EXAMPLE.COM.", true},
		{"ｅｘａｍｐｌｅ．ｃｏｍ", "example.com", true},
		{"*.example.com", "docs.ｅｘａｍｐｌｅ．ｃｏｍ", true},
		{"*．example.com", "docs.example.com", true},
		{"*.example.com", "example.com", false},
		{"bücher.ch", "xn--bcher-kva.ch", true},
		{"xn--bcher-kva.ch", "BÜCHER.ch", true},
		{"paypal.com", "pаypal.com", false},
		{"127.0.0.1", "2130706433", true},
		{"127.0.0.1", "[::ffff:127.0.0.1]", true},
		{"127.0.0.1", "0177.1", true},
		{"*", "ｘ.io", true},
		{"*", "a b", false},
		{"x.io", "", false},
		{"*x.io", "ax.io", false},
	} {
		if got := MatchHost(c.pattern, c.host); got != c.want {
			t.Errorf("MatchHost(%q, %q) = %v, want %v", c.pattern, c.host, got, c.want)
		}
	}
}

// FuzzCanonHost checks the canonical form's contract: it is ASCII made of
// host characters (or an IP address), a fixed point, case-blind, and a
// pattern matches a host exactly when their canonical forms are equal.
func FuzzCanonHost(f *testing.F) {
	for _, s := range []string{"example.com", "ｅｘａｍｐｌｅ．ｃｏｍ", "bücher.ch", "2130706433", "[::ffff:127.0.0.1]",
		"0x7f.1", "a..b", "xn--bcher-kva.ch", "pаypal.com", "*.x.io", "EXAMPLE。COM.", "1.2.3.4.5", "\u00ad"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		c, err := CanonHost(h)
		if err != nil {
			if !errors.Is(err, ErrBadHost) {
				t.Fatalf("CanonHost(%q): error %v does not wrap ErrBadHost", h, err)
			}
			if MatchHost("*", h) || MatchHost(h, h) {
				t.Fatalf("a host with no canonical form matched: %q", h)
			}
			return
		}
		if _, ipErr := netip.ParseAddr(c); ipErr != nil {
			for i := 0; i < len(c); i++ {
				b := c[i]
				if !(b >= 'a' && b <= 'z' || b >= '0' && b <= '9' || b == '-' || b == '_' || b == '.') {
					t.Fatalf("CanonHost(%q) = %q holds %q", h, c, b)
				}
			}
		}
		if again, err := CanonHost(c); err != nil || again != c {
			t.Fatalf("CanonHost is not a fixed point: %q -> %q -> %q, %v", h, c, again, err)
		}
		if utf8.ValidString(h) {
			if u, err := CanonHost(strings.ToUpper(h)); err == nil && u != c && isASCII(h) {
				t.Fatalf("case changes the canonical form of %q: %q vs %q", h, c, u)
			}
		}
		if !MatchHost(h, c) || !MatchHost(c, h) || !MatchHost("*", h) {
			t.Fatalf("%q does not match its canonical form %q", h, c)
		}
	})
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
