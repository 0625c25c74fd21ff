package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/llm/llmtest"
)

// BenchmarkCLISoakRSS is the soak benchmark of a long `gantry -p` run:
// every turn the model reads a large file (the tool result), reporting
// input tokens in proportion to the request so that compaction keeps the
// conversation bounded; the RSS of the process is sampled at turns 100,
// 500, 1000, … and reported, with the ratio of the last sample to the
// one at turn 100 (goal ≤ 1.2). GANTRY_SOAK_TURNS sets the turns (default
// 400; the figure is 2000) and GANTRY_SOAK_KB the result's size
// (default 200).
//
//	GANTRY_SOAK_TURNS=2000 go test -run X -bench CLISoakRSS -benchtime 1x ./cmd/gantry
func BenchmarkCLISoakRSS(b *testing.B) {
	turns, kb := envInt("GANTRY_SOAK_TURNS", 400), envInt("GANTRY_SOAK_KB", 200)
	bin := buildGantry(b)
	dir := b.TempDir()
	line := strings.Repeat("x", 99) + "\n"
	if err := os.WriteFile(filepath.Join(dir, "big.txt"), []byte(strings.Repeat(line, kb*1024/100)), 0o644); err != nil {
		b.Fatal(err)
	}
	var n atomic.Int64
	srv := llmtest.NewServer(b, llmtest.WithResponder(func(r llmtest.Request) (llmtest.Reply, bool) {
		// Input tokens ~ bytes/4: a real model's count, so that the
		// agent compacts as it would.
		usage := llm.Usage{InputTokens: len(r.Body) / 4, OutputTokens: 10}
		if bytes.Contains(r.Body, []byte("summar")) && !bytes.Contains(r.Body, []byte(`"tools"`)) {
			return llmtest.Reply{Content: []llm.Block{llm.Text("summary: read big.txt many times")}, Usage: usage}, true
		}
		i := n.Add(1)
		if int(i) > turns {
			return llmtest.Reply{Content: []llm.Block{llm.Text("done")}, Usage: usage}, true
		}
		call := llm.ToolUse(fmt.Sprintf("t%d", i), "Read", []byte(`{"file_path":"big.txt"}`))
		return llmtest.Reply{Content: []llm.Block{call}, Usage: usage}, true
	}))
	for range b.N {
		n.Store(0)
		cmd := exec.Command(bin, "-p", "work", "--max-turns", strconv.Itoa(turns+10))
		cmd.Dir = dir
		home := filepath.Join(dir, ".home")
		cmd.Env = append(os.Environ(), "ANTHROPIC_BASE_URL="+srv.URL(), "ANTHROPIC_API_KEY=k", "HOME="+home,
			"GANTRY_HOME="+filepath.Join(home, ".gantry"), "OPENAI_API_KEY=", "OPENAI_BASE_URL=")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		rollupPath := fmt.Sprintf("/proc/%d/smaps_rollup", cmd.Process.Pid)
		marks := []int{100, 500, 1000, 1500, 2000}
		samples := map[int]int64{}
		tick := time.NewTicker(5 * time.Millisecond)
	wait:
		for {
			select {
			case err := <-done:
				if err != nil {
					b.Fatalf("gantry: %v\n%s", err, out.String())
				}
				break wait
			case <-tick.C:
				at := int(n.Load())
				for _, m := range marks {
					if at >= m && samples[m] == 0 && m <= turns {
						samples[m] = readRollup(rollupPath).rss
					}
				}
			}
		}
		tick.Stop()
		last := 0
		for _, m := range marks {
			if s := samples[m]; s > 0 {
				b.ReportMetric(float64(s)/(1<<20), fmt.Sprintf("rss-MB@%d", m))
				last = m
			}
		}
		if samples[100] > 0 && last > 100 {
			b.ReportMetric(float64(samples[last])/float64(samples[100]), "rss-ratio")
		}
	}
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}
