package cron

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gantry-dev/gantry/store"
	"github.com/gantry-dev/gantry/tool"
)

// MaxSessionJobs caps the session-only jobs of one session.
const MaxSessionJobs = 50

// SessionJobs keeps the session-only jobs of one session: they live in memory,
// end with the session, and fire between its turns ([SessionJobs.Due], and
// [Reminder] for the agent loop). The zero value is not usable; create it
// with [NewSessionJobs]. It is safe for concurrent use.
type SessionJobs struct {
	now func() time.Time

	mu   sync.Mutex
	jobs []store.CronJob
}

// NewSessionJobs returns an empty session schedule on clock now (nil =
// time.Now).
func NewSessionJobs(now func() time.Time) *SessionJobs {
	if now == nil {
		now = time.Now
	}
	return &SessionJobs{now: now}
}

// Add creates a session-only job.
func (s *SessionJobs) Add(sp Spec) (store.CronJob, error) {
	j, err := NewJob("", sp, s.now())
	if err != nil {
		return store.CronJob{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.jobs) >= MaxSessionJobs {
		return store.CronJob{}, fmt.Errorf("cron: this session has %d scheduled jobs already (at most %d)", len(s.jobs), MaxSessionJobs)
	}
	s.jobs = append(s.jobs, j)
	return j, nil
}

// Delete removes a job; it reports whether it existed.
func (s *SessionJobs) Delete(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.jobs)
	s.jobs = slices.DeleteFunc(s.jobs, func(j store.CronJob) bool { return j.ID == id })
	return len(s.jobs) != n
}

// List returns the jobs by next fire.
func (s *SessionJobs) List() []store.CronJob {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := slices.Clone(s.jobs)
	slices.SortFunc(out, func(a, b store.CronJob) int { return a.NextAt.Compare(b.NextAt) })
	return out
}

// NextAt returns when the next job is due (zero = no job).
func (s *SessionJobs) NextAt() time.Time {
	var t time.Time
	for _, j := range s.List() {
		if t.IsZero() || j.NextAt.Before(t) {
			t = j.NextAt
		}
	}
	return t
}

// Due takes the fires due now of the jobs created by the session (or
// agent) named owner ("" = every job): it returns the jobs whose fire is
// due (as they were) and advances them (a one-shot or expired job is
// removed). Fires missed while the session was busy fire once.
func (s *SessionJobs) Due(owner string) []store.CronJob {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	var due []store.CronJob
	kept := s.jobs[:0]
	for _, j := range s.jobs {
		if j.NextAt.After(now) || (owner != "" && j.CreatedBy != owner) {
			kept = append(kept, j)
			continue
		}
		next, fire := Plan(j, now, time.Duration(1<<62))
		if fire {
			due = append(due, j)
		}
		if !next.NextAt.IsZero() {
			kept = append(kept, next)
		}
	}
	clear(s.jobs[len(kept):])
	s.jobs = kept
	return due
}

// Wait blocks until a job is due or ctx ends (for a session that is idle
// between turns: it then starts a turn with the due prompts).
func (s *SessionJobs) Wait(ctx context.Context) error {
	for {
		next := s.NextAt()
		if !next.IsZero() && !next.After(s.now()) {
			return nil
		}
		d := time.Minute
		if !next.IsZero() {
			d = min(next.Sub(s.now()), d)
		}
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// Prompt is the user turn of fired jobs: each job's prompt, introduced by
// the job's id and schedule.
func Prompt(jobs []store.CronJob) string {
	var b strings.Builder
	for i, j := range jobs {
		if i > 0 {
			b.WriteString("\n\n")
		}
		fmt.Fprintf(&b, "[Scheduled task %s (cron %q) fired]\n%s", j.ID, j.Cron, j.Prompt)
	}
	return b.String()
}

// Reminder delivers the due jobs between the turns of an agent run, as a
// user message (it implements the agent's Reminder interface): those the
// agent created (their CreatedBy is the environment's session id), so a
// subagent never takes its parent's. It finds the [*SessionJobs] among the
// environment's services; without one it says nothing.
type Reminder struct{}

// Remind returns the prompts of the jobs due now.
func (Reminder) Remind(_ context.Context, env *tool.Env) (string, func(), error) {
	s, err := tool.Use[*SessionJobs](env)
	if err != nil {
		return "", nil, nil
	}
	due := s.Due(env.SessionID)
	if len(due) == 0 {
		return "", nil, nil
	}
	return Prompt(due), nil, nil
}
