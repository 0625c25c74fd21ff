package serve_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/gantry-dev/gantry/cron"
	"github.com/gantry-dev/gantry/interaction"
	"github.com/gantry-dev/gantry/internal/trigger"
	"github.com/gantry-dev/gantry/runqueue"
	"github.com/gantry-dev/gantry/serve"
	"github.com/gantry-dev/gantry/serveapi"
	"github.com/gantry-dev/gantry/store"
)

const (
	childEnv     = "GANTRY_SERVE_TEST_CHILD"
	childMaxEnv  = "GANTRY_SERVE_TEST_MAX"  // the child's MaxRunning
	childAddrEnv = "GANTRY_SERVE_TEST_ADDR" // a file where the child writes its API address
)

func TestMain(m *testing.M) {
	if db := os.Getenv(childEnv); db != "" {
		os.Exit(child(db))
	}
	goleak.VerifyTestMain(m)
}

type line struct {
	Type string `json:"type"`
	Text string `json:"text,omitempty"`
}

// script runs the prompt's words: "ask" asks a permission, "block" waits
// for the run's end, any other word is an assistant line.
var script = runqueue.RunnerFunc(func(ctx context.Context, req runqueue.Request, x runqueue.Exec) (*runqueue.Result, error) {
	x.Started("sess-" + x.RunID)
	x.Emit(line{Type: "system", Text: "init"})
	for _, w := range strings.Fields(req.Prompt) {
		switch w {
		case "ask":
			a, err := interaction.AskPermission(ctx, x.Channel, &interaction.PermissionRequest{ToolName: "Bash", Input: json.RawMessage(`{"command":"make"}`)})
			if err != nil {
				return nil, err
			}
			x.Emit(line{Type: "assistant", Text: string(a.Choice)})
		case "block":
			<-ctx.Done()
			return nil, ctx.Err()
		case "nap":
			time.Sleep(100 * time.Millisecond)
		default:
			x.Emit(line{Type: "assistant", Text: w})
		}
	}
	x.Emit(line{Type: "result", Text: "ok"})
	return &runqueue.Result{Subtype: "success", Text: "ok"}, nil
})

type fixture struct {
	srv    *serve.Server
	client *serveapi.Client
	store  *store.SQLite
	dir    string
}

func openStore(t testing.TB, path string) *store.SQLite {
	t.Helper()
	st, err := store.OpenSQLite(context.Background(), path, store.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func start(t testing.TB, o serve.Options) *fixture {
	t.Helper()
	if o.Store == nil {
		o.Store = openStore(t, filepath.Join(t.TempDir(), "g.db"))
	}
	if o.Runner == nil {
		o.Runner = script
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	o.Listener, o.Token = ln, "s3cret"
	if o.Tick == 0 {
		o.Tick = time.Hour // tests tick the scheduler themselves
	}
	srv, err := serve.New(o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	c := &serveapi.Client{URL: "http://" + ln.Addr().String(), Token: "s3cret"}
	// Wait for the API.
	for i := 0; ; i++ {
		resp, err := http.Get(c.URL + "/v1/health")
		if err == nil {
			resp.Body.Close()
			break
		}
		if i > 200 {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return &fixture{srv: srv, client: c, store: o.Store.(*store.SQLite), dir: t.TempDir()}
}

func TestAPIRunAskAndEvents(t *testing.T) {
	f := start(t, serve.Options{})
	ctx := context.Background()
	run, err := f.client.Start(ctx, runqueue.Request{Prompt: "hello ask bye", Dir: f.dir})
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for ev, err := range f.client.Events(ctx, run.ID, 0) {
		if err != nil {
			t.Fatal(err)
		}
		types = append(types, ev.Type)
		if ev.Type != "control_request" {
			continue
		}
		var cr runqueue.ControlRequest
		if err := json.Unmarshal(ev.Data, &cr); err != nil || cr.Request.ToolName != "Bash" {
			t.Fatalf("control request %s", ev.Data)
		}
		got, _ := f.client.Get(ctx, run.ID)
		if len(got.Asks) != 1 || got.Asks[0].Kind != interaction.KindPermission {
			t.Fatalf("pending asks %+v", got.Asks)
		}
		// A wrong answer is refused, the right one delivered.
		if err := f.client.Answer(ctx, run.ID, cr.RequestID, &interaction.TrustAnswer{Trust: true}); !errors.Is(err, runqueue.ErrInvalid) {
			t.Fatalf("wrong kind: %v", err)
		}
		if err := f.client.Answer(ctx, run.ID, cr.RequestID, &interaction.PermissionAnswer{Choice: interaction.AllowSession}); err != nil {
			t.Fatal(err)
		}
	}
	if want := "system assistant control_request system assistant assistant result"; strings.Join(types, " ") != want {
		t.Fatalf("events %v, want %s", types, want)
	}
	got, err := f.client.Get(ctx, run.ID)
	if err != nil || got.Status != runqueue.StatusSucceeded || got.SessionID != "sess-"+run.ID || got.Events != 7 {
		t.Fatalf("run %+v %v", got, err)
	}
	// The run is recorded durably, with its events.
	rec, err := f.store.GetRun(ctx, run.ID)
	if err != nil || rec.Status != "succeeded" {
		t.Fatalf("stored %+v %v", rec, err)
	}
	page, err := f.client.EventPage(ctx, run.ID, 4, 2)
	if err != nil || len(page.Events) != 2 || page.Events[0].Seq != 5 || page.Next != 6 || page.Ended {
		t.Fatalf("page %+v %v", page, err)
	}
	page, _ = f.client.EventPage(ctx, run.ID, 6, 100)
	if len(page.Events) != 1 || !page.Ended {
		t.Fatalf("last page %+v", page)
	}
	runs, err := f.client.List(ctx, runqueue.Filter{Origin: runqueue.OriginAPI})
	if err != nil || len(runs) != 1 {
		t.Fatalf("list %v %v", runs, err)
	}
	// Resuming the stream after the 5th event gives the last two.
	var tail []int64
	for ev, err := range f.client.Events(ctx, run.ID, 5) {
		if err != nil {
			t.Fatal(err)
		}
		tail = append(tail, ev.Seq)
	}
	if fmt.Sprint(tail) != "[6 7]" {
		t.Fatalf("resumed %v", tail)
	}
}

func TestAPICancelAndErrors(t *testing.T) {
	f := start(t, serve.Options{})
	ctx := context.Background()
	run, err := f.client.Start(ctx, runqueue.Request{Prompt: "working block", Dir: f.dir, Key: "once"})
	if err != nil {
		t.Fatal(err)
	}
	if dup, err := f.client.Start(ctx, runqueue.Request{Prompt: "x", Dir: f.dir, Key: "once"}); !errors.Is(err, runqueue.ErrDuplicate) || dup.ID != run.ID {
		t.Fatalf("duplicate: %v %v", dup.ID, err)
	}
	n := 0
	for ev, err := range f.client.Events(ctx, run.ID, 0) {
		if err != nil {
			t.Fatal(err)
		}
		if n++; ev.Type == "assistant" {
			if err := f.client.Cancel(ctx, run.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	got, _ := f.client.Get(ctx, run.ID)
	if got.Status != runqueue.StatusCancelled {
		t.Fatalf("status %s", got.Status)
	}
	if err := f.client.Cancel(ctx, run.ID); !errors.Is(err, runqueue.ErrEnded) {
		t.Fatalf("cancel ended run: %v", err)
	}
	for _, bad := range []runqueue.Request{{Prompt: "", Dir: f.dir}, {Prompt: "x", Dir: "relative"}, {Prompt: "x", Dir: filepath.Join(f.dir, "missing")}} {
		if _, err := f.client.Start(ctx, bad); !errors.Is(err, runqueue.ErrInvalid) {
			t.Errorf("start %+v: %v", bad, err)
		}
	}
	if _, err := f.client.Get(ctx, "nope"); !errors.Is(err, runqueue.ErrNotFound) {
		t.Fatal(err)
	}
	// Without the token: 401; the OpenAPI document and health are open.
	resp, err := http.Get(f.client.URL + "/v1/runs")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("no token: %s", resp.Status)
	}
	bad := &serveapi.Client{URL: f.client.URL, Token: "wrong"}
	if _, err := bad.List(ctx, runqueue.Filter{}); err == nil {
		t.Fatal("a wrong token was accepted")
	}
	resp, err = http.Get(f.client.URL + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		OpenAPI string                    `json:"openapi"`
		Paths   map[string]map[string]any `json:"paths"`
	}
	json.NewDecoder(resp.Body).Decode(&doc)
	resp.Body.Close()
	for _, p := range []string{"/v1/runs", "/v1/runs/{id}/events", "/v1/runs/{id}/asks/{ask}", "/v1/runs/{id}/cancel", "/v1/triggers/{id}/run"} {
		if doc.Paths[p] == nil {
			t.Errorf("openapi: no %s", p)
		}
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.") {
		t.Errorf("openapi version %q", doc.OpenAPI)
	}
}

// TestOpenAPICoversRoutes: every route of the handler is described.
func TestOpenAPICoversRoutes(t *testing.T) {
	f := start(t, serve.Options{})
	resp, err := http.Get(f.client.URL + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc struct {
		Paths map[string]map[string]any `json:"paths"`
	}
	json.NewDecoder(resp.Body).Decode(&doc)
	routes := map[string][]string{
		"/v1/runs": {"get", "post"}, "/v1/runs/{id}": {"get"}, "/v1/runs/{id}/events": {"get"},
		"/v1/runs/{id}/asks/{ask}": {"post"}, "/v1/runs/{id}/cancel": {"post"},
		"/v1/jobs": {"get", "post"}, "/v1/jobs/{id}": {"get", "delete"},
		"/v1/jobs/{id}/pause": {"post"}, "/v1/jobs/{id}/resume": {"post"},
		"/v1/triggers": {"get", "post"}, "/v1/triggers/{id}": {"get", "patch", "delete"},
		"/v1/triggers/{id}/run": {"post"}, "/v1/triggers/{id}/pause": {"post"}, "/v1/triggers/{id}/resume": {"post"}, "/v1/triggers/{id}/runs": {"get"}, "/v1/health": {"get"},
	}
	for p, ms := range routes {
		for _, m := range ms {
			if doc.Paths[p][m] == nil {
				t.Errorf("openapi: no %s %s", m, p)
			}
		}
	}
}

func TestAPIJobsAndTriggers(t *testing.T) {
	f := start(t, serve.Options{})
	ctx := context.Background()
	var job store.CronJob
	if err := f.client.Do(ctx, http.MethodPost, "/v1/jobs", serveapi.JobRequest{Cron: "0 9 * * 1-5", Prompt: "standup notes", Dir: f.dir}, &job); err != nil {
		t.Fatal(err)
	}
	if !job.Recurring || job.NextAt.IsZero() {
		t.Fatalf("job %+v", job)
	}
	if err := f.client.Do(ctx, http.MethodPost, "/v1/jobs", serveapi.JobRequest{Cron: "0 9 * *", Prompt: "x", Dir: f.dir}, nil); !errors.Is(err, runqueue.ErrInvalid) {
		t.Fatalf("bad cron: %v", err)
	}
	var jl serveapi.JobList
	if err := f.client.Do(ctx, http.MethodGet, "/v1/jobs", nil, &jl); err != nil || len(jl.Jobs) != 1 {
		t.Fatalf("jobs %v %v", jl, err)
	}
	// Paused: listed as paused with no next fire; resumed: a next fire.
	if j, err := f.client.PauseJob(ctx, job.ID, true); err != nil || !j.Paused || !j.NextAt.IsZero() {
		t.Fatalf("pause %+v %v", j, err)
	}
	if err := f.client.Do(ctx, http.MethodGet, "/v1/jobs", nil, &jl); err != nil || len(jl.Jobs) != 1 || !jl.Jobs[0].Paused || !jl.Jobs[0].NextAt.IsZero() {
		t.Fatalf("jobs while paused %+v %v", jl, err)
	}
	if j, err := f.client.PauseJob(ctx, job.ID, false); err != nil || j.Paused || j.NextAt.IsZero() {
		t.Fatalf("resume %+v %v", j, err)
	}
	if _, err := f.client.PauseJob(ctx, "00000000", true); !errors.Is(err, runqueue.ErrNotFound) {
		t.Fatalf("pausing a missing job: %v", err)
	}
	if err := f.client.Do(ctx, http.MethodDelete, "/v1/jobs/"+job.ID, nil, nil); err != nil {
		t.Fatal(err)
	}

	var tr trigger.Trigger
	body := map[string]any{"name": "nightly", "prompt": "summarise", "dir": f.dir, "cron": "0 3 * * *", "disallowed_tools": []string{"Bash"}}
	if err := f.client.Do(ctx, http.MethodPost, "/v1/triggers", body, &tr); err != nil {
		t.Fatal(err)
	}
	if tr.JobID == "" || tr.Options.Deny[0] != "Bash" {
		t.Fatalf("trigger %+v", tr)
	}
	if j, err := f.client.PauseTrigger(ctx, "nightly", true); err != nil || !j.Paused || j.ID != tr.JobID {
		t.Fatalf("pause trigger %+v %v", j, err)
	}
	// A paused trigger still runs on request.
	var run runqueue.Run
	if err := f.client.Do(ctx, http.MethodPost, "/v1/triggers/nightly/run", nil, &run); err != nil {
		t.Fatal(err)
	}
	for range f.client.Events(ctx, run.ID, 0) {
	}
	var rl serveapi.RunList
	if err := f.client.Do(ctx, http.MethodGet, "/v1/triggers/"+tr.ID+"/runs", nil, &rl); err != nil || len(rl.Runs) != 1 ||
		rl.Runs[0].Request.Origin.Kind != runqueue.OriginTrigger || rl.Runs[0].Status != runqueue.StatusSucceeded {
		t.Fatalf("trigger runs %+v %v", rl, err)
	}
	if j, err := f.client.PauseTrigger(ctx, tr.ID, false); err != nil || j.Paused || j.NextAt.IsZero() {
		t.Fatalf("resume trigger %+v %v", j, err)
	}
	// Unscheduling removes the job.
	var patched trigger.Trigger
	if err := f.client.Do(ctx, http.MethodPatch, "/v1/triggers/"+tr.ID, map[string]any{"cron": ""}, &patched); err != nil || patched.JobID != "" || patched.Cron != "" {
		t.Fatalf("patch %+v %v", patched, err)
	}
	if err := f.client.Do(ctx, http.MethodGet, "/v1/jobs", nil, &jl); err != nil || len(jl.Jobs) != 0 {
		t.Fatalf("jobs after unscheduling %v", jl.Jobs)
	}
	if _, err := f.client.PauseTrigger(ctx, tr.ID, true); !errors.Is(err, runqueue.ErrInvalid) {
		t.Fatalf("pausing an unscheduled trigger: %v", err)
	}
	if err := f.client.Do(ctx, http.MethodPost, "/v1/triggers", map[string]any{"name": "x", "prompt": "p", "dir": f.dir, "bogus": 1}, nil); !errors.Is(err, runqueue.ErrInvalid) {
		t.Fatalf("unknown field: %v", err)
	}
}

// addrListener is a listener that only claims an address.
type addrListener struct {
	net.Listener
	addr net.Addr
}

func (l addrListener) Addr() net.Addr { return l.addr }

func TestTokenRequiredOffLoopback(t *testing.T) {
	st := openStore(t, filepath.Join(t.TempDir(), "g.db"))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for _, a := range []string{"192.0.2.10:7777", "0.0.0.0:7777", "[::]:7777"} {
		tcp, _ := net.ResolveTCPAddr("tcp", a)
		fake := addrListener{ln, tcp}
		if _, err := serve.New(serve.Options{Store: st, Runner: script, Listener: fake}); err == nil || !strings.Contains(err.Error(), "token is required") {
			t.Errorf("%s without a token: %v", a, err)
		}
		if _, err := serve.New(serve.Options{Store: st, Runner: script, Listener: fake, Token: "t", InsecureConsole: true}); err != nil {
			t.Errorf("%s with a token: %v", a, err)
		}
	}
	if _, err := serve.New(serve.Options{Store: st, Runner: script, Listener: ln}); err != nil {
		t.Errorf("loopback without a token: %v", err)
	}
}

// clock is an injected clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// child is a serve process for TestKillMidRun: it runs the durable jobs of
// db with a runner that blocks, until it is killed.
func child(db string) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	st, err := store.OpenSQLite(ctx, db, store.SQLiteOptions{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer st.Close()
	o := serve.Options{Store: st, Runner: script, Tick: 20 * time.Millisecond}
	o.MaxRunning, _ = strconv.Atoi(os.Getenv(childMaxEnv))
	if af := os.Getenv(childAddrEnv); af != "" {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		o.Listener, o.Token = ln, "s3cret"
		if err := os.WriteFile(af, []byte(ln.Addr().String()), 0o600); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	srv, err := serve.New(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := srv.Run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// TestKillMidRun: a serve process is killed (SIGKILL) in the middle of a
// cron job's run; the next serve reports the run lost (not run again) and
// runs the job's next fire.
func TestKillMidRun(t *testing.T) {
	db := filepath.Join(t.TempDir(), "g.db")
	st := openStore(t, db)
	ctx := context.Background()
	dir := t.TempDir()
	now := time.Now()
	j, err := cron.NewJob("", cron.Spec{Cron: "*/5 * * * *", Prompt: "working block", Dir: dir, Recurring: true}, now)
	if err != nil {
		t.Fatal(err)
	}
	j.NextAt = now.Add(-time.Second) // due now
	if _, err := st.CreateCronJob(ctx, j); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+db)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	// Wait until the child's run has started (its first event stored).
	var runID string
	deadline := time.Now().Add(20 * time.Second)
	for runID == "" {
		if time.Now().After(deadline) {
			t.Fatal("the child never started the run")
		}
		runs, _ := st.ListRuns(ctx, store.RunFilter{Status: []string{store.RunRunning}})
		if len(runs) == 1 {
			if evs, _ := st.RunEvents(ctx, runs[0].ID, 0, 0); len(evs) >= 2 {
				runID = runs[0].ID
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()

	// The restarted serve (here, in this process, on an injected clock)
	// reports the run lost at once: its process is gone.
	next, err := st.GetCronJob(ctx, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	clk := &clock{t: time.Now()}
	var started sync.Map
	runner := runqueue.RunnerFunc(func(ctx context.Context, req runqueue.Request, x runqueue.Exec) (*runqueue.Result, error) {
		started.Store(req.Key, true)
		x.Emit(line{Type: "result"})
		return &runqueue.Result{Subtype: "success"}, nil
	})
	srv, err := serve.New(serve.Options{Store: st, Runner: runner, Now: clk.Now, Tick: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	lost, err := srv.Reap(ctx)
	if err != nil || len(lost) != 1 || lost[0].ID != runID || lost[0].Status != runqueue.StatusLost {
		t.Fatalf("lost %+v %v", lost, err)
	}
	got, err := srv.Engine().Get(ctx, runID)
	if err != nil || got.Status != runqueue.StatusLost || !strings.Contains(got.Error, "lost") {
		t.Fatalf("run after restart %+v %v", got, err)
	}
	// Its recorded events stay readable: the record counts them.
	if stored, _ := st.RunEvents(ctx, runID, 0, 0); got.Events < 2 || got.Events != int64(len(stored)) {
		t.Fatalf("lost run counts %d events, the store holds %d", got.Events, len(stored))
	}
	// The next fire runs (cron fires go through the shared queue).
	clk.Set(next.NextAt)
	runs, err := srv.Scheduler().Tick(ctx)
	if err != nil || len(runs) != 1 || runs[0].Request.Key != runqueue.FireKey(j.ID, next.NextScheduled) {
		t.Fatalf("next fire %+v %v", runs, err)
	}
	if n, err := srv.ClaimOnce(ctx); n != 1 || err != nil {
		t.Fatalf("claimed %d %v", n, err)
	}
	ev := srv.Engine().Events(ctx, runs[0].ID, 0)
	for range ev {
	}
	if r, _ := srv.Engine().Get(ctx, runs[0].ID); r.Status != runqueue.StatusSucceeded {
		t.Fatalf("next fire's run %+v", r)
	}
	// The lost fire was not run again.
	if _, again := started.Load(runqueue.FireKey(j.ID, j.NextScheduled)); again {
		t.Fatal("the lost fire ran again")
	}
	runCtx, cancel := context.WithCancel(ctx)
	cancel()
	srv.Run(runCtx) // drains (nothing running) and returns
	_ = io.Discard
}

// TestTwoProcessesFireOnce: two serve processes on one database, twenty
// jobs due at once: every fire runs exactly once, split between them.
func TestTwoProcessesFireOnce(t *testing.T) {
	db := filepath.Join(t.TempDir(), "g.db")
	st := openStore(t, db)
	ctx := context.Background()
	dir := t.TempDir()
	now := time.Now()
	for range 20 {
		j, err := cron.NewJob("", cron.Spec{Cron: "0 0 1 1 *", Prompt: "quick", Dir: dir}, now)
		if err != nil {
			t.Fatal(err)
		}
		j.NextAt = now.Add(-time.Second)
		if _, err := st.CreateCronJob(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	var cmds []*exec.Cmd
	for range 2 {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"="+db)
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	defer func() {
		for _, c := range cmds {
			c.Process.Signal(syscall.SIGTERM)
			c.Wait()
		}
	}()
	deadline := time.Now().Add(30 * time.Second)
	var runs []store.RunRecord
	for {
		runs, _ = st.ListRuns(ctx, store.RunFilter{Status: []string{"succeeded"}})
		if len(runs) >= 20 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // room for a (wrong) second run
	all, _ := st.ListRuns(ctx, store.RunFilter{Limit: 1000})
	keys, owners := map[string]int{}, map[string]int{}
	for _, r := range all {
		keys[r.Key]++
		owners[r.Owner]++
	}
	if len(all) != 20 || len(keys) != 20 {
		t.Fatalf("%d runs for %d fires", len(all), len(keys))
	}
	t.Logf("runs per process: %v", owners)
}

// liveEngine is a local engine that also publishes live events (the
// optional runqueue.Live), from a channel the test feeds.
type liveEngine struct {
	*runqueue.Local
	live chan runqueue.Event
}

func (e liveEngine) Live(ctx context.Context, _ string) iter.Seq[runqueue.Event] {
	return func(yield func(runqueue.Event) bool) {
		for {
			select {
			case <-ctx.Done():
				return
			case ev := <-e.live:
				if !yield(ev) {
					return
				}
			}
		}
	}
}

// TestSSELiveEvents: an engine's live events are written into a run's SSE
// stream as they come, between the recorded events and without an id (a
// client that reconnects resumes after the last recorded event); the
// recorded events keep their numbers, and a page of events has none.
func TestSSELiveEvents(t *testing.T) {
	local, err := runqueue.NewLocal(runqueue.LocalOptions{Runner: script, Owner: "test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { local.Shutdown(context.Background()) })
	eng := liveEngine{Local: local, live: make(chan runqueue.Event)}
	f := start(t, serve.Options{Engine: eng})
	ctx := context.Background()
	run, err := f.client.Start(ctx, runqueue.Request{Prompt: "hello block", Dir: f.dir})
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, f.client.URL+"/v1/runs/"+run.ID+"/events", nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer s3cret")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	frame := func() string {
		t.Helper()
		var b strings.Builder
		for {
			l, err := br.ReadString('\n')
			if err != nil {
				t.Fatalf("read: %v (so far %q)", err, b.String())
			}
			if l == "\n" {
				if b.Len() == 0 || strings.HasPrefix(b.String(), ":") {
					b.Reset()
					continue // keep-alive
				}
				return b.String()
			}
			b.WriteString(l)
		}
	}
	if got := frame(); !strings.HasPrefix(got, "id: 1\nevent: system\n") {
		t.Fatalf("first frame %q", got)
	}
	if got := frame(); !strings.HasPrefix(got, "id: 2\nevent: assistant\n") {
		t.Fatalf("second frame %q", got)
	}
	eng.live <- runqueue.Event{Type: "stream_event", Data: json.RawMessage(`{"type":"stream_event","event":{"type":"content_block_delta"}}`)}
	if got := frame(); got != "event: stream_event\ndata: {\"type\":\"stream_event\",\"event\":{\"type\":\"content_block_delta\"}}\n" {
		t.Fatalf("live frame %q", got)
	}
	if err := f.client.Cancel(ctx, run.ID); err != nil {
		t.Fatal(err)
	}
	for {
		if got := frame(); strings.HasPrefix(got, "event: end") {
			break
		}
	}
	page, err := f.client.EventPage(ctx, run.ID, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	for i, ev := range page.Events {
		if ev.Seq != int64(i+1) || ev.Type == "stream_event" {
			t.Errorf("page event %d: %+v", i, ev)
		}
	}
}
