package itest

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/server/temporaltest"

	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/llm/anthropic"
	"github.com/gantry-dev/gantry/llm/llmtest"
	"github.com/gantry-dev/gantry/temporal/claimcheck"
	"github.com/gantry-dev/gantry/temporal/durable"
	"github.com/gantry-dev/gantry/temporal/internal/fakemodel"
)

// The tests run against a real Temporal server (temporaltest, in this
// process), with the fake model server as the model.

// fastRun makes a dead worker noticed within seconds (the SDK heartbeats
// at 80% of the timeout; less than a few seconds flakes on a loaded
// machine, and a late heartbeat counts as a dead worker).
var fastRun = durable.RunOptions{Timeouts: durable.Timeouts{Heartbeat: 5 * time.Second}}

type cluster struct {
	t     testing.TB
	ts    *temporaltest.TestServer
	c     client.Client
	blobs *claimcheck.Dir         // the claim-check store of every client and worker
	dc    converter.DataConverter // with its codec
	prov  llm.Provider
	model *llmtest.Server
	url   string
	queue string
	run   durable.RunOptions // of the runs started with start
}

func newCluster(t testing.TB) *cluster { return newClusterWith(t, claimcheck.Options{}) }

// newClusterWith starts a cluster whose clients and workers share a
// claim-check store with the options given.
func newClusterWith(t testing.TB, blobs claimcheck.Options) *cluster {
	if testing.Short() {
		t.Skip("starts a Temporal server")
	}
	srv, p := fakeModel(t)
	d, err := claimcheck.OpenDir(filepath.Join(t.TempDir(), "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	dc := claimcheck.DataConverter(d, blobs)
	ts := temporaltest.NewServer(temporaltest.WithBaseClientOptions(client.Options{Logger: log.NewStructuredLogger(slog.New(slog.DiscardHandler)), DataConverter: dc}))
	t.Cleanup(ts.Stop)
	return &cluster{t: t, ts: ts, c: ts.GetDefaultClient(), blobs: d, dc: dc, prov: p, model: srv, url: srv.URL(), queue: "gantry-" + strings.ReplaceAll(t.Name(), "/", "-")}
}

// worker starts an in-process worker on the cluster's queue.
func (c *cluster) worker() worker.Worker {
	a := testActivities(c.t, c.prov)
	return c.ts.NewWorkerWithOptions(c.queue, func(r worker.Registry) { durable.Register(r, a) },
		worker.Options{StickyScheduleToStartTimeout: time.Second})
}

func (c *cluster) start(spec durable.Spec, prompt string) string {
	c.t.Helper()
	id, err := durable.Start(context.Background(), c.c, spec, prompt, durable.StartOptions{TaskQueue: c.queue, Run: c.run})
	if err != nil {
		c.t.Fatal(err)
	}
	return id
}

func (c *cluster) wait(id string, within time.Duration) *durable.Result {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	res, err := durable.Wait(ctx, c.c, id)
	if err != nil {
		page, _ := durable.Events(context.Background(), c.c, id, 0)
		c.t.Fatalf("%v; events: %+v", err, page)
	}
	return res
}

func lines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(b))
}

func TestTenToolCalls(t *testing.T) {
	for _, workers := range []int{1, 2} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) {
			c := newCluster(t)
			for range workers {
				c.worker()
			}
			dir := t.TempDir()
			id := c.start(testSpec(dir, "Bash", "Edit"), "calls=10 cmd=echo {i} >> count.txt")
			res := c.wait(id, time.Minute)
			if res.Subtype != "success" || res.Text != "done after 10" || res.NumTurns != 11 {
				t.Fatalf("result = %+v", res)
			}
			got := lines(t, filepath.Join(dir, "count.txt"))
			if strings.Join(got, ",") != "1,2,3,4,5,6,7,8,9,10" {
				t.Errorf("count.txt = %v: every call must run exactly once, in order", got)
			}
			// The events tell the same story.
			page, err := durable.Events(context.Background(), c.c, id, 0)
			if err != nil {
				t.Fatal(err)
			}
			tools := 0
			for _, e := range page.Events {
				if e.Type == durable.EventToolResult {
					tools++
				}
			}
			if !page.Done || tools != 10 || page.Events[len(page.Events)-1].Type != durable.EventResult {
				t.Errorf("events: done=%v tool results=%d", page.Done, tools)
			}
		})
	}
}

func TestHundredRunsTwoWorkers(t *testing.T) {
	c := newCluster(t)
	c.worker()
	c.worker()
	ids := make([]string, 100)
	dirs := make([]string, 100)
	for i := range ids {
		dirs[i] = t.TempDir()
		ids[i] = c.start(testSpec(dirs[i], "Bash", "Edit"), "calls=2 cmd=echo {i} >> n.txt")
	}
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			res, err := durable.Wait(ctx, c.c, id)
			if err != nil || res.Subtype != "success" {
				t.Errorf("run %d: %+v %v", i, res, err)
			}
		})
	}
	wg.Wait()
	for i, d := range dirs {
		if got := strings.Join(lines(t, filepath.Join(d, "n.txt")), ","); got != "1,2" {
			t.Errorf("run %d: n.txt = %s", i, got)
		}
	}
}

// TestAskAfterWorkerRestart: the run waits on a permission ask; the worker
// stops; the answer goes in through the API; a new worker finishes the run.
func TestAskAfterWorkerRestart(t *testing.T) {
	c := newCluster(t)
	w := c.worker()
	dir := t.TempDir()
	id := c.start(testSpec(dir), "calls=1 cmd=echo approved >> side.txt")
	ask := waitAsk(t, c, id)
	w.Stop()
	// The answer is sent while no worker runs; it is taken when one is back.
	done := make(chan error, 1)
	go func() {
		done <- durable.Answer(context.Background(), c.c, id, ask.ID, []byte(`{"choice":"allow_once"}`))
	}()
	time.Sleep(500 * time.Millisecond)
	c.worker()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := durable.Answer(context.Background(), c.c, id, ask.ID, []byte(`{"choice":"allow_once"}`)); err == nil {
		t.Error("a second answer to the same ask was accepted")
	}
	res := c.wait(id, time.Minute)
	if res.Subtype != "success" {
		t.Fatalf("result = %+v", res)
	}
	if got := lines(t, filepath.Join(dir, "side.txt")); strings.Join(got, ",") != "approved" {
		t.Errorf("side.txt = %v", got)
	}
}

func waitAsk(t testing.TB, c *cluster, id string) durable.Ask {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		page, err := durable.Events(context.Background(), c.c, id, 0)
		if err == nil {
			for _, a := range page.Pending {
				if a.Answer == nil {
					return a
				}
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	page, err := durable.Events(context.Background(), c.c, id, 0)
	t.Fatalf("no ask; events %+v (%v)", page, err)
	return durable.Ask{}
}

// The subprocess worker of TestKillWorkerMidCall: the test binary run
// again with GANTRY_TEST_WORKER set.
func TestMain(m *testing.M) {
	if os.Getenv("GANTRY_TEST_WORKER") != "" {
		os.Exit(subprocessWorker())
	}
	os.Exit(m.Run())
}

func subprocessWorker() int {
	blobs, err := claimcheck.OpenDir(os.Getenv("GANTRY_TEST_BLOBS"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	c, err := client.Dial(client.Options{HostPort: os.Getenv("GANTRY_TEST_ADDR"), Namespace: os.Getenv("GANTRY_TEST_NS"),
		DataConverter: claimcheck.DataConverter(blobs, claimcheck.Options{})})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer c.Close()
	p := anthropic.New(anthropic.Options{BaseURL: os.Getenv("GANTRY_TEST_MODEL"), APIKey: "test"})
	a, err := durable.NewActivities(durable.WorkerOptions{Provider: p})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	w := worker.New(c, os.Getenv("GANTRY_TEST_QUEUE"), worker.Options{StickyScheduleToStartTimeout: time.Second})
	durable.Register(w, a)
	if err := w.Run(worker.InterruptCh()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// TestKillWorkerMidCall: kill -9 of the worker in the middle of a slow
// Bash call. A second worker finishes the run; every completed call ran
// exactly once, the interrupted one is reported to the model and not run
// again.
func TestKillWorkerMidCall(t *testing.T) {
	c := newCluster(t)
	dir := t.TempDir()
	c.run = fastRun
	pid := c.subprocessWorker(t)
	// Calls 1, 2 and 4 are quick; call 3 marks its start, then sleeps.
	script := `if [ {i} = 3 ]; then echo start >> slow.txt; sleep 30; echo end >> slow.txt; fi; echo {i} >> count.txt`
	id := c.start(testSpec(dir, "Bash", "Edit"), "calls=4 cmd="+script)
	deadline := time.Now().Add(time.Minute)
	for {
		if b, _ := os.ReadFile(filepath.Join(dir, "slow.txt")); strings.Contains(string(b), "start") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the slow call never started")
		}
		time.Sleep(50 * time.Millisecond)
	}
	syscall.Kill(-pid, syscall.SIGKILL) // the worker and the command it runs
	c.worker()
	res := c.wait(id, 2*time.Minute)
	if res.Subtype != "success" || res.Text != "done after 4" {
		t.Fatalf("result = %+v", res)
	}
	if got := strings.Join(lines(t, filepath.Join(dir, "count.txt")), ","); got != "1,2,4" {
		t.Errorf("count.txt = %s, want 1,2,4 (each completed call once, the interrupted one not again)", got)
	}
	if got := strings.Join(lines(t, filepath.Join(dir, "slow.txt")), ","); got != "start" {
		t.Errorf("slow.txt = %s: the interrupted call ran again", got)
	}
	page, err := durable.Events(context.Background(), c.c, id, 0)
	if err != nil {
		t.Fatal(err)
	}
	var interrupted []durable.ToolOutcome
	for _, e := range page.Events {
		if e.Type == durable.EventToolResult && e.Tool.Recovered != "" {
			interrupted = append(interrupted, *e.Tool)
		}
		if e.Type == durable.EventMessage && e.Message.Role == llm.RoleUser {
			for _, b := range e.Message.Content {
				if b.ToolUseID == "toolu_3" && (!b.IsError || !strings.Contains(b.Content[0].Text, "interrupted")) {
					t.Errorf("the model was told %+v", b)
				}
			}
		}
	}
	if len(interrupted) != 1 || interrupted[0].ID != "toolu_3" || interrupted[0].Recovered != durable.RecoveredInterrupted {
		t.Errorf("recovered calls = %+v", interrupted)
	}
}

// fakeModel starts the scripted model and returns a provider for it.
func fakeModel(t testing.TB) (*llmtest.Server, llm.Provider) { return fakemodel.Start(t) }

// testSpec is a spec for dir with the rules given and nothing read from
// the machine's settings.
func testSpec(dir string, allow ...string) durable.Spec {
	return durable.Spec{WorkDir: dir, Allow: allow, NoSettings: true, NoEnvFacts: true, NoMemoryFiles: true, NoTranscript: true, Model: "claude-test"}
}

func testActivities(t testing.TB, p llm.Provider) *durable.Activities {
	home := t.TempDir()
	a, err := durable.NewActivities(durable.WorkerOptions{Provider: p, Getenv: fakemodel.Getenv(home), UserHome: home, SessionHome: home})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}
