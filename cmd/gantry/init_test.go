package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// maxOwnInitBytes bounds what a Gantry package may allocate at init: tables,
// tools and compiled patterns are built on first use (sync.Once), so a
// process pays only for what it uses (see docs/scale.md).
const maxOwnInitBytes = 32 << 10

// Budgets of the whole CLI's package initialisation (its dependencies
// included), in bytes allocated: maxInitBytes for all of it, and
// maxDepInitBytes for any one third-party package — what a heavy
// dependency costs every process, `gantry --version` included, in time and
// in the pages of the binary it touches (see docs/scale.md). Today: ~1.09
// MB in 219 packages; the largest is github.com/ledongthuc/pdf at ~220 KB.
const (
	maxInitBytes    = 1152 << 10
	maxDepInitBytes = 256 << 10
)

// TestInitTrace runs this test binary — which links every package the CLI
// links — with GODEBUG=inittrace=1 and reads the trace of the packages the
// CLI links (`go list -deps`; the test's own dependencies are left out): no
// Gantry package allocates more than maxOwnInitBytes at init, no other
// package more than maxDepInitBytes, all of them together no more than
// maxInitBytes. Allocation is deterministic where time is not; the
// start-up time budget lives in BenchmarkCLIVersion. The heaviest inits
// are logged.
func TestInitTrace(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to list the CLI's packages")
	}
	list, err := exec.Command(goTool, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	linked := map[string]bool{"main": true}
	for _, p := range strings.Fields(string(list)) {
		linked[p] = true
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	type initLine struct {
		pkg   string
		ms    float64
		bytes int64
	}
	var lines []initLine
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		// init <pkg> @<t> ms, <clock> ms clock, <bytes> bytes, <n> allocs
		f := strings.Fields(sc.Text())
		if len(f) < 10 || f[0] != "init" {
			continue
		}
		ms, _ := strconv.ParseFloat(f[4], 64)
		n, _ := strconv.ParseInt(f[7], 10, 64)
		lines = append(lines, initLine{f[1], ms, n})
	}
	if len(lines) < 50 {
		t.Fatalf("no init trace in the output:\n%s", out)
	}
	var total int64
	var totalMS float64
	n := 0
	for _, l := range lines {
		if !linked[l.pkg] {
			continue
		}
		n++
		total += l.bytes
		totalMS += l.ms
		switch {
		case strings.HasPrefix(l.pkg, "github.com/gantry-dev/gantry"):
			if l.bytes > maxOwnInitBytes {
				t.Errorf("package %s allocates %d bytes at init (max %d): build its tables on first use", l.pkg, l.bytes, maxOwnInitBytes)
			}
		case l.bytes > maxDepInitBytes:
			t.Errorf("dependency %s allocates %d bytes at init (max %d): every gantry process pays for it; keep it off the CLI's imports or use a lighter package", l.pkg, l.bytes, maxDepInitBytes)
		}
		if l.bytes > 100<<10 || l.ms > 1 {
			t.Logf("heavy init: %s %.2f ms %d bytes", l.pkg, l.ms, l.bytes)
		}
	}
	t.Logf("%d packages, %.1f ms, %d bytes at init", n, totalMS, total)
	if total > maxInitBytes {
		t.Errorf("the CLI's packages allocate %d bytes at init (max %d)", total, maxInitBytes)
	}
}
