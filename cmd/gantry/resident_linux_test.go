package main

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
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
