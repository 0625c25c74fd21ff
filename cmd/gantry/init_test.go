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

// TestInitTrace runs this test binary — which links every package the CLI
// links — with GODEBUG=inittrace=1 and reads the trace: no Gantry package
// allocates more than maxOwnInitBytes at init. Allocation is deterministic
// where time is not; the start-up time budget lives in BenchmarkCLIVersion.
// The heaviest third-party inits are logged.
func TestInitTrace(t *testing.T) {
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
	for _, l := range lines {
		total += l.bytes
		totalMS += l.ms
		if strings.HasPrefix(l.pkg, "github.com/gantry-dev/gantry") && l.bytes > maxOwnInitBytes {
			t.Errorf("package %s allocates %d bytes at init (max %d): build its tables on first use", l.pkg, l.bytes, maxOwnInitBytes)
		}
		if l.bytes > 100<<10 || l.ms > 1 {
			t.Logf("heavy init: %s %.2f ms %d bytes", l.pkg, l.ms, l.bytes)
		}
	}
	t.Logf("%d packages, %.1f ms, %d bytes at init", len(lines), totalMS, total)
}
