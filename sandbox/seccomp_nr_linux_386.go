// System call numbers (golang.org/x/sys/unix) of the calls the seccomp filter names; keep the list in step
// with deniedSyscalls and loadSeccomp.

package sandbox

import "golang.org/x/sys/unix"

// archSyscallNumber has the numbers of the calls only some architectures have.
func archSyscallNumber(name string) (uint32, bool) {
	switch name {
	case "socketcall":
		return unix.SYS_SOCKETCALL, true
	case "chown":
		return unix.SYS_CHOWN, true
	case "lchown":
		return unix.SYS_LCHOWN, true
	case "chown32":
		return unix.SYS_CHOWN32, true
	case "fchown32":
		return unix.SYS_FCHOWN32, true
	case "lchown32":
		return unix.SYS_LCHOWN32, true
	}
	return 0, false
}
