package netguard

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"
)

func TestClassify(t *testing.T) {
	for _, tt := range []struct {
		addr string
		want Class
	}{
		{"93.184.216.34", Public}, {"8.8.8.8", Public}, {"1.1.1.1", Public},
		{"2606:4700:4700::1111", Public}, {"2a00:1450:4001::200e", Public},
		{"127.0.0.1", Loopback}, {"127.255.0.9", Loopback}, {"::1", Loopback},
		{"::ffff:127.0.0.1", Loopback}, {"::ffff:7f00:1", Loopback}, {"::127.0.0.1", Loopback},
		{"10.0.0.1", Private}, {"172.16.5.4", Private}, {"172.31.255.255", Private}, {"192.168.1.1", Private},
		{"fd12:3456::1", Private}, {"fc00::1", Private}, {"::ffff:10.1.1.1", Private},
		{"172.32.0.1", Public}, {"172.15.255.255", Public},
		{"169.254.1.1", LinkLocal}, {"fe80::1", LinkLocal}, {"fe80::1%eth0", LinkLocal},
		{"100.64.0.1", CGNAT}, {"100.127.255.255", CGNAT}, {"100.128.0.1", Public},
		{"224.0.0.1", Multicast}, {"239.255.255.250", Multicast}, {"ff02::1", Multicast},
		{"0.0.0.0", Unspecified}, {"0.1.2.3", Unspecified}, {"::", Unspecified},
		{"169.254.169.254", Metadata}, {"::ffff:169.254.169.254", Metadata}, {"169.254.170.2", Metadata},
		{"100.100.100.200", Metadata}, {"192.0.0.192", Metadata}, {"fd00:ec2::254", Metadata},
		{"64:ff9b::169.254.169.254", Metadata}, {"64:ff9b::7f00:1", Loopback}, {"64:ff9b::808:808", Public},
		{"2002:7f00:1::", Loopback}, {"2002:0808:0808::1", Public},
		{"255.255.255.255", Reserved}, {"240.0.0.1", Reserved}, {"192.0.2.1", Reserved}, {"198.18.0.1", Reserved},
		{"203.0.113.7", Reserved}, {"2001:db8::1", Reserved}, {"2001::1", Reserved}, {"100::1", Reserved},
		{"fec0::1", Reserved}, {"4000::1", Reserved}, {"::2", Unspecified},
	} {
		if got := Classify(netip.MustParseAddr(tt.addr)); got != tt.want {
			t.Errorf("Classify(%s) = %s, want %s", tt.addr, got, tt.want)
		}
	}
	if Classify(netip.Addr{}) != Invalid {
		t.Error("the zero Addr is not invalid")
	}
}

func TestPolicy(t *testing.T) {
	a := netip.MustParseAddr
	var zero Policy
	for _, s := range []string{"127.0.0.1", "10.0.0.1", "169.254.169.254", "::ffff:127.0.0.1", "fe80::1"} {
		if zero.Allows(a(s)) {
			t.Errorf("the zero policy allows %s", s)
		}
	}
	if !zero.Allows(a("8.8.8.8")) {
		t.Error("the zero policy refuses a public address")
	}
	lo := Policy{Allow: []Class{Loopback}}
	if !lo.Allows(a("127.0.0.1")) || !lo.Allows(a("::ffff:127.0.0.1")) || lo.Allows(a("10.0.0.1")) {
		t.Error("loopback policy")
	}
	ll := Policy{Allow: []Class{LinkLocal, Private, CGNAT}}
	if ll.Allows(a("169.254.169.254")) || ll.Allows(a("100.100.100.200")) {
		t.Error("allowing link-local/CGNAT allows metadata")
	}
	pre := Policy{AllowPrefixes: []netip.Prefix{netip.MustParsePrefix("10.1.2.0/24")}}
	if !pre.Allows(a("10.1.2.3")) || !pre.Allows(a("::ffff:10.1.2.3")) || pre.Allows(a("10.1.3.1")) {
		t.Error("prefix policy")
	}
	if (Policy{Allow: []Class{Invalid}}).Allows(netip.Addr{}) {
		t.Error("invalid allowed")
	}
	err := zero.Check(a("127.0.0.1"))
	var be *BlockedError
	if !errors.As(err, &be) || be.Class != Loopback || !strings.Contains(err.Error(), "loopback") {
		t.Errorf("Check err = %v", err)
	}
	if err := zero.Control("tcp", "127.0.0.1:80", nil); err == nil {
		t.Error("Control allows loopback")
	}
	if err := zero.Control("tcp", "8.8.8.8:53", nil); err != nil {
		t.Error(err)
	}
}

type resolver map[string][]netip.Addr

func (r resolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := r[host]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

func TestDialer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	r := resolver{
		"local.test":  {netip.MustParseAddr("127.0.0.1")},
		"mixed.test":  {netip.MustParseAddr("8.8.8.8"), netip.MustParseAddr("127.0.0.1")},
		"public.test": {netip.MustParseAddr("8.8.8.8")},
	}
	ctx := context.Background()
	strict := &Dialer{Resolver: r}
	for _, host := range []string{"127.0.0.1", "local.test", "mixed.test", "::ffff:127.0.0.1"} {
		_, err := strict.DialContext(ctx, "tcp", net.JoinHostPort(host, port))
		var be *BlockedError
		if !errors.As(err, &be) {
			t.Errorf("dial %s: err = %v, want refused", host, err)
		}
	}
	// Dial receives the checked IP, never the name.
	var got string
	routed := &Dialer{Resolver: r, Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
		got = addr
		var d net.Dialer
		return d.DialContext(ctx, network, ln.Addr().String())
	}}
	c, err := routed.DialContext(ctx, "tcp", "public.test:443")
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if got != "8.8.8.8:443" {
		t.Fatalf("Dial got %q", got)
	}
	// The default connect re-checks in Control: a policy allowing
	// loopback connects, and the real dial happens.
	lo := &Dialer{Policy: Policy{Allow: []Class{Loopback}}, Resolver: r}
	c, err = lo.DialContext(ctx, "tcp", net.JoinHostPort("local.test", port))
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if _, err := lo.DialContext(ctx, "tcp", "nowhere.test:80"); err == nil {
		t.Fatal("unknown name dialled")
	}
}

// FuzzClassify checks that an IPv4 address and its IPv4-mapped IPv6 form
// always have the same class, and that only Public is allowed by the zero
// policy.
func FuzzClassify(f *testing.F) {
	for _, s := range []string{"127.0.0.1", "10.0.0.1", "8.8.8.8", "169.254.169.254", "::1", "2001:db8::1", "64:ff9b::a00:1", "fe80::1%eth0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := netip.ParseAddr(s)
		if err != nil {
			return
		}
		c := Classify(a)
		if a.Is4() {
			if m := Classify(netip.AddrFrom16(a.As16())); m != c {
				t.Fatalf("%s is %s but its mapped form is %s", a, c, m)
			}
		}
		if (Policy{}).Allows(a) != (c == Public) {
			t.Fatalf("%s (%s): zero policy allows = %v", a, c, (Policy{}).Allows(a))
		}
		if !(Policy{Allow: []Class{c}}).Allows(a) && c != Invalid {
			t.Fatalf("%s: allowing its class %s does not allow it", a, c)
		}
	})
}

func TestParsePolicy(t *testing.T) {
	p, err := ParsePolicy([]string{"loopback, private", "10.1.2.0/24", "192.168.7.7", ""})
	if err != nil {
		t.Fatal(err)
	}
	if !p.Allows(netip.MustParseAddr("127.0.0.1")) || !p.Allows(netip.MustParseAddr("192.168.7.7")) || p.Allows(netip.MustParseAddr("169.254.169.254")) {
		t.Fatalf("policy %+v", p)
	}
	if len(p.AllowPrefixes) != 2 || p.AllowPrefixes[1].String() != "192.168.7.7/32" {
		t.Fatalf("prefixes %v", p.AllowPrefixes)
	}
	if _, err := ParsePolicy([]string{"everything"}); err == nil {
		t.Fatal("unknown entry accepted")
	}
}
