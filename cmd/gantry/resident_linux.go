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
// holds much of the binary mapped, of which a run uses a part. The pages
// stay in the page cache (shared with every process running the binary);
// MADV_DONTNEED on a private mapping that was never written only drops
// this process's page-table entries, and a later access faults the same
// bytes back from the cache. Writable mappings (.data, .bss: written at
// start, their private copies would be lost) are never touched, nor are
// read-only ones holding private copies (see startupRanges).
func dropStartupPages() (int, error) {
	var st unix.Stat_t
	if err := unix.Stat("/proc/self/exe", &st); err != nil {
		return 0, err
	}
	table, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return 0, err
	}
	// A dynamically linked binary's loader writes relocations into the
	// RELRO segment before making it read-only: smaps says which mappings
	// hold such private copies. A static binary (what scripts/dev and the
	// README build) has none, and maps is much cheaper to read (smaps walks
	// every page table).
	checkAnon := loaderMapped(table)
	if checkAnon {
		if table, err = os.ReadFile("/proc/self/smaps"); err != nil {
			return 0, err
		}
	}
	advised := 0
	for _, r := range startupRanges(table, uint64(st.Dev), uint64(st.Ino), checkAnon) {
		if _, _, errno := unix.Syscall(unix.SYS_MADVISE, uintptr(r[0]), uintptr(r[1]-r[0]), unix.MADV_DONTNEED); errno != 0 {
			return advised, errno
		}
		advised += int(r[1] - r[0])
	}
	return advised, nil
}

// loaderMapped reports whether a maps table shows a dynamic loader
// (ld-linux…, ld-musl…) mapped into the process.
func loaderMapped(maps []byte) bool {
	for line := range bytes.Lines(maps) {
		f := bytes.Fields(line)
		if len(f) < 6 {
			continue
		}
		base := f[len(f)-1]
		if i := bytes.LastIndexByte(base, '/'); i >= 0 {
			base = base[i+1:]
		}
		if bytes.HasPrefix(base, []byte("ld-")) || bytes.HasPrefix(base, []byte("ld.so")) {
			return true
		}
	}
	return false
}

// startupRanges returns the address ranges of the read-only private
// mappings of the file dev:ino in a /proc/PID/maps table, or, with
// checkAnon, in a /proc/PID/smaps table leaving out the mappings whose
// Anonymous count is not zero.
func startupRanges(table []byte, dev, ino uint64, checkAnon bool) [][2]uint64 {
	major := []byte(strconv.FormatUint(uint64(unix.Major(dev)), 16))
	minor := []byte(strconv.FormatUint(uint64(unix.Minor(dev)), 16))
	inode := []byte(strconv.FormatUint(ino, 10))
	var out [][2]uint64
	var start, end uint64 // a candidate mapping whose smaps lines follow
	for line := range bytes.Lines(table) {
		f := bytes.Fields(line)
		if len(f) >= 5 && !bytes.HasSuffix(f[0], []byte{':'}) {
			// A mapping: start-end perms offset major:minor inode [path].
			start, end = 0, 0
			if !bytes.Equal(f[4], inode) || !sameDev(f[3], major, minor) {
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
			if err1 != nil || err2 != nil || e <= s {
				continue
			}
			if !checkAnon {
				out = append(out, [2]uint64{s, e})
				continue
			}
			start, end = s, e
			continue
		}
		if end == 0 || len(f) != 3 || !bytes.Equal(f[0], []byte("Anonymous:")) {
			continue
		}
		if bytes.Equal(f[1], []byte("0")) {
			out = append(out, [2]uint64{start, end})
		}
		start, end = 0, 0 // with private copies: keep
	}
	return out
}

// sameDev reports whether a maps device field ("fe:01", hexadecimal,
// zero-padded) names the device major:minor (hexadecimal, unpadded).
func sameDev(field, major, minor []byte) bool {
	a, b, ok := bytes.Cut(field, []byte{':'})
	return ok && bytes.Equal(bytes.TrimLeft(a, "0"), bytes.TrimLeft(major, "0")) &&
		bytes.Equal(bytes.TrimLeft(b, "0"), bytes.TrimLeft(minor, "0"))
}
