//go:build linux

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/llm/llmtest"
)

// threadCPU sums the CPU time of every thread of pid from
// /proc/PID/task/*/schedstat (nanoseconds on the CPU; finer than the
// clock ticks of /proc/PID/stat).
func threadCPU(pid int) time.Duration {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	var sum time.Duration
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name(), "schedstat"))
		if err != nil {
			continue
		}
		f := strings.Fields(string(b))
		if len(f) > 0 {
			ns, _ := strconv.ParseInt(f[0], 10, 64)
			sum += time.Duration(ns)
		}
	}
	return sum
}

// BenchmarkCLIFirstRequest is the start-up budget: the CPU time (all
// threads) and wall time of `gantry -p` from exec to its first model
// request, in a fresh HOME (a CI job's), against the fake server, which
// holds the reply back; the process is killed once the request arrived.
// Median of the runs (use -benchtime 5x). Budget: ≤ 10 ms CPU (see
// docs/scale.md).
func BenchmarkCLIFirstRequest(b *testing.B) {
	bin := buildGantry(b)
	srv := llmtest.NewServer(b)
	for _, kind := range []string{"git", "plain"} {
		dir := b.TempDir()
		os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n"), 0o644)
		if kind == "git" { // a repository: the system prompt carries its git status
			if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
				b.Fatalf("git init: %v\n%s", err, out)
			}
		}
		b.Run(kind, func(b *testing.B) { firstRequest(b, bin, srv, dir) })
	}
}

func firstRequest(b *testing.B, bin string, srv *llmtest.Server, dir string) {
	var cpus, walls []time.Duration
	b.ResetTimer()
	for i := range b.N {
		srv.Script(llmtest.Reply{HeaderDelay: time.Minute})
		before := len(srv.Requests())
		home := filepath.Join(b.TempDir(), "home"+strconv.Itoa(i))
		cmd := exec.Command(bin, "-p", "hi")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "ANTHROPIC_BASE_URL="+srv.URL(), "ANTHROPIC_API_KEY=k", "HOME="+home,
			"GANTRY_HOME="+filepath.Join(home, ".gantry"), "OPENAI_API_KEY=", "OPENAI_BASE_URL=")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		start := time.Now()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		pid := cmd.Process.Pid
		var cpu time.Duration
		for len(srv.Requests()) == before {
			if c := threadCPU(pid); c > 0 {
				cpu = c
			}
			if time.Since(start) > 30*time.Second {
				cmd.Process.Kill()
				cmd.Wait()
				b.Fatalf("no request within 30 s\n%s", out.String())
			}
			time.Sleep(50 * time.Microsecond)
		}
		wall := time.Since(start)
		if c := threadCPU(pid); c > 0 {
			cpu = c
		}
		cmd.Process.Kill()
		cmd.Wait()
		cpus, walls = append(cpus, cpu), append(walls, wall)
	}
	b.StopTimer()
	slices.Sort(cpus)
	slices.Sort(walls)
	b.ReportMetric(float64(cpus[len(cpus)/2].Microseconds())/1000, "cpu-ms-median")
	b.ReportMetric(float64(walls[len(walls)/2].Microseconds())/1000, "wall-ms-median")
}
