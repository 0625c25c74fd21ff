package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkGrepProcess compares a whole `gantry tools call Grep` process
// with ripgrep on Go's source tree ($GOROOT/src, ~11.5k files), for each
// engine (GANTRY_GREP_ENGINE) and output mode, with the same pattern. Like
// is compared with like: gantry runs with head_limit 0, so both produce
// every file or line (checked before timing: the same number of entries),
// both write to a pipe read into memory, and rg runs with its defaults (the
// threads it picks for the machine). The content search's ~290 KB are over
// the result budget of a tool call (30,000 characters): gantry writes them
// to a file, as the pipeline does for a model, and prints a preview. Each iteration runs rg and gantry
// once, in alternating order, so that both see the same machine load; the
// figures are medians over the iterations:
//
//	ms, cpu-ms        gantry's wall and CPU time (user+sys, rg's included
//	                  when the rg engine runs it)
//	rg-ms, rg-cpu-ms  rg's (`rg -l PATTERN DIR` / `rg -n PATTERN DIR`)
//	x-rg, cpu-x-rg    the ratios gantry/rg (the goal is ≤ 1.1)
//	out-KB            what rg printed (gantry prints the same entries)
//	load              the 1-minute load average when the case started
//	vcsw, rg-vcsw     voluntary context switches of gantry (rg's
//	                  included under the rg engine) and of rg
//
// Run: go test -run '^$' -bench GrepProcess -benchtime 20x ./cmd/gantry
// (docs/scale.md has the figures). Skipped without rg on PATH.
func BenchmarkGrepProcess(b *testing.B) {
	rg, err := exec.LookPath("rg")
	if err != nil {
		b.Skip("rg not on PATH (scripts/setup installs it)")
	}
	src := filepath.Join(runtime.GOROOT(), "src")
	if _, err := os.Stat(src); err != nil {
		b.Skipf("GOROOT/src: %v", err)
	}
	bin := buildGantry(b)
	home, tmp := b.TempDir(), b.TempDir()
	// The line count in the note of a result saved to a file (compiled
	// here: a package-level regexp would count in TestInitTrace).
	savedLines := regexp.MustCompile(`\[Output too large: \d+ characters \((\d+) lines\) in total`)
	for _, c := range []struct{ name, pattern, mode, rgFlag string }{
		{"files", "errors.New", "files_with_matches", "-l"},
		{"content", "errors.New", "content", "-n"},
		{"files-regex", `func \w+Error\(`, "files_with_matches", "-l"},
	} {
		for _, engine := range []string{"go", "rg"} {
			b.Run(c.name+"/"+engine, func(b *testing.B) {
				in, _ := json.Marshal(map[string]any{"pattern": c.pattern, "path": src, "output_mode": c.mode, "head_limit": 0})
				gantry := exec.Command(bin, "tools", "call", "Grep", string(in), "--allowedTools", "Grep", "--no-settings")
				gantry.Env = append(os.Environ(), "HOME="+home, "GANTRY_HOME="+filepath.Join(home, ".gantry"), "GANTRY_GREP_ENGINE="+engine, "TMPDIR="+tmp)
				gantry.Dir = home
				ripgrep := exec.Command(rg, c.rgFlag, c.pattern, src)
				// Both must find and print the same files or lines: the
				// comparison is void otherwise.
				g, r := runOnce(b, gantry), runOnce(b, ripgrep)
				n := bytes.Count(r.out, []byte("\n"))
				if c.mode == "files_with_matches" {
					want := "Found " + strconv.Itoa(n) + " files\n"
					if !bytes.HasPrefix(g.out, []byte(want)) {
						b.Fatalf("gantry found %q, rg %q", firstLine(string(g.out)), want)
					}
					g.out = g.out[len(want):]
				}
				got := bytes.Count(g.out, []byte("\n"))
				if m := savedLines.FindSubmatch(g.out); m != nil {
					// Over the result budget: the whole output went to a
					// file, a preview to stdout.
					got, _ = strconv.Atoi(string(m[1]))
				}
				if got != n {
					b.Fatalf("gantry printed %d entries, rg %d", got, n)
				}
				load := loadAverage()
				var gs, rs []procRun
				b.ResetTimer()
				for i := range b.N {
					if i%2 == 0 {
						gs, rs = append(gs, runOnce(b, gantry)), append(rs, runOnce(b, ripgrep))
					} else {
						rs, gs = append(rs, runOnce(b, ripgrep)), append(gs, runOnce(b, gantry))
					}
				}
				b.StopTimer()
				gw, gc := medians(gs)
				rw, rc := medians(rs)
				b.ReportMetric(msOf(gw), "ms")
				b.ReportMetric(msOf(gc), "cpu-ms")
				b.ReportMetric(msOf(rw), "rg-ms")
				b.ReportMetric(msOf(rc), "rg-cpu-ms")
				b.ReportMetric(float64(gw)/float64(rw), "x-rg")
				b.ReportMetric(float64(gc)/float64(rc), "cpu-x-rg")
				b.ReportMetric(float64(len(r.out))/1024, "out-KB")
				b.ReportMetric(load, "load")
				b.ReportMetric(medianSwitches(gs), "vcsw")
				b.ReportMetric(medianSwitches(rs), "rg-vcsw")
			})
		}
	}
}

type procRun struct {
	wall, cpu time.Duration
	switches  int64 // voluntary context switches (the process's and its children's)
	out       []byte
}

// runOnce runs a copy of cmd to completion and returns its figures.
func runOnce(b *testing.B, cmd *exec.Cmd) procRun {
	b.Helper()
	c := exec.Command(cmd.Path, cmd.Args[1:]...)
	c.Env, c.Dir = cmd.Env, cmd.Dir
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	start := time.Now()
	err := c.Run()
	wall := time.Since(start)
	if err != nil {
		b.Fatalf("%s: %v\n%s", strings.Join(c.Args, " "), err, errb.String())
	}
	r := procRun{wall: wall, cpu: c.ProcessState.UserTime() + c.ProcessState.SystemTime(), out: out.Bytes()}
	if ru, ok := c.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.switches = ru.Nvcsw
	}
	return r
}

func medians(runs []procRun) (wall, cpu time.Duration) {
	w := make([]time.Duration, len(runs))
	c := make([]time.Duration, len(runs))
	for i, r := range runs {
		w[i], c[i] = r.wall, r.cpu
	}
	slices.Sort(w)
	slices.Sort(c)
	return w[len(w)/2], c[len(c)/2]
}

// medianSwitches is the median of the runs' voluntary context switches.
func medianSwitches(runs []procRun) float64 {
	v := make([]int64, len(runs))
	for i, r := range runs {
		v[i] = r.switches
	}
	slices.Sort(v)
	return float64(v[len(v)/2])
}

func msOf(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// loadAverage is the 1-minute load average (0 where /proc is missing).
func loadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f, _, _ := strings.Cut(string(b), " ")
	v, _ := strconv.ParseFloat(f, 64)
	return v
}
