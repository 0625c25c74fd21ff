package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"
)

// Resolver looks up the addresses of a host name. *net.Resolver implements
// it.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Dialer connects only to addresses its [Policy] allows. The zero value
// allows public addresses only, resolves with net.DefaultResolver and
// connects with a plain net.Dialer.
//
// DialContext resolves a host name once, checks every address it resolves
// to (one refused address refuses the name: a name that mixes public and
// internal addresses is not trusted), and connects to the checked addresses
// in order; the connection is made to the IP that was checked, never by
// name again. The connect step re-checks the address in the socket's
// Control hook, so a custom Dial cannot be reached with an unchecked
// address either.
type Dialer struct {
	Policy Policy
	// Resolver resolves host names. Nil means net.DefaultResolver.
	Resolver Resolver
	// Dialer makes the connection to a checked IP:port. Nil means a
	// net.Dialer with no timeout of its own (use the context). Its Control
	// hook is replaced by the policy check.
	Dialer *net.Dialer
	// Dial, if set, replaces the final connect to a checked IP:port (tests
	// route it to a loopback server; a proxy may chain another dialer). The
	// address it receives has passed the policy.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

// DialContext connects to address ("host:port") on network ("tcp",
// "tcp4", "tcp6"), refusing addresses the policy does not allow with an
// error wrapping a [*BlockedError].
func (d *Dialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	addrs, err := d.Resolve(ctx, host)
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, a := range addrs {
		if (network == "tcp4" && !a.Unmap().Is4()) || (network == "tcp6" && a.Unmap().Is4()) {
			continue
		}
		conn, err := d.connect(ctx, network, net.JoinHostPort(a.String(), port))
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	if len(errs) == 0 {
		return nil, fmt.Errorf("netguard: %s has no %s address", host, network)
	}
	return nil, errors.Join(errs...)
}

// Resolve returns the addresses of host (an IP literal or a name), or an
// error wrapping a [*BlockedError] if any of them is refused. host is put
// in canonical form first ([CanonHost]): what is resolved is what rules
// were checked against, and a host with no canonical form is refused with
// an error wrapping [ErrBadHost].
func (d *Dialer) Resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	host, err := CanonHost(host)
	if err != nil {
		return nil, err
	}
	if a, err := netip.ParseAddr(host); err == nil {
		if err := d.Policy.Check(a); err != nil {
			return nil, err
		}
		return []netip.Addr{a}, nil
	}
	r := d.Resolver
	if r == nil {
		r = net.DefaultResolver
	}
	addrs, err := r.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, err
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("netguard: %s resolves to no address", host)
	}
	for _, a := range addrs {
		if err := d.Policy.Check(a); err != nil {
			var be *BlockedError
			if errors.As(err, &be) {
				be.Host = host
			}
			return nil, err
		}
	}
	return addrs, nil
}

func (d *Dialer) connect(ctx context.Context, network, addr string) (net.Conn, error) {
	if d.Dial != nil {
		return d.Dial(ctx, network, addr)
	}
	var nd net.Dialer
	if d.Dialer != nil {
		nd = *d.Dialer
	}
	nd.Resolver = nil
	nd.Control = d.Policy.Control
	nd.ControlContext = nil
	return nd.DialContext(ctx, network, addr)
}

// Control checks the address a socket is about to connect to; it has the
// signature of net.Dialer.Control, for dialers that resolve names
// themselves.
func (p Policy) Control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("netguard: cannot check address %q: %w", address, err)
	}
	return p.Check(ap.Addr())
}
