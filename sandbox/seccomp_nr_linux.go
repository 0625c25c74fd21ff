//go:build linux && (amd64 || arm64 || 386 || arm)

// System call numbers (golang.org/x/sys/unix) of the calls the seccomp filter names; keep the list in step
// with deniedSyscalls and loadSeccomp.

package sandbox

import "golang.org/x/sys/unix"

// seccompNumber is the number of the named system call on this architecture
// (false: it has no such call). The calls every supported architecture has
// are here; archSyscallNumber has the others.
func seccompNumber(name string) (uint32, bool) {
	switch name {
	case "unshare":
		return unix.SYS_UNSHARE, true
	case "setns":
		return unix.SYS_SETNS, true
	case "mount":
		return unix.SYS_MOUNT, true
	case "umount2":
		return unix.SYS_UMOUNT2, true
	case "pivot_root":
		return unix.SYS_PIVOT_ROOT, true
	case "chroot":
		return unix.SYS_CHROOT, true
	case "mount_setattr":
		return unix.SYS_MOUNT_SETATTR, true
	case "move_mount":
		return unix.SYS_MOVE_MOUNT, true
	case "open_tree":
		return unix.SYS_OPEN_TREE, true
	case "fsopen":
		return unix.SYS_FSOPEN, true
	case "fsconfig":
		return unix.SYS_FSCONFIG, true
	case "fsmount":
		return unix.SYS_FSMOUNT, true
	case "fspick":
		return unix.SYS_FSPICK, true
	case "ptrace":
		return unix.SYS_PTRACE, true
	case "process_vm_readv":
		return unix.SYS_PROCESS_VM_READV, true
	case "process_vm_writev":
		return unix.SYS_PROCESS_VM_WRITEV, true
	case "pidfd_getfd":
		return unix.SYS_PIDFD_GETFD, true
	case "process_madvise":
		return unix.SYS_PROCESS_MADVISE, true
	case "kcmp":
		return unix.SYS_KCMP, true
	case "quotactl":
		return unix.SYS_QUOTACTL, true
	case "kexec_load":
		return unix.SYS_KEXEC_LOAD, true
	case "init_module":
		return unix.SYS_INIT_MODULE, true
	case "finit_module":
		return unix.SYS_FINIT_MODULE, true
	case "delete_module":
		return unix.SYS_DELETE_MODULE, true
	case "reboot":
		return unix.SYS_REBOOT, true
	case "swapon":
		return unix.SYS_SWAPON, true
	case "swapoff":
		return unix.SYS_SWAPOFF, true
	case "bpf":
		return unix.SYS_BPF, true
	case "perf_event_open":
		return unix.SYS_PERF_EVENT_OPEN, true
	case "userfaultfd":
		return unix.SYS_USERFAULTFD, true
	case "open_by_handle_at":
		return unix.SYS_OPEN_BY_HANDLE_AT, true
	case "name_to_handle_at":
		return unix.SYS_NAME_TO_HANDLE_AT, true
	case "keyctl":
		return unix.SYS_KEYCTL, true
	case "add_key":
		return unix.SYS_ADD_KEY, true
	case "request_key":
		return unix.SYS_REQUEST_KEY, true
	case "acct":
		return unix.SYS_ACCT, true
	case "io_uring_setup":
		return unix.SYS_IO_URING_SETUP, true
	case "io_uring_enter":
		return unix.SYS_IO_URING_ENTER, true
	case "io_uring_register":
		return unix.SYS_IO_URING_REGISTER, true
	case "personality":
		return unix.SYS_PERSONALITY, true
	case "fchown":
		return unix.SYS_FCHOWN, true
	case "fchownat":
		return unix.SYS_FCHOWNAT, true
	case "setxattr":
		return unix.SYS_SETXATTR, true
	case "lsetxattr":
		return unix.SYS_LSETXATTR, true
	case "fsetxattr":
		return unix.SYS_FSETXATTR, true
	case "removexattr":
		return unix.SYS_REMOVEXATTR, true
	case "lremovexattr":
		return unix.SYS_LREMOVEXATTR, true
	case "fremovexattr":
		return unix.SYS_FREMOVEXATTR, true
	case "clone":
		return unix.SYS_CLONE, true
	case "clone3":
		return unix.SYS_CLONE3, true
	case "socket":
		return unix.SYS_SOCKET, true
	}
	return archSyscallNumber(name)
}
