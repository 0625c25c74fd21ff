//go:build linux

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gantry-dev/gantry/llm/llmtest"
)

// buildGantry builds the CLI binary once per benchmark, as scripts/dev
// builds it: static (CGO_ENABLED=0), which peaks ~20 MB lower in RSS than a
// cgo build.
//
// The new binary is then dropped from the page cache, so that the runs
// read it as an installed binary is read: a file the linker has just
// written sits in the page cache in large folios, and a fault maps a whole
// folio, which inflates the file-backed RSS of the first runs by 2–5 MB
// against the same binary read back from disk.
func buildGantry(b *testing.B) string {
	b.Helper()
	bin := filepath.Join(b.TempDir(), "gantry")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("build: %v\n%s", err, out)
	}
	if err := dropFromPageCache(bin); err != nil {
		b.Logf("the binary stays in the page cache as written: %v", err)
	}
	// One untimed run reads it back (from disk, as readahead does for an
	// installed binary), so that no timed run pays for the disk.
	if out, err := exec.Command(bin, "--version").CombinedOutput(); err != nil {
		b.Fatalf("warm-up: %v\n%s", err, out)
	}
	return bin
}

// dropFromPageCache writes a file's dirty pages back and drops its pages
// from the page cache.
func dropFromPageCache(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := unix.Fdatasync(int(f.Fd())); err != nil {
		return err
	}
	return unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
}

// runGantry runs the binary against srv and returns its wall time and peak
// RSS in bytes.
//
// The peak is the process's VmHWM, polled from /proc while it runs: the
// rusage of a child is no use here, because Go starts children with vfork
// and Linux carries the parent's (this benchmark's) high-water RSS into the
// child's ru_maxrss across exec. VmHWM belongs to the new address space
// only; polling every millisecond may miss growth in the last instant.
func runGantry(b *testing.B, bin, dir string, srv *llmtest.Server, args ...string) (time.Duration, int64) {
	b.Helper()
	st := runGantryStats(b, bin, dir, srv, args...)
	return st.wall, st.rss
}

// runStats are the figures of one run: wall time, CPU time (user + system,
// which a loaded machine inflates far less than wall time) and peak RSS.
type runStats struct {
	wall, cpu time.Duration
	rss       int64
	// anon and file split the largest RSS sample into anonymous memory
	// (heap, stacks, runtime metadata) and file-backed pages (the binary's
	// code and read-only data), from /proc/PID/smaps_rollup.
	anon, file int64
}

func runGantryStats(b *testing.B, bin, dir string, srv *llmtest.Server, args ...string) runStats {
	b.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	home := filepath.Join(dir, ".home")
	cmd.Env = append(os.Environ(), "ANTHROPIC_BASE_URL="+srv.URL(), "ANTHROPIC_API_KEY=k", "HOME="+home, "GANTRY_HOME="+filepath.Join(home, ".gantry"), "OPENAI_API_KEY=", "OPENAI_BASE_URL=")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	status := fmt.Sprintf("/proc/%d/status", cmd.Process.Pid)
	var peak int64
	var sample rollup
	rollupPath := fmt.Sprintf("/proc/%d/smaps_rollup", cmd.Process.Pid)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			wall := time.Since(start)
			if err != nil {
				b.Fatalf("gantry %v: %v\n%s", args, err, out.String())
			}
			return runStats{wall: wall, cpu: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), rss: peak, anon: sample.anon, file: sample.rss - sample.anon}
		case <-tick.C:
			if hwm := vmHWM(status); hwm > peak {
				peak = hwm
			}
			if r := readRollup(rollupPath); r.rss > sample.rss {
				sample = r
			}
		}
	}
}

// rollup is the part of /proc/PID/smaps_rollup the benchmarks report, in
// bytes.
type rollup struct{ rss, anon int64 }

// readRollup reads the Rss and Anonymous lines of a smaps_rollup file
// (zeros if gone).
func readRollup(path string) rollup {
	var r rollup
	b, err := os.ReadFile(path)
	if err != nil {
		return r
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 || f[2] != "kB" {
			continue
		}
		kb, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "Rss:":
			r.rss = kb * 1024
		case "Anonymous:":
			r.anon = kb * 1024
		}
	}
	return r
}

// vmHWM reads the VmHWM line of a /proc status file, in bytes (0 if gone).
func vmHWM(path string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb * 1024
		}
	}
	return 0
}

// BenchmarkCLIOneTurn is the wall time of `gantry -p` for a one-turn run,
// from process start to exit, against a zero-latency fake model.
func BenchmarkCLIOneTurn(b *testing.B) {
	bin := buildGantry(b)
	srv := llmtest.NewServer(b)
	dir := b.TempDir()
	var total time.Duration
	var rss int64
	b.ResetTimer()
	for range b.N {
		srv.Script(llmtest.TextReply("hello"))
		w, r := runGantry(b, bin, dir, srv, "-p", "hi")
		total += w
		rss = max(rss, r)
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/run")
	b.ReportMetric(float64(rss)/(1<<20), "peak-rss-MB")
}

// BenchmarkCLI30Turns is the peak RSS (and wall time) of `gantry -p` over a
// scripted 30-turn run with a tool call in each turn.
func BenchmarkCLI30Turns(b *testing.B) {
	bin := buildGantry(b)
	srv := llmtest.NewServer(b)
	dir := b.TempDir()
	for i := range 20 {
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%02d.txt", i)), []byte("some text\n"), 0o644)
	}
	var rss int64
	var total time.Duration
	b.ResetTimer()
	for range b.N {
		for i := range 29 {
			call := llmtest.ToolCall{ID: fmt.Sprintf("t%d", i), Name: "Glob", Input: `{"pattern":"*.txt"}`}
			if i%2 == 1 {
				call = llmtest.ToolCall{ID: fmt.Sprintf("t%d", i), Name: "Read", Input: fmt.Sprintf(`{"file_path":"f%02d.txt"}`, i%20)}
			}
			srv.Script(llmtest.ToolReply(call))
		}
		srv.Script(llmtest.TextReply("done"))
		w, r := runGantry(b, bin, dir, srv, "-p", "work", "--max-turns", "40")
		total += w
		rss = max(rss, r)
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/run")
	b.ReportMetric(float64(rss)/(1<<20), "peak-rss-MB")
}

// BenchmarkCLI10ToolTurns is the budget run of `gantry -p`: ten turns with
// a tool call each (Read and Glob alternating) and a final answer, against
// the fake API. Budget: peak-rss-MB ≤ 30 (see docs/scale.md).
func BenchmarkCLI10ToolTurns(b *testing.B) {
	bin := buildGantry(b)
	srv := llmtest.NewServer(b)
	dir := b.TempDir()
	for i := range 10 {
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%02d.txt", i)), []byte(strings.Repeat("some text\n", 50)), 0o644)
	}
	var agg runAgg
	b.ResetTimer()
	for range b.N {
		for i := range 10 {
			call := llmtest.ToolCall{ID: fmt.Sprintf("t%d", i), Name: "Read", Input: fmt.Sprintf(`{"file_path":"f%02d.txt"}`, i)}
			if i%2 == 1 {
				call = llmtest.ToolCall{ID: fmt.Sprintf("t%d", i), Name: "Glob", Input: `{"pattern":"*.txt"}`}
			}
			srv.Script(llmtest.ToolReply(call))
		}
		srv.Script(llmtest.TextReply("done"))
		agg.add(runGantryStats(b, bin, dir, srv, "-p", "work"))
	}
	agg.report(b)
}

// BenchmarkCLIVersion is the start-up cost: `gantry --version` from exec
// to exit (budget ≤ 10 ms, see docs/scale.md).
func BenchmarkCLIVersion(b *testing.B) {
	bin := buildGantry(b)
	srv := llmtest.NewServer(b)
	dir := b.TempDir()
	var agg runAgg
	b.ResetTimer()
	for range b.N {
		agg.add(runGantryStats(b, bin, dir, srv, "--version"))
	}
	agg.report(b)
}

// runAgg sums the runs of a benchmark: mean and median wall and CPU time,
// the largest and the median peak RSS, and the anonymous/file-backed split
// of the largest sample.
type runAgg struct {
	n         int
	wall, cpu time.Duration
	peak      runStats
	all       []runStats
}

func (a *runAgg) add(st runStats) {
	a.all = append(a.all, st)
	a.n++
	a.wall += st.wall
	a.cpu += st.cpu
	if st.rss > a.peak.rss {
		a.peak = st
	}
}

func (a *runAgg) report(b *testing.B) {
	if a.n == 0 {
		return
	}
	b.ReportMetric(float64(a.wall.Microseconds())/1000/float64(a.n), "ms/run")
	b.ReportMetric(float64(a.cpu.Microseconds())/1000/float64(a.n), "cpu-ms/run")
	b.ReportMetric(float64(a.peak.rss)/(1<<20), "peak-rss-MB")
	b.ReportMetric(float64(a.peak.anon)/(1<<20), "anon-MB")
	b.ReportMetric(float64(a.peak.file)/(1<<20), "file-MB")
	median := func(f func(runStats) int64) int64 {
		v := make([]int64, len(a.all))
		for i, st := range a.all {
			v[i] = f(st)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	b.ReportMetric(float64(median(func(s runStats) int64 { return s.wall.Microseconds() }))/1000, "ms-median")
	b.ReportMetric(float64(median(func(s runStats) int64 { return s.cpu.Microseconds() }))/1000, "cpu-ms-median")
	b.ReportMetric(float64(median(func(s runStats) int64 { return s.rss }))/(1<<20), "rss-MB-median")
}

// BenchmarkCLIReadMany is a run that changes nothing — ten Reads and two
// read-only Bash commands — with checkpoints on (the default) and off
// (--no-checkpoints), in a 200-file project whose store already holds the
// previous run's tip (a person's second run). Budget: with checkpoints
// ≤ 1.1× the CPU and ≤ +1 MB the peak RSS of without (see docs/scale.md).
func BenchmarkCLIReadMany(b *testing.B) {
	bin := buildGantry(b)
	srv := llmtest.NewServer(b)
	dir := b.TempDir()
	for i := range 200 {
		sub := filepath.Join(dir, fmt.Sprintf("d%d", i%10))
		os.MkdirAll(sub, 0o755)
		os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%03d.txt", i)), []byte(strings.Repeat("some text\n", 50)), 0o644)
	}
	script := func() {
		for i := range 10 {
			srv.Script(llmtest.ToolReply(llmtest.ToolCall{ID: fmt.Sprintf("t%d", i), Name: "Read", Input: fmt.Sprintf(`{"file_path":"d%d/f%03d.txt"}`, i%10, i)}))
		}
		srv.Script(llmtest.ToolReply(llmtest.ToolCall{ID: "b1", Name: "Bash", Input: `{"command":"ls d1"}`}))
		srv.Script(llmtest.ToolReply(llmtest.ToolCall{ID: "b2", Name: "Bash", Input: `{"command":"grep -c text d2/f002.txt"}`}))
		srv.Script(llmtest.TextReply("done"))
	}
	for _, mode := range []string{"checkpoints", "no-checkpoints"} {
		b.Run(mode, func(b *testing.B) {
			args := []string{"-p", "work", "--allowedTools", "Read,Bash"}
			if mode == "no-checkpoints" {
				args = append(args, "--no-checkpoints")
			}
			script()
			runGantryStats(b, bin, dir, srv, args...) // the previous run: a tip to start from
			var agg runAgg
			b.ResetTimer()
			for range b.N {
				script()
				agg.add(runGantryStats(b, bin, dir, srv, args...))
			}
			agg.report(b)
		})
	}
}

// BenchmarkCLIEditGo is the edit-and-write scenario of a Go project in a
// fresh HOME (a CI job's): ten Reads, an Edit, a command and a Write, with
// gopls on PATH. The language server starts in the background at the
// first edit and never holds a result up; the run ends without waiting
// for it. CPU includes the reaped children (gopls, its go list).
func BenchmarkCLIEditGo(b *testing.B) {
	if _, err := exec.LookPath("gopls"); err != nil {
		b.Skip("gopls not on PATH")
	}
	bin := buildGantry(b)
	srv := llmtest.NewServer(b)
	var agg runAgg
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		dir := b.TempDir()
		os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/x\n\ngo 1.22\n"), 0o644)
		os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hi\") }\n"), 0o644)
		for j := range 10 {
			srv.Script(llmtest.ToolReply(llmtest.ToolCall{ID: fmt.Sprintf("r%d", j), Name: "Read", Input: `{"file_path":"main.go"}`}))
		}
		srv.Script(
			llmtest.ToolReply(llmtest.ToolCall{ID: "e1", Name: "Edit", Input: `{"file_path":"main.go","old_string":"\"hi\"","new_string":"\"hello\""}`}),
			llmtest.ToolReply(llmtest.ToolCall{ID: "b1", Name: "Bash", Input: `{"command":"ls"}`}),
			llmtest.ToolReply(llmtest.ToolCall{ID: "w1", Name: "Write", Input: `{"file_path":"extra.go","content":"package main\n\nfunc extra() int { return 1 }\n"}`}),
			llmtest.TextReply("done"),
		)
		b.StartTimer()
		agg.add(runGantryStats(b, bin, dir, srv, "-p", "work", "--allowedTools", "Read,Edit,Write,Bash"))
		_ = i
	}
	agg.report(b)
}
