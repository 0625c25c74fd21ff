package durable

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/gantry-dev/gantry/cron"
	"github.com/gantry-dev/gantry/store"
)

// Durable cron jobs on Temporal: a job is a Temporal Schedule whose action
// starts the run workflow. The Temporal service fires it — no process of
// ours needs to be up at the time, and of any number of serve processes
// and workers none fires it twice.
const (
	// SchedulePrefix starts the id of every job's schedule; the job's id
	// follows. The workflow id of a fire is the schedule's action id
	// (the same) with the fire's scheduled time appended by Temporal
	// ("gantry-cron-1a2b3c4d-2026-11-26T09:00:00Z"): one run per fire.
	SchedulePrefix = "gantry-cron-"
	// memoJob is the schedule's memo field holding the job (JSON).
	memoJob = "gantry_job"
	// attrScheduledStart is the search attribute Temporal sets on the
	// workflows a schedule starts: the fire's scheduled time.
	attrScheduledStart = "TemporalScheduledStartTime"
)

// ScheduleOverlap is what a job's fire does while an earlier fire's run
// still runs: it starts anyway (allow all), as `gantry serve`'s scheduler
// does — each fire is its own run.
const ScheduleOverlap = enumspb.SCHEDULE_OVERLAP_POLICY_ALLOW_ALL

// JobsOptions configure [Jobs]; the zero value of each field is its
// default.
type JobsOptions struct {
	// TaskQueue is the workers' queue the fires' runs go to ("" =
	// DefaultTaskQueue).
	TaskQueue string
	// Run are the engine's settings for the fires' runs.
	Run RunOptions
	// Grace is how late a fire may be and still run when its job skips
	// missed fires (catchup "none"); 0 = cron.DefaultGrace.
	Grace time.Duration
	// Zone is the IANA time zone of jobs that name none ("" = this
	// machine's: TZ, else /etc/localtime, else UTC).
	Zone string
	// DataConverter decodes the schedules' memos: the client's converter
	// when it has a codec (package claimcheck); nil = the default.
	DataConverter converter.DataConverter
}

// Jobs keeps durable cron jobs as Temporal Schedules. It implements
// [store.CronJobs], so `gantry serve`'s job endpoints, triggers and the
// CronCreate/CronList/CronDelete tools work on it unchanged; its ClaimDue,
// SetFireRun and ReapFires find nothing to do (the Temporal service fires
// the jobs, so `gantry serve`'s own scheduler, which calls them, idles).
//
// Create, Get, Pause and Delete act on the schedule directly; List reads
// Temporal's visibility store, which follows a change within a second or
// two. A one-shot job whose fire was taken, and a recurring job past its
// expiry, are gone: Get reports them not found and List deletes their
// schedule.
type Jobs struct {
	c    client.Client
	o    JobsOptions
	zone string
}

var _ store.CronJobs = (*Jobs)(nil)

// NewJobs returns the jobs kept in c's namespace.
func NewJobs(c client.Client, o JobsOptions) *Jobs {
	if o.TaskQueue == "" {
		o.TaskQueue = DefaultTaskQueue
	}
	if o.Grace <= 0 {
		o.Grace = cron.DefaultGrace
	}
	if o.DataConverter == nil {
		o.DataConverter = converter.GetDefaultDataConverter()
	}
	zone := o.Zone
	if zone == "" {
		zone = LocalZone()
	}
	return &Jobs{c: c, o: o, zone: zone}
}

// LocalZone names this machine's time zone as IANA does: TZ, else the
// target of /etc/localtime, else "UTC".
func LocalZone() string {
	if tz := strings.TrimPrefix(os.Getenv("TZ"), ":"); tz != "" {
		if _, err := time.LoadLocation(tz); err == nil {
			return tz
		}
	}
	if p, err := filepath.EvalSymlinks("/etc/localtime"); err == nil {
		if _, name, ok := strings.Cut(p, "zoneinfo/"); ok {
			if _, err := time.LoadLocation(name); err == nil {
				return name
			}
		}
	}
	return "UTC"
}

var jobID = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// ScheduleOptions is the Temporal Schedule of job j (exported for tests
// and tools that create the schedule themselves):
//   - spec: the job's 5-field expression in its time zone (TimeZoneName;
//     a job without one is read in zone), ending at the job's expiry,
//     with the job's jitter bound (a tenth of the period, at most
//     cron.MaxJitter; cron.OneShotJitter for one-shot jobs) as Temporal's
//     random jitter;
//   - action: start the run workflow on queue with the job's request
//     (prompt, directory, options) and, as the run's memo, the request
//     with the job as its origin; the workflow id is SchedulePrefix+id
//     plus the scheduled time;
//   - a one-shot job has one action (RemainingActions 1);
//   - overlap: [ScheduleOverlap];
//   - catch-up window (fires missed while the Temporal service was
//     down): catchup "none" runs a fire at most grace late; "once" (the
//     default) runs the fires of the last period — for a recurring job
//     at most one — and skips older ones; a one-shot job keeps Temporal's
//     default (one year).
func ScheduleOptions(j store.CronJob, queue string, run RunOptions, grace time.Duration, zone string) (client.ScheduleOptions, error) {
	if !jobID.MatchString(j.ID) {
		return client.ScheduleOptions{}, fmt.Errorf("%w: job id %q (want letters, digits, - and _)", store.ErrInvalid, j.ID)
	}
	if j.Location != "" && j.Location != "Local" {
		zone = j.Location
	}
	loc, err := time.LoadLocation(zone)
	if err != nil {
		return client.ScheduleOptions{}, fmt.Errorf("%w: unknown time zone %q", store.ErrInvalid, zone)
	}
	sched, err := cron.Parse(j.Cron, loc)
	if err != nil {
		return client.ScheduleOptions{}, fmt.Errorf("%w: %v", store.ErrInvalid, err)
	}
	req, err := cron.Request(j, time.Time{})
	if err != nil {
		return client.ScheduleOptions{}, fmt.Errorf("%w: %v", store.ErrInvalid, err)
	}
	req.Key = "" // each fire's run is keyed by its workflow id
	if err := req.Validate(); err != nil {
		return client.ScheduleOptions{}, err
	}
	spec := SpecOf(req)
	memo, err := memoOf(spec, req)
	if err != nil {
		return client.ScheduleOptions{}, err
	}
	jb, err := json.Marshal(j)
	if err != nil {
		return client.ScheduleOptions{}, err
	}
	period := sched.Period(time.Now())
	jitter := cron.OneShotJitter
	if j.Recurring {
		jitter = min(period/10, cron.MaxJitter)
	}
	o := client.ScheduleOptions{
		ID: SchedulePrefix + j.ID,
		Spec: client.ScheduleSpec{CronExpressions: []string{sched.String()}, TimeZoneName: zone,
			EndAt: j.ExpiresAt, Jitter: jitter},
		Action: &client.ScheduleWorkflowAction{ID: SchedulePrefix + j.ID, Workflow: WorkflowName, TaskQueue: queue,
			Args: []any{RunInput{Spec: spec, Prompt: req.Prompt, Options: run}}, Memo: memo},
		Overlap: ScheduleOverlap,
		Memo:    map[string]any{memoJob: string(jb)},
		Paused:  j.Paused,
	}
	switch {
	case !j.Recurring:
		o.RemainingActions = 1
	case j.Catchup == cron.CatchupNone:
		o.CatchupWindow = max(grace, 10*time.Second) // Temporal's minimum
	default:
		o.CatchupWindow = max(period, grace)
	}
	return o, nil
}

// CreateCronJob implements store.CronJobs: it creates the job's schedule
// (a job with cron "now" — a run requested through the store — starts its
// run at once instead). The id is assigned when empty.
func (s *Jobs) CreateCronJob(ctx context.Context, j store.CronJob) (store.CronJob, error) {
	if j.ID == "" {
		j.ID = store.NewID(4)
	}
	if j.Cron == "now" {
		return s.runNow(ctx, j)
	}
	o, err := ScheduleOptions(j, s.o.TaskQueue, s.o.Run, s.o.Grace, s.zone)
	if err != nil {
		return store.CronJob{}, err
	}
	if _, err := s.c.ScheduleClient().Create(ctx, o); err != nil {
		if errors.Is(err, temporal.ErrScheduleAlreadyRunning) {
			return store.CronJob{}, fmt.Errorf("%w: job %s", store.ErrExists, j.ID)
		}
		return store.CronJob{}, fmt.Errorf("durable: create the schedule of job %s: %w", j.ID, err)
	}
	got, err := s.GetCronJob(ctx, j.ID)
	if errors.Is(err, store.ErrNotFound) {
		return j, nil // a one-shot job that fired already
	}
	return got, err
}

// runNow starts the run of a job due now (cron "now"), keyed by its fire
// as gantry serve's scheduler keys it.
func (s *Jobs) runNow(ctx context.Context, j store.CronJob) (store.CronJob, error) {
	if j.NextScheduled.IsZero() {
		j.NextScheduled = time.Now().Truncate(time.Second)
		j.NextAt = j.NextScheduled
	}
	req, err := cron.Request(j, j.NextScheduled)
	if err != nil {
		return store.CronJob{}, fmt.Errorf("%w: %v", store.ErrInvalid, err)
	}
	if err := req.Validate(); err != nil {
		return store.CronJob{}, err
	}
	spec := SpecOf(req)
	err = startWorkflow(ctx, s.c, keyID(req.Key), s.o.TaskQueue, RunInput{Spec: spec, Prompt: req.Prompt, Options: s.o.Run}, req)
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if err != nil && !errors.As(err, &started) {
		return store.CronJob{}, fmt.Errorf("durable: start the run of job %s: %w", j.ID, err)
	}
	return j, nil
}

// GetCronJob implements store.CronJobs: the job with its next fire and
// last fire as the schedule reports them.
func (s *Jobs) GetCronJob(ctx context.Context, id string) (store.CronJob, error) {
	if !jobID.MatchString(id) {
		return store.CronJob{}, fmt.Errorf("%w: job %s", store.ErrNotFound, id)
	}
	d, err := s.c.ScheduleClient().GetHandle(ctx, SchedulePrefix+id).Describe(ctx)
	if err != nil {
		return store.CronJob{}, scheduleErr(err, id)
	}
	j, err := jobOfMemo(s.o.DataConverter, d.Memo)
	if err != nil {
		return store.CronJob{}, err
	}
	j = withFires(j, d.Info.NextActionTimes, d.Info.RecentActions, s.zone)
	j.Paused = false // the schedule's state says, not the memo written at creation
	st := d.Schedule.State
	if st != nil && st.LimitedActions && st.RemainingActions == 0 {
		return store.CronJob{}, fmt.Errorf("%w: job %s (it is done)", store.ErrNotFound, id)
	}
	if st != nil && st.Paused {
		return paused(j), nil
	}
	if j.NextAt.IsZero() {
		return store.CronJob{}, fmt.Errorf("%w: job %s (it is done)", store.ErrNotFound, id)
	}
	return j, nil
}

// paused is j as a paused job shows: no next fire.
func paused(j store.CronJob) store.CronJob {
	j.Paused, j.NextAt, j.NextScheduled = true, time.Time{}, time.Time{}
	return j
}

// expired reports whether a recurring job's lifetime is over.
func expired(j store.CronJob) bool {
	return !j.ExpiresAt.IsZero() && time.Now().After(j.ExpiresAt)
}

// PauseCronJob implements store.CronJobs by pausing or unpausing the
// job's schedule: Temporal skips the actions a paused schedule would
// take (they are not caught up when it is unpaused) and computes the next
// fire itself, so resume is not called. A job that expired while paused
// is not resumed (store.ErrInvalid); a trigger's queued request (cron
// "now") is a started workflow, not a schedule, and is not found.
func (s *Jobs) PauseCronJob(ctx context.Context, id string, pause bool, _ func(store.CronJob) (store.CronJob, error)) (store.CronJob, error) {
	j, err := s.GetCronJob(ctx, id)
	if err != nil {
		return store.CronJob{}, err
	}
	if j.Paused == pause {
		return j, nil
	}
	h := s.c.ScheduleClient().GetHandle(ctx, SchedulePrefix+id)
	if pause {
		err = h.Pause(ctx, client.SchedulePauseOptions{Note: "paused by gantry"})
	} else {
		if expired(j) {
			return store.CronJob{}, fmt.Errorf("%w: job %s expired at %s while paused", store.ErrInvalid, id, j.ExpiresAt.Format(time.RFC3339))
		}
		err = h.Unpause(ctx, client.ScheduleUnpauseOptions{Note: "resumed by gantry"})
	}
	if err != nil {
		return store.CronJob{}, scheduleErr(err, id)
	}
	if pause {
		return paused(j), nil
	}
	// The schedule computes its next fire as it unpauses; Describe
	// reports it.
	return s.GetCronJob(ctx, id)
}

// withFires sets a job's next fire (NextAt, with the jitter Temporal
// drew; NextScheduled, the expression's match) and its last fire's
// scheduled time from its schedule's.
func withFires(j store.CronJob, next []time.Time, recent []client.ScheduleActionResult, zone string) store.CronJob {
	j.NextAt, j.NextScheduled = time.Time{}, time.Time{}
	if len(next) > 0 {
		j.NextAt, j.NextScheduled = next[0], next[0]
		if j.Location != "" && j.Location != "Local" {
			zone = j.Location
		}
		if loc, err := time.LoadLocation(zone); err == nil {
			if sched, err := cron.Parse(j.Cron, loc); err == nil {
				// The jitter is less than the period: the match is the
				// last one at or before NextAt.
				from := next[0].Add(-min(sched.Period(next[0]), cron.MaxJitter) - time.Second)
				if m, err := sched.Next(from); err == nil && !m.After(next[0]) {
					j.NextScheduled = m
				}
			}
		}
	}
	if n := len(recent); n > 0 {
		j.LastFiredAt = fireTime(j.ID, recent[n-1])
	}
	return j
}

// fireTime is the scheduled time of a fire: the time Temporal appended
// to its workflow id (the action's ScheduleTime includes the jitter).
func fireTime(jobID string, a client.ScheduleActionResult) time.Time {
	if a.StartWorkflowResult != nil {
		if ts, ok := strings.CutPrefix(a.StartWorkflowResult.WorkflowID, SchedulePrefix+jobID+"-"); ok {
			if t, err := time.Parse(time.RFC3339, ts); err == nil {
				return t
			}
		}
	}
	return a.ScheduleTime
}

// ListCronJobs implements store.CronJobs: every job, by next fire. Jobs
// that are done have their schedule deleted.
func (s *Jobs) ListCronJobs(ctx context.Context) ([]store.CronJob, error) {
	it, err := s.c.ScheduleClient().List(ctx, client.ScheduleListOptions{PageSize: 1000})
	if err != nil {
		return nil, fmt.Errorf("durable: list schedules: %w", err)
	}
	var out []store.CronJob
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			return nil, fmt.Errorf("durable: list schedules: %w", err)
		}
		if !strings.HasPrefix(e.ID, SchedulePrefix) {
			continue
		}
		j, err := jobOfMemo(s.o.DataConverter, e.Memo)
		if err != nil {
			continue // not ours after all
		}
		j = withFires(j, e.NextActionTimes, e.RecentActions, s.zone)
		j.Paused = false
		if e.Paused && !expired(j) && (j.Recurring || j.LastFiredAt.IsZero()) {
			out = append(out, paused(j))
			continue
		}
		if j.NextAt.IsZero() && (!j.Recurring || !j.LastFiredAt.IsZero() || expired(j)) {
			// Done: a one-shot job that fired, or a recurring job past its
			// expiry. Its schedule has nothing more to do.
			_ = s.c.ScheduleClient().GetHandle(ctx, e.ID).Delete(ctx)
			continue
		}
		out = append(out, j)
	}
	slices.SortFunc(out, func(a, b store.CronJob) int {
		// Paused jobs last, as the SQLite store lists them.
		return cmp.Or(cmpBool(a.Paused, b.Paused), a.NextAt.Compare(b.NextAt), strings.Compare(a.ID, b.ID))
	})
	return out, nil
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// DeleteCronJob implements store.CronJobs: the job's schedule is deleted
// (its runs go on).
func (s *Jobs) DeleteCronJob(ctx context.Context, id string) error {
	if !jobID.MatchString(id) {
		return fmt.Errorf("%w: job %s", store.ErrNotFound, id)
	}
	if err := s.c.ScheduleClient().GetHandle(ctx, SchedulePrefix+id).Delete(ctx); err != nil {
		return scheduleErr(err, id)
	}
	return nil
}

// ClaimDue implements store.CronJobs: the Temporal service fires the
// jobs, so there is never a fire to claim.
func (s *Jobs) ClaimDue(context.Context, string, time.Time, time.Time, int, func(store.CronJob) (store.CronJob, bool)) ([]store.Fire, error) {
	return nil, nil
}

// SetFireRun implements store.CronJobs: a fire's run is its workflow,
// named after the fire; there is nothing to record.
func (s *Jobs) SetFireRun(context.Context, string, time.Time, string) error { return nil }

// ReapFires implements store.CronJobs: no fire is leased, none is lost.
func (s *Jobs) ReapFires(context.Context, time.Time, func(string) bool) ([]store.Fire, error) {
	return nil, nil
}

func jobOfMemo(dc converter.DataConverter, m *commonpb.Memo) (store.CronJob, error) {
	p := m.GetFields()[memoJob]
	if p == nil {
		return store.CronJob{}, errors.New("durable: the schedule has no job")
	}
	var s string
	if err := dc.FromPayload(p, &s); err != nil {
		return store.CronJob{}, fmt.Errorf("durable: the schedule's job: %w", err)
	}
	var j store.CronJob
	if err := json.Unmarshal([]byte(s), &j); err != nil {
		return store.CronJob{}, fmt.Errorf("durable: the schedule's job: %w", err)
	}
	return j, nil
}

func scheduleErr(err error, id string) error {
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return fmt.Errorf("%w: job %s", store.ErrNotFound, id)
	}
	return fmt.Errorf("durable: job %s: %w", id, err)
}

// SchedulingStore is st with its cron jobs kept by jobs: runs and
// triggers stay in st. Give it to `gantry serve` (serve.Options.Store) so
// that its job endpoints, its triggers' schedules and its scheduler use
// Temporal Schedules.
func SchedulingStore(st store.Scheduling, jobs *Jobs) store.Scheduling {
	return schedulingStore{Runs: st, Triggers: st, Jobs: jobs}
}

type schedulingStore struct {
	store.Runs
	store.Triggers
	*Jobs
}
