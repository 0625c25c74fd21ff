package sandbox

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// Backend contains processes. It is the one interface of the package.
type Backend interface {
	// Name is "bubblewrap", "landlock" or "none".
	Name() string
	// Wrap rewrites cmd, before it is started, so that it runs inside the
	// containment p describes. cmd's Dir, Env, standard streams and
	// SysProcAttr are kept. The returned release function must be called
	// once the command has been waited for: it kills whatever the command
	// left behind and frees what Wrap set up.
	Wrap(cmd *exec.Cmd, p *Policy) (release func(), err error)
}

// None is the backend of machines where no sandbox is available: Wrap
// changes nothing. [Sandbox] never claims containment with it.
type None struct{}

// Name implements [Backend].
func (None) Name() string { return "none" }

// Wrap implements [Backend]; it leaves cmd as it is.
func (None) Wrap(*exec.Cmd, *Policy) (func(), error) { return func() {}, nil }

// Backend names accepted by [Options.Backend].
const (
	BackendAuto       = "auto"
	BackendBubblewrap = "bubblewrap"
	BackendLandlock   = "landlock"
	BackendNone       = "none"
)

// Status says which backend is active and why.
type Status struct {
	// Enabled reports whether the settings ask for a sandbox.
	Enabled bool `json:"enabled"`
	// Backend is the active backend's name ("none" when nothing contains
	// commands).
	Backend string `json:"backend"`
	// Reason explains the choice ("bubblewrap 0.8 works here", "forced
	// by …", why the others are unavailable).
	Reason string `json:"reason"`
	// Unavailable lists, per backend, why it cannot run here.
	Unavailable map[string]string `json:"unavailable,omitempty"`
	// Cleanup says how leftover processes are killed.
	Cleanup string `json:"cleanup"`
	// Network is "none", "proxy (domains…)" or "full".
	Network string `json:"network"`
	// UnixSockets says which host Unix sockets commands reach: "none
	// (AF_UNIX sockets refused)", "all", or the named paths with the
	// caveat that every visible socket is then reachable.
	UnixSockets string `json:"unix_sockets"`
}

// Contained reports whether commands really run in a sandbox.
func (s Status) Contained() bool { return s.Enabled && s.Backend != BackendNone }

// Detect picks the backend to use: name, or with "" / "auto" the first
// that works of bubblewrap then Landlock, else [None]. The status says why.
func Detect(name string) (Backend, Status) {
	st := Status{Enabled: true, Unavailable: map[string]string{}}
	bw := &Bubblewrap{}
	lk := &Landlock{}
	try := func(b interface {
		Backend
		Check() error
	}) bool {
		if err := b.Check(); err != nil {
			st.Unavailable[b.Name()] = err.Error()
			return false
		}
		return true
	}
	var b Backend = None{}
	switch name {
	case "", BackendAuto:
		switch {
		case try(bw):
			b, st.Reason = bw, "bubblewrap works here"
		case try(lk):
			b, st.Reason = lk, "bubblewrap is unavailable; Landlock and seccomp work here"
		default:
			st.Reason = "no sandbox backend works on this machine; commands run uncontained and permission rules are tightened"
		}
	case BackendBubblewrap:
		if try(bw) {
			b, st.Reason = bw, "bubblewrap chosen in the settings"
		} else {
			st.Reason = "bubblewrap was chosen but does not work here; commands run uncontained and permission rules are tightened"
		}
	case BackendLandlock:
		if try(lk) {
			b, st.Reason = lk, "Landlock chosen in the settings"
		} else {
			st.Reason = "Landlock was chosen but does not work here; commands run uncontained and permission rules are tightened"
		}
	case BackendNone:
		st.Reason = "the sandbox backend is forced off; commands run uncontained and permission rules are tightened"
	default:
		st.Reason = fmt.Sprintf("unknown sandbox backend %q; commands run uncontained and permission rules are tightened", name)
	}
	st.Backend = b.Name()
	switch b.(type) {
	case *Bubblewrap:
		st.Cleanup = "pid namespace: every process dies with the command"
	case *Landlock:
		if err := CgroupCheck(); err != nil {
			st.Cleanup = "process group only (no cgroup v2: " + err.Error() + "); processes that leave it survive"
			lk.Cgroups = "-"
		} else {
			st.Cleanup = "cgroup v2: every process dies with the command"
		}
	default:
		st.Cleanup = "process group only; processes that leave it (setsid) survive"
	}
	return b, st
}

// Options configure a session's [Sandbox]. The zero value is a disabled
// sandbox.
type Options struct {
	// Enabled turns the sandbox on (settings: sandbox.enabled).
	Enabled bool
	// Backend is "auto" (default), "bubblewrap", "landlock" or "none"
	// (forced off, for machines or tests that must run uncontained).
	Backend string
	// AutoAllow lets sandboxed Bash commands run without asking
	// (sandbox.autoAllowBashIfSandboxed); deny and ask rules still apply.
	AutoAllow bool
	// ExcludedCommands run outside the sandbox
	// (sandbox.excludedCommands): "docker", "docker *", "git push:*".
	ExcludedCommands []string
	// AllowUnsandboxed lets a call ask to run outside the sandbox with
	// dangerouslyDisableSandbox (sandbox.allowUnsandboxedCommands); the
	// permission layer then asks. False ignores the flag.
	AllowUnsandboxed bool
	// Roots are the session's writable roots, fixed when the session
	// starts: the project directory and the directories granted to it.
	// Their links are resolved once, by [New]. When set, every policy's
	// writable directories are exactly these (plus the temp dir and
	// Write), whatever directory a command runs in: the shell's working
	// directory follows what a command reports, and sandboxed code can
	// forge that report, so it never widens what may be written. Empty:
	// [Sandbox.Policy]'s arguments are the writable directories (a program
	// that builds its own policy per command).
	Roots []string
	// Write are writable paths besides the working directories and the
	// temp dir (Edit allow rules).
	Write []string
	// Hide are paths commands cannot read (Read deny rules).
	Hide []string
	// ReadOnly are paths that stay read-only inside the writable ones
	// (Edit deny rules), besides [ProtectedNames].
	ReadOnly []string
	// AllowedDomains are the hosts reachable through the proxy
	// (sandbox.network.allowedDomains). Empty: no network. "*" = every
	// public host.
	AllowedDomains []string
	// AllowLocalBinding lets commands listen on loopback ports
	// (sandbox.network.allowLocalBinding).
	AllowLocalBinding bool
	// AllowUnixSockets are host Unix sockets commands may connect to
	// (sandbox.network.allowUnixSockets). Empty, with AllowAllUnixSockets
	// false: commands cannot create AF_UNIX sockets at all. The filter
	// cannot tell paths apart, so naming one socket lets a command reach
	// every socket it can see (see [Policy.UnixSockets]).
	AllowUnixSockets []string
	// AllowAllUnixSockets lets commands create AF_UNIX sockets
	// (sandbox.network.allowAllUnixSockets).
	AllowAllUnixSockets bool
	// FullNetwork gives commands the host network unfiltered (SDK users
	// only; settings cannot ask for it).
	FullNetwork bool
	// TempDir is the session's temporary directory, writable and $TMPDIR
	// for commands. Empty: one is made under os.TempDir and removed by
	// Close.
	TempDir string
	// QuarantineDir is where the directory that receives what commands
	// left in protected paths is made (see [Sandbox.WrapGuarded]); it is
	// kept after Close. Empty: os.TempDir(). It must not be writable by
	// sandboxed commands.
	QuarantineDir string
	// Logger receives the one-time notice when no backend works and every
	// run outside the sandbox. Nil: slog.Default().
	Logger *slog.Logger
	// Proxy configures the filtering proxy (resolver, dialer) for tests and
	// embedders; its AllowedDomains is set from this Options.
	Proxy ProxyOptions
	// backend overrides detection (tests).
	backend Backend
}

// Sandbox is one session's sandbox: the backend, the session temp dir and
// the filtering proxy. It is safe for concurrent use. Make it with [New],
// put it in the session's services (tool.Provide) and Close it when the
// session ends.
type Sandbox struct {
	opt     Options
	roots   []string
	backend Backend
	status  Status
	tempDir string
	ownTemp bool
	proxy   *Proxy

	guard guard

	warnOnce sync.Once
	closeMu  sync.Mutex
	closed   bool
}

// New detects the backend (unless disabled) and starts the proxy when
// domains are allowed.
func New(opts Options) (*Sandbox, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	s := &Sandbox{opt: opts}
	for _, r := range opts.Roots {
		if r == "" {
			continue
		}
		if r = resolved(r); !slices.Contains(s.roots, r) {
			s.roots = append(s.roots, r)
		}
	}
	s.guard.qparent = opts.QuarantineDir
	if !opts.Enabled {
		s.backend = None{}
		s.status = Status{Backend: BackendNone, Reason: "the sandbox is off (settings: sandbox.enabled)",
			Cleanup: "process group only; processes that leave it (setsid) survive", Network: "full", UnixSockets: "all (no sandbox)"}
		return s, nil
	}
	if opts.backend != nil {
		s.backend, s.status = opts.backend, Status{Enabled: true, Backend: opts.backend.Name(), Reason: "set by the program"}
	} else {
		s.backend, s.status = Detect(opts.Backend)
	}
	s.tempDir = opts.TempDir
	if s.tempDir == "" {
		d, err := os.MkdirTemp("", "gantry-sandbox-*")
		if err != nil {
			return nil, fmt.Errorf("sandbox: temp dir: %w", err)
		}
		s.tempDir, s.ownTemp = d, true
	}
	switch {
	case opts.FullNetwork:
		s.status.Network = "full"
	case len(opts.AllowedDomains) > 0 && s.status.Contained():
		po := opts.Proxy
		po.AllowedDomains = opts.AllowedDomains
		if po.Logger == nil {
			po.Logger = opts.Logger
		}
		p, err := NewProxy(filepath.Join(s.tempDir, ".proxy.sock"), po)
		if err != nil {
			s.Close()
			return nil, err
		}
		s.proxy = p
		s.status.Network = "proxy: " + strings.Join(opts.AllowedDomains, ", ")
	case s.status.Contained():
		s.status.Network = "none"
	default:
		s.status.Network = "full"
	}
	switch {
	case !s.status.Contained():
		s.status.UnixSockets = "all (no sandbox)"
	case opts.AllowAllUnixSockets:
		s.status.UnixSockets = "all (sandbox.network.allowAllUnixSockets)"
	case len(opts.AllowUnixSockets) > 0:
		s.status.UnixSockets = strings.Join(opts.AllowUnixSockets, ", ") +
			" (AF_UNIX sockets allowed: every socket a command can see is reachable, the named ones are made visible)"
	default:
		s.status.UnixSockets = "none (AF_UNIX sockets refused; socketpair works)"
	}
	return s, nil
}

// Status reports the backend and why.
func (s *Sandbox) Status() Status { return s.status }

// Contained reports whether commands really run in a sandbox (enabled and
// a backend other than none).
func (s *Sandbox) Contained() bool { return s != nil && s.status.Contained() }

// AutoAllow reports whether sandboxed Bash commands run without asking.
func (s *Sandbox) AutoAllow() bool { return s.Contained() && s.opt.AutoAllow }

// AllowUnsandboxed reports whether dangerouslyDisableSandbox is honoured.
func (s *Sandbox) AllowUnsandboxed() bool { return s.Contained() && s.opt.AllowUnsandboxed }

// Unavailable reports that the settings ask for a sandbox that no backend
// can provide here: the permission layer then tightens its rules.
func (s *Sandbox) Unavailable() bool {
	return s != nil && s.status.Enabled && s.status.Backend == BackendNone
}

// Runs reports whether a Bash command would run inside the sandbox: the
// sandbox contains commands, the command is not excluded, and the call
// did not ask (with the flag honoured) to run outside.
func (s *Sandbox) Runs(command string, disable bool) bool {
	if !s.Contained() {
		return false
	}
	if disable && s.opt.AllowUnsandboxed {
		return false
	}
	return !Excluded(command, s.opt.ExcludedCommands)
}

// TempDir is the session's temporary directory ("" when disabled).
func (s *Sandbox) TempDir() string { return s.tempDir }

// Roots returns the session's writable roots ([Options.Roots], links
// resolved), or nil when none were set.
func (s *Sandbox) Roots() []string { return slices.Clone(s.roots) }

// Inside reports whether dir, its links resolved, is one of the session's
// writable roots or inside one. Without [Options.Roots] it reports true:
// nothing fixes the area.
func (s *Sandbox) Inside(dir string) bool {
	if len(s.roots) == 0 {
		return true
	}
	dir = resolved(dir)
	for _, r := range s.roots {
		if dir == r || strings.HasPrefix(dir, strings.TrimSuffix(r, "/")+"/") {
			return true
		}
	}
	return false
}

// Policy returns the policy of a command run in workDir with the session's
// other directories: those writable (with their protected files kept
// read-only), plus the options' writable and hidden paths and network.
// With [Options.Roots] set, workDir and dirs are ignored: the writable
// directories are the roots, fixed when the session started.
func (s *Sandbox) Policy(workDir string, dirs ...string) *Policy {
	p := &Policy{TempDir: s.tempDir, AllowLocalBinding: s.opt.AllowLocalBinding,
		AllowAllUnixSockets: s.opt.AllowAllUnixSockets}
	for _, u := range s.opt.AllowUnixSockets {
		p.UnixSockets = append(p.UnixSockets, resolved(u))
	}
	writable := append([]string{workDir}, dirs...)
	if len(s.roots) > 0 {
		writable = s.roots
	}
	for _, d := range writable {
		if d == "" {
			continue
		}
		d = resolved(d)
		if !slices.Contains(p.Write, d) {
			p.Write = append(p.Write, d)
		}
	}
	p.ReadOnly = append([]string(nil), s.opt.ReadOnly...)
	for _, w := range s.opt.Write {
		p.Write = append(p.Write, resolved(w))
	}
	for _, h := range s.opt.Hide {
		p.Hide = append(p.Hide, h)
		if r := resolved(h); r != h {
			p.Hide = append(p.Hide, r)
		}
	}
	switch {
	case s.opt.FullNetwork:
		p.Network = NetworkFull
	case s.proxy != nil:
		p.Network, p.ProxySocket = NetworkProxy, s.proxy.Socket()
	}
	return p
}

// Wrap is [Sandbox.WrapGuarded] for callers that do not report reverted
// paths to the model: they are logged (Options.Logger, warning).
func (s *Sandbox) Wrap(cmd *exec.Cmd, p *Policy) (func(), error) {
	release, err := s.WrapGuarded(cmd, p)
	if err != nil {
		return nil, err
	}
	return func() {
		if rs := release(); len(rs) > 0 {
			s.opt.Logger.Warn(Notice(rs))
		}
	}, nil
}

// WrapGuarded contains cmd with p, or — when no backend works — leaves it
// as it is after saying so once. The release function is never nil; call
// it once the command has been waited for. It kills what the command left
// behind and then reverts every change the command made to the protected
// paths of p's writable directories ([ProtectedNames]): a protected path
// that appeared is moved to a quarantine directory, one that changed, was
// replaced or removed is put back. It returns what it reverted (nil when
// nothing); [Notice] turns that into a note for the model.
func (s *Sandbox) WrapGuarded(cmd *exec.Cmd, p *Policy) (func() []Reverted, error) {
	if !s.Contained() {
		if s.Unavailable() {
			s.warnOnce.Do(func() {
				s.opt.Logger.Warn("sandbox: no backend works here; commands run WITHOUT a sandbox (analysis only, permission rules tightened)",
					"reason", s.status.Reason)
			})
		}
		return func() []Reverted { return nil }, nil
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	run := s.guard.begin(writableDirs(p))
	release, err := s.backend.Wrap(cmd, p)
	if err != nil {
		s.guard.end(run)
		return nil, err
	}
	var once sync.Once
	var out []Reverted
	return func() []Reverted {
		once.Do(func() {
			if release != nil {
				release()
			}
			out = s.guard.end(run)
		})
		return out
	}, nil
}

// LogUnsandboxed records that a command runs outside the sandbox and why.
func (s *Sandbox) LogUnsandboxed(ctx context.Context, command, why string) {
	if s == nil || !s.Contained() {
		return
	}
	s.opt.Logger.WarnContext(ctx, "sandbox: command runs OUTSIDE the sandbox", "why", why, "command", command)
}

// Close stops the proxy and removes the temp dir it made.
func (s *Sandbox) Close() error {
	s.closeMu.Lock()
	defer s.closeMu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	var errs []error
	if s.proxy != nil {
		errs = append(errs, s.proxy.Close())
	}
	if s.ownTemp {
		errs = append(errs, os.RemoveAll(s.tempDir))
	}
	return errors.Join(errs...)
}

// resolved returns p with symlinks resolved, or p when that fails.
func resolved(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}
