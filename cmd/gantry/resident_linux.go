package main

import (
	"bytes"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// dropStartupPages unmaps the pages of this process's own binary that are
// mapped read-only (code, read-only data, the function table), so that
// only what the rest of the run touches is mapped again. It returns the
// number of bytes advised.
//
// Why: every package's init and the runtime's start touch code and data
// spread over the whole binary, and each fault on the file maps the 64 KB
// around it (the kernel's fault-around), so a process that has started
// holds ~20 MB of the binary mapped of which a run uses a part. The pages
// stay in the page cache (shared with every process running the binary);
// MADV_DONTNEED on a private mapping that was never written only drops
// this process's page-table entries, and a later access faults the same
// bytes back from the cache. Writable mappings (.data, .bss: written at
// start, their private copies would be lost) are never touched.
func dropStartupPages() (int, error) {
	var st unix.Stat_t
	if err := unix.Stat("/proc/self/exe", &st); err != nil {
		return 0, err
	}
	// smaps, not maps: a read-only mapping may hold private copies of
	// pages written before it was made read-only (relocations of a cgo
	// build's RELRO segment): those must stay.
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return 0, err
	}
	dev := []byte(strconv.FormatUint(uint64(unix.Major(st.Dev)), 16))
	minor := []byte(strconv.FormatUint(uint64(unix.Minor(st.Dev)), 16))
	ino := []byte(strconv.FormatUint(st.Ino, 10))
	advised := 0
	var start, end uint64 // the candidate mapping whose lines follow
	for line := range bytes.Lines(smaps) {
		f := bytes.Fields(line)
		if len(f) >= 5 && !bytes.HasSuffix(f[0], []byte{':'}) {
			// A mapping: start-end perms offset major:minor inode [path].
			start, end = 0, 0
			if len(f) < 6 || !bytes.Equal(f[4], ino) || !sameDev(f[3], dev, minor) {
				continue
			}
			if p := f[1]; len(p) != 4 || p[0] != 'r' || p[1] != '-' || p[3] != 'p' {
				continue // writable or shared: not ours to drop
			}
			lo, hi, ok := bytes.Cut(f[0], []byte{'-'})
			if !ok {
				continue
			}
			s, err1 := strconv.ParseUint(string(lo), 16, 64)
			e, err2 := strconv.ParseUint(string(hi), 16, 64)
			if err1 == nil && err2 == nil && e > s {
				start, end = s, e
			}
			continue
		}
		if end == 0 || len(f) != 3 || !bytes.Equal(f[0], []byte("Anonymous:")) {
			continue
		}
		if !bytes.Equal(f[1], []byte("0")) {
			start, end = 0, 0 // private copies: keep
			continue
		}
		if _, _, errno := unix.Syscall(unix.SYS_MADVISE, uintptr(start), uintptr(end-start), unix.MADV_DONTNEED); errno != 0 {
			return advised, errno
		}
		advised += int(end - start)
		start, end = 0, 0
	}
	return advised, nil
}

// sameDev reports whether a maps device field ("fe:01", hexadecimal,
// zero-padded) names the device major:minor (hexadecimal, unpadded).
func sameDev(field, major, minor []byte) bool {
	a, b, ok := bytes.Cut(field, []byte{':'})
	return ok && bytes.Equal(bytes.TrimLeft(a, "0"), bytes.TrimLeft(major, "0")) &&
		bytes.Equal(bytes.TrimLeft(b, "0"), bytes.TrimLeft(minor, "0"))
}
