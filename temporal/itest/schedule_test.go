package itest

import (
	"context"
	"errors"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/cron"
	"github.com/gantry-dev/gantry/runqueue"
	"github.com/gantry-dev/gantry/serve"
	"github.com/gantry-dev/gantry/serveapi"
	"github.com/gantry-dev/gantry/store"
	"github.com/gantry-dev/gantry/temporal/durable"
)

// TestCronJobIsSchedule: a durable cron job created through gantry serve's
// API (over the Temporal engine and durable.Jobs) is a Temporal Schedule;
// its fire starts one run, recorded with the job as its origin and the
// fire's key; list, get and delete go through the schedule. A job due now
// (a run requested through the store) starts its run at once, once.
func TestCronJobIsSchedule(t *testing.T) {
	c := newCluster(t)
	c.worker()
	st, err := store.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "serve.db"), store.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	jobs := durable.NewJobs(c.c, durable.JobsOptions{TaskQueue: c.queue})
	eng := durable.NewEngine(c.c, durable.EngineOptions{TaskQueue: c.queue})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := serve.New(serve.Options{Store: durable.SchedulingStore(st, jobs), Engine: eng, Listener: ln, Tick: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	api := &serveapi.Client{URL: "http://" + ln.Addr().String()}
	bg := context.Background()

	dir := t.TempDir()
	var job store.CronJob
	err = api.Do(bg, http.MethodPost, "/v1/jobs", serveapi.JobRequest{Cron: "* * * * *", Timezone: "UTC",
		Prompt: "calls=1 cmd=echo fired >> fire.txt", Dir: dir, Options: runqueue.Options{Allow: []string{"Bash", "Edit"}}}, &job)
	if err != nil {
		t.Fatal(err)
	}
	if job.ID == "" || job.NextAt.IsZero() || time.Until(job.NextAt) > 70*time.Second {
		t.Fatalf("created job = %+v", job)
	}
	// It is a schedule in Temporal.
	d, err := c.c.ScheduleClient().GetHandle(bg, durable.SchedulePrefix+job.ID).Describe(bg)
	if err != nil {
		t.Fatalf("the job's schedule: %v", err)
	}
	if d.Schedule.Policy.Overlap != durable.ScheduleOverlap {
		t.Errorf("overlap policy = %v", d.Schedule.Policy.Overlap)
	}
	var got store.CronJob
	if err := api.Do(bg, http.MethodGet, "/v1/jobs/"+job.ID, nil, &got); err != nil || got.Prompt != job.Prompt || got.Dir != dir {
		t.Errorf("get job: %+v, %v", got, err)
	}

	// The fire starts a run, recorded with the job as its origin.
	var run runqueue.Run
	deadline := time.Now().Add(100 * time.Second)
	for run.ID == "" {
		if time.Now().After(deadline) {
			t.Fatal("the job did not fire within 100 s")
		}
		runs, err := eng.List(bg, runqueue.Filter{JobID: job.ID})
		if err == nil && len(runs) > 0 {
			run = runs[len(runs)-1]
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	res := c.wait(run.ID, time.Minute)
	if res.Subtype != "success" || res.Text != "done after 1" {
		t.Fatalf("the fire's run: %+v", res)
	}
	if got := lines(t, filepath.Join(dir, "fire.txt")); strings.Join(got, ",") != "fired" {
		t.Errorf("fire.txt = %v", got)
	}
	rec, err := api.Get(bg, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	o := rec.Request.Origin
	if o.Kind != runqueue.OriginCron || o.JobID != job.ID || o.ScheduledAt.IsZero() || o.ScheduledAt.Second() != 0 ||
		rec.Request.Key != runqueue.FireKey(job.ID, o.ScheduledAt) || rec.Request.Prompt != job.Prompt || rec.Request.Dir != dir ||
		!strings.HasPrefix(run.ID, durable.SchedulePrefix+job.ID+"-") || rec.Status != runqueue.StatusSucceeded {
		t.Errorf("the fire's record: %s %+v", run.ID, rec)
	}

	// List (visibility follows within a moment) shows the job's last fire.
	var list serveapi.JobList
	for deadline := time.Now().Add(30 * time.Second); ; {
		err := api.Do(bg, http.MethodGet, "/v1/jobs", nil, &list)
		if err == nil && len(list.Jobs) == 1 && !list.Jobs[0].LastFiredAt.IsZero() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("list jobs: %+v, %v", list, err)
		}
		time.Sleep(300 * time.Millisecond)
	}
	if j := list.Jobs[0]; j.ID != job.ID || !j.LastFiredAt.Equal(o.ScheduledAt) || !j.NextAt.After(o.ScheduledAt) {
		t.Errorf("listed job = %+v (fired at %s)", j, o.ScheduledAt)
	}
	if err := api.Do(bg, http.MethodDelete, "/v1/jobs/"+job.ID, nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := jobs.GetCronJob(bg, job.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("get of a deleted job: %v", err)
	}
	if err := jobs.DeleteCronJob(bg, job.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("delete of a deleted job: %v", err)
	}

	// A job due now starts its run at once, keyed by its fire: a second
	// create of the same fire starts nothing.
	now := time.Now().Truncate(time.Second)
	due := store.CronJob{ID: "due1", Cron: "now", Prompt: "calls=0", Dir: dir, TriggerID: "trig1", NextAt: now, NextScheduled: now}
	for range 2 {
		if _, err := jobs.CreateCronJob(bg, due); err != nil {
			t.Fatal(err)
		}
	}
	id := ""
	for deadline := time.Now().Add(30 * time.Second); id == ""; time.Sleep(300 * time.Millisecond) {
		runs, err := eng.List(bg, runqueue.Filter{TriggerID: "trig1"})
		if err == nil && len(runs) > 0 {
			if len(runs) != 1 {
				t.Fatalf("runs of the due job: %+v", runs)
			}
			id = runs[0].ID
		}
		if time.Now().After(deadline) {
			t.Fatal("the due job's run is not listed")
		}
	}
	if res := c.wait(id, time.Minute); res.Subtype != "success" {
		t.Errorf("the due job's run: %+v", res)
	}
}

// TestCronJobPaused: pausing a job pauses its Temporal Schedule (the
// service skips its actions until it is unpaused); the job shows paused,
// with no next fire, through Get and List, and resumed has its next fire
// back. A job created paused starts as a paused schedule.
func TestCronJobPaused(t *testing.T) {
	c := newCluster(t)
	jobs := durable.NewJobs(c.c, durable.JobsOptions{TaskQueue: c.queue})
	bg := context.Background()
	now := time.Now()
	j, err := cron.NewJob("", cron.Spec{Cron: "* * * * *", Location: "UTC", Prompt: "calls=0", Recurring: true, Dir: t.TempDir()}, now)
	if err != nil {
		t.Fatal(err)
	}
	if j, err = jobs.CreateCronJob(bg, j); err != nil {
		t.Fatal(err)
	}
	state := func(id string) bool {
		t.Helper()
		d, err := c.c.ScheduleClient().GetHandle(bg, durable.SchedulePrefix+id).Describe(bg)
		if err != nil {
			t.Fatal(err)
		}
		return d.Schedule.State.Paused
	}
	p, err := cron.Pause(bg, jobs, j.ID, true, now)
	if err != nil || !p.Paused || !p.NextAt.IsZero() || !state(j.ID) {
		t.Fatalf("paused: %+v %v", p, err)
	}
	if g, err := jobs.GetCronJob(bg, j.ID); err != nil || !g.Paused || !g.NextAt.IsZero() {
		t.Fatalf("get while paused: %+v %v", g, err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; {
		list, err := jobs.ListCronJobs(bg)
		if err == nil && len(list) == 1 && list[0].Paused && list[0].NextAt.IsZero() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("list while paused: %+v, %v", list, err)
		}
		time.Sleep(300 * time.Millisecond)
	}
	r, err := cron.Pause(bg, jobs, j.ID, false, time.Now())
	if err != nil || r.Paused || r.NextAt.IsZero() || time.Until(r.NextAt) > 70*time.Second || state(j.ID) {
		t.Fatalf("resumed: %+v %v", r, err)
	}
	if _, err := cron.Pause(bg, jobs, "nope", true, now); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("pausing a missing job: %v", err)
	}
	k, err := cron.NewJob("", cron.Spec{Cron: "0 3 * * *", Location: "UTC", Prompt: "calls=0", Recurring: true, Dir: t.TempDir()}, now)
	if err != nil {
		t.Fatal(err)
	}
	k.Paused = true
	if k, err = jobs.CreateCronJob(bg, k); err != nil || !k.Paused || !state(k.ID) {
		t.Fatalf("created paused: %+v %v", k, err)
	}
}
