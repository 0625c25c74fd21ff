package cron

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/gantry-dev/gantry/runqueue"
	"github.com/gantry-dev/gantry/store"
)

// Defaults of [Options].
const (
	DefaultLease    = 30 * time.Second
	DefaultInterval = time.Second
	// DefaultBatch is how many due jobs one transaction claims.
	DefaultBatch = 200
)

// Options configure a [Scheduler]. Store and Engine are required.
type Options struct {
	// Store keeps the jobs and the leases of their fires.
	Store store.CronJobs
	// Engine runs the fires.
	Engine runqueue.Engine
	// Runs, when set, is where the scheduler counts a job's live runs to
	// apply its overlap policy and its cap on queued runs (nil = every
	// fire runs).
	Runs store.Runs
	// Owner names this scheduler's process in the leases (required to be
	// unique among processes sharing the store).
	Owner string
	// Now is the clock (nil = time.Now).
	Now func() time.Time
	// Lease is how long a claimed fire is reserved before it is recorded
	// as a run (0 = DefaultLease); Grace how late a fire may be before it
	// counts as missed (0 = DefaultGrace).
	Lease, Grace time.Duration
	// Batch caps the jobs claimed per transaction (0 = DefaultBatch).
	Batch int
	// Logger receives what happened (nil = discard).
	Logger *slog.Logger
}

// Scheduler runs durable cron jobs: at every [Scheduler.Tick] it claims
// the due fires in the store (a lease per fire, taken in one transaction,
// so that of several schedulers on one database exactly one gets each
// fire), advances the jobs, and hands each fire to the engine as a run
// request keyed by [runqueue.FireKey]. It never sleeps: the caller decides
// when to tick ([Scheduler.Run] ticks on a timer).
type Scheduler struct {
	o Options
}

// NewScheduler returns a scheduler.
func NewScheduler(o Options) (*Scheduler, error) {
	if o.Store == nil || o.Engine == nil || o.Owner == "" {
		return nil, errors.New("cron: Options.Store, Engine and Owner are required")
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Lease <= 0 {
		o.Lease = DefaultLease
	}
	if o.Grace <= 0 {
		o.Grace = DefaultGrace
	}
	if o.Batch <= 0 {
		o.Batch = DefaultBatch
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Scheduler{o: o}, nil
}

// Tick claims and starts every fire due now. It returns the runs started
// (a fire whose key already had a run is not among them) and the first
// error; a fire that failed to start is logged and lost, never retried
// silently.
func (s *Scheduler) Tick(ctx context.Context) ([]runqueue.Run, error) {
	var out []runqueue.Run
	for {
		now := s.o.Now()
		fires, err := s.o.Store.ClaimDue(ctx, s.o.Owner, now, now.Add(s.o.Lease), s.o.Batch,
			func(j store.CronJob) (store.CronJob, bool) { return s.plan(j, now) })
		if err != nil {
			return out, fmt.Errorf("cron: claim: %w", err)
		}
		for _, f := range fires {
			if r, ok := s.start(ctx, f); ok {
				out = append(out, r)
			}
		}
		if len(fires) < s.o.Batch {
			return out, nil
		}
	}
}

func (s *Scheduler) plan(j store.CronJob, now time.Time) (store.CronJob, bool) {
	next, fire := Plan(j, now, s.o.Grace)
	switch {
	case !fire:
		s.o.Logger.Info("cron: missed fire skipped (catchup none)", "job", j.ID, "scheduled", j.NextScheduled)
	case now.Sub(j.NextAt) > s.o.Grace:
		s.o.Logger.Info("cron: running a missed fire once (catchup once)", "job", j.ID, "scheduled", j.NextScheduled)
	}
	if next.NextAt.IsZero() {
		s.o.Logger.Info("cron: job done", "job", j.ID, "recurring", j.Recurring)
	}
	return next, fire
}

// start hands one fire to the engine.
func (s *Scheduler) start(ctx context.Context, f store.Fire) (runqueue.Run, bool) {
	log := s.o.Logger.With("job", f.Job.ID, "scheduled", f.Scheduled)
	if why, err := s.overlap(ctx, f.Job); err != nil {
		log.Error("cron: counting the job's runs", "err", err)
		return runqueue.Run{}, false
	} else if why != "" {
		log.Info("cron: fire skipped: "+why, "overlap", f.Job.Overlap)
		if err := s.o.Store.SetFireRun(ctx, f.Job.ID, f.Scheduled, FireSkipped); err != nil {
			log.Warn("cron: recording the skipped fire", "err", err)
		}
		return runqueue.Run{}, false
	}
	req, err := Request(f.Job, f.Scheduled)
	if err == nil {
		// The engine's journal checks the policy again where it records
		// the run: another scheduler may have started one since.
		g := guard(f.Job)
		req.Origin.Exclusive, req.Origin.MaxQueued = g.Exclusive, g.MaxQueued
		var r runqueue.Run
		r, err = s.o.Engine.Start(ctx, req)
		if errors.Is(err, runqueue.ErrOverlap) {
			log.Info("cron: fire skipped: "+err.Error(), "overlap", f.Job.Overlap)
			if err := s.o.Store.SetFireRun(ctx, f.Job.ID, f.Scheduled, FireSkipped); err != nil {
				log.Warn("cron: recording the skipped fire", "err", err)
			}
			return runqueue.Run{}, false
		}
		if r.ID != "" {
			if serr := s.o.Store.SetFireRun(ctx, f.Job.ID, f.Scheduled, r.ID); serr != nil {
				log.Warn("cron: recording the fire's run", "run", r.ID, "err", serr)
			}
		}
		switch {
		case err == nil:
			log.Info("cron: fired", "run", r.ID)
			return r, true
		case errors.Is(err, runqueue.ErrDuplicate):
			log.Info("cron: fire already ran", "run", r.ID)
			return r, false
		}
	}
	log.Error("cron: the fire could not start", "err", err)
	return runqueue.Run{}, false
}

// FireSkipped is the run id recorded for a fire its job's overlap policy
// skipped.
const FireSkipped = "skipped"

// overlap says why the job's policy skips a fire now ("" = it runs).
func (s *Scheduler) overlap(ctx context.Context, j store.CronJob) (string, error) {
	if s.o.Runs == nil {
		return "", nil
	}
	live, err := s.o.Runs.ListRuns(ctx, store.RunFilter{JobID: j.ID,
		Status: []string{store.RunQueued, store.RunRunning, store.RunWaiting}, Limit: 1000})
	if err != nil {
		return "", err
	}
	queued := 0
	for _, r := range live {
		if r.Status == store.RunQueued {
			queued++
		}
	}
	first := ""
	if len(live) > 0 {
		first = live[0].Status
	}
	return guard(j).Refuses(len(live), queued, first), nil
}

// guard is job j's overlap policy and cap on queued runs as a run guard.
func guard(j store.CronJob) store.RunGuard {
	maxQ := j.MaxQueued
	if maxQ <= 0 {
		maxQ = 1
	}
	return store.RunGuard{Exclusive: j.Overlap == "" || j.Overlap == OverlapSkip, MaxQueued: maxQ}
}

// Reap reports the fires leased by a process that died (or whose lease
// ran out) before their run was recorded: each is logged as lost, and
// started again when its job asks for retry. dead reports whether an
// owner is known to be dead (nil = only expired leases count).
func (s *Scheduler) Reap(ctx context.Context, dead func(owner string) bool) ([]store.Fire, error) {
	lost, err := s.o.Store.ReapFires(ctx, s.o.Now(), dead)
	if err != nil {
		return nil, fmt.Errorf("cron: reap: %w", err)
	}
	for _, f := range lost {
		s.o.Logger.Warn("cron: a fire was lost (its scheduler died before the run started)", "job", f.Job.ID, "scheduled", f.Scheduled, "owner", f.Owner)
		if f.Job.Retry {
			req, err := Request(f.Job, f.Scheduled)
			if err != nil {
				continue
			}
			req.Key += "/retry"
			if r, err := s.o.Engine.Start(ctx, req); err == nil {
				s.o.Logger.Info("cron: lost fire started again (retry)", "job", f.Job.ID, "run", r.ID)
			}
		}
	}
	return lost, nil
}

// Run ticks every interval (0 = DefaultInterval) until ctx ends. Errors
// are logged, never fatal: the next tick tries again.
func (s *Scheduler) Run(ctx context.Context, interval time.Duration) {
	if interval <= 0 {
		interval = DefaultInterval
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if _, err := s.Tick(ctx); err != nil && ctx.Err() == nil {
			s.o.Logger.Error("cron: tick", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
