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
// library carried the tables of every architecture (built at package init,
// 165 KB in every gantry process) for the few dozen calls we name.

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
