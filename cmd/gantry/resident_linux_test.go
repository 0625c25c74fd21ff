package main

import (
	"bufio"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// residentCanary is written before the pages are dropped: its private copy
// (a writable mapping) must survive.
var residentCanary = [4]int{1, 2, 3, 4}

// exeResident sums the resident kilobytes of this process's mappings of
// its own binary, read-only and writable apart, from /proc/self/smaps.
func exeResident(t *testing.T) (readOnly, writable int) {
	t.Helper()
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var ours, ro bool
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 5 && strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":") {
			ours = len(fields) >= 6 && fields[5] == exe
			ro = len(fields[1]) == 4 && fields[1][1] == '-'
			continue
		}
		if ours && len(fields) == 3 && fields[0] == "Rss:" {
			kb, _ := strconv.Atoi(fields[1])
			if ro {
				readOnly += kb
			} else {
				writable += kb
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return readOnly, writable
}

func TestDropStartupPages(t *testing.T) {
	residentCanary[2] = 42
	roBefore, wBefore := exeResident(t)
	if roBefore < 1024 {
		t.Fatalf("only %d KB of the test binary's read-only mappings resident before: cannot measure", roBefore)
	}
	advised, err := dropStartupPages()
	if err != nil {
		t.Fatal(err)
	}
	roAfter, wAfter := exeResident(t)
	t.Logf("advised %d MB; read-only resident %d → %d KB, writable %d → %d KB", advised>>20, roBefore, roAfter, wBefore, wAfter)
	if advised < roBefore<<10 {
		t.Errorf("advised %d bytes, less than the %d KB resident before", advised, roBefore)
	}
	// What the test touched since (the smaps reader, the runtime) is mapped
	// again — in large folios when the test binary is fresh from the
	// linker, about half of it — and the rest is not.
	if roAfter > roBefore*3/4 {
		t.Errorf("read-only resident %d KB after dropping, %d KB before: not dropped", roAfter, roBefore)
	}
	if residentCanary != [4]int{1, 2, 42, 4} {
		t.Errorf("a writable mapping lost its contents: %v", residentCanary)
	}
	if wAfter < wBefore/2 {
		t.Errorf("writable resident %d KB after, %d KB before: a writable mapping was dropped", wAfter, wBefore)
	}
}

// TestStartupRanges: the read-only private mappings of the binary are
// chosen — from maps for a static binary, from smaps without those holding
// private copies for a dynamically linked one — and nothing else.
func TestStartupRanges(t *testing.T) {
	dev := unix.Mkdev(0xfe, 0x01)
	const static = `00400000-0157d000 r-xp 00000000 fe:01 1234 /usr/bin/gantry
0157d000-02f20000 r--p 0117d000 fe:01 1234 /usr/bin/gantry
02f20000-02f70000 rw-p 02b20000 fe:01 1234 /usr/bin/gantry
02f70000-02fc0000 rw-p 00000000 00:00 0
03000000-03100000 r--p 00000000 fe:01 999 /usr/lib/other
03100000-03200000 r--p 00000000 fe:02 1234 /mnt/same-inode-other-device
03200000-03300000 r--s 00000000 fe:01 1234 /usr/bin/gantry
7ffd58409000-7ffd5842a000 rw-p 00000000 00:00 0 [stack]
`
	got := startupRanges([]byte(static), dev, 1234, false)
	want := [][2]uint64{{0x400000, 0x157d000}, {0x157d000, 0x2f20000}}
	if !slices.Equal(got, want) {
		t.Errorf("static: %x, want %x", got, want)
	}
	if loaderMapped([]byte(static)) {
		t.Error("a static table shows no loader")
	}
	const dynamic = `00400000-0157d000 r-xp 00000000 fe:01 1234 /usr/bin/gantry
Rss:                1024 kB
Anonymous:             0 kB
0157d000-02f20000 r--p 0117d000 fe:01 1234 /usr/bin/gantry
Anonymous:             0 kB
02f20000-02f30000 r--p 02b20000 fe:01 1234 /usr/bin/gantry
Anonymous:            64 kB
02f30000-02f70000 rw-p 02b30000 fe:01 1234 /usr/bin/gantry
Anonymous:            12 kB
7f0000000000-7f0000020000 r--p 00000000 fe:01 77 /usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2
Anonymous:             0 kB
`
	got = startupRanges([]byte(dynamic), dev, 1234, true)
	if !slices.Equal(got, want) {
		t.Errorf("dynamic: %x, want %x (the relocated RELRO mapping left out)", got, want)
	}
	if !loaderMapped([]byte(dynamic)) {
		t.Error("the loader's mapping is not seen")
	}
}
