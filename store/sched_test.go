package store_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/store"
)

func openTwo(t *testing.T) (*store.SQLite, *store.SQLite) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "g.db")
	var out [2]*store.SQLite
	for i := range out {
		s, err := store.OpenSQLite(t.Context(), path, store.SQLiteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		out[i] = s
	}
	return out[0], out[1]
}

// TestClaimDueOnce: two stores on one database (as two processes) claim
// the due fires of 50 jobs concurrently; each fire is claimed exactly once
// and every job advances once.
func TestClaimDueOnce(t *testing.T) {
	a, b := openTwo(t)
	ctx := t.Context()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for range 50 {
		if _, err := a.CreateCronJob(ctx, store.CronJob{Cron: "0 * * * *", Prompt: "p", Recurring: true, NextAt: t0, NextScheduled: t0}); err != nil {
			t.Fatal(err)
		}
	}
	advance := func(j store.CronJob) (store.CronJob, bool) {
		j.NextScheduled = j.NextScheduled.Add(time.Hour)
		j.NextAt = j.NextScheduled
		return j, true
	}
	var mu sync.Mutex
	got := map[string]int{}
	var wg sync.WaitGroup
	for i, s := range []*store.SQLite{a, b, a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fires, err := s.ClaimDue(ctx, []string{"A", "B"}[i%2], t0, t0.Add(time.Minute), 10, advance)
			for err == nil && len(fires) > 0 {
				mu.Lock()
				for _, f := range fires {
					got[f.Job.ID]++
				}
				mu.Unlock()
				fires, err = s.ClaimDue(ctx, "x", t0, t0.Add(time.Minute), 10, advance)
			}
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if len(got) != 50 {
		t.Fatalf("%d jobs fired, want 50", len(got))
	}
	for id, n := range got {
		if n != 1 {
			t.Fatalf("job %s fired %d times", id, n)
		}
	}
	jobs, _ := b.ListCronJobs(ctx)
	for _, j := range jobs {
		if !j.NextAt.Equal(t0.Add(time.Hour)) {
			t.Fatalf("job %s next at %v", j.ID, j.NextAt)
		}
	}
	// A job whose advance has no next time is removed.
	fires, err := a.ClaimDue(ctx, "A", t0.Add(time.Hour), t0.Add(2*time.Hour), 100, func(j store.CronJob) (store.CronJob, bool) { return store.CronJob{}, false })
	if err != nil || len(fires) != 0 {
		t.Fatalf("%v %v", fires, err)
	}
	if jobs, _ := a.ListCronJobs(ctx); len(jobs) != 0 {
		t.Fatalf("%d jobs left", len(jobs))
	}
}

func TestReapFiresAndRuns(t *testing.T) {
	a, _ := openTwo(t)
	ctx := t.Context()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	j, _ := a.CreateCronJob(ctx, store.CronJob{Cron: "0 * * * *", Prompt: "p", NextAt: t0, NextScheduled: t0})
	fires, err := a.ClaimDue(ctx, "dead", t0, t0.Add(time.Minute), 1, func(store.CronJob) (store.CronJob, bool) { return store.CronJob{}, true })
	if err != nil || len(fires) != 1 || fires[0].Job.ID != j.ID {
		t.Fatal(fires, err)
	}
	// Live lease, owner alive: nothing to reap.
	if lost, _ := a.ReapFires(ctx, t0, func(string) bool { return false }); len(lost) != 0 {
		t.Fatal(lost)
	}
	lost, err := a.ReapFires(ctx, t0, func(o string) bool { return o == "dead" })
	if err != nil || len(lost) != 1 || lost[0].Job.Prompt != "p" || !lost[0].Scheduled.Equal(t0) {
		t.Fatal(lost, err)
	}
	if again, _ := a.ReapFires(ctx, t0.Add(time.Hour), nil); len(again) != 0 {
		t.Fatal("a fire was reaped twice")
	}

	data := json.RawMessage(`{"status":"running"}`)
	r1, err := a.CreateRun(ctx, store.RunRecord{ID: "r1", Key: "k", Status: store.RunRunning, Owner: "o1", LeaseUntil: t0, Data: data})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := a.CreateRun(ctx, store.RunRecord{ID: "r2", Key: "k", Status: store.RunQueued, Data: data}); !errors.Is(err, store.ErrExists) || got.ID != r1.ID {
		t.Fatalf("duplicate key: %v %v", got.ID, err)
	}
	a.CreateRun(ctx, store.RunRecord{ID: "r3", Status: store.RunRunning, Owner: "o2", LeaseUntil: t0, Data: data})
	if err := a.RenewLeases(ctx, "o2", t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	reaped, err := a.ReapRuns(ctx, t0.Add(time.Second), nil, func(r store.RunRecord) store.RunRecord {
		r.Data = json.RawMessage(`{"status":"lost"}`)
		return r
	})
	if err != nil || len(reaped) != 1 || reaped[0].ID != "r1" {
		t.Fatalf("reaped %v %v", reaped, err)
	}
	r, _ := a.GetRun(ctx, "r1")
	if r.Status != store.RunLost || string(r.Data) != `{"status":"lost"}` {
		t.Fatalf("%+v", r)
	}
	if err := a.AppendRunEvents(ctx, "r3", []store.RunEvent{{Seq: 1, Type: "system", Data: json.RawMessage(`{}`)}, {Seq: 2, Type: "result", Data: json.RawMessage(`{}`)}}); err != nil {
		t.Fatal(err)
	}
	if evs, _ := a.RunEvents(ctx, "r3", 1, 0); len(evs) != 1 || evs[0].Type != "result" {
		t.Fatal(evs)
	}
	if runs, _ := a.ListRuns(ctx, store.RunFilter{Status: []string{store.RunLost}}); len(runs) != 1 {
		t.Fatal(runs)
	}
}

func TestTriggers(t *testing.T) {
	a, _ := openTwo(t)
	ctx := t.Context()
	tr, err := a.CreateTrigger(ctx, store.Trigger{Name: "nightly", Data: json.RawMessage(`{"prompt":"x"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.CreateTrigger(ctx, store.Trigger{Name: "nightly", Data: json.RawMessage(`{}`)}); !errors.Is(err, store.ErrExists) {
		t.Fatal(err)
	}
	for _, k := range []string{tr.ID, "nightly"} {
		if got, err := a.GetTrigger(ctx, k); err != nil || got.ID != tr.ID {
			t.Fatal(got, err)
		}
	}
	tr.Data = json.RawMessage(`{"prompt":"y"}`)
	if _, err := a.UpdateTrigger(ctx, tr); err != nil {
		t.Fatal(err)
	}
	if l, _ := a.ListTriggers(ctx); len(l) != 1 || string(l[0].Data) != `{"prompt":"y"}` {
		t.Fatal(l)
	}
	if err := a.DeleteTrigger(ctx, tr.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := a.GetTrigger(ctx, tr.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatal(err)
	}
}

// TestRunGuardOneTransaction: two stores on one database (as two
// processes) create guarded runs of the same jobs concurrently, each
// under its own key (two scheduled times of one job): with Exclusive,
// exactly one run per job is stored, the rest refused with ErrOverlap;
// with MaxQueued 2 (not exclusive), exactly two. Without the check and
// the insert in one transaction both stores could see no live run.
func TestRunGuardOneTransaction(t *testing.T) {
	a, b := openTwo(t)
	for _, tc := range []struct {
		name  string
		guard store.RunGuard
		want  int
	}{
		{"exclusive", store.RunGuard{Exclusive: true, MaxQueued: 1}, 1},
		{"max queued 2", store.RunGuard{MaxQueued: 2}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const jobs, tries = 10, 6
			var mu sync.Mutex
			stored := map[string]int{}
			var wg sync.WaitGroup
			for i := range tries {
				s := []*store.SQLite{a, b}[i%2]
				wg.Go(func() {
					for j := range jobs {
						job := fmt.Sprintf("%s-job%d", tc.name, j)
						g := tc.guard
						_, err := s.CreateRun(t.Context(), store.RunRecord{ID: fmt.Sprintf("%s-%d", job, i), Key: fmt.Sprintf("%s:%d", job, i),
							Status: store.RunQueued, JobID: job, Guard: &g, Data: json.RawMessage(`{}`)})
						switch {
						case err == nil:
							mu.Lock()
							stored[job]++
							mu.Unlock()
						case errors.Is(err, store.ErrOverlap), errors.Is(err, store.ErrBusy):
						default:
							t.Errorf("create: %v", err)
						}
					}
				})
			}
			wg.Wait()
			for j := range jobs {
				job := fmt.Sprintf("%s-job%d", tc.name, j)
				runs, err := a.ListRuns(t.Context(), store.RunFilter{JobID: job})
				if err != nil {
					t.Fatal(err)
				}
				if len(runs) != tc.want || stored[job] != tc.want {
					t.Errorf("%s: %d runs stored (%d reported), want %d", job, len(runs), stored[job], tc.want)
				}
			}
			// An ended run no longer counts.
			job := tc.name + "-job0"
			runs, _ := a.ListRuns(t.Context(), store.RunFilter{JobID: job})
			for _, r := range runs {
				r.Status = "succeeded"
				if err := a.UpdateRun(t.Context(), r); err != nil {
					t.Fatal(err)
				}
			}
			g := tc.guard
			if _, err := b.CreateRun(t.Context(), store.RunRecord{ID: job + "-after", Status: store.RunQueued, JobID: job, Guard: &g, Data: json.RawMessage(`{}`)}); err != nil {
				t.Fatalf("after the runs ended: %v", err)
			}
		})
	}
}

// TestPauseCronJob: a paused job keeps its record, loses its next fire,
// is never claimed (by this store or another on the database) and lists
// after the active jobs; resuming takes the next fire from resume.
func TestPauseCronJob(t *testing.T) {
	a, b := openTwo(t)
	ctx := t.Context()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	p, _ := a.CreateCronJob(ctx, store.CronJob{Cron: "0 * * * *", Prompt: "paused", Recurring: true, NextAt: t0, NextScheduled: t0})
	q, _ := a.CreateCronJob(ctx, store.CronJob{Cron: "0 * * * *", Prompt: "active", Recurring: true, NextAt: t0.Add(time.Hour), NextScheduled: t0.Add(time.Hour)})
	j, err := a.PauseCronJob(ctx, p.ID, true, nil)
	if err != nil || !j.Paused || !j.NextAt.IsZero() || !j.NextScheduled.IsZero() || j.Prompt != "paused" {
		t.Fatalf("paused: %+v %v", j, err)
	}
	// Pausing again changes nothing and needs no resume func.
	if j, err := b.PauseCronJob(ctx, p.ID, true, nil); err != nil || !j.Paused {
		t.Fatalf("paused twice: %+v %v", j, err)
	}
	claimed := func(s *store.SQLite, now time.Time) []store.Fire {
		t.Helper()
		fires, err := s.ClaimDue(ctx, "A", now, now.Add(time.Minute), 10, func(j store.CronJob) (store.CronJob, bool) {
			j.NextAt = j.NextAt.Add(time.Hour)
			j.NextScheduled = j.NextAt
			return j, true
		})
		if err != nil {
			t.Fatal(err)
		}
		return fires
	}
	if f := claimed(b, t0.Add(24*time.Hour)); len(f) != 1 || f[0].Job.ID != q.ID {
		t.Fatalf("claimed %+v, want the active job only", f)
	}
	jobs, _ := b.ListCronJobs(ctx)
	if len(jobs) != 2 || jobs[0].ID != q.ID || jobs[1].ID != p.ID || !jobs[1].Paused {
		t.Fatalf("listed %+v", jobs)
	}
	if g, _ := b.GetCronJob(ctx, p.ID); !g.Paused || !g.NextAt.IsZero() {
		t.Fatalf("got %+v", g)
	}
	// A failing resume changes nothing; so does one without a next fire.
	boom := errors.New("boom")
	if _, err := b.PauseCronJob(ctx, p.ID, false, func(store.CronJob) (store.CronJob, error) { return store.CronJob{}, boom }); !errors.Is(err, boom) {
		t.Fatalf("resume error: %v", err)
	}
	if _, err := b.PauseCronJob(ctx, p.ID, false, func(j store.CronJob) (store.CronJob, error) { return j, nil }); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("resume with no next fire: %v", err)
	}
	if _, err := b.PauseCronJob(ctx, p.ID, false, nil); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("resume with no func: %v", err)
	}
	if g, _ := a.GetCronJob(ctx, p.ID); !g.Paused {
		t.Fatalf("failed resumes changed the job: %+v", g)
	}
	next := t0.Add(48 * time.Hour)
	j, err = b.PauseCronJob(ctx, p.ID, false, func(j store.CronJob) (store.CronJob, error) {
		if j.Paused || j.ID != p.ID {
			t.Errorf("resume got %+v", j)
		}
		j.NextAt, j.NextScheduled = next, next
		return j, nil
	})
	if err != nil || j.Paused || !j.NextAt.Equal(next) {
		t.Fatalf("resumed: %+v %v", j, err)
	}
	if f := claimed(a, next); len(f) != 2 {
		t.Fatalf("claimed %d after resume, want 2", len(f))
	}
	if _, err := a.PauseCronJob(ctx, "nope", true, nil); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("pausing a missing job: %v", err)
	}
	// A job created paused has no next fire either.
	c, _ := a.CreateCronJob(ctx, store.CronJob{Cron: "0 * * * *", Prompt: "p", Paused: true, NextAt: t0, NextScheduled: t0})
	if !c.NextAt.IsZero() {
		t.Fatalf("created paused: %+v", c)
	}
	if f := claimed(a, next.Add(time.Hour)); len(f) != 2 {
		t.Fatalf("claimed %d, want 2 (not the one created paused)", len(f))
	}
}
