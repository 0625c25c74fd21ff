//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// Landlock is the backend for machines without bubblewrap or user
// namespaces: the command runs through a helper (this program re-executed,
// see [Main]) that drops every capability, applies a Landlock ruleset
// (reads everywhere except the hidden paths, writes only to the policy's
// paths — [Policy.ReadOnly] and the protected paths are not enforced,
// Landlock cannot take back a right inside a granted hierarchy (the
// session's guard reverts protected paths after the command, see
// [Sandbox.WrapGuarded]) — TCP refused except the proxy bridge; signals and
// abstract Unix sockets scoped to the sandbox where the kernel supports it)
// and the seccomp filter (no namespaces, mounts, ptrace, kernel modules,
// bpf, io_uring, no AF_UNIX sockets unless the policy names some, and no
// UDP/raw or — without network — any IP socket), then executes the command. Every process it starts is put in a cgroup v2 of its own where
// the machine allows, and killed with it.
//
// It needs Landlock ABI 4 or later (Linux 6.7+).
type Landlock struct {
	// Helper is the program re-executed as the helper; empty means
	// os.Executable (the program must call [Main]).
	Helper string
	// Cgroups is the cgroup v2 directory under which each command gets a
	// cgroup of its own ("" = found from /proc/self/cgroup; "-" = none, so
	// processes that leave the process group are not killed).
	Cgroups string
}

var _ Backend = (*Landlock)(nil)

// MinLandlockABI is the oldest Landlock ABI the backend uses (TCP rules).
const MinLandlockABI = 4

// Name implements [Backend].
func (l *Landlock) Name() string { return "landlock" }

// Check reports why the backend cannot run here, or nil.
func (l *Landlock) Check() error {
	abi, err := ll.LandlockGetABIVersion()
	if err != nil {
		return fmt.Errorf("landlock is not available in this kernel (%w)", err)
	}
	if abi < MinLandlockABI {
		return fmt.Errorf("landlock ABI %d is older than the %d this backend needs (Linux 6.7+)", abi, MinLandlockABI)
	}
	if !seccompSupported() {
		return errors.New("seccomp filters are not supported by this kernel")
	}
	if _, err := helperPath(l.Helper); err != nil {
		return err
	}
	return nil
}

// Wrap implements [Backend]: cmd becomes the helper with the policy and
// the original command in its environment.
func (l *Landlock) Wrap(cmd *exec.Cmd, p *Policy) (func(), error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	helper, err := helperPath(l.Helper)
	if err != nil {
		return nil, err
	}
	prog, err := programPath(cmd)
	if err != nil {
		return nil, err
	}
	pol := p.clone()
	if pol.TempDir != "" {
		if err := os.MkdirAll(pol.TempDir, 0o700); err != nil {
			return nil, fmt.Errorf("sandbox: temp dir: %w", err)
		}
	}
	spec := &helperSpec{Landlock: pol, Args: append([]string{prog}, cmd.Args[1:]...)}
	if p.Network == NetworkProxy {
		spec.Bridge, spec.BridgeAddr = p.ProxySocket, "127.0.0.1:0"
		if !p.unixAllowed() {
			// The bridge dials the proxy's socket; its command may not.
			f := landlockFilter(p, false)
			spec.Inner, spec.Helper = &f, helper
		}
	}
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	env = slices.Clone(env)
	if p.TempDir != "" {
		env = setEnv(env, "TMPDIR", p.TempDir)
	}
	cmd.Env = append(env, helperEnv+"="+encodeSpec(spec))
	cmd.Path = helper
	cmd.Args = []string{helper}
	cmd.Err = nil
	return l.cgroup(cmd), nil
}

// cgroup puts the command in a new cgroup (when possible) and returns the
// function that kills everything in it and removes it.
func (l *Landlock) cgroup(cmd *exec.Cmd) func() {
	if l.Cgroups == "-" {
		return func() {}
	}
	cg, err := newCgroup(l.Cgroups)
	if err != nil {
		return func() {}
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &unix.SysProcAttr{}
	}
	cmd.SysProcAttr.UseCgroupFD = true
	cmd.SysProcAttr.CgroupFD = cg.fd
	return cg.destroy
}

func setEnv(env []string, name, value string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if len(kv) > len(name) && kv[:len(name)] == name && kv[len(name)] == '=' {
			continue
		}
		out = append(out, kv)
	}
	return append(out, name+"="+value)
}

// Rights, grouped as the policy uses them.
const (
	fsReadFile  = ll.AccessFSExecute | ll.AccessFSReadFile
	fsReadDir   = ll.AccessFSReadDir
	fsWriteFile = ll.AccessFSWriteFile | ll.AccessFSTruncate | ll.AccessFSIoctlDev
	fsDirOps    = ll.AccessFSRemoveDir | ll.AccessFSRemoveFile | ll.AccessFSMakeChar | ll.AccessFSMakeDir |
		ll.AccessFSMakeReg | ll.AccessFSMakeSock | ll.AccessFSMakeFifo | ll.AccessFSMakeBlock |
		ll.AccessFSMakeSym | ll.AccessFSRefer
	fsFileRights = fsReadFile | fsWriteFile
)

// devWritable are the device files a sandboxed command may write.
var devWritable = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/random", "/dev/urandom", "/dev/ptmx"}

// restrictSelf applies p to this process (and what it executes): no
// capabilities, Landlock, seccomp. bridgePort, if not 0, is the one TCP port
// the command may connect to. unixSockets allows socket(AF_UNIX) (the policy
// names host sockets, or this process is the proxy bridge, whose command
// gets a second filter without it).
func restrictSelf(p *Policy, bridgePort int, unixSockets bool) error {
	runtime.LockOSThread() // never unlocked: the thread execs or exits restricted
	if err := dropCapabilities(); err != nil {
		return fmt.Errorf("drop capabilities: %w", err)
	}
	rules := landlockRules(p)
	var net []landlock.Rule
	if bridgePort != 0 {
		net = append(net, landlock.ConnectTCP(uint16(bridgePort)))
	}
	cfg := landlock.V6.BestEffort()
	switch {
	case p.Network == NetworkFull:
		cfg.HandledAccessNet = 0
	case p.AllowLocalBinding:
		// Landlock rules are per port, not per address: binding stays
		// unrestricted (see docs/sandbox.md).
		cfg.HandledAccessNet = ll.AccessNetConnectTCP
		rules = append(rules, net...)
	default:
		rules = append(rules, net...)
	}
	if err := cfg.Restrict(rules...); err != nil {
		return fmt.Errorf("landlock: %w", err)
	}
	if err := loadSeccomp(landlockFilter(p, unixSockets)); err != nil {
		return fmt.Errorf("seccomp: %w", err)
	}
	return nil
}

// landlockFilter is the seccomp filter of a command under Landlock.
func landlockFilter(p *Policy, unixSockets bool) filterOptions {
	return filterOptions{IPRules: true, Network: p.Network, LocalBinding: p.AllowLocalBinding, UnixSockets: unixSockets}
}

// hardenBridge makes the proxy bridge, which keeps the right to open Unix
// sockets its command lacks, impossible to take over from the command:
// not dumpable, so /proc/PID/mem and ptrace of it are refused to a process
// of the same user without capabilities.
func hardenBridge() error { return unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0) }

// landlockRules turns p into Landlock rules.
func landlockRules(p *Policy) []landlock.Rule {
	hide := cleanAll(p.Hide)
	var rules []landlock.Rule
	add := func(rights landlock.AccessFSSet, paths []string) {
		var files, dirs []string
		for _, x := range paths {
			fi, err := os.Stat(x)
			if err != nil {
				continue
			}
			if fi.IsDir() {
				dirs = append(dirs, x)
			} else {
				files = append(files, x)
			}
		}
		if len(dirs) > 0 {
			rules = append(rules, landlock.PathAccess(rights, dirs...))
		}
		if fr := rights & fsFileRights; len(files) > 0 && fr != 0 {
			rules = append(rules, landlock.PathAccess(fr, files...))
		}
	}
	// Directories can be listed everywhere; files read everywhere but
	// under the hidden paths.
	add(fsReadDir, []string{"/"})
	add(fsReadFile, cover("/", slices.DeleteFunc(slices.Clone(hide), func(h string) bool { return h == "/" })))
	writable := cleanAll(p.Write)
	if p.TempDir != "" {
		writable = append(writable, filepath.Clean(p.TempDir))
	}
	// Landlock rights apply to whole hierarchies and only add up, so a
	// path inside a writable directory cannot be made read-only again:
	// p.ReadOnly is not enforced here (bubblewrap does), and a hidden path
	// inside stays unreadable by leaving out the read right along its way
	// (files created next to it during the command are then unreadable
	// too; see docs/sandbox.md).
	for _, w := range writable {
		// A hidden directory holding w (a hidden home around the project)
		// does not hide w, as under bubblewrap.
		var inside []string
		for _, h := range hide {
			if within(h, w) {
				inside = append(inside, h)
			}
		}
		add(fsDirOps|fsReadDir|fsWriteFile, []string{w})
		add(fsReadFile, cover(w, inside))
	}
	add(fsWriteFile, devWritable)
	add(fsWriteFile|fsReadFile|fsDirOps|fsReadDir, []string{"/dev/pts", "/dev/shm"})
	if p.Network == NetworkProxy && p.ProxySocket != "" {
		add(fsReadFile|fsWriteFile, []string{p.ProxySocket})
	}
	return rules
}

func cleanAll(ps []string) []string {
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		out = append(out, filepath.Clean(p))
	}
	return out
}

// cover returns paths whose hierarchies together hold everything under
// root except the excluded paths: root itself when nothing is excluded
// below it, else (recursively) its entries. Symbolic links are left out
// (their targets are covered where they are); an unreadable directory is
// left out (fail closed).
func cover(root string, excl []string) []string {
	var below bool
	for _, e := range excl {
		if within(root, e) {
			return nil // root is excluded
		}
		if within(e, root) {
			below = true
		}
	}
	if !below {
		return []string{root}
	}
	ents, err := os.ReadDir(root)
	if err != nil {
		return nil
	}
	var out []string
	for _, ent := range ents {
		if ent.Type()&os.ModeSymlink != 0 {
			continue
		}
		out = append(out, cover(filepath.Join(root, ent.Name()), excl)...)
	}
	return out
}

// within reports whether p is dir or below it (both clean, absolute).
func within(p, dir string) bool {
	if dir == "/" {
		return true
	}
	return p == dir || (len(p) > len(dir) && p[:len(dir)] == dir && p[len(dir)] == '/')
}

// dropCapabilities empties the bounding, ambient, inheritable, permitted
// and effective sets of the calling thread, so that what it executes has no
// capabilities even as root.
func dropCapabilities() error {
	for c := 0; c <= unix.CAP_LAST_CAP; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
			return err
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
		return err
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	return unix.Capset(&hdr, &data[0])
}
