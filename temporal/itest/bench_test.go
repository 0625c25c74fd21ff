package itest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/agent"
	"github.com/gantry-dev/gantry/store"
	"github.com/gantry-dev/gantry/temporal/durable"
	"github.com/gantry-dev/gantry/workspace"
)

// benchCalls is how many tool-call turns one measured run makes.
const benchCalls = 20

// BenchmarkTurn compares one turn with a tool call (a model call, then a
// Bash call that appends to a file) in-process (agent.Agent) and through
// Temporal (a local server, one worker): per turn = (a run of benchCalls
// turns − a run without calls) / benchCalls.
func BenchmarkTurn(b *testing.B) {
	prompt := func(n int) string { return fmt.Sprintf("calls=%d cmd=echo {i} >> f.txt", n) }
	b.Run("in-process", func(b *testing.B) {
		_, p := fakeModel(b)
		run := func(n int) time.Duration {
			dir := b.TempDir()
			ws, err := workspace.Open(context.Background(), workspace.Options{Dir: dir, NoSettings: true, Allow: []string{"Bash", "Edit"},
				Store: new(store.Memory), UserHome: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			defer ws.Close()
			ag, err := agent.New(context.Background(), agent.Options{Provider: p, Model: "claude-test", Workspace: ws, NoEnvFacts: true, NoMemoryFiles: true})
			if err != nil {
				b.Fatal(err)
			}
			defer ag.Close()
			start := time.Now()
			res, err := ag.Prompt(context.Background(), prompt(n))
			if err != nil || res.Subtype != "success" {
				b.Fatalf("%+v %v", res, err)
			}
			return time.Since(start)
		}
		perTurn(b, run)
	})
	b.Run("temporal", func(b *testing.B) {
		c := newCluster(b)
		c.worker()
		run := func(n int) time.Duration {
			start := time.Now()
			id := c.start(testSpec(b.TempDir(), "Bash", "Edit"), prompt(n))
			if res := c.wait(id, time.Minute); res.Subtype != "success" {
				b.Fatalf("%+v", res)
			}
			return time.Since(start)
		}
		perTurn(b, run)
	})
}

func perTurn(b *testing.B, run func(n int) time.Duration) {
	run(1) // warm up
	var base, full time.Duration
	for b.Loop() {
		base += run(0)
		full += run(benchCalls)
	}
	b.ReportMetric(float64((full-base).Microseconds())/float64(b.N*benchCalls), "µs/turn")
	b.ReportMetric(float64(base.Microseconds())/float64(b.N), "µs/empty-run")
}

// BenchmarkRuns is the throughput of one worker: 50 runs of one tool call
// each, started at once, against a zero-latency model.
func BenchmarkRuns(b *testing.B) {
	c := newCluster(b)
	c.worker()
	const runs = 50
	var total time.Duration
	for b.Loop() {
		start := time.Now()
		ids := make([]string, runs)
		for i := range ids {
			ids[i] = c.start(testSpec(b.TempDir(), "Bash", "Edit"), "calls=1 cmd=echo 1 >> f.txt")
		}
		var wg sync.WaitGroup
		for _, id := range ids {
			wg.Go(func() {
				if res := c.wait(id, 5*time.Minute); res.Subtype != "success" {
					b.Errorf("%+v", res)
				}
			})
		}
		wg.Wait()
		total += time.Since(start)
	}
	b.ReportMetric(float64(runs*b.N)/total.Seconds(), "runs/s")
}

// BenchmarkWaitingRSS reports the resident memory of a worker process
// (the test binary as a worker) idle, and with 100 runs waiting on asks.
func BenchmarkWaitingRSS(b *testing.B) {
	c := newCluster(b)
	for b.Loop() {
		pid := c.subprocessWorker(b)
		time.Sleep(time.Second)
		idle := rss(b, pid)
		ids := make([]string, 100)
		for i := range ids {
			ids[i] = c.start(testSpec(b.TempDir()), "calls=1 cmd=echo x >> f.txt")
		}
		for _, id := range ids {
			waitAsk(b, c, id)
		}
		time.Sleep(time.Second)
		b.ReportMetric(idle, "idle-MB")
		b.ReportMetric(rss(b, pid), "waiting100-MB")
		for _, id := range ids {
			durable.Cancel(context.Background(), c.c, id)
		}
	}
}

// subprocessWorker starts the test binary as a worker on the cluster's
// queue; it is killed when the test ends.
func (c *cluster) subprocessWorker(t testing.TB) int {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "GANTRY_TEST_WORKER=1", "GANTRY_TEST_ADDR="+c.ts.GetFrontendHostPort(),
		"GANTRY_TEST_NS="+c.ts.GetDefaultNamespace(), "GANTRY_TEST_MODEL="+c.url, "GANTRY_TEST_QUEUE="+c.queue, "HOME="+t.TempDir(),
		"GANTRY_TEST_BLOBS="+c.blobs.Path())
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	t.Cleanup(func() {
		syscall.Kill(-pid, syscall.SIGKILL)
		cmd.Wait()
	})
	return pid
}

// rss is a process's resident set size in MB.
func rss(t testing.TB, pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	t.Fatal("no VmRSS")
	return 0
}
