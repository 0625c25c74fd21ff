package cron

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/gantry-dev/gantry/runqueue"
	"github.com/gantry-dev/gantry/store"
)

// Catch-up policies: what happens to fires missed while no scheduler ran.
const (
	// CatchupOnce runs one fire for all the missed ones (the default).
	CatchupOnce = "once"
	// CatchupNone skips missed fires.
	CatchupNone = "none"
)

// DefaultGrace is how late a fire may be and still count as on time; a
// later one was missed (the scheduler was down).
const DefaultGrace = 2 * time.Minute

// Spec describes a job to create.
type Spec struct {
	// Cron is the 5-field expression; Location the IANA time zone it is
	// read in ("" = the local time zone).
	Cron     string
	Location string
	Prompt   string
	// Recurring jobs fire at every match until they expire; the others
	// once, at the next match.
	Recurring bool
	// Dir is the absolute directory of the job's runs.
	Dir string
	// Options are the runs' agent options.
	Options runqueue.Options
	// Catchup is CatchupOnce ("" too) or CatchupNone.
	Catchup string
	// Retry starts a fire again (once) when its run was lost.
	Retry bool
	// Overlap is OverlapSkip ("" too), OverlapQueue or OverlapAllow;
	// MaxQueued caps the job's queued runs (0 = 1). See store.CronJob.
	Overlap   string
	MaxQueued int
	// CreatedBy is the creating session; TriggerID the owning trigger.
	CreatedBy, TriggerID string
	// Lifetime bounds a recurring job (0 = DefaultLifetime, negative =
	// never expires).
	Lifetime time.Duration
}

// ParseLocation resolves a job's time zone name ("" or "Local" = the
// local time zone).
func ParseLocation(name string) (*time.Location, error) {
	if name == "" || name == "Local" {
		return time.Local, nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("cron: unknown time zone %q", name)
	}
	return loc, nil
}

// NewJob returns the stored form of a new job created at now: its first
// fire computed, its expiry set. The store assigns the id when id is "".
func NewJob(id string, sp Spec, now time.Time) (store.CronJob, error) {
	loc, err := ParseLocation(sp.Location)
	if err != nil {
		return store.CronJob{}, err
	}
	sched, err := Parse(sp.Cron, loc)
	if err != nil {
		return store.CronJob{}, err
	}
	switch sp.Overlap {
	case "", OverlapSkip, OverlapQueue, OverlapAllow:
	default:
		return store.CronJob{}, fmt.Errorf("cron: unknown overlap policy %q (want skip, queue or allow)", sp.Overlap)
	}
	if sp.MaxQueued < 0 {
		return store.CronJob{}, errors.New("cron: negative max queued")
	}
	switch sp.Catchup {
	case "", CatchupOnce, CatchupNone:
	default:
		return store.CronJob{}, fmt.Errorf("cron: unknown catchup %q (want once or none)", sp.Catchup)
	}
	if sp.Prompt == "" {
		return store.CronJob{}, errors.New("cron: the prompt is empty")
	}
	req := runqueue.Request{Prompt: sp.Prompt, Dir: sp.Dir, Options: sp.Options}
	if err := req.Validate(); err != nil {
		return store.CronJob{}, err
	}
	opts, err := json.Marshal(sp.Options)
	if err != nil {
		return store.CronJob{}, err
	}
	if id == "" {
		id = store.NewID(4)
	}
	j := store.CronJob{ID: id, Cron: sched.String(), Location: sp.Location, Prompt: sp.Prompt, Recurring: sp.Recurring,
		Dir: sp.Dir, Options: opts, Catchup: sp.Catchup, Retry: sp.Retry,
		Overlap: sp.Overlap, MaxQueued: sp.MaxQueued, CreatedBy: sp.CreatedBy, TriggerID: sp.TriggerID,
		CreatedAt: now}
	if sp.Recurring && sp.Lifetime >= 0 {
		life := sp.Lifetime
		if life == 0 {
			life = DefaultLifetime
		}
		j.ExpiresAt = now.Add(life)
	}
	first, err := sched.Next(now)
	if err != nil {
		return store.CronJob{}, err
	}
	j.NextScheduled = first
	j.NextAt = first.Add(Jitter(j.ID, sched.Period(now), j.Recurring))
	if !j.ExpiresAt.IsZero() && first.After(j.ExpiresAt) {
		return store.CronJob{}, fmt.Errorf("cron: %q first fires at %s, after the job would expire", sp.Cron, first.Format(time.RFC3339))
	}
	return j, nil
}

// Plan says what becomes of a job whose fire is due at now: whether the
// fire runs, and the job with its next fire (a zero NextAt: the job is
// done — a one-shot job after its fire, a recurring one past its expiry).
// A fire more than grace late was missed: with CatchupNone it is skipped;
// with CatchupOnce it runs, and every other missed fire is skipped.
func Plan(j store.CronJob, now time.Time, grace time.Duration) (store.CronJob, bool) {
	missed := now.Sub(j.NextAt) > grace
	fire := !missed || j.Catchup != CatchupNone
	if !j.ExpiresAt.IsZero() && j.NextScheduled.After(j.ExpiresAt) {
		return store.CronJob{}, false
	}
	if !j.Recurring {
		return store.CronJob{}, fire
	}
	loc, err := ParseLocation(j.Location)
	if err != nil {
		return store.CronJob{}, false
	}
	sched, err := Parse(j.Cron, loc)
	if err != nil {
		return store.CronJob{}, false
	}
	next := j
	if fire {
		next.LastFiredAt = j.NextScheduled
	}
	// The next fire after both the one due and now: missed fires are not
	// queued up.
	n, err := sched.Next(later(j.NextScheduled, now))
	if err != nil || (!j.ExpiresAt.IsZero() && n.After(j.ExpiresAt)) {
		next.NextAt, next.NextScheduled = time.Time{}, time.Time{}
		return next, fire
	}
	next.NextScheduled = n
	next.NextAt = n.Add(Jitter(j.ID, sched.Period(n), true))
	return next, fire
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// Request is the run request of a job's fire scheduled at scheduled. Its
// origin is the job (kind cron), or the job's trigger (kind trigger).
// Overlap policies of a job (see store.CronJob.Overlap).
const (
	OverlapSkip  = "skip"
	OverlapQueue = "queue"
	OverlapAllow = "allow"
)

func Request(j store.CronJob, scheduled time.Time) (runqueue.Request, error) {
	var opts runqueue.Options
	if len(j.Options) > 0 {
		if err := json.Unmarshal(j.Options, &opts); err != nil {
			return runqueue.Request{}, fmt.Errorf("cron: job %s: options: %w", j.ID, err)
		}
	}
	kind := runqueue.OriginCron
	if j.TriggerID != "" {
		kind = runqueue.OriginTrigger // a trigger's schedule, or a run requested through the store
	}
	return runqueue.Request{
		Prompt: j.Prompt, Dir: j.Dir, Options: opts,
		Origin: runqueue.Origin{Kind: kind, JobID: j.ID, TriggerID: j.TriggerID, ScheduledAt: scheduled, Retry: j.Retry,
			Serial: j.Overlap == OverlapQueue},
		Key: runqueue.FireKey(j.ID, scheduled),
	}, nil
}
