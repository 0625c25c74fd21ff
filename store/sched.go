package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"
)

// Scheduling is the durable side of scheduled and remote runs: cron jobs
// and the leases on their fires, run records with their events, and
// triggers. [SQLite] implements it (and [Lazy] over a SQLite store); the
// scheduler, `gantry serve` and the run queue's journal use it. The records'
// payloads (a job's run options, a run's full record, a trigger's template)
// are JSON owned by the caller; the store keeps the columns it queries.
type Scheduling interface {
	CronJobs
	Runs
	Triggers
}

// CronJob is a durable cron job.
type CronJob struct {
	// ID is assigned by the store when empty (8 hex digits).
	ID string `json:"id"`
	// Cron is the 5-field expression, in the time zone Location names.
	Cron     string `json:"cron"`
	Location string `json:"location,omitempty"`
	Prompt   string `json:"prompt"`
	// Recurring jobs fire at every match until they expire; the others
	// once, at the next match.
	Recurring bool `json:"recurring"`
	// Dir is the directory the job's runs work in.
	Dir string `json:"dir"`
	// Options are the run options (JSON owned by the caller).
	Options json.RawMessage `json:"options,omitempty"`
	// Catchup is what happens to fires missed while no scheduler ran:
	// "once" (run one, the default) or "none" (skip them).
	Catchup string `json:"catchup,omitempty"`
	// Retry starts a fire again when its run was lost.
	Retry bool `json:"retry,omitempty"`
	// Overlap is what a fire does while an earlier run of the job is
	// live: "skip" ("" too: no new run while one is queued, running or
	// waiting), "queue" (a new run waits, queued, until the earlier ends)
	// or "allow" (runs side by side).
	Overlap string `json:"overlap,omitempty"`
	// MaxQueued caps the job's queued runs (policies queue and allow): a
	// fire that finds that many queued is skipped (0 = 1).
	MaxQueued int `json:"max_queued,omitempty"`
	// CreatedBy is the session that created the job; TriggerID the
	// trigger it belongs to ("" = none).
	CreatedBy string    `json:"created_by,omitempty"`
	TriggerID string    `json:"trigger_id,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	// ExpiresAt ends a recurring job (zero = never).
	ExpiresAt time.Time `json:"expires_at,omitzero"`
	// NextAt is when the next fire is due (its scheduled time plus the
	// job's jitter); NextScheduled is that fire's scheduled time.
	NextAt        time.Time `json:"next_at"`
	NextScheduled time.Time `json:"next_scheduled"`
	// LastFiredAt is the scheduled time of the last fire (zero = none).
	LastFiredAt time.Time `json:"last_fired_at,omitzero"`
	// Paused jobs are kept but never fire: their NextAt and NextScheduled
	// are zero until [CronJobs.PauseCronJob] resumes them.
	Paused bool `json:"paused,omitempty"`
}

// Fire is one claimed fire of a job.
type Fire struct {
	// Job is the job as it was when claimed.
	Job       CronJob
	Scheduled time.Time
	Owner     string
	// RunID is the run the fire became ("" until recorded).
	RunID string
}

// CronJobs keeps durable cron jobs.
type CronJobs interface {
	// CreateCronJob stores a new job (ID assigned when empty).
	CreateCronJob(ctx context.Context, j CronJob) (CronJob, error)
	// GetCronJob returns one job.
	GetCronJob(ctx context.Context, id string) (CronJob, error)
	// ListCronJobs returns every job by next due time.
	ListCronJobs(ctx context.Context) ([]CronJob, error)
	// DeleteCronJob removes a job.
	DeleteCronJob(ctx context.Context, id string) error
	// PauseCronJob pauses a job (paused true) or resumes it, and returns
	// it as stored. A paused job keeps its record with Paused set and no
	// next fire (NextAt and NextScheduled zero): no claim takes it, and
	// the fires it would have had while paused never run. Resuming calls
	// resume, in the transaction, with the paused job; resume returns it
	// with its next fire set (or an error, which is returned and changes
	// nothing). A store whose service fires the jobs itself (Temporal)
	// may compute the next fire its own way and not call resume. Pausing
	// a paused job, or resuming an active one, changes nothing.
	PauseCronJob(ctx context.Context, id string, paused bool, resume func(CronJob) (CronJob, error)) (CronJob, error)
	// ClaimDue takes, in one transaction, the fires of up to limit jobs
	// due at now (NextAt <= now): for each, advance says what becomes of
	// the job (its next NextAt and NextScheduled; a zero NextAt removes the
	// job) and whether its due fire runs. A fire that runs is leased to
	// owner until leaseUntil and returned. Of several concurrent claims
	// (other processes on the same database included) exactly one gets a
	// given fire.
	ClaimDue(ctx context.Context, owner string, now, leaseUntil time.Time, limit int,
		advance func(CronJob) (next CronJob, fire bool)) ([]Fire, error)
	// SetFireRun records the run a fire became.
	SetFireRun(ctx context.Context, jobID string, scheduled time.Time, runID string) error
	// ReapFires returns the fires whose lease expired (or whose owner
	// dead reports dead) before any run was recorded, and marks them
	// lost.
	ReapFires(ctx context.Context, now time.Time, dead func(owner string) bool) ([]Fire, error)
}

// Run states the store knows: a live run (queued, running or waiting)
// holds a lease, except a queued run with no owner, which waits in the
// shared queue for a process to claim it ([Runs.ClaimRuns]); a reaped
// one becomes lost (or, never started, queued again).
const (
	RunQueued  = "queued"
	RunRunning = "running"
	RunWaiting = "waiting"
	RunLost    = "lost"
)

// RunRecord is a stored run.
type RunRecord struct {
	ID string `json:"id"`
	// Key is the run's idempotency key ("" = none); at most one run has a
	// given key.
	Key    string `json:"key,omitempty"`
	Status string `json:"status"`
	// Owner is the process running it; LeaseUntil when its lease ends
	// unless renewed.
	Owner      string    `json:"owner,omitempty"`
	LeaseUntil time.Time `json:"lease_until,omitzero"`
	// Origin, JobID and TriggerID are copied from the request for
	// filtering.
	Origin    string `json:"origin,omitempty"`
	JobID     string `json:"job_id,omitempty"`
	TriggerID string `json:"trigger_id,omitempty"`
	// Serial, for a run of a job, keeps it queued while another run of
	// that job is running or waiting (the job's overlap policy "queue").
	Serial bool `json:"serial,omitempty"`
	// Guard, for a new run of a job (JobID set), is checked by CreateRun
	// in the transaction that records the run; it is not stored.
	Guard *RunGuard `json:"-"`
	// Data is the caller's full record (JSON).
	Data      json.RawMessage `json:"data"`
	CreatedAt time.Time       `json:"created_at"`
	// LastSeq is the highest Seq of the run's stored events (read only:
	// set by GetRun, ListRuns, ClaimRuns and ReapRuns), so that a run whose
	// process died before it recorded its count still shows its events.
	LastSeq int64 `json:"last_seq,omitempty"`
}

// RunGuard is a cron job's overlap policy as [Runs.CreateRun] applies it:
// the check of the job's live runs and the insert of the new run are one
// transaction, so that two schedulers firing one job at once cannot both
// start a run the policy forbids.
type RunGuard struct {
	// Exclusive refuses the run while another run of the job is queued,
	// running or waiting (the overlap policy "skip").
	Exclusive bool
	// MaxQueued > 0 refuses the run while the job has that many runs
	// queued.
	MaxQueued int
}

// Refuses says why g refuses a new run of a job that has live runs
// (queued, running or waiting), queued of them queued, the first of them
// in state first ("" = the run may start). It is the one statement of the
// rule: CreateRun applies it in its transaction, a scheduler may apply it
// beforehand to skip a fire without a write.
func (g RunGuard) Refuses(live, queued int, first string) string {
	switch {
	case g.Exclusive && live > 0:
		return "an earlier run of the job is still " + first
	case g.MaxQueued > 0 && queued >= g.MaxQueued:
		return fmt.Sprintf("the job has %d runs queued already (max %d)", queued, g.MaxQueued)
	}
	return ""
}

// RunEvent is one stored event of a run.
type RunEvent struct {
	Seq  int64           `json:"seq"`
	Type string          `json:"type"`
	Data json.RawMessage `json:"data"`
}

// RunFilter selects runs; the zero value selects the 100 newest.
type RunFilter struct {
	Status    []string
	Origin    string
	JobID     string
	TriggerID string
	Limit     int
}

// Runs keeps run records and their events.
type Runs interface {
	// CreateRun stores a new run; a run with the same non-empty Key gives
	// the existing run and [ErrExists]; a run of a job its Guard refuses
	// is not stored ([ErrOverlap], the guard's reason).
	CreateRun(ctx context.Context, r RunRecord) (RunRecord, error)
	// UpdateRun replaces a run's status, owner, lease and data.
	UpdateRun(ctx context.Context, r RunRecord) error
	// GetRun returns one run.
	GetRun(ctx context.Context, id string) (RunRecord, error)
	// ListRuns returns the runs that match f, newest first.
	ListRuns(ctx context.Context, f RunFilter) ([]RunRecord, error)
	// AppendRunEvents adds events to a run.
	AppendRunEvents(ctx context.Context, runID string, evs []RunEvent) error
	// RunEvents returns up to limit events with Seq > after (limit <= 0
	// = all).
	RunEvents(ctx context.Context, runID string, after int64, limit int) ([]RunEvent, error)
	// RenewLeases extends to until the leases owner holds: its live runs
	// and its fires not yet recorded as runs.
	RenewLeases(ctx context.Context, owner string, until time.Time) error
	// ReapRuns takes, in one transaction, every live owned run whose
	// lease expired before now or whose owner dead reports dead; lose
	// rewrites each one's record and says what becomes of it by the Status
	// it returns: RunQueued gives the run back to the shared queue (owner
	// cleared: a run that never started is run by another process), any
	// other status marks it lost. It returns the runs as rewritten.
	ReapRuns(ctx context.Context, now time.Time, dead func(owner string) bool, lose func(RunRecord) RunRecord) ([]RunRecord, error)
	// ClaimRuns takes, in one transaction, up to limit runs of the shared
	// queue (queued, no owner; oldest first; a Serial run only while no
	// other run of its job is running or waiting, and one per job per
	// claim), making them running under owner's lease until leaseUntil.
	// Of several concurrent claims exactly one gets a given run.
	ClaimRuns(ctx context.Context, owner string, leaseUntil time.Time, limit int) ([]RunRecord, error)
	// UpdateRunIf is UpdateRun done only while the run's status and owner
	// are still status and owner; it reports whether it was done.
	UpdateRunIf(ctx context.Context, r RunRecord, status, owner string) (bool, error)
}

// Trigger is a named, stored run template.
type Trigger struct {
	// ID is assigned by the store when empty.
	ID   string `json:"id"`
	Name string `json:"name"`
	// Data is the template (JSON owned by the caller).
	Data      json.RawMessage `json:"data"`
	CreatedAt time.Time       `json:"created_at"`
	UpdatedAt time.Time       `json:"updated_at"`
}

// Triggers keeps triggers.
type Triggers interface {
	// CreateTrigger stores a new trigger; an existing name gives
	// [ErrExists].
	CreateTrigger(ctx context.Context, t Trigger) (Trigger, error)
	// GetTrigger returns a trigger by id or by name.
	GetTrigger(ctx context.Context, idOrName string) (Trigger, error)
	// ListTriggers returns every trigger by name.
	ListTriggers(ctx context.Context) ([]Trigger, error)
	// UpdateTrigger replaces a trigger's name and data.
	UpdateTrigger(ctx context.Context, t Trigger) (Trigger, error)
	// DeleteTrigger removes a trigger.
	DeleteTrigger(ctx context.Context, id string) error
}

// NewID returns a random id of 2n hex digits.
func NewID(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
