package lsp

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The benchmarks run gopls on this module (Gantry itself): a definition in
// builtin/builtin.go that leads into builtin/lsp.
//
//	go test ./builtin/lsp -run '^$' -bench Warm -benchtime 200x
//	go test ./builtin/lsp -run '^$' -bench Cold -benchtime 1x

func benchTarget(b *testing.B) (root, file string, line, char int) {
	gopls(b)
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		b.Fatal(err)
	}
	file = filepath.Join(root, "builtin", "builtin.go")
	src, err := os.ReadFile(file)
	if err != nil {
		b.Fatal(err)
	}
	for i, l := range strings.Split(string(src), "\n") {
		if j := strings.Index(l, "lsp.NewManager("); j >= 0 {
			return root, file, i + 1, j + len("lsp.") + 1
		}
	}
	b.Fatal("no lsp.NewManager call in builtin/builtin.go")
	return
}

// BenchmarkDefinitionWarm is goToDefinition on a running, indexed gopls
// (target: ≤ 50 ms per call).
func BenchmarkDefinitionWarm(b *testing.B) {
	root, file, line, char := benchTarget(b)
	m := NewManager(Options{NoProjectConfig: true})
	defer m.Close()
	env := newEnv(root, m)
	ctx := context.Background()
	// Warm up: the first calls wait for gopls to load the module.
	for range 5 {
		if got, err := m.Query(ctx, env, OpDefinition, file, line, char); err != nil || !strings.Contains(got, "builtin/lsp/manager.go") {
			b.Fatalf("warm-up: %v %s", err, got)
		}
	}
	pid := 0
	if r := m.Running(); len(r) == 1 {
		f := strings.Fields(r[0])
		pid, _ = strconv.Atoi(f[len(f)-1])
	}
	cpu0, _ := processCPU(pid)
	b.ResetTimer()
	for b.Loop() {
		if _, err := m.Query(ctx, env, OpDefinition, file, line, char); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	// The server's own CPU time per call: the figure that does not depend
	// on how busy the machine is (wall time does, a lot, on 2 shared cores).
	if cpu1, ok := processCPU(pid); ok {
		b.ReportMetric(float64((cpu1-cpu0).Microseconds())/1000/float64(b.N), "server-cpu-ms/op")
	}
}

// processCPU returns a process's user+system CPU time from /proc (Linux).
func processCPU(pid int) (time.Duration, bool) {
	if pid == 0 {
		return 0, false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0, false
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / 100, true // USER_HZ is 100 on Linux
}

// BenchmarkDefinitionCold is the first goToDefinition of a session: start
// gopls, load and type-check the module, answer.
func BenchmarkDefinitionCold(b *testing.B) {
	root, file, line, char := benchTarget(b)
	for b.Loop() {
		m := NewManager(Options{NoProjectConfig: true})
		got, isErr := run(b, newEnv(root, m), OpDefinition, file, line, char)
		b.StopTimer()
		m.Close()
		b.StartTimer()
		if isErr || !strings.Contains(got, "builtin/lsp/manager.go") {
			b.Fatal(got)
		}
	}
}
