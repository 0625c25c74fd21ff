//go:build linux

package sandbox

import (
	"encoding/binary"
	"runtime"
	"testing"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// absentCalls are the denied calls an architecture does not have.
var absentCalls = map[string]map[string]bool{
	"amd64": {"chown32": true, "fchown32": true, "lchown32": true, "socketcall": true},
	"arm64": {"chown": true, "lchown": true, "chown32": true, "fchown32": true, "lchown32": true, "socketcall": true},
	"arm":   {"socketcall": true},
	"386":   {"kexec_file_load": true},
}

// TestSeccompNumbers: every call the filter names has a number here, but
// those the architecture does not have (a typo would leave a call out of
// the filter silently).
func TestSeccompNumbers(t *testing.T) {
	if _, ok := seccompNumber("unshare"); !ok {
		t.Skipf("no system call table for %s", runtime.GOARCH)
	}
	for _, name := range append(append([]string(nil), deniedSyscalls...), "clone", "clone3", "socket") {
		if _, ok := seccompNumber(name); !ok && !absentCalls[runtime.GOARCH][name] {
			t.Errorf("no number for %s on %s", name, runtime.GOARCH)
		}
	}
}

// seccompData is struct seccomp_data as the VM reads it: the VM loads
// 32-bit words big-endian where the kernel loads them in native order, so
// each word is written big-endian at its native offset.
func seccompData(arch, nr uint32, args ...uint64) []byte {
	b := make([]byte, 64)
	binary.BigEndian.PutUint32(b[seccompNrOffset:], nr)
	binary.BigEndian.PutUint32(b[seccompArchOffset:], arch)
	for i, a := range args {
		hi, lo := argOffsets(uint32(i))
		binary.BigEndian.PutUint32(b[hi:], uint32(a>>32))
		binary.BigEndian.PutUint32(b[lo:], uint32(a))
	}
	return b
}

// TestSeccompFilter runs the assembled filter in a BPF interpreter over the
// calls of each network mode.
func TestSeccompFilter(t *testing.T) {
	native, err := nativeAudit()
	if err != nil {
		t.Skip(err)
	}
	nr := func(name string) uint32 {
		switch name { // calls the filter does not name
		case "read":
			return unix.SYS_READ
		case "openat":
			return unix.SYS_OPENAT
		case "socketpair":
			return unix.SYS_SOCKETPAIR
		}
		n, ok := seccompNumber(name)
		if !ok {
			t.Skipf("no %s on %s", name, runtime.GOARCH)
		}
		return n
	}
	allow, eperm, enosys := uint32(unix.SECCOMP_RET_ALLOW), retErrno(unix.EPERM), retErrno(unix.ENOSYS)
	type call struct {
		name string
		args []uint64
		want map[Network]uint32 // by mode; one entry for all modes under key -1
	}
	all := func(v uint32) map[Network]uint32 { return map[Network]uint32{-1: v} }
	tcp, udp := uint64(unix.SOCK_STREAM|unix.SOCK_CLOEXEC), uint64(unix.SOCK_DGRAM)
	calls := []call{
		{"unshare", []uint64{unix.CLONE_NEWUSER}, all(eperm)},
		{"mount", nil, all(eperm)},
		{"ptrace", nil, all(eperm)},
		{"io_uring_setup", nil, all(eperm)},
		{"fchownat", nil, all(eperm)},
		{"setxattr", nil, all(eperm)},
		{"read", nil, all(allow)},
		{"openat", nil, all(allow)},
		{"clone", []uint64{uint64(unix.SIGCHLD)}, all(allow)},
		{"clone", []uint64{unix.CLONE_VM | unix.CLONE_VFORK | uint64(unix.SIGCHLD)}, all(allow)},
		{"clone", []uint64{unix.CLONE_NEWUSER | uint64(unix.SIGCHLD)}, all(eperm)},
		{"clone", []uint64{unix.CLONE_NEWNET}, all(eperm)},
		{"clone", []uint64{unix.CLONE_NEWTIME}, all(eperm)},
		{"clone3", nil, all(enosys)},
		{"socket", []uint64{unix.AF_UNIX, tcp, 0}, all(eperm)},
		{"socket", []uint64{unix.AF_UNIX, udp, 0}, all(eperm)},
		{"socketpair", []uint64{unix.AF_UNIX, tcp, 0}, all(allow)},
		{"setns", nil, all(eperm)},
		{"keyctl", nil, all(eperm)},
		{"pidfd_getfd", nil, all(eperm)},
		{"open_by_handle_at", nil, all(eperm)},
		{"socket", []uint64{unix.AF_PACKET, unix.SOCK_RAW, 0}, all(eperm)},
		{"socket", []uint64{unix.AF_INET, tcp, 0}, map[Network]uint32{NetworkNone: eperm, NetworkProxy: allow, NetworkFull: allow}},
		{"socket", []uint64{unix.AF_INET6, tcp, unix.IPPROTO_TCP}, map[Network]uint32{NetworkNone: eperm, NetworkProxy: allow, NetworkFull: allow}},
		{"socket", []uint64{unix.AF_INET, udp, 0}, map[Network]uint32{NetworkNone: eperm, NetworkProxy: eperm, NetworkFull: allow}},
		{"socket", []uint64{unix.AF_INET, unix.SOCK_RAW, 0}, map[Network]uint32{NetworkNone: eperm, NetworkProxy: eperm, NetworkFull: allow}},
		{"socket", []uint64{unix.AF_INET6, tcp, unix.IPPROTO_MPTCP}, map[Network]uint32{NetworkNone: eperm, NetworkProxy: eperm, NetworkFull: allow}},
		{"socket", []uint64{unix.AF_INET, tcp, unix.IPPROTO_ICMP}, map[Network]uint32{NetworkNone: eperm, NetworkProxy: eperm, NetworkFull: allow}},
		{"socket", []uint64{unix.AF_INET, tcp, 1<<32 | unix.IPPROTO_TCP}, map[Network]uint32{NetworkNone: eperm, NetworkProxy: eperm, NetworkFull: allow}},
	}
	for _, mode := range []Network{NetworkNone, NetworkProxy, NetworkFull} {
		rules, err := seccompRules(filterOptions{IPRules: true, Network: mode})
		if err != nil {
			t.Fatal(err)
		}
		prog, err := assembleFilter(native, runtime.GOARCH == "amd64", rules)
		if err != nil {
			t.Fatal(err)
		}
		vm, err := bpf.NewVM(prog)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range calls {
			want, ok := c.want[mode]
			if !ok {
				want = c.want[-1]
			}
			name := c.name
			num := nr(name)
			got, err := vm.Run(seccompData(native, num, c.args...))
			if err != nil {
				t.Fatal(err)
			}
			if uint32(got) != want {
				t.Errorf("mode %v: %s%v = %#x, want %#x", mode, name, c.args, got, want)
			}
		}
		// Another architecture is killed; on x86-64 an x32 call fails.
		if got, _ := vm.Run(seccompData(native^1, nr("read"))); uint32(got) != unix.SECCOMP_RET_KILL_PROCESS {
			t.Errorf("foreign architecture: %#x", got)
		}
		if runtime.GOARCH == "amd64" {
			if got, _ := vm.Run(seccompData(native, x32SyscallBit|nr("unshare"))); uint32(got) != enosys {
				t.Errorf("x32 call: %#x", got)
			}
		}
	}
	// With a local binding and no network, IP TCP sockets are allowed (the
	// bridge), UDP is not.
	rules, _ := seccompRules(filterOptions{IPRules: true, Network: NetworkNone, LocalBinding: true})
	prog, _ := assembleFilter(native, runtime.GOARCH == "amd64", rules)
	vm, _ := bpf.NewVM(prog)
	if got, _ := vm.Run(seccompData(native, nr("socket"), unix.AF_INET, tcp, 0)); uint32(got) != allow {
		t.Errorf("local binding, TCP: %#x", got)
	}
	if got, _ := vm.Run(seccompData(native, nr("socket"), unix.AF_INET, udp, 0)); uint32(got) != eperm {
		t.Errorf("local binding, UDP: %#x", got)
	}
}

// TestSeccompVariants: Unix sockets open only with the option; without IP
// rules (bubblewrap: the network namespace decides) IP sockets pass but
// packet sockets do not.
func TestSeccompVariants(t *testing.T) {
	native, err := nativeAudit()
	if err != nil {
		t.Skip(err)
	}
	sock, ok := seccompNumber("socket")
	if !ok {
		t.Skipf("no socket number on %s", runtime.GOARCH)
	}
	allow, eperm := uint32(unix.SECCOMP_RET_ALLOW), retErrno(unix.EPERM)
	for _, tc := range []struct {
		o    filterOptions
		args []uint64
		want uint32
	}{
		{filterOptions{}, []uint64{unix.AF_UNIX, unix.SOCK_STREAM, 0}, eperm},
		{filterOptions{UnixSockets: true}, []uint64{unix.AF_UNIX, unix.SOCK_STREAM, 0}, allow},
		{filterOptions{UnixSockets: true, IPRules: true}, []uint64{unix.AF_INET, unix.SOCK_STREAM, 0}, eperm},
		{filterOptions{}, []uint64{unix.AF_INET, unix.SOCK_DGRAM, 0}, allow},
		{filterOptions{}, []uint64{unix.AF_PACKET, unix.SOCK_RAW, 0}, eperm},
	} {
		rules, err := seccompRules(tc.o)
		if err != nil {
			t.Fatal(err)
		}
		prog, err := assembleFilter(native, runtime.GOARCH == "amd64", rules)
		if err != nil {
			t.Fatal(err)
		}
		vm, err := bpf.NewVM(prog)
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := vm.Run(seccompData(native, sock, tc.args...)); uint32(got) != tc.want {
			t.Errorf("%+v socket%v = %#x, want %#x", tc.o, tc.args, got, tc.want)
		}
	}
	if b, err := filterBytes(filterOptions{}); err != nil || len(b)%8 != 0 || len(b) == 0 {
		t.Errorf("filterBytes: %d bytes, %v", len(b), err)
	}
}
