package cron

import (
	"context"
	"fmt"
	"time"

	"github.com/gantry-dev/gantry/store"
)

// Resume returns the paused job j active again at now: its next fire is
// the first match of its schedule after now, plus its jitter. The fires
// it would have had while paused never run (a paused job has nothing to
// catch up). A recurring job whose next match is past its expiry, and a
// job without a schedule (a trigger's queued request), cannot be resumed;
// the error wraps store.ErrInvalid.
func Resume(j store.CronJob, now time.Time) (store.CronJob, error) {
	loc, err := ParseLocation(j.Location)
	if err != nil {
		return store.CronJob{}, fmt.Errorf("%w: %v", store.ErrInvalid, err)
	}
	sched, err := Parse(j.Cron, loc)
	if err != nil {
		return store.CronJob{}, fmt.Errorf("%w: job %s has no schedule: %v", store.ErrInvalid, j.ID, err)
	}
	n, err := sched.Next(now)
	if err != nil {
		return store.CronJob{}, fmt.Errorf("%w: job %s: %v", store.ErrInvalid, j.ID, err)
	}
	if !j.ExpiresAt.IsZero() && n.After(j.ExpiresAt) {
		return store.CronJob{}, fmt.Errorf("%w: job %s expired at %s while paused", store.ErrInvalid, j.ID, j.ExpiresAt.Format(time.RFC3339))
	}
	j.Paused = false
	j.NextScheduled = n
	j.NextAt = n.Add(Jitter(j.ID, sched.Period(n), j.Recurring))
	return j, nil
}

// Pauser is the part of store.CronJobs that [Pause] uses.
type Pauser interface {
	GetCronJob(ctx context.Context, id string) (store.CronJob, error)
	PauseCronJob(ctx context.Context, id string, paused bool, resume func(store.CronJob) (store.CronJob, error)) (store.CronJob, error)
}

// Pause pauses (paused true) or resumes (false) the job id kept in st, at
// now, and returns it as stored: a paused job stays, with no next fire,
// until resumed (see store.CronJobs.PauseCronJob and [Resume]). Only a
// job with a schedule can be paused: a trigger's queued request (cron
// "now") cannot (the error wraps store.ErrInvalid).
func Pause(ctx context.Context, st Pauser, id string, paused bool, now time.Time) (store.CronJob, error) {
	if paused {
		j, err := st.GetCronJob(ctx, id)
		if err != nil {
			return store.CronJob{}, err
		}
		if _, err := Parse(j.Cron, time.UTC); err != nil {
			return store.CronJob{}, fmt.Errorf("%w: job %s has no schedule to pause (%q)", store.ErrInvalid, id, j.Cron)
		}
	}
	return st.PauseCronJob(ctx, id, paused, func(j store.CronJob) (store.CronJob, error) { return Resume(j, now) })
}
