// Command scale is Gantry's many-sessions benchmark: an SDK program written
// the way docs/scale.md recommends (one shared provider and tool
// registry; agent.New, Prompt and Close per session) runs N sessions at
// once against the fake API server (llm/llmtest, zero latency). Each
// session makes 8 Read calls and 2 Bash calls, one per turn, then ends with
// a text reply: 11 model turns.
//
// It reports completions, failures, wall time, the peak RSS of this process
// (the fake server runs in a child process so that its memory and
// goroutines are not counted), and the peak number of goroutines.
//
//	go -C bench run ./scale -n 10000
//	go -C bench run ./scale -n 1000 -http1
//	go -C bench run ./scale -n 10000 -readme
//
// By default the client speaks HTTP/2 (h2c) to the fake server, as it does
// with the real APIs (HTTP/2 over TLS): concurrent requests share a few
// connections. -http1 makes every in-flight request hold its own
// connection (and its two transport goroutines). -readme is the program as
// the README writes it: the provider's default HTTP client (over plain
// HTTP that is HTTP/1.1, at most 64 connections to the host) and no
// memory limit unless the environment sets one.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gantry-dev/gantry/agent"
	"github.com/gantry-dev/gantry/builtin"
	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/llm/anthropic"
	"github.com/gantry-dev/gantry/llm/llmtest"
	"github.com/gantry-dev/gantry/permission"
	"github.com/gantry-dev/gantry/toolset"
	"github.com/gantry-dev/gantry/workspace"
)

var heapProf string

const (
	reads = 8
	bashs = 2
)

func main() {
	n := flag.Int("n", 1000, "number of concurrent sessions")
	http1 := flag.Bool("http1", false, "speak HTTP/1.1 (one connection per in-flight request) instead of h2c")
	readme := flag.Bool("readme", false, "the README's program: the provider's default client (HTTP/1.1 to the fake server), implies -http1")
	serve := flag.Bool("serve", false, "internal: run the fake API server and print its URL")
	budget := flag.Int("budget-mb", 0, "exit with status 1 if the peak RSS exceeds this many MiB (0 = no check); without GOMEMLIMIT, also set the memory limit docs/scale.md recommends for that budget")
	cpuProf := flag.String("cpuprofile", "", "write a CPU profile of the run to this file")
	flag.StringVar(&heapProf, "heapprofile", "", "write a heap profile to this file when the most sessions are in flight")
	flag.Parse()
	if heapProf != "" {
		// Sample every 4 KB allocated instead of 512 KB: a session's
		// objects are small, and the default rate sees a few of them.
		runtime.MemProfileRate = 4096
	}
	if *cpuProf != "" {
		f, err := os.Create(*cpuProf)
		if err != nil {
			fmt.Fprintln(os.Stderr, "scale:", err)
			os.Exit(1)
		}
		_ = pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	if *serve {
		runServer(!*http1)
		return
	}
	if *budget > 0 && os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimitFor(int64(*budget) << 20))
	}
	if *readme {
		*http1 = true
	}
	if err := run(*n, !*http1, *readme, *budget, *cpuProf); err != nil {
		pprof.StopCPUProfile()
		fmt.Fprintln(os.Stderr, "scale:", err)
		os.Exit(1)
	}
}

// binaryPages is about what a program that links Gantry's built-in tools
// keeps resident of its own binary at its peak (the rss_file_mb this
// command reports): memory the Go runtime's limit does not count.
const binaryPages = 25 << 20

// memoryLimitFor is the memory limit docs/scale.md recommends for a peak
// RSS budget: nine tenths of what the budget leaves after the binary's
// pages (the runtime fills up to its limit before it collects harder, so
// the peak RSS is about the limit plus those pages).
func memoryLimitFor(budget int64) int64 {
	return (budget - binaryPages) / 10 * 9
}

// runServer serves the fake API until stdin closes.
func runServer(h2 bool) {
	opts := []llmtest.Option{llmtest.WithoutRecording(), llmtest.WithResponder(respond)}
	if h2 {
		// Accept request bodies as fast as they come: the fake server,
		// not the client's flow control, is where requests queue, as at a
		// real API's front end (whose capacity exceeds one client's).
		// Up to 1,000 streams a connection: 10,000 sessions need ten
		// connections, not forty (dialling them timed out on a loaded
		// machine whose fake server was starved of CPU).
		opts = append(opts, llmtest.WithHTTP2Config(&http.HTTP2Config{
			MaxConcurrentStreams:          1000,
			MaxReceiveBufferPerConnection: 256 << 20,
			MaxReceiveBufferPerStream:     4 << 20,
		}))
	}
	srv := llmtest.Start(opts...)
	defer srv.Close()
	fmt.Println(srv.URL())
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
}

// respond scripts every conversation alike: the k-th turn reads file k,
// then two Bash calls, then the answer.
func respond(req llmtest.Request) (llmtest.Reply, bool) {
	k := 0
	for _, m := range req.Messages {
		if m.Role == "assistant" {
			k++
		}
	}
	id := "t" + strconv.Itoa(k)
	switch {
	case k < reads:
		return llmtest.ToolReply(llmtest.ToolCall{ID: id, Name: "Read", Input: fmt.Sprintf(`{"file_path":"f%d.txt"}`, k)}), true
	case k < reads+bashs:
		return llmtest.ToolReply(llmtest.ToolCall{ID: id, Name: "Bash", Input: `{"command":"echo ok"}`}), true
	}
	return llmtest.TextReply("done"), true
}

func run(n int, h2, readme bool, budgetMB int, cpuProf string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	args := []string{"-serve"}
	if !h2 {
		args = append(args, "-http1")
	}
	if cpuProf != "" {
		args = append(args, "-cpuprofile", cpuProf+".server")
	}
	srvCmd := exec.Command(self, args...)
	srvCmd.Stderr = os.Stderr
	stdin, err := srvCmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := srvCmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := srvCmd.Start(); err != nil {
		return err
	}
	defer func() { stdin.Close(); _ = srvCmd.Wait() }()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		return fmt.Errorf("fake server: %w", err)
	}
	url := strings.TrimSpace(line)

	dir, err := os.MkdirTemp("", "gantry-scale-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	for i := range reads {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d.txt", i)), []byte(strings.Repeat("a line of text\n", 40)), 0o644); err != nil {
			return err
		}
	}

	// One provider (one HTTP client) and one registry for every session.
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 256
	if h2 {
		var p http.Protocols
		p.SetUnencryptedHTTP2(true)
		tr.Protocols = &p
	}
	provider := anthropic.New(anthropic.Options{BaseURL: url, APIKey: "k", HTTPClient: &http.Client{Transport: tr}})
	if readme {
		provider = anthropic.New(anthropic.Options{BaseURL: url, APIKey: "k"})
	}
	reg, err := builtin.Registry(builtin.Options{})
	if err != nil {
		return err
	}
	// One permission engine too: reads inside the directory run, and one
	// rule lets the echo commands run.
	engine, err := permission.NewEngine(permission.Options{WorkDir: dir, Rules: []permission.RuleSet{{Source: "cli", Allow: []string{"Bash(echo:*)"}}}})
	if err != nil {
		return err
	}

	var (
		inflight, peakG, peakIn atomic.Int64
		done, failed            atomic.Int64
		firstErr                sync.Once
		snap                    map[string]any
		errText                 string
	)
	stop := make(chan struct{})
	sampled := make(chan struct{})
	samples := []metrics.Sample{
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/heap/stacks:bytes"},
		{Name: "/gc/heap/goal:bytes"},
		{Name: "/memory/classes/total:bytes"},
	}
	peakMem := make([]int64, len(samples))
	// The split of the Go runtime's memory at its peak (mapped and not
	// released: what the memory limit counts, and most of the RSS).
	classes := memClasses()
	atPeak := make([]int64, len(classes))
	var peakHeld int64
	go func() { // sample goroutines and in-flight sessions
		defer close(sampled)
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				if g := int64(runtime.NumGoroutine()); g > peakG.Load() {
					peakG.Store(g)
				}
				metrics.Read(samples)
				for i, sm := range samples {
					if v := int64(sm.Value.Uint64()); v > peakMem[i] {
						peakMem[i] = v
					}
				}
				metrics.Read(classes)
				if held := memHeld(classes); held > peakHeld {
					peakHeld = held
					for i, c := range classes {
						atPeak[i] = int64(c.Value.Uint64())
					}
				}
				if i := inflight.Load(); i > peakIn.Load() {
					peakIn.Store(i)
				}
			}
		}
	}()

	ctx := context.Background()
	startGate := make(chan struct{})
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-startGate
			inflight.Add(1)
			defer inflight.Add(-1)
			err := session(ctx, provider, reg, engine, dir)
			if err != nil {
				failed.Add(1)
				firstErr.Do(func() { errText = err.Error() })
				return
			}
			if done.Add(1) == 1 {
				// The first session to end: every other one is in flight,
				// with (nearly) its whole conversation.
				snap = snapshot(inflight.Load())
				if heapProf != "" {
					writeProfiles(heapProf)
				}
			}
		}()
	}
	base := runtime.NumGoroutine()
	start := time.Now()
	close(startGate)
	wg.Wait()
	wall := time.Since(start)
	close(stop)
	<-sampled

	rss := peakRSS()
	out := map[string]any{
		"sessions": n, "completed": done.Load(), "failed": failed.Load(),
		"wall_s": wall.Seconds(), "peak_rss_mb": float64(rss) / (1 << 20),
		"rss_per_session_kb": float64(rss) / 1024 / float64(n),
		"peak_goroutines":    peakG.Load(), "goroutines_before": base, "peak_inflight": peakIn.Load(),
		"peak_heap_objects_mb": float64(peakMem[0]) / (1 << 20), "peak_stacks_mb": float64(peakMem[1]) / (1 << 20),
		"peak_heap_goal_mb": float64(peakMem[2]) / (1 << 20), "peak_go_total_mb": float64(peakMem[3]) / (1 << 20),
		"http": map[bool]string{true: "h2c", false: "http/1.1"}[h2],
	}
	if lim := debug.SetMemoryLimit(-1); lim != math.MaxInt64 {
		out["memory_limit_mb"] = float64(lim) / (1 << 20)
	}
	split := map[string]float64{}
	for i, c := range classes {
		split[strings.TrimSuffix(strings.TrimPrefix(c.Name, "/memory/classes/"), ":bytes")] = float64(atPeak[i]) / (1 << 20)
	}
	out["at_peak_held_mb"] = float64(peakHeld) / (1 << 20)
	out["at_peak_split_mb"] = split
	if errText != "" {
		out["first_error"] = errText
	}
	if snap != nil {
		out["at_first_completion"] = snap
	}
	b, _ := json.MarshalIndent(out, "", "  ")
	fmt.Println(string(b))
	if failed.Load() > 0 {
		return fmt.Errorf("%d of %d sessions failed", failed.Load(), n)
	}
	if budgetMB > 0 && rss > int64(budgetMB)<<20 {
		return fmt.Errorf("peak RSS %.1f MiB is over the budget of %d MiB", float64(rss)/(1<<20), budgetMB)
	}
	return nil
}

// session is one SDK session: agent.New over the shared provider and
// registry, one prompt, Close.
func session(ctx context.Context, p llm.Provider, reg *toolset.Registry, d permission.Decider, dir string) error {
	a, err := newAgent(ctx, p, reg, d, dir)
	if err != nil {
		return err
	}
	defer a.Close()
	res, err := a.Prompt(ctx, "read the files and check the shell")
	if err != nil {
		return err
	}
	if res.IsError || res.NumTurns != reads+bashs+1 {
		return errors.New("session ended with " + res.Subtype + ": " + res.Text)
	}
	return nil
}

// snapshot measures, after a collection, what the sessions in flight hold:
// the live heap and the goroutine stacks, in total and per session.
func snapshot(inflight int64) map[string]any {
	runtime.GC()
	s := []metrics.Sample{
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/heap/stacks:bytes"},
		{Name: "/gc/stack/starting-size:bytes"},
	}
	metrics.Read(s)
	heap, stacks := float64(s[0].Value.Uint64()), float64(s[1].Value.Uint64())
	g := runtime.NumGoroutine()
	anon, file := rssSplit()
	return map[string]any{
		"rss_anon_mb": float64(anon) / (1 << 20), "rss_file_mb": float64(file) / (1 << 20),
		"inflight": inflight, "goroutines": g,
		"live_heap_mb": heap / (1 << 20), "stacks_mb": stacks / (1 << 20),
		"live_heap_per_session_kb": heap / 1024 / float64(inflight),
		"stacks_per_session_kb":    stacks / 1024 / float64(inflight),
		"stack_per_goroutine_kb":   stacks / 1024 / float64(g),
		"starting_stack_kb":        float64(s[2].Value.Uint64()) / 1024,
	}
}

// writeProfiles writes a heap profile of what is live (after a collection)
// to path and a goroutine profile to path+".goroutines".
func writeProfiles(path string) {
	runtime.GC()
	if f, err := os.Create(path); err == nil {
		_ = pprof.WriteHeapProfile(f)
		f.Close()
	}
	if f, err := os.Create(path + ".goroutines"); err == nil {
		_ = pprof.Lookup("goroutine").WriteTo(f, 1)
		f.Close()
	}
}

// newAgent makes a session's agent. (A function of its own: the Options
// value is large, and the frame that builds it need not stay on the
// session's stack while it waits for the model.)
func newAgent(ctx context.Context, p llm.Provider, reg *toolset.Registry, d permission.Decider, dir string) (*agent.Agent, error) {
	ws, err := workspace.Open(ctx, workspace.Options{
		Dir: dir, NoSettings: true, Pool: &toolset.Options{Registry: reg}, Decider: d,
		NoAgentFiles: true, NoAgentTool: true,
	})
	if err != nil {
		return nil, err
	}
	ag, err := agent.New(ctx, agent.Options{
		Provider: p, Model: "claude-sonnet-4-5", Workspace: ws, Closers: []io.Closer{ws},
		NoEnvFacts: true, NoMemoryFiles: true,
	})
	if err != nil {
		ws.Close()
	}
	return ag, err
}

// peakRSS is this process's high-water resident set size in bytes.
func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
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

// memClasses returns a sample for every /memory/classes metric but the
// total.
func memClasses() []metrics.Sample {
	var s []metrics.Sample
	for _, d := range metrics.All() {
		if strings.HasPrefix(d.Name, "/memory/classes/") && d.Name != "/memory/classes/total:bytes" {
			s = append(s, metrics.Sample{Name: d.Name})
		}
	}
	return s
}

// memHeld is the memory the runtime holds from the OS: every class but
// the released heap.
func memHeld(classes []metrics.Sample) int64 {
	var n int64
	for _, c := range classes {
		if c.Name != "/memory/classes/heap/released:bytes" {
			n += int64(c.Value.Uint64())
		}
	}
	return n
}

// rssSplit returns this process's resident anonymous memory (heap, stacks,
// the runtime's own) and resident file-backed memory (the binary's pages)
// in bytes, from /proc/self/smaps_rollup.
func rssSplit() (anon, file int64) {
	b, err := os.ReadFile("/proc/self/smaps_rollup")
	if err != nil {
		return 0, 0
	}
	var rss int64
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "Rss:":
			rss = kb << 10
		case "Anonymous:":
			anon = kb << 10
		}
	}
	return anon, rss - anon
}
