package sandbox

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// Network says what network a sandboxed command has.
type Network int

const (
	// NetworkNone: no network at all (a new, empty network namespace under
	// bubblewrap; TCP and UDP/raw sockets refused under Landlock).
	NetworkNone Network = iota
	// NetworkProxy: only HTTP and HTTPS through the session's filtering
	// proxy ([Policy.ProxySocket]); the proxy decides host by host.
	NetworkProxy
	// NetworkFull: the host's network, unfiltered.
	NetworkFull
)

func (n Network) String() string {
	switch n {
	case NetworkNone:
		return "none"
	case NetworkProxy:
		return "proxy"
	case NetworkFull:
		return "full"
	}
	return fmt.Sprintf("Network(%d)", int(n))
}

// Policy is what one sandboxed command may do. Paths are absolute. The zero
// value is the tightest policy: the whole filesystem read-only, nothing
// hidden, no network.
type Policy struct {
	// Write are the files and directories the command may change (the
	// working directories, the session's temporary directory, Edit allow
	// rules). Everything else is read-only.
	Write []string
	// ReadOnly are paths inside Write that stay read-only (the protected
	// files of a project: .git/hooks, .git/config, .gantry, .claude …).
	// Paths that do not exist are skipped.
	ReadOnly []string
	// Hide are paths the command cannot read (Read deny rules). Paths that
	// do not exist are skipped.
	Hide []string
	// TempDir, if set, is writable and becomes $TMPDIR. Under bubblewrap
	// /tmp is a fresh, empty tmpfs for every command.
	TempDir string
	// Network is the command's network; NetworkProxy needs ProxySocket.
	Network Network
	// ProxySocket is the Unix socket of the filtering proxy ([Proxy]).
	ProxySocket string
	// AllowLocalBinding lets the command listen on loopback ports. Under
	// bubblewrap it has its own loopback (nothing outside can reach it);
	// under Landlock binding TCP ports is refused unless this is set.
	AllowLocalBinding bool
	// UnixSockets are host Unix sockets the command may connect to
	// (sandbox.network.allowUnixSockets). The seccomp filter cannot see
	// paths: when any is named, the command may create AF_UNIX sockets at
	// all and so reach every socket it can see; the named ones are made
	// visible (under bubblewrap, also inside its private /tmp). Empty and
	// AllowAllUnixSockets false: socket(AF_UNIX) is refused (socketpair
	// works), so no host socket, pathname or abstract, is reachable.
	UnixSockets []string
	// AllowAllUnixSockets allows AF_UNIX sockets without naming any
	// (sandbox.network.allowAllUnixSockets).
	AllowAllUnixSockets bool
}

// unixAllowed reports whether the command may create AF_UNIX sockets.
func (p *Policy) unixAllowed() bool { return p.AllowAllUnixSockets || len(p.UnixSockets) > 0 }

// Validate checks that every path is absolute and free of NUL bytes and
// that a proxied policy names its socket.
func (p *Policy) Validate() error {
	var errs []error
	check := func(what string, ps ...string) {
		for _, x := range ps {
			switch {
			case strings.IndexByte(x, 0) >= 0:
				errs = append(errs, fmt.Errorf("sandbox: %s path %q contains a NUL byte", what, x))
			case !filepath.IsAbs(x):
				errs = append(errs, fmt.Errorf("sandbox: %s path %q is not absolute", what, x))
			}
		}
	}
	check("write", p.Write...)
	check("read-only", p.ReadOnly...)
	check("hidden", p.Hide...)
	check("unix socket", p.UnixSockets...)
	if p.TempDir != "" {
		check("temp", p.TempDir)
	}
	if p.Network == NetworkProxy {
		if p.ProxySocket == "" {
			errs = append(errs, errors.New("sandbox: network through the proxy needs ProxySocket"))
		} else {
			check("proxy socket", p.ProxySocket)
		}
	}
	return errors.Join(errs...)
}

// clone returns a deep copy.
func (p *Policy) clone() *Policy {
	c := *p
	c.Write = append([]string(nil), p.Write...)
	c.ReadOnly = append([]string(nil), p.ReadOnly...)
	c.Hide = append([]string(nil), p.Hide...)
	c.UnixSockets = append([]string(nil), p.UnixSockets...)
	return &c
}
