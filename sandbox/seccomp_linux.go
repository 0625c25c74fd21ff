//go:build linux

package sandbox

import (
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// The seccomp filter is assembled here from the system call numbers of
// golang.org/x/sys/unix (seccompNumber, per architecture): a general filter
// library carried the tables of every architecture (built at package init
// in every gantry process) for the few dozen calls we name.

// condOp is a comparison of a 64-bit system call argument with a value.
type condOp int

const (
	opEqual    condOp = iota // arg == val
	opNotEqual               // arg != val
	opGreater                // arg > val (unsigned)
	opLess                   // arg < val (unsigned)
	opAnyBits                // arg & val != 0
)

// argCond is one condition on argument arg (0–5).
type argCond struct {
	arg uint32
	op  condOp
	val uint64
}

// seccompRule matches system call nr when every condition holds (no
// conditions: always); the filter then returns ret.
type seccompRule struct {
	nr    uint32
	conds []argCond
	ret   uint32
}

// Offsets in struct seccomp_data.
const (
	seccompNrOffset   = 0
	seccompArchOffset = 4
	seccompArgsOffset = 16
)

// x32SyscallBit marks the x32 ABI's system calls, which share the x86-64
// audit architecture: they are refused (ENOSYS) so that a call cannot slip
// past the filter under its x32 number.
const x32SyscallBit = 0x40000000

// retErrno is the filter's return value for failing a call with errno.
func retErrno(errno syscall.Errno) uint32 {
	return unix.SECCOMP_RET_ERRNO | uint32(errno)&unix.SECCOMP_RET_DATA
}

// assembleFilter returns the filter: a call of another architecture than
// audit kills the process; on x86-64 an x32 call fails with ENOSYS; the
// first rule that matches gives the result; anything else is allowed.
func assembleFilter(audit uint32, x32 bool, rules []seccompRule) ([]bpf.Instruction, error) {
	prog := []bpf.Instruction{
		bpf.LoadAbsolute{Off: seccompArchOffset, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: audit, SkipTrue: 1},
		bpf.RetConstant{Val: unix.SECCOMP_RET_KILL_PROCESS},
	}
	if x32 {
		prog = append(prog,
			bpf.LoadAbsolute{Off: seccompNrOffset, Size: 4},
			bpf.JumpIf{Cond: bpf.JumpGreaterOrEqual, Val: x32SyscallBit, SkipFalse: 1},
			bpf.RetConstant{Val: retErrno(unix.ENOSYS)},
		)
	}
	for _, r := range rules {
		block, err := ruleBlock(r)
		if err != nil {
			return nil, err
		}
		prog = append(prog, block...)
	}
	return append(prog, bpf.RetConstant{Val: unix.SECCOMP_RET_ALLOW}), nil
}

// ruleBlock is one rule: it returns the rule's result if the rule matches
// and falls through to the next instruction after the block otherwise.
func ruleBlock(r seccompRule) ([]bpf.Instruction, error) {
	b := []bpf.Instruction{bpf.LoadAbsolute{Off: seccompNrOffset, Size: 4}}
	// The conditional jumps whose true or false branch leaves the block.
	type patch struct {
		at     int
		onTrue bool
	}
	var patches []patch
	fail := func(onTrue bool) { patches = append(patches, patch{len(b) - 1, onTrue}) }
	b = append(b, bpf.JumpIf{Cond: bpf.JumpEqual, Val: r.nr})
	fail(false)
	for _, c := range r.conds {
		if c.arg > 5 {
			return nil, fmt.Errorf("seccomp: argument %d out of range", c.arg)
		}
		hi, lo := argOffsets(c.arg)
		vh, vl := uint32(c.val>>32), uint32(c.val)
		b = append(b, bpf.LoadAbsolute{Off: hi, Size: 4})
		switch c.op {
		case opEqual: // hi == vh && lo == vl
			b = append(b, bpf.JumpIf{Cond: bpf.JumpEqual, Val: vh})
			fail(false)
			b = append(b, bpf.LoadAbsolute{Off: lo, Size: 4}, bpf.JumpIf{Cond: bpf.JumpEqual, Val: vl})
			fail(false)
		case opNotEqual: // hi != vh || lo != vl
			b = append(b, bpf.JumpIf{Cond: bpf.JumpEqual, Val: vh, SkipFalse: 2},
				bpf.LoadAbsolute{Off: lo, Size: 4}, bpf.JumpIf{Cond: bpf.JumpEqual, Val: vl})
			fail(true)
		case opGreater: // hi > vh || (hi == vh && lo > vl)
			b = append(b, bpf.JumpIf{Cond: bpf.JumpGreaterThan, Val: vh, SkipTrue: 3},
				bpf.JumpIf{Cond: bpf.JumpEqual, Val: vh})
			fail(false)
			b = append(b, bpf.LoadAbsolute{Off: lo, Size: 4}, bpf.JumpIf{Cond: bpf.JumpGreaterThan, Val: vl})
			fail(false)
		case opLess: // hi < vh || (hi == vh && lo < vl)
			b = append(b, bpf.JumpIf{Cond: bpf.JumpGreaterOrEqual, Val: vh, SkipFalse: 3},
				bpf.JumpIf{Cond: bpf.JumpEqual, Val: vh})
			fail(false)
			b = append(b, bpf.LoadAbsolute{Off: lo, Size: 4}, bpf.JumpIf{Cond: bpf.JumpGreaterOrEqual, Val: vl})
			fail(true)
		case opAnyBits: // hi & vh != 0 || lo & vl != 0
			b = append(b, bpf.JumpIf{Cond: bpf.JumpBitsSet, Val: vh, SkipTrue: 2},
				bpf.LoadAbsolute{Off: lo, Size: 4}, bpf.JumpIf{Cond: bpf.JumpBitsSet, Val: vl})
			fail(false)
		default:
			return nil, fmt.Errorf("seccomp: unknown operation %d", c.op)
		}
	}
	b = append(b, bpf.RetConstant{Val: r.ret})
	// Every failing branch skips to the end of the block.
	for _, p := range patches {
		skip := len(b) - p.at - 1
		if skip > 255 {
			return nil, errors.New("seccomp: rule too long")
		}
		j := b[p.at].(bpf.JumpIf)
		if p.onTrue {
			j.SkipTrue = uint8(skip)
		} else {
			j.SkipFalse = uint8(skip)
		}
		b[p.at] = j
	}
	return b, nil
}

// argOffsets are the offsets of the high and low 32 bits of argument arg
// in seccomp_data (native byte order).
func argOffsets(arg uint32) (hi, lo uint32) {
	off := uint32(seccompArgsOffset) + 8*arg
	if binary.NativeEndian.Uint16([]byte{1, 0}) == 1 { // little-endian
		return off + 4, off
	}
	return off, off + 4
}

// seccompSupported reports whether the kernel takes seccomp filters: strict
// mode with flags set is refused with EINVAL where seccomp exists.
func seccompSupported() bool {
	_, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_STRICT, 1, 0)
	return errno == unix.EINVAL
}

// installFilter loads prog on every thread of the process, after setting
// no_new_privs.
func installFilter(prog []bpf.Instruction) error {
	raw, err := bpf.Assemble(prog)
	if err != nil {
		return err
	}
	filter := make([]unix.SockFilter, len(raw))
	for i, r := range raw {
		filter[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	fprog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return err
	}
	_, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(filter)
	if errno != 0 {
		return errno
	}
	return nil
}

// deniedSyscalls are the system calls a sandboxed command never needs and
// that could undo the sandbox, under either backend: new namespaces,
// mounts, chroot, ptrace and every other way into another process's memory
// or files (process_vm_*, pidfd_getfd, process_madvise, kcmp), kernel
// modules and kexec, bpf, perf, userfaultfd, io_uring (its operations
// bypass seccomp), handle-based opens (a classic container escape),
// keyrings, and changes of ownership and extended attributes (Landlock does
// not control them; modes and times it does not control either, and those
// stay allowed: chmod +x inside the project is common). socketcall (386)
// hides its arguments from the filter and is refused whole.
var deniedSyscalls = []string{
	"unshare", "setns", "mount", "umount2", "pivot_root", "chroot", "mount_setattr", "move_mount",
	"open_tree", "fsopen", "fsconfig", "fsmount", "fspick", "ptrace", "process_vm_readv",
	"process_vm_writev", "pidfd_getfd", "process_madvise", "kcmp", "kexec_load", "kexec_file_load",
	"init_module", "finit_module", "delete_module", "reboot", "swapon", "swapoff", "bpf",
	"perf_event_open", "userfaultfd", "open_by_handle_at", "name_to_handle_at", "keyctl", "add_key",
	"request_key", "acct", "quotactl", "io_uring_setup", "io_uring_enter", "io_uring_register",
	"personality", "socketcall",
	// Landlock does not control ownership and extended attributes.
	"chown", "fchown", "lchown", "fchownat", "chown32", "fchown32", "lchown32", "setxattr", "lsetxattr",
	"fsetxattr", "removexattr", "lremovexattr", "fremovexattr",
}

// filterOptions pick the variant of the one seccomp filter
// ([seccompRules]) that a process gets. Both backends use it: the Landlock
// helper loads it on itself, bubblewrap receives it compiled (--seccomp).
type filterOptions struct {
	// IPRules adds the rules on IP sockets of Network and LocalBinding
	// (the Landlock backend; under bubblewrap the network namespace
	// decides, and only packet sockets are refused).
	IPRules      bool    `json:"ip_rules,omitempty"`
	Network      Network `json:"network"`
	LocalBinding bool    `json:"local_binding,omitempty"`
	// UnixSockets allows socket(AF_UNIX, …): the policy names host Unix
	// sockets, or the process is the proxy bridge (whose command then gets
	// a second filter without it). socketpair is always allowed.
	UnixSockets bool `json:"unix_sockets,omitempty"`
}

// compileFilter returns the filter of o assembled for this architecture.
func compileFilter(o filterOptions) ([]bpf.Instruction, error) {
	native, err := nativeAudit()
	if err != nil {
		return nil, err
	}
	rules, err := seccompRules(o)
	if err != nil {
		return nil, err
	}
	return assembleFilter(native, runtime.GOARCH == "amd64", rules)
}

// loadSeccomp installs the filter of o on every thread (after setting
// no_new_privs).
func loadSeccomp(o filterOptions) error {
	prog, err := compileFilter(o)
	if err != nil {
		return err
	}
	return installFilter(prog)
}

// filterBytes is the filter of o as struct sock_filter entries in native
// byte order: what bubblewrap's --seccomp FD reads.
func filterBytes(o filterOptions) ([]byte, error) {
	prog, err := compileFilter(o)
	if err != nil {
		return nil, err
	}
	raw, err := bpf.Assemble(prog)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, 8*len(raw))
	for _, r := range raw {
		out = binary.NativeEndian.AppendUint16(out, r.Op)
		out = append(out, r.Jt, r.Jf)
		out = binary.NativeEndian.AppendUint32(out, r.K)
	}
	return out, nil
}

// seccompRules are the filter's rules: deniedSyscalls, namespace flags of
// clone, socket(AF_UNIX) unless o allows it, packet sockets, and the IP
// socket families and types of o's network mode fail with EPERM; clone3
// with ENOSYS (its flags are in memory, out of a filter's reach: libc falls
// back to clone, which is checked). A call this architecture does not have
// is left out (arm64 has no chown, only fchownat; the 32-bit chown32 family
// exists only on 386 and arm).
func seccompRules(o filterOptions) ([]seccompRule, error) {
	eperm, enosys := retErrno(unix.EPERM), retErrno(unix.ENOSYS)
	var rules []seccompRule
	add := func(name string, ret uint32, conds ...argCond) {
		if nr, ok := seccompNumber(name); ok {
			rules = append(rules, seccompRule{nr: nr, conds: conds, ret: ret})
		}
	}
	for _, name := range deniedSyscalls {
		add(name, eperm)
	}
	for _, flag := range []uint64{unix.CLONE_NEWNS, unix.CLONE_NEWUTS, unix.CLONE_NEWIPC, unix.CLONE_NEWUSER,
		unix.CLONE_NEWPID, unix.CLONE_NEWNET, unix.CLONE_NEWCGROUP, unix.CLONE_NEWTIME} {
		add("clone", eperm, argCond{0, opAnyBits, flag})
	}
	domains := []uint64{unix.AF_PACKET}
	if !o.UnixSockets {
		// No host Unix socket (pathname or abstract) can be reached
		// without a socket to connect; socketpair stays.
		domains = append(domains, unix.AF_UNIX)
	}
	if o.IPRules && o.Network == NetworkNone && !o.LocalBinding {
		domains = append(domains, unix.AF_INET, unix.AF_INET6)
	}
	for _, d := range domains {
		add("socket", eperm, argCond{0, opEqual, d})
	}
	if o.IPRules && o.Network != NetworkFull {
		// Only plain TCP, which Landlock controls: no UDP, raw, SCTP,
		// DCCP or packet sockets (a type other than SOCK_STREAM sets bit 1
		// or 2), and no protocol but 0 or IPPROTO_TCP (MPTCP and SCTP
		// escape Landlock's TCP rules).
		for _, d := range []uint64{unix.AF_INET, unix.AF_INET6} {
			for _, c := range [][]argCond{
				{{1, opAnyBits, 2}},
				{{1, opAnyBits, 4}},
				{{2, opGreater, unix.IPPROTO_TCP}},
				{{2, opNotEqual, 0}, {2, opLess, unix.IPPROTO_TCP}},
			} {
				add("socket", eperm, append([]argCond{{0, opEqual, d}}, c...)...)
			}
		}
	}
	add("clone3", enosys)
	if len(rules) == 0 {
		return nil, fmt.Errorf("seccomp: no system call numbers for %s", runtime.GOARCH)
	}
	return rules, nil
}

func nativeAudit() (uint32, error) {
	switch runtime.GOARCH {
	case "amd64":
		return unix.AUDIT_ARCH_X86_64, nil
	case "arm64":
		return unix.AUDIT_ARCH_AARCH64, nil
	case "386":
		return unix.AUDIT_ARCH_I386, nil
	case "arm":
		return unix.AUDIT_ARCH_ARM, nil
	case "riscv64":
		return unix.AUDIT_ARCH_RISCV64, nil
	case "ppc64le":
		return unix.AUDIT_ARCH_PPC64LE, nil
	case "s390x":
		return unix.AUDIT_ARCH_S390X, nil
	}
	return 0, fmt.Errorf("no seccomp support for %s", runtime.GOARCH)
}
