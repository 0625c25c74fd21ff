package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// Bubblewrap is the backend that runs commands under bubblewrap (`bwrap`,
// Debian package bubblewrap): the root filesystem bound read-only, the
// policy's writable paths bound read-write, a fresh tmpfs on /tmp, a new pid
// namespace (the command sees only its own processes, and every process it
// started dies when it ends), a new network namespace unless the policy
// allows the full network, --die-with-parent, --new-session, always a user
// namespace with every capability dropped (also when Gantry runs as root),
// no new privileges, and the package's seccomp filter (the same as the
// Landlock backend's, without its IP socket rules: no mounts, namespaces,
// ptrace, keyrings, modules, io_uring …, no AF_UNIX sockets unless the
// policy names some). The protected names of every writable directory are
// mounted read-only (see [ProtectedNames]); mount points cannot be moved or
// removed.
type Bubblewrap struct {
	// Path is the bwrap binary; empty means "bwrap" on PATH.
	Path string
	// Helper is the program that bridges the proxy inside the network
	// namespace (the Gantry binary, see [Main]); empty means
	// os.Executable. Only used for [NetworkProxy].
	Helper string

	mu      sync.Mutex
	filters map[filterOptions][]byte // compiled seccomp filters
}

var _ Backend = (*Bubblewrap)(nil)

// Name implements [Backend].
func (b *Bubblewrap) Name() string { return "bubblewrap" }

func (b *Bubblewrap) path() (string, error) {
	name := b.Path
	if name == "" {
		name = "bwrap"
	}
	return exec.LookPath(name)
}

// Check reports why the backend cannot run here (bwrap missing, namespaces
// refused), or nil. It runs `bwrap … true` once.
//
// The probe uses what every command gets: a user namespace (also as root),
// no capabilities and the seccomp filter. Where one of them is refused the
// backend is unavailable rather than weaker.
func (b *Bubblewrap) Check() error {
	bin, err := b.path()
	if err != nil {
		return fmt.Errorf("bubblewrap is not installed (%w); on Debian: apt-get install bubblewrap", err)
	}
	cmd := exec.Command(bin, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
		"--unshare-all", "--unshare-user", "--cap-drop", "ALL", "--die-with-parent", "--new-session", "true")
	release, err := b.withSeccomp(cmd, filterOptions{})
	if err != nil {
		return fmt.Errorf("bubblewrap: seccomp filter: %w", err)
	}
	defer release()
	// The filter sits after "true"'s options: insert before the command.
	n := len(cmd.Args)
	cmd.Args = append(cmd.Args[:n-1:n-1], "--seccomp", fmt.Sprint(2+len(cmd.ExtraFiles)), "true")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("bubblewrap cannot create a user namespace without capabilities and a seccomp filter here (%v): %s", err, trimOut(out))
	}
	return nil
}

// withSeccomp passes the compiled filter of o to cmd as an extra file (fd
// 2+len(cmd.ExtraFiles) in the child) through a pipe; the release function
// closes the parent's end.
func (b *Bubblewrap) withSeccomp(cmd *exec.Cmd, o filterOptions) (func(), error) {
	prog, err := b.filter(o)
	if err != nil {
		return nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	// A filter is at most a few KB: far below the pipe's buffer.
	_, err = w.Write(prog)
	w.Close()
	if err != nil {
		r.Close()
		return nil, err
	}
	cmd.ExtraFiles = append(cmd.ExtraFiles, r)
	return func() { r.Close() }, nil
}

// filter returns the compiled filter of o, made once per variant.
func (b *Bubblewrap) filter(o filterOptions) ([]byte, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if f, ok := b.filters[o]; ok {
		return f, nil
	}
	f, err := filterBytes(o)
	if err != nil {
		return nil, err
	}
	if b.filters == nil {
		b.filters = map[filterOptions][]byte{}
	}
	b.filters[o] = f
	return f, nil
}

// Wrap implements [Backend]: cmd becomes `bwrap OPTIONS -- cmd.Path
// cmd.Args[1:]…`, with cmd.Dir as the directory inside.
func (b *Bubblewrap) Wrap(cmd *exec.Cmd, p *Policy) (func(), error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	bin, err := b.path()
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	prog, err := programPath(cmd)
	if err != nil {
		return nil, err
	}
	args := []string{bin,
		"--ro-bind", "/", "/",
		"--dev", "/dev",
		"--proc", "/proc",
		"--tmpfs", "/tmp",
		"--unshare-user", "--cap-drop", "ALL",
		"--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
		"--die-with-parent", "--new-session",
	}
	if p.Network != NetworkFull {
		args = append(args, "--unshare-net")
	}
	if p.TempDir != "" {
		if err := os.MkdirAll(p.TempDir, 0o700); err != nil {
			return nil, fmt.Errorf("sandbox: temp dir: %w", err)
		}
		args = append(args, "--setenv", "TMPDIR", p.TempDir)
	}
	args = append(args, mounts(p)...)
	// The program must be visible inside (a test binary under /tmp is not).
	args = append(args, "--ro-bind-try", prog, prog)
	if cmd.Dir != "" {
		args = append(args, "--chdir", cmd.Dir)
	}
	inner := append([]string{prog}, cmd.Args[1:]...)
	filter := filterOptions{UnixSockets: p.unixAllowed()}
	if p.Network == NetworkProxy {
		helper, err := helperPath(b.Helper)
		if err != nil {
			return nil, err
		}
		args = append(args, "--ro-bind", p.ProxySocket, p.ProxySocket, "--ro-bind-try", helper, helper)
		spec := &helperSpec{Bridge: p.ProxySocket, BridgeAddr: bridgeAddrNS, Args: inner}
		if !filter.UnixSockets {
			// The bridge dials the proxy's socket; its command may not:
			// it gets a second filter without Unix sockets.
			inf := filter
			spec.Inner, spec.Helper = &inf, helper
			filter.UnixSockets = true
		}
		args = append(args, "--setenv", helperEnv, encodeSpec(spec))
		inner = []string{helper}
	}
	release, err := b.withSeccomp(cmd, filter)
	if err != nil {
		return nil, fmt.Errorf("sandbox: seccomp filter: %w", err)
	}
	args = append(args, "--seccomp", fmt.Sprint(2+len(cmd.ExtraFiles)))
	args = append(args, "--")
	args = append(args, inner...)
	cmd.Path = bin
	cmd.Args = args
	cmd.Err = nil
	return release, nil
}

// mount kinds, in the order they apply to the same path.
const (
	mountWrite = iota
	mountReadOnly
	mountHide
	mountSocket
)

// mounts returns the bind and tmpfs options of p's paths, shallowest
// first, so that a deeper path wins over the one holding it (a hidden file
// in a writable project, a project in a hidden home); at the same path a
// read-only or hidden mount wins over a writable one. They come after /tmp's
// tmpfs, so a working directory under /tmp is the real one.
func mounts(p *Policy) []string {
	type mnt struct {
		path  string
		kind  int
		depth int
	}
	var ms []mnt
	addAll := func(kind int, ps []string) {
		for _, x := range existing(ps) {
			ms = append(ms, mnt{x, kind, strings.Count(x, "/")})
		}
	}
	addAll(mountWrite, p.Write)
	if p.TempDir != "" {
		addAll(mountWrite, []string{p.TempDir})
	}
	addAll(mountReadOnly, p.ReadOnly)
	// The protected names of every writable directory: read-only, and
	// mount points, which cannot be renamed or removed (EBUSY). A git
	// directory is bound writable onto itself (immovable), its
	// configuration and hooks read-only. Names that do not exist cannot
	// be mounted without creating them in the user's tree: the session's
	// guard reverts them after the command (see Sandbox.WrapGuarded).
	for _, pp := range protectedOf(p) {
		if _, err := os.Lstat(pp.path); err != nil {
			continue
		}
		kind := mountReadOnly
		if pp.gitDir {
			kind = mountWrite
		}
		ms = append(ms, mnt{pp.path, kind, strings.Count(pp.path, "/")})
	}
	addAll(mountHide, p.Hide)
	addAll(mountSocket, p.UnixSockets)
	slices.SortStableFunc(ms, func(a, b mnt) int {
		if a.depth != b.depth {
			return a.depth - b.depth
		}
		return a.kind - b.kind
	})
	var args []string
	for _, m := range ms {
		switch m.kind {
		case mountWrite:
			args = append(args, "--bind", m.path, m.path)
		case mountReadOnly:
			args = append(args, "--ro-bind", m.path, m.path)
		case mountSocket:
			// Visible also under /tmp's tmpfs and inside hidden paths.
			args = append(args, "--ro-bind", m.path, m.path)
		case mountHide:
			if m.path == "/" {
				continue // hiding everything would leave nothing to run
			}
			if fi, err := os.Stat(m.path); err == nil && fi.IsDir() {
				args = append(args, "--tmpfs", m.path, "--remount-ro", m.path)
			} else {
				args = append(args, "--ro-bind", os.DevNull, m.path)
			}
		}
	}
	return args
}

// bridgeAddrNS is where the proxy bridge listens inside a private network
// namespace (nothing else can use that loopback).
const bridgeAddrNS = "127.0.0.1:3128"

// programPath resolves cmd's program to an absolute path.
func programPath(cmd *exec.Cmd) (string, error) {
	if cmd.Err != nil {
		return "", cmd.Err
	}
	if len(cmd.Args) == 0 {
		return "", errors.New("sandbox: command has no Args")
	}
	prog := cmd.Path
	if !filepath.IsAbs(prog) {
		lp, err := exec.LookPath(prog)
		if err != nil {
			return "", fmt.Errorf("sandbox: %w", err)
		}
		if prog, err = filepath.Abs(lp); err != nil {
			return "", fmt.Errorf("sandbox: %w", err)
		}
	}
	return prog, nil
}

// existing returns the paths that exist (without following a final
// symlink), deduplicated, in order.
func existing(ps []string) []string {
	var out []string
	for _, p := range ps {
		p = filepath.Clean(p)
		if _, err := os.Lstat(p); err != nil || slices.Contains(out, p) {
			continue
		}
		out = append(out, p)
	}
	return out
}

func trimOut(b []byte) string {
	if len(b) > 300 {
		b = b[:300]
	}
	return string(b)
}
