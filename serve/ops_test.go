package serve_test

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/cron"
	"github.com/gantry-dev/gantry/interaction"
	"github.com/gantry-dev/gantry/runqueue"
	"github.com/gantry-dev/gantry/serve"
	"github.com/gantry-dev/gantry/serveapi"
	"github.com/gantry-dev/gantry/store"
)

// spawn starts a serve process (this test binary as a child) on db with
// maxRunning slots and an API on loopback; it returns the process and a
// client of its API.
func spawn(t *testing.T, db string, maxRunning int) (*exec.Cmd, *serveapi.Client) {
	t.Helper()
	af := filepath.Join(t.TempDir(), "addr")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+db, fmt.Sprintf("%s=%d", childMaxEnv, maxRunning), childAddrEnv+"="+af)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	deadline := time.Now().Add(15 * time.Second)
	for {
		b, err := os.ReadFile(af)
		if err == nil && len(b) > 0 {
			return cmd, &serveapi.Client{URL: "http://" + string(b), Token: "s3cret"}
		}
		if time.Now().After(deadline) {
			t.Fatal("the serve process never listened")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitFor polls cond until it holds or 20 s pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestWaitingReleasesSlot: with one slot, a run waiting for an answer is
// "waiting" and another run starts and ends meanwhile; once answered, the
// waiting run takes a slot again and ends.
func TestWaitingReleasesSlot(t *testing.T) {
	f := start(t, serve.Options{MaxRunning: 1})
	ctx := context.Background()
	asking, err := f.client.Start(ctx, runqueue.Request{Prompt: "ask", Dir: f.dir})
	if err != nil {
		t.Fatal(err)
	}
	var r runqueue.Run
	waitFor(t, "the run to wait", func() bool {
		r, _ = f.client.Get(ctx, asking.ID)
		return r.Status == runqueue.StatusWaiting && len(r.Asks) == 1
	})
	if rec, _ := f.store.GetRun(ctx, asking.ID); rec.Status != store.RunWaiting {
		t.Fatalf("stored status %q", rec.Status)
	}
	other, err := f.client.Start(ctx, runqueue.Request{Prompt: "hello", Dir: f.dir})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the other run to end", func() bool {
		o, _ := f.client.Get(ctx, other.ID)
		return o.Status == runqueue.StatusSucceeded
	})
	if err := f.client.Answer(ctx, asking.ID, r.Asks[0].ID, &interaction.PermissionAnswer{Choice: interaction.AllowOnce}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the answered run to end", func() bool {
		r, _ = f.client.Get(ctx, asking.ID)
		return r.Status == runqueue.StatusSucceeded
	})
}

// TestOverlapPolicies: skip starts no run while one is live; queue keeps
// one fire queued (serial) until the earlier run ends, and skips beyond
// its cap.
func TestOverlapPolicies(t *testing.T) {
	for _, tc := range []struct {
		overlap string
		// runs created by three fires while the first blocks
		want int
	}{
		{"", 1},
		{cron.OverlapQueue, 2},
		{cron.OverlapAllow, 3},
	} {
		t.Run("overlap="+tc.overlap, func(t *testing.T) {
			clk := &clock{t: time.Now()}
			f := start(t, serve.Options{Now: clk.Now, MaxRunning: 4})
			ctx := context.Background()
			j, err := cron.NewJob("", cron.Spec{Cron: "* * * * *", Prompt: "block", Dir: f.dir, Recurring: true,
				Overlap: tc.overlap, MaxQueued: 1}, clk.Now())
			if err != nil {
				t.Fatal(err)
			}
			if j, err = f.store.CreateCronJob(ctx, j); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 3; i++ {
				cur, err := f.store.GetCronJob(ctx, j.ID)
				if err != nil {
					t.Fatal(err)
				}
				clk.Set(cur.NextAt)
				if _, err := f.srv.Scheduler().Tick(ctx); err != nil {
					t.Fatal(err)
				}
				// Let the claim loop take what it may.
				waitFor(t, "no run of the shared queue claimable", func() bool {
					n, err := f.srv.ClaimOnce(ctx)
					return err == nil && n == 0
				})
			}
			runs, err := f.store.ListRuns(ctx, store.RunFilter{JobID: j.ID})
			if err != nil || len(runs) != tc.want {
				t.Fatalf("%d runs, want %d (%v)", len(runs), tc.want, err)
			}
			running := 0
			for _, r := range runs {
				if r.Status == store.RunRunning {
					running++
				}
			}
			if tc.overlap == cron.OverlapQueue && running != 1 {
				t.Fatalf("queue policy: %d runs running at once", running)
			}
			for _, r := range runs {
				f.client.Cancel(ctx, r.ID)
			}
			if tc.overlap == cron.OverlapQueue {
				// The queued fire ran after the first ended (and was
				// cancelled in turn, or cancelled while queued).
				waitFor(t, "every run to end", func() bool {
					rs, _ := f.store.ListRuns(ctx, store.RunFilter{JobID: j.ID, Status: []string{store.RunQueued, store.RunRunning}})
					if len(rs) > 0 {
						for _, r := range rs {
							f.client.Cancel(ctx, r.ID)
						}
					}
					return len(rs) == 0
				})
			}
		})
	}
}

// queueRuns records n runs in the shared queue, as a serve process whose
// slots are full does.
func queueRuns(t *testing.T, st *store.SQLite, dir, prompt string, n int) []string {
	t.Helper()
	var ids []string
	for i := 0; i < n; i++ {
		r := runqueue.Run{ID: fmt.Sprintf("run-q-%d", i), Request: runqueue.Request{Prompt: prompt, Dir: dir,
			Origin: runqueue.Origin{Kind: runqueue.OriginAPI}}, Status: runqueue.StatusQueued, CreatedAt: time.Now()}
		data, _ := json.Marshal(r)
		if _, err := st.CreateRun(context.Background(), store.RunRecord{ID: r.ID, Status: store.RunQueued, Origin: runqueue.OriginAPI,
			Data: data, CreatedAt: r.CreatedAt}); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID)
	}
	return ids
}

// TestFairClaiming: three serve processes on one database, two slots each,
// share 30 queued runs: each runs a fair part.
func TestFairClaiming(t *testing.T) {
	db := filepath.Join(t.TempDir(), "g.db")
	st := openStore(t, db)
	dir := t.TempDir()
	for i := 0; i < 3; i++ {
		spawn(t, db, 2)
	}
	ids := queueRuns(t, st, dir, "nap nap nap", 30)
	ctx := context.Background()
	waitFor(t, "every run to succeed", func() bool {
		rs, _ := st.ListRuns(ctx, store.RunFilter{Status: []string{"succeeded"}, Limit: 100})
		return len(rs) == len(ids)
	})
	per := map[string]int{}
	rs, _ := st.ListRuns(ctx, store.RunFilter{Limit: 100})
	for _, r := range rs {
		per[r.Owner]++
	}
	t.Logf("runs per process: %v", per)
	if len(per) != 3 {
		t.Fatalf("runs per process %v: want three processes", per)
	}
	for o, n := range per {
		if n < 5 { // a fair share is 10
			t.Fatalf("process %s ran %d of 30 runs (%v)", o, n, per)
		}
	}
}

// TestKillMidRunAndQueue: a serve process with one slot is killed (-9)
// with a run running and one in the shared queue; a second process
// reports the first lost with its recorded events readable everywhere
// (record, JSON page, SSE end) and runs the queued one. A queued run owned
// by a dead process that never started it is queued again and run.
func TestKillMidRunAndQueue(t *testing.T) {
	db := filepath.Join(t.TempDir(), "g.db")
	st := openStore(t, db)
	dir := t.TempDir()
	ctx := context.Background()
	a, ca := spawn(t, db, 1)
	running, err := ca.Start(ctx, runqueue.Request{Prompt: "one two block", Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the run's events", func() bool {
		evs, _ := st.RunEvents(ctx, running.ID, 0, 0)
		return len(evs) >= 3
	})
	queued, err := ca.Start(ctx, runqueue.Request{Prompt: "after", Dir: dir})
	if err != nil || queued.Status != runqueue.StatusQueued {
		t.Fatalf("second run %+v %v", queued, err)
	}
	// A run a dead process recorded but never started.
	orphan := queueRuns(t, st, dir, "orphan", 1)[0]
	rec, _ := st.GetRun(ctx, orphan)
	rec.Owner, rec.LeaseUntil = "localhost-nowhere/1/1", time.Now().Add(-time.Second)
	if err := st.UpdateRun(ctx, rec); err != nil {
		t.Fatal(err)
	}
	a.Process.Signal(syscall.SIGKILL)
	a.Wait()
	stored, _ := st.RunEvents(ctx, running.ID, 0, 0)

	_, cb := spawn(t, db, 2)
	var lost runqueue.Run
	waitFor(t, "the run to be lost", func() bool {
		lost, _ = cb.Get(ctx, running.ID)
		return lost.Status == runqueue.StatusLost
	})
	if lost.Events != int64(len(stored)) || len(stored) < 3 {
		t.Fatalf("lost run counts %d events, the store holds %d", lost.Events, len(stored))
	}
	page, err := cb.EventPage(ctx, running.ID, 0, 100)
	if err != nil || len(page.Events) != len(stored) || !page.Ended {
		t.Fatalf("page %+v %v", page, err)
	}
	n := 0
	for _, err := range cb.Events(ctx, running.ID, 0) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != len(stored) {
		t.Fatalf("SSE gave %d events of %d", n, len(stored))
	}
	for _, id := range []string{queued.ID, orphan} {
		waitFor(t, "run "+id+" to succeed", func() bool {
			r, _ := cb.Get(ctx, id)
			return r.Status == runqueue.StatusSucceeded
		})
	}
	if r, _ := cb.Get(ctx, orphan); strings.Contains(r.Error, "lost") {
		t.Fatalf("orphan %+v", r)
	}
}

// TestHTTPLimits: /v1/health shows only liveness without the token; an
// idle keep-alive connection is closed after the idle timeout.
func TestHTTPLimits(t *testing.T) {
	f := start(t, serve.Options{IdleTimeout: 200 * time.Millisecond})
	url := f.client.URL
	resp, err := http.Get(url + "/v1/health")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if strings.TrimSpace(string(b)) != `{"status":"ok"}` {
		t.Fatalf("health without a token: %s", b)
	}
	var h map[string]any
	if err := f.client.Do(context.Background(), "GET", "/v1/health", nil, &h); err != nil || h["owner"] == nil {
		t.Fatalf("health with the token: %v %v", h, err)
	}
	// A raw keep-alive connection, left idle.
	conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n")
	br := bufio.NewReader(conn)
	if r, err := http.ReadResponse(br, nil); err != nil {
		t.Fatal(err)
	} else {
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("the idle connection was not closed: %v", err)
	}
}

// TestStateFileOwnership: of two serve processes on one home, the
// second does not replace the first's serve.json, and stopping it leaves
// the first's in place.
func TestStateFileOwnership(t *testing.T) {
	home := t.TempDir()
	st := openStore(t, filepath.Join(home, "g.db"))
	first := start(t, serve.Options{Store: st, Home: home})
	read := func() serveapi.State {
		var s serveapi.State
		b, _ := os.ReadFile(filepath.Join(home, serveapi.StateFile))
		json.Unmarshal(b, &s)
		return s
	}
	waitFor(t, "the first's state file", func() bool { return read().URL == first.client.URL })
	second := startStoppable(t, serve.Options{Store: st, Home: home})
	time.Sleep(100 * time.Millisecond)
	if read().URL != first.client.URL {
		t.Fatalf("the second replaced the state file: %+v", read())
	}
	second()
	if read().URL != first.client.URL {
		t.Fatalf("stopping the second removed the first's state file: %+v", read())
	}
}

// startStoppable starts a server like start and returns a function that
// stops it (and waits).
func startStoppable(t *testing.T, o serve.Options) func() {
	t.Helper()
	if o.Runner == nil {
		o.Runner = script
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	o.Listener, o.Token, o.Tick = ln, "s3cret", time.Hour
	srv, err := serve.New(o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	var once sync.Once
	stop := func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(stop)
	return stop
}

// TestBusyDatabase: while another process holds the database's write
// lock, starting a run answers 503 with Retry-After within the busy
// timeout; once the lock is gone, it works again.
func TestBusyDatabase(t *testing.T) {
	db := filepath.Join(t.TempDir(), "g.db")
	st, err := store.OpenSQLite(context.Background(), db, store.SQLiteOptions{BusyTimeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	f := start(t, serve.Options{Store: st})
	// Another process's writer (a second connection pool on the file).
	raw, err := sql.Open("sqlite", "file:"+db+"?_pragma=busy_timeout(100)")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	conn, err := raw.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	body := strings.NewReader(fmt.Sprintf(`{"prompt":"hi","dir":%q}`, f.dir))
	req, _ := http.NewRequest("POST", f.client.URL+"/v1/runs", body)
	req.Header.Set("Authorization", "Bearer s3cret")
	t0 := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	took := time.Since(t0)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("locked database: %d (Retry-After %q)", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	t.Logf("503 after %s", took)
	if _, err := conn.ExecContext(context.Background(), "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	r, err := f.client.Start(context.Background(), runqueue.Request{Prompt: "hi", Dir: f.dir})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the run after the lock", func() bool {
		g, _ := f.client.Get(context.Background(), r.ID)
		return g.Status == runqueue.StatusSucceeded
	})
}

// TestFullDiskDatabase: with its database on a small tmpfs filled to
// the last byte, starting a run answers 503 with Retry-After (in
// bounded time, not 500 and not a hang); once space is freed, runs start
// and finish again. It needs to mount a tmpfs (root, or CAP_SYS_ADMIN),
// and is skipped where that is not permitted.
func TestFullDiskDatabase(t *testing.T) {
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=4m,mode=0700", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a small tmpfs for the full-disk case (needs root or CAP_SYS_ADMIN): %v %s", err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", "-l", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", dir, err, out)
		}
	})
	st, err := store.OpenSQLite(context.Background(), filepath.Join(dir, "g.db"), store.SQLiteOptions{BusyTimeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	f := start(t, serve.Options{Store: st})
	r, err := f.client.Start(context.Background(), runqueue.Request{Prompt: "hi", Dir: f.dir})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a run before the disk fills", func() bool {
		g, _ := f.client.Get(context.Background(), r.ID)
		return g.Status == runqueue.StatusSucceeded
	})

	// Fill the filesystem to the last block.
	filler := filepath.Join(dir, "filler")
	fh, err := os.Create(filler)
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 64<<10)
	for {
		if _, err := fh.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("filling the tmpfs: %v", err)
			}
			break
		}
	}
	for len(chunk) > 1 { // the last partial block
		chunk = chunk[:len(chunk)/2]
		for {
			if _, err := fh.Write(chunk); err != nil {
				break
			}
		}
	}
	fh.Close()

	// Pages the database or its log already holds may take a few more
	// writes; within a few starts the disk is out of room.
	post := func() (*http.Response, time.Duration) {
		body := strings.NewReader(fmt.Sprintf(`{"prompt":"hi","dir":%q}`, f.dir))
		req, _ := http.NewRequest("POST", f.client.URL+"/v1/runs", body)
		req.Header.Set("Authorization", "Bearer s3cret")
		t0 := time.Now()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp, time.Since(t0)
	}
	var full *http.Response
	var took time.Duration
	i := 0
	for ; i < 200 && full == nil; i++ {
		resp, d := post()
		switch resp.StatusCode {
		case http.StatusServiceUnavailable:
			full, took = resp, d
		case http.StatusCreated, http.StatusAccepted, http.StatusOK:
		default:
			t.Fatalf("start on a full disk: %d, want 503 or a success", resp.StatusCode)
		}
	}
	if full == nil {
		t.Fatal("200 starts on a full disk all succeeded")
	}
	if full.Header.Get("Retry-After") == "" {
		t.Fatalf("503 without Retry-After: %v", full.Header)
	}
	t.Logf("503 after %s, at start %d on the full disk", took, i)

	// Free the space: the next start works and its run finishes.
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	r, err = f.client.Start(context.Background(), runqueue.Request{Prompt: "hi", Dir: f.dir})
	if err != nil {
		t.Fatalf("start after freeing space: %v", err)
	}
	waitFor(t, "the run after freeing space", func() bool {
		g, _ := f.client.Get(context.Background(), r.ID)
		return g.Status == runqueue.StatusSucceeded
	})
}

// TestOverlapCheckedWhereRecorded: the store checks a fire's overlap
// policy in the transaction that records its run, so a start whose
// scheduler saw no live run (another started one since) is refused with
// runqueue.ErrOverlap and nothing is stored.
func TestOverlapCheckedWhereRecorded(t *testing.T) {
	f := start(t, serve.Options{MaxRunning: 4})
	ctx := context.Background()
	fire := func(i int, exclusive bool) (runqueue.Run, error) {
		return f.srv.Engine().Start(ctx, runqueue.Request{Prompt: "block", Dir: f.dir, Key: fmt.Sprintf("cron:j1:%d", i),
			Origin: runqueue.Origin{Kind: runqueue.OriginCron, JobID: "j1", Exclusive: exclusive, MaxQueued: 1}})
	}
	if _, err := fire(1, true); err != nil {
		t.Fatal(err)
	}
	if _, err := fire(2, true); !errors.Is(err, runqueue.ErrOverlap) {
		t.Fatalf("second exclusive fire: %v, want ErrOverlap", err)
	}
	runs, err := f.store.ListRuns(ctx, store.RunFilter{JobID: "j1"})
	if err != nil || len(runs) != 1 {
		t.Fatalf("%d runs of the job stored, want 1 (%v)", len(runs), err)
	}
	waitFor(t, "the run to end", func() bool {
		f.srv.ClaimOnce(ctx)
		f.client.Cancel(ctx, runs[0].ID)
		g, _ := f.client.Get(ctx, runs[0].ID)
		return g.Status.Ended()
	})
}
