package cron_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/gantry-dev/gantry/cron"
	"github.com/gantry-dev/gantry/runqueue"
	"github.com/gantry-dev/gantry/store"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func mustLoc(t testing.TB, name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Skip("no time zone data:", err)
	}
	return loc
}

func TestNextAcrossDST(t *testing.T) {
	ny := mustLoc(t, "America/New_York")
	at := func(y int, mo time.Month, d, h, mi int) time.Time { return time.Date(y, mo, d, h, mi, 0, 0, ny) }
	// 2026-03-08 02:00 EST → 03:00 EDT; 2026-11-01 02:00 EDT → 01:00 EST.
	fallBack2nd := at(2026, 11, 1, 1, 30).Add(time.Hour) // 01:30 EST
	tests := []struct {
		name  string
		expr  string
		after time.Time
		want  []time.Time
	}{
		{"daily in the skipped hour fires after the change", "30 2 * * *", at(2026, 3, 7, 12, 0),
			[]time.Time{at(2026, 3, 8, 3, 30), at(2026, 3, 9, 2, 30)}},
		{"quarter-hourly jumps the gap once", "*/15 * * * *", at(2026, 3, 8, 1, 40),
			[]time.Time{at(2026, 3, 8, 1, 45), at(2026, 3, 8, 3, 0), at(2026, 3, 8, 3, 15)}},
		{"daily in the repeated hour fires once", "30 1 * * *", at(2026, 10, 31, 12, 0),
			[]time.Time{at(2026, 11, 1, 1, 30), at(2026, 11, 2, 1, 30)}},
		{"half-hourly does not repeat the hour", "*/30 * * * *", at(2026, 11, 1, 0, 45),
			[]time.Time{at(2026, 11, 1, 1, 0), at(2026, 11, 1, 1, 30), at(2026, 11, 1, 2, 0)}},
		{"started in the repeated hour", "30 1 * * *", fallBack2nd.Add(-10 * time.Minute),
			[]time.Time{at(2026, 11, 2, 1, 30)}},
		{"weekdays", "0 9 * * MON-FRI", at(2026, 11, 27, 10, 0), // Friday
			[]time.Time{at(2026, 11, 30, 9, 0), at(2026, 12, 1, 9, 0)}},
		{"month end", "0 0 31 * *", at(2026, 4, 1, 0, 0), []time.Time{at(2026, 5, 31, 0, 0), at(2026, 7, 31, 0, 0)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := cron.Parse(tt.expr, ny)
			if err != nil {
				t.Fatal(err)
			}
			cur := tt.after
			for i, w := range tt.want {
				got, err := s.Next(cur)
				if err != nil {
					t.Fatal(err)
				}
				if !got.Equal(w) {
					t.Fatalf("fire %d: %s, want %s", i+1, got, w)
				}
				cur = got
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	for _, bad := range []string{"", "* * * *", "* * * * * *", "61 * * * *", "x * * * *", "0 0 31 2 *", "@hourly"} {
		if _, err := cron.Parse(bad, time.UTC); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
	if _, err := cron.Parse(" 0   9 * *  1 ", time.UTC); err != nil {
		t.Error(err)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"*/5 * * * *", "0 9 * * MON-FRI", "0 0 1,15 * *", "61 * * * *", "0 0 31 2 *"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		s, err := cron.Parse(expr, time.UTC)
		if err != nil {
			return
		}
		from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		n, err := s.Next(from)
		if err == nil && !n.After(from) {
			t.Fatalf("%q: next %s not after %s", expr, n, from)
		}
	})
}

func TestJitterBounds(t *testing.T) {
	for i := range 500 {
		id := store.NewID(4)
		if j := cron.Jitter(id, time.Hour, true); j < 0 || j > 6*time.Minute {
			t.Fatalf("hourly jitter %s", j)
		}
		if j := cron.Jitter(id, 24*time.Hour, true); j < 0 || j > cron.MaxJitter {
			t.Fatalf("daily jitter %s", j)
		}
		if j := cron.Jitter(id, time.Minute, true); j < 0 || j > 6*time.Second {
			t.Fatalf("minutely jitter %s (%d)", j, i)
		}
		if j := cron.Jitter(id, 24*time.Hour, false); j < 0 || j > cron.OneShotJitter {
			t.Fatalf("one-shot jitter %s", j)
		}
	}
	if cron.Jitter("a", time.Hour, true) != cron.Jitter("a", time.Hour, true) {
		t.Fatal("jitter is not stable per job")
	}
}

func TestPlan(t *testing.T) {
	t0 := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	mk := func(sp cron.Spec) store.CronJob {
		sp.Location, sp.Prompt, sp.Dir = "UTC", "p", "/tmp"
		j, err := cron.NewJob("job1", sp, t0)
		if err != nil {
			t.Fatal(err)
		}
		return j
	}
	// Recurring hourly: first at 13:00 (+ jitter).
	j := mk(cron.Spec{Cron: "0 * * * *", Recurring: true})
	if !j.NextScheduled.Equal(t0.Add(time.Hour)) || j.NextAt.Before(j.NextScheduled) || j.NextAt.Sub(j.NextScheduled) > 6*time.Minute {
		t.Fatalf("first fire %s / %s", j.NextScheduled, j.NextAt)
	}
	if !j.ExpiresAt.Equal(t0.Add(cron.DefaultLifetime)) {
		t.Fatalf("expires %s", j.ExpiresAt)
	}
	next, fire := cron.Plan(j, j.NextAt, cron.DefaultGrace)
	if !fire || !next.NextScheduled.Equal(t0.Add(2*time.Hour)) || !next.LastFiredAt.Equal(t0.Add(time.Hour)) {
		t.Fatalf("on time: fire %v next %s", fire, next.NextScheduled)
	}
	// Down for a day: catchup once fires once and skips to the next hour
	// after now; catchup none skips.
	late := t0.Add(25*time.Hour + 10*time.Minute)
	next, fire = cron.Plan(j, late, cron.DefaultGrace)
	if !fire || !next.NextScheduled.Equal(t0.Add(26*time.Hour)) {
		t.Fatalf("catchup once: fire %v next %s", fire, next.NextScheduled)
	}
	jn := mk(cron.Spec{Cron: "0 * * * *", Recurring: true, Catchup: cron.CatchupNone})
	next, fire = cron.Plan(jn, late, cron.DefaultGrace)
	if fire || !next.NextScheduled.Equal(t0.Add(26*time.Hour)) {
		t.Fatalf("catchup none: fire %v next %s", fire, next.NextScheduled)
	}
	// Expiry: a job whose next fire is past its lifetime is done.
	je := mk(cron.Spec{Cron: "0 12 * * *", Recurring: true, Lifetime: 36 * time.Hour})
	next, fire = cron.Plan(je, je.NextAt, cron.DefaultGrace)
	if !fire || !next.NextAt.IsZero() {
		t.Fatalf("expiring job: fire %v next %s", fire, next.NextAt)
	}
	// One-shot: fires once, then done.
	jo := mk(cron.Spec{Cron: "30 12 * * *"})
	if !jo.ExpiresAt.IsZero() {
		t.Fatal("a one-shot job expires")
	}
	next, fire = cron.Plan(jo, jo.NextAt, cron.DefaultGrace)
	if !fire || !next.NextAt.IsZero() {
		t.Fatalf("one-shot: %v %s", fire, next.NextAt)
	}
	if _, err := cron.NewJob("", cron.Spec{Cron: "* * * * *", Prompt: "p", Dir: "rel"}, t0); err == nil {
		t.Fatal("relative dir accepted")
	}
	if _, err := cron.NewJob("", cron.Spec{Cron: "* * * * *", Prompt: "p", Dir: "/tmp", Catchup: "all"}, t0); err == nil {
		t.Fatal("unknown catchup accepted")
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

// recorder is a run-queue engine that records the requests it starts.
func recorder(t *testing.T) (*runqueue.Local, func() []runqueue.Request) {
	var mu sync.Mutex
	var reqs []runqueue.Request
	l, err := runqueue.NewLocal(runqueue.LocalOptions{Runner: runqueue.RunnerFunc(func(ctx context.Context, req runqueue.Request, x runqueue.Exec) (*runqueue.Result, error) {
		mu.Lock()
		reqs = append(reqs, req)
		mu.Unlock()
		return &runqueue.Result{Subtype: "success"}, nil
	})})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Shutdown(context.Background()) })
	return l, func() []runqueue.Request {
		l.Shutdown(context.Background())
		mu.Lock()
		defer mu.Unlock()
		return reqs
	}
}

func openStore(t testing.TB, path string) *store.SQLite {
	s, err := store.OpenSQLite(context.Background(), path, store.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestTwoSchedulersFireOnce: two schedulers (as two serve processes) on one
// database tick over the same hours; every fire runs exactly once.
func TestTwoSchedulersFireOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "g.db")
	t0 := time.Date(2026, 6, 1, 11, 59, 0, 0, time.UTC)
	clk := &clock{t: t0}
	var scheds []*cron.Scheduler
	var results []func() []runqueue.Request
	for _, owner := range []string{"A", "B"} {
		st := openStore(t, path)
		eng, reqs := recorder(t)
		s, err := cron.NewScheduler(cron.Options{Store: st, Engine: eng, Owner: owner, Now: clk.Now})
		if err != nil {
			t.Fatal(err)
		}
		scheds, results = append(scheds, s), append(results, reqs)
	}
	st := openStore(t, path)
	for i := range 20 {
		j, err := cron.NewJob("", cron.Spec{Cron: "*/10 * * * *", Location: "UTC", Prompt: "job", Dir: "/tmp", Recurring: true}, t0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.CreateCronJob(context.Background(), j); err != nil {
			t.Fatal(i, err)
		}
	}
	// One hour in 30-second steps; both schedulers tick at each step, at
	// the same time.
	for step := range 120 {
		clk.Set(t0.Add(time.Duration(step) * 30 * time.Second))
		var wg sync.WaitGroup
		for _, s := range scheds {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := s.Tick(context.Background()); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
	}
	seen := map[string]int{}
	total := 0
	for _, r := range results {
		for _, req := range r() {
			seen[req.Key]++
			total++
			if req.Origin.Kind != runqueue.OriginCron || req.Prompt != "job" {
				t.Fatalf("request %+v", req)
			}
		}
	}
	for k, n := range seen {
		if n != 1 {
			t.Fatalf("fire %s ran %d times", k, n)
		}
	}
	// 20 jobs × 6 fires (12:00 … 12:50) in the hour; the jitter of a
	// 10-minute job is under a minute, so all have fired by 12:59:30.
	if total != 120 {
		t.Fatalf("%d fires, want 120", total)
	}
}

func TestSchedulerMissedAndOneShot(t *testing.T) {
	path := filepath.Join(t.TempDir(), "g.db")
	t0 := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	clk := &clock{t: t0}
	st := openStore(t, path)
	eng, reqs := recorder(t)
	s, _ := cron.NewScheduler(cron.Options{Store: st, Engine: eng, Owner: "A", Now: clk.Now})
	ctx := context.Background()
	add := func(sp cron.Spec) string {
		sp.Location, sp.Dir = "UTC", "/tmp"
		j, err := cron.NewJob("", sp, t0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.CreateCronJob(ctx, j); err != nil {
			t.Fatal(err)
		}
		return j.ID
	}
	once := add(cron.Spec{Cron: "0 * * * *", Prompt: "once", Recurring: true})
	none := add(cron.Spec{Cron: "0 * * * *", Prompt: "none", Recurring: true, Catchup: cron.CatchupNone})
	shot := add(cron.Spec{Cron: "30 12 * * *", Prompt: "shot"})
	// Down from 12:00 to 17:20: five hourly fires were missed.
	clk.Set(t0.Add(5*time.Hour + 20*time.Minute))
	runs, err := s.Tick(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 {
		t.Fatalf("%d runs after the outage, want 2 (catchup once + the one-shot)", len(runs))
	}
	jobs, _ := st.ListCronJobs(ctx)
	if len(jobs) != 2 {
		t.Fatalf("%d jobs left, want 2 (the one-shot is done)", len(jobs))
	}
	for _, j := range jobs {
		if !j.NextScheduled.Equal(t0.Add(6 * time.Hour)) {
			t.Fatalf("job %s next %s", j.ID, j.NextScheduled)
		}
	}
	got := map[string]bool{}
	for _, r := range reqs() {
		got[r.Origin.JobID] = true
	}
	if !got[once] || got[none] || !got[shot] {
		t.Fatalf("fired %v", got)
	}
}

func TestSession(t *testing.T) {
	t0 := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	clk := &clock{t: t0}
	s := cron.NewSessionJobs(clk.Now)
	a, err := s.Add(cron.Spec{Cron: "*/5 * * * *", Location: "UTC", Prompt: "check the build", Dir: "/tmp", Recurring: true})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := s.Add(cron.Spec{Cron: "2 12 * * *", Location: "UTC", Prompt: "once", Dir: "/tmp"})
	if due := s.Due(""); len(due) != 0 {
		t.Fatal(due)
	}
	clk.Set(t0.Add(10 * time.Minute)) // two fires of a missed: fires once
	due := s.Due("")
	if len(due) != 2 {
		t.Fatalf("due %v", due)
	}
	p := cron.Prompt(due)
	if !strings.Contains(p, "check the build") || !strings.Contains(p, b.ID) {
		t.Fatal(p)
	}
	if l := s.List(); len(l) != 1 || l[0].ID != a.ID {
		t.Fatalf("left %v", l)
	}
	if !s.Delete(a.ID) || s.Delete(a.ID) || len(s.List()) != 0 {
		t.Fatal("delete")
	}
}

// BenchmarkTick10k is one scheduler tick over 10,000 durable jobs, of which
// ten are due.
func BenchmarkTick10k(b *testing.B) {
	ctx := context.Background()
	st := openStore(b, filepath.Join(b.TempDir(), "g.db"))
	t0 := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	for i := range 10_000 {
		expr := "0 0 1 1 *" // next due in January: never during the benchmark
		if i%1000 == 0 {
			expr = "* * * * *"
		}
		j, err := cron.NewJob("", cron.Spec{Cron: expr, Location: "UTC", Prompt: "p", Dir: "/tmp", Recurring: true, Lifetime: -1}, t0)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := st.CreateCronJob(ctx, j); err != nil {
			b.Fatal(err)
		}
	}
	clk := &clock{t: t0}
	eng := nopEngine{}
	s, _ := cron.NewScheduler(cron.Options{Store: st, Engine: eng, Owner: "bench", Now: clk.Now})
	b.ResetTimer()
	for i := range b.N {
		// Every tick is a new minute: the ten every-minute jobs are due.
		clk.Set(t0.Add(time.Duration(i+1)*time.Minute + 59*time.Second))
		runs, err := s.Tick(ctx)
		if err != nil || len(runs) != 10 {
			b.Fatalf("%d runs, %v", len(runs), err)
		}
	}
}

// BenchmarkTickIdle10k is a tick over 10,000 jobs when none is due.
func BenchmarkTickIdle10k(b *testing.B) {
	ctx := context.Background()
	st := openStore(b, filepath.Join(b.TempDir(), "g.db"))
	t0 := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	for range 10_000 {
		j, _ := cron.NewJob("", cron.Spec{Cron: "0 * * * *", Location: "UTC", Prompt: "p", Dir: "/tmp", Recurring: true}, t0)
		st.CreateCronJob(ctx, j)
	}
	s, _ := cron.NewScheduler(cron.Options{Store: st, Engine: nopEngine{}, Owner: "bench", Now: func() time.Time { return t0.Add(time.Minute) }})
	b.ResetTimer()
	for range b.N {
		if runs, err := s.Tick(ctx); err != nil || len(runs) != 0 {
			b.Fatal(runs, err)
		}
	}
}

// nopEngine accepts every run without running it.
type nopEngine struct{ runqueue.Engine }

func (nopEngine) Start(_ context.Context, req runqueue.Request) (runqueue.Run, error) {
	return runqueue.Run{ID: req.Key, Request: req, Status: runqueue.StatusQueued}, nil
}

// TestSchedulerPaused: the scheduler skips a paused job for as long as it
// is paused; resumed, it fires at the schedule's next match after the
// resume (the fires missed while paused never run, whatever its catchup).
func TestSchedulerPaused(t *testing.T) {
	t0 := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	clk := &clock{t: t0}
	st := openStore(t, filepath.Join(t.TempDir(), "g.db"))
	eng, reqs := recorder(t)
	s, _ := cron.NewScheduler(cron.Options{Store: st, Engine: eng, Owner: "A", Now: clk.Now})
	ctx := context.Background()
	add := func(sp cron.Spec) store.CronJob {
		sp.Location, sp.Dir = "UTC", "/tmp"
		j, err := cron.NewJob("", sp, t0)
		if err != nil {
			t.Fatal(err)
		}
		if j, err = st.CreateCronJob(ctx, j); err != nil {
			t.Fatal(err)
		}
		return j
	}
	hourly := add(cron.Spec{Cron: "0 * * * *", Prompt: "hourly", Recurring: true})
	short := add(cron.Spec{Cron: "0 * * * *", Prompt: "short", Recurring: true, Lifetime: 3 * time.Hour})
	if j, err := cron.Pause(ctx, st, hourly.ID, true, t0); err != nil || !j.Paused || !j.NextAt.IsZero() {
		t.Fatalf("pause: %+v %v", j, err)
	}
	if _, err := cron.Pause(ctx, st, short.ID, true, t0); err != nil {
		t.Fatal(err)
	}
	for h := 1; h <= 5; h++ {
		clk.Set(t0.Add(time.Duration(h)*time.Hour + 30*time.Minute))
		if runs, err := s.Tick(ctx); err != nil || len(runs) != 0 {
			t.Fatalf("hour %d: %d runs of paused jobs (%v)", h, len(runs), err)
		}
	}
	// Resumed at 17:30: the next fire is 18:00 plus the jitter.
	now := t0.Add(5*time.Hour + 30*time.Minute)
	j, err := cron.Pause(ctx, st, hourly.ID, false, now)
	if err != nil || j.Paused || !j.NextScheduled.Equal(t0.Add(6*time.Hour)) || j.NextAt.Before(j.NextScheduled) {
		t.Fatalf("resume: %+v %v", j, err)
	}
	// The short job expired at 15:00 while paused: it stays paused.
	if _, err := cron.Pause(ctx, st, short.ID, false, now); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("resuming an expired job: %v", err)
	}
	if runs, _ := s.Tick(ctx); len(runs) != 0 {
		t.Fatalf("%d runs right after the resume, want 0 (no catch-up of paused fires)", len(runs))
	}
	clk.Set(t0.Add(6*time.Hour + cron.MaxJitter))
	if runs, err := s.Tick(ctx); err != nil || len(runs) != 1 {
		t.Fatalf("%d runs at 18:00 (%v), want 1", len(runs), err)
	}
	if got := reqs(); len(got) != 1 || got[0].Origin.JobID != hourly.ID {
		t.Fatalf("fired %+v", got)
	}
	// A trigger's queued request has no schedule to pause.
	q, _ := st.CreateCronJob(ctx, store.CronJob{Cron: "now", Prompt: "p", TriggerID: "t", NextAt: now, NextScheduled: now})
	if _, err := cron.Pause(ctx, st, q.ID, true, now); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("pausing a queued trigger request: %v", err)
	}
	if _, err := cron.Pause(ctx, st, "00000000", true, now); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("pausing a missing job: %v", err)
	}
}
