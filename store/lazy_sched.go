package store

import (
	"context"
	"time"
)

var _ Scheduling = (*Lazy)(nil)

// sched opens the store and returns its scheduling side.
func (l *Lazy) sched(ctx context.Context) (Scheduling, error) {
	s, err := l.get(ctx)
	if err != nil {
		return nil, err
	}
	sc, ok := s.(Scheduling)
	if !ok {
		return nil, errorsf(ErrInvalid, "the store (%T) keeps no cron jobs, runs or triggers", s)
	}
	return sc, nil
}

func lazyCall[T any](l *Lazy, ctx context.Context, f func(Scheduling) (T, error)) (T, error) {
	s, err := l.sched(ctx)
	if err != nil {
		var zero T
		return zero, err
	}
	return f(s)
}

func lazyDo(l *Lazy, ctx context.Context, f func(Scheduling) error) error {
	s, err := l.sched(ctx)
	if err != nil {
		return err
	}
	return f(s)
}

// CreateCronJob implements [CronJobs].
func (l *Lazy) CreateCronJob(ctx context.Context, j CronJob) (CronJob, error) {
	return lazyCall(l, ctx, func(s Scheduling) (CronJob, error) { return s.CreateCronJob(ctx, j) })
}

// GetCronJob implements [CronJobs].
func (l *Lazy) GetCronJob(ctx context.Context, id string) (CronJob, error) {
	return lazyCall(l, ctx, func(s Scheduling) (CronJob, error) { return s.GetCronJob(ctx, id) })
}

// ListCronJobs implements [CronJobs].
func (l *Lazy) ListCronJobs(ctx context.Context) ([]CronJob, error) {
	return lazyCall(l, ctx, func(s Scheduling) ([]CronJob, error) { return s.ListCronJobs(ctx) })
}

// DeleteCronJob implements [CronJobs].
func (l *Lazy) DeleteCronJob(ctx context.Context, id string) error {
	return lazyDo(l, ctx, func(s Scheduling) error { return s.DeleteCronJob(ctx, id) })
}

// PauseCronJob implements [CronJobs].
func (l *Lazy) PauseCronJob(ctx context.Context, id string, paused bool, resume func(CronJob) (CronJob, error)) (CronJob, error) {
	return lazyCall(l, ctx, func(s Scheduling) (CronJob, error) { return s.PauseCronJob(ctx, id, paused, resume) })
}

// ClaimDue implements [CronJobs].
func (l *Lazy) ClaimDue(ctx context.Context, owner string, now, leaseUntil time.Time, limit int, advance func(CronJob) (CronJob, bool)) ([]Fire, error) {
	return lazyCall(l, ctx, func(s Scheduling) ([]Fire, error) { return s.ClaimDue(ctx, owner, now, leaseUntil, limit, advance) })
}

// SetFireRun implements [CronJobs].
func (l *Lazy) SetFireRun(ctx context.Context, jobID string, scheduled time.Time, runID string) error {
	return lazyDo(l, ctx, func(s Scheduling) error { return s.SetFireRun(ctx, jobID, scheduled, runID) })
}

// ReapFires implements [CronJobs].
func (l *Lazy) ReapFires(ctx context.Context, now time.Time, dead func(string) bool) ([]Fire, error) {
	return lazyCall(l, ctx, func(s Scheduling) ([]Fire, error) { return s.ReapFires(ctx, now, dead) })
}

// CreateRun implements [Runs].
func (l *Lazy) CreateRun(ctx context.Context, r RunRecord) (RunRecord, error) {
	return lazyCall(l, ctx, func(s Scheduling) (RunRecord, error) { return s.CreateRun(ctx, r) })
}

// UpdateRun implements [Runs].
func (l *Lazy) UpdateRun(ctx context.Context, r RunRecord) error {
	return lazyDo(l, ctx, func(s Scheduling) error { return s.UpdateRun(ctx, r) })
}

// GetRun implements [Runs].
func (l *Lazy) GetRun(ctx context.Context, id string) (RunRecord, error) {
	return lazyCall(l, ctx, func(s Scheduling) (RunRecord, error) { return s.GetRun(ctx, id) })
}

// ListRuns implements [Runs].
func (l *Lazy) ListRuns(ctx context.Context, f RunFilter) ([]RunRecord, error) {
	return lazyCall(l, ctx, func(s Scheduling) ([]RunRecord, error) { return s.ListRuns(ctx, f) })
}

// AppendRunEvents implements [Runs].
func (l *Lazy) AppendRunEvents(ctx context.Context, runID string, evs []RunEvent) error {
	return lazyDo(l, ctx, func(s Scheduling) error { return s.AppendRunEvents(ctx, runID, evs) })
}

// RunEvents implements [Runs].
func (l *Lazy) RunEvents(ctx context.Context, runID string, after int64, limit int) ([]RunEvent, error) {
	return lazyCall(l, ctx, func(s Scheduling) ([]RunEvent, error) { return s.RunEvents(ctx, runID, after, limit) })
}

// RenewLeases implements [Runs].
func (l *Lazy) RenewLeases(ctx context.Context, owner string, until time.Time) error {
	return lazyDo(l, ctx, func(s Scheduling) error { return s.RenewLeases(ctx, owner, until) })
}

// ReapRuns implements [Runs].
func (l *Lazy) ReapRuns(ctx context.Context, now time.Time, dead func(string) bool, lose func(RunRecord) RunRecord) ([]RunRecord, error) {
	return lazyCall(l, ctx, func(s Scheduling) ([]RunRecord, error) { return s.ReapRuns(ctx, now, dead, lose) })
}

// ClaimRuns implements [Runs].
func (l *Lazy) ClaimRuns(ctx context.Context, owner string, leaseUntil time.Time, limit int) ([]RunRecord, error) {
	return lazyCall(l, ctx, func(s Scheduling) ([]RunRecord, error) { return s.ClaimRuns(ctx, owner, leaseUntil, limit) })
}

// UpdateRunIf implements [Runs].
func (l *Lazy) UpdateRunIf(ctx context.Context, r RunRecord, status, owner string) (bool, error) {
	return lazyCall(l, ctx, func(s Scheduling) (bool, error) { return s.UpdateRunIf(ctx, r, status, owner) })
}

// CreateTrigger implements [Triggers].
func (l *Lazy) CreateTrigger(ctx context.Context, t Trigger) (Trigger, error) {
	return lazyCall(l, ctx, func(s Scheduling) (Trigger, error) { return s.CreateTrigger(ctx, t) })
}

// GetTrigger implements [Triggers].
func (l *Lazy) GetTrigger(ctx context.Context, idOrName string) (Trigger, error) {
	return lazyCall(l, ctx, func(s Scheduling) (Trigger, error) { return s.GetTrigger(ctx, idOrName) })
}

// ListTriggers implements [Triggers].
func (l *Lazy) ListTriggers(ctx context.Context) ([]Trigger, error) {
	return lazyCall(l, ctx, func(s Scheduling) ([]Trigger, error) { return s.ListTriggers(ctx) })
}

// UpdateTrigger implements [Triggers].
func (l *Lazy) UpdateTrigger(ctx context.Context, t Trigger) (Trigger, error) {
	return lazyCall(l, ctx, func(s Scheduling) (Trigger, error) { return s.UpdateTrigger(ctx, t) })
}

// DeleteTrigger implements [Triggers].
func (l *Lazy) DeleteTrigger(ctx context.Context, id string) error {
	return lazyDo(l, ctx, func(s Scheduling) error { return s.DeleteTrigger(ctx, id) })
}
