// Package trigger keeps triggers: named, stored run templates (a prompt, a
// directory, a model and permission options, and optionally a cron
// schedule) that the HTTP API of `gantry serve` and the RemoteTrigger tool
// run on demand. A trigger with a schedule owns a durable cron job, which
// the package keeps in step with it.
package trigger

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/gantry-dev/gantry/cron"
	"github.com/gantry-dev/gantry/runqueue"
	"github.com/gantry-dev/gantry/store"
	"github.com/gantry-dev/gantry/tool"
)

// Template is what a trigger runs.
type Template struct {
	Description string `json:"description,omitempty"`
	Prompt      string `json:"prompt"`
	// Dir is the absolute working directory of its runs.
	Dir     string           `json:"dir"`
	Options runqueue.Options `json:"options,omitzero"`
	// Cron, when set, runs the trigger on that 5-field schedule (in
	// Location, "" = local time) through a durable job.
	Cron     string `json:"cron,omitempty"`
	Location string `json:"timezone,omitempty"`
	Catchup  string `json:"catchup,omitempty"`
	Retry    bool   `json:"retry,omitempty"`
	// JobID is the durable job of a scheduled trigger (kept by the
	// package).
	JobID string `json:"job_id,omitempty"`
}

// Trigger is a stored trigger.
type Trigger struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Template
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Body creates or changes a trigger (the RemoteTrigger tool's body, the
// API's request). A nil field is left as it is by an update (and takes its
// default on create).
type Body struct {
	Name            *string    `json:"name,omitempty"`
	Description     *string    `json:"description,omitempty"`
	Prompt          *string    `json:"prompt,omitempty"`
	Dir             *string    `json:"dir,omitempty"`
	Model           *string    `json:"model,omitempty"`
	PermissionMode  *tool.Mode `json:"permission_mode,omitempty"`
	AllowedTools    []string   `json:"allowed_tools,omitempty"`
	DisallowedTools []string   `json:"disallowed_tools,omitempty"`
	MaxTurns        *int       `json:"max_turns,omitempty"`
	MaxBudgetUSD    *float64   `json:"max_budget_usd,omitempty"`
	Cron            *string    `json:"cron,omitempty"`
	Timezone        *string    `json:"timezone,omitempty"`
	Catchup         *string    `json:"catchup,omitempty"`
	Retry           *bool      `json:"retry,omitempty"`
}

// ParseBody decodes a body, refusing unknown fields.
func ParseBody(data []byte) (Body, error) {
	var b Body
	if len(data) == 0 {
		return b, nil
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		return Body{}, fmt.Errorf("%w: trigger body: %v", store.ErrInvalid, err)
	}
	return b, nil
}

// apply merges b into t.
func (b Body) apply(t *Trigger) {
	set := func(dst *string, src *string) {
		if src != nil {
			*dst = *src
		}
	}
	set(&t.Name, b.Name)
	set(&t.Description, b.Description)
	set(&t.Prompt, b.Prompt)
	set(&t.Dir, b.Dir)
	set(&t.Options.Model, b.Model)
	set(&t.Cron, b.Cron)
	set(&t.Location, b.Timezone)
	set(&t.Catchup, b.Catchup)
	if b.PermissionMode != nil {
		t.Options.Mode = *b.PermissionMode
	}
	if b.AllowedTools != nil {
		t.Options.Allow = b.AllowedTools
	}
	if b.DisallowedTools != nil {
		t.Options.Deny = b.DisallowedTools
	}
	if b.MaxTurns != nil {
		t.Options.MaxTurns = *b.MaxTurns
	}
	if b.MaxBudgetUSD != nil {
		t.Options.MaxBudgetUSD = *b.MaxBudgetUSD
	}
	if b.Retry != nil {
		t.Retry = *b.Retry
	}
}

// Bounds are what a body may ask for when it comes from an agent session
// rather than from the user: the runs of a trigger a session creates are
// never wider than the session.
type Bounds struct {
	// Mode is the session's permission mode: the trigger's may be the same
	// or narrower (plan < dontAsk < default < acceptEdits); never
	// bypassPermissions.
	Mode tool.Mode
	// Dirs are the directories the session may work in; the trigger's
	// directory must be one of them or inside one.
	Dirs []string
}

// Check reports whether t stays within the bounds.
func (bd Bounds) Check(t Template) error {
	mode, session := t.Options.Mode, bd.Mode
	if mode == "" {
		mode = tool.ModeDefault
	}
	if session == "" {
		session = tool.ModeDefault
	}
	if mode == tool.ModeBypassPermissions || mode.Wider(session) {
		return fmt.Errorf("%w: permission mode %s is wider than this session's (%s)", store.ErrInvalid, mode, session)
	}
	if len(t.Options.Allow) > 0 {
		return fmt.Errorf("%w: a session cannot give a trigger allow rules (they would widen its permissions); the directory's settings apply", store.ErrInvalid)
	}
	for _, d := range bd.Dirs {
		if rel, err := filepath.Rel(d, t.Dir); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			return nil
		}
	}
	return fmt.Errorf("%w: directory %s is outside this session's directories", store.ErrInvalid, t.Dir)
}

// Store is what triggers are kept in.
type Store interface {
	store.Triggers
	store.CronJobs
}

// Create stores a new trigger from b (prompt and name required; dir
// defaults to defaultDir) and, with a schedule, its durable job.
func Create(ctx context.Context, st Store, b Body, defaultDir string, bounds *Bounds, now time.Time) (Trigger, error) {
	t := Trigger{Template: Template{Dir: defaultDir}}
	b.apply(&t)
	if err := validate(t, bounds); err != nil {
		return Trigger{}, err
	}
	data, err := json.Marshal(t.Template)
	if err != nil {
		return Trigger{}, err
	}
	rec, err := st.CreateTrigger(ctx, store.Trigger{Name: t.Name, Data: data})
	if err != nil {
		return Trigger{}, err
	}
	t.ID, t.CreatedAt, t.UpdatedAt = rec.ID, rec.CreatedAt, rec.UpdatedAt
	if t.Cron != "" {
		return schedule(ctx, st, t, now)
	}
	return t, nil
}

// Update changes a trigger and keeps its job in step.
func Update(ctx context.Context, st Store, idOrName string, b Body, bounds *Bounds, now time.Time) (Trigger, error) {
	t, err := Get(ctx, st, idOrName)
	if err != nil {
		return Trigger{}, err
	}
	old := t
	b.apply(&t)
	if err := validate(t, bounds); err != nil {
		return Trigger{}, err
	}
	paused := false
	if old.JobID != "" {
		// A paused schedule stays paused through a change.
		if j, err := st.GetCronJob(ctx, old.JobID); err == nil {
			paused = j.Paused
		}
		if err := st.DeleteCronJob(ctx, old.JobID); err != nil && !errors.Is(err, store.ErrNotFound) {
			return Trigger{}, err
		}
		t.JobID = ""
	}
	if t, err = save(ctx, st, t); err != nil {
		return Trigger{}, err
	}
	if t.Cron != "" {
		if t, err = schedule(ctx, st, t, now); err != nil || !paused {
			return t, err
		}
		if _, err := st.PauseCronJob(ctx, t.JobID, true, nil); err != nil {
			return Trigger{}, err
		}
	}
	return t, nil
}

// Pause pauses (paused true) or resumes the schedule of a trigger (its
// durable job, see cron.Pause) and returns the job. A trigger without a
// schedule has nothing to pause (store.ErrInvalid); pausing leaves its
// runs on request (Run now, POST /v1/triggers/{id}/run) as they are.
func Pause(ctx context.Context, st Store, idOrName string, paused bool, now time.Time) (store.CronJob, error) {
	t, err := Get(ctx, st, idOrName)
	if err != nil {
		return store.CronJob{}, err
	}
	if t.JobID == "" {
		return store.CronJob{}, fmt.Errorf("%w: trigger %s has no schedule to pause", store.ErrInvalid, t.Name)
	}
	return cron.Pause(ctx, st, t.JobID, paused, now)
}

// schedule creates the durable job of a scheduled trigger.
func schedule(ctx context.Context, st Store, t Trigger, now time.Time) (Trigger, error) {
	j, err := cron.NewJob("", cron.Spec{Cron: t.Cron, Location: t.Location, Prompt: t.Prompt, Recurring: true, Dir: t.Dir,
		Options: t.Options, Catchup: t.Catchup, Retry: t.Retry, TriggerID: t.ID, Lifetime: -1}, now)
	if err != nil {
		return Trigger{}, err
	}
	if j, err = st.CreateCronJob(ctx, j); err != nil {
		return Trigger{}, err
	}
	t.JobID = j.ID
	return save(ctx, st, t)
}

func save(ctx context.Context, st Store, t Trigger) (Trigger, error) {
	data, err := json.Marshal(t.Template)
	if err != nil {
		return Trigger{}, err
	}
	rec, err := st.UpdateTrigger(ctx, store.Trigger{ID: t.ID, Name: t.Name, Data: data})
	if err != nil {
		return Trigger{}, err
	}
	t.UpdatedAt = rec.UpdatedAt
	return t, nil
}

func validate(t Trigger, bounds *Bounds) error {
	switch {
	case strings.TrimSpace(t.Name) == "":
		return fmt.Errorf("%w: a trigger needs a name", store.ErrInvalid)
	case strings.TrimSpace(t.Prompt) == "":
		return fmt.Errorf("%w: a trigger needs a prompt", store.ErrInvalid)
	}
	if err := (runqueue.Request{Prompt: t.Prompt, Dir: t.Dir, Options: t.Options}).Validate(); err != nil {
		return fmt.Errorf("%w: %v", store.ErrInvalid, err)
	}
	if t.Cron != "" {
		loc, err := cron.ParseLocation(t.Location)
		if err != nil {
			return fmt.Errorf("%w: %v", store.ErrInvalid, err)
		}
		if _, err := cron.Parse(t.Cron, loc); err != nil {
			return fmt.Errorf("%w: %v", store.ErrInvalid, err)
		}
	}
	switch t.Catchup {
	case "", cron.CatchupOnce, cron.CatchupNone:
	default:
		return fmt.Errorf("%w: unknown catchup %q", store.ErrInvalid, t.Catchup)
	}
	if bounds != nil {
		return bounds.Check(t.Template)
	}
	return nil
}

// Get returns a trigger by id or name.
func Get(ctx context.Context, st store.Triggers, idOrName string) (Trigger, error) {
	rec, err := st.GetTrigger(ctx, idOrName)
	if err != nil {
		return Trigger{}, err
	}
	return decode(rec)
}

func decode(rec store.Trigger) (Trigger, error) {
	t := Trigger{ID: rec.ID, Name: rec.Name, CreatedAt: rec.CreatedAt, UpdatedAt: rec.UpdatedAt}
	if err := json.Unmarshal(rec.Data, &t.Template); err != nil {
		return Trigger{}, fmt.Errorf("trigger %s: %w", rec.Name, err)
	}
	return t, nil
}

// List returns every trigger by name.
func List(ctx context.Context, st store.Triggers) ([]Trigger, error) {
	recs, err := st.ListTriggers(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Trigger, 0, len(recs))
	for _, r := range recs {
		t, err := decode(r)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// Delete removes a trigger and its job.
func Delete(ctx context.Context, st Store, idOrName string) error {
	t, err := Get(ctx, st, idOrName)
	if err != nil {
		return err
	}
	if t.JobID != "" {
		if err := st.DeleteCronJob(ctx, t.JobID); err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
	}
	return st.DeleteTrigger(ctx, t.ID)
}

// Request is the run request of one run of t.
func Request(t Trigger) runqueue.Request {
	return runqueue.Request{Prompt: t.Prompt, Dir: t.Dir, Options: t.Options,
		Origin: runqueue.Origin{Kind: runqueue.OriginTrigger, TriggerID: t.ID, Retry: t.Retry}}
}

// Enqueue asks the next `gantry serve` on the store to run t once, as soon
// as it ticks: a one-shot durable job due now. It is how a run is
// requested when no serve process can be reached.
func Enqueue(ctx context.Context, st store.CronJobs, t Trigger, now time.Time) (store.CronJob, error) {
	opts, err := json.Marshal(t.Options)
	if err != nil {
		return store.CronJob{}, err
	}
	now = now.Truncate(time.Second)
	j := store.CronJob{Cron: "now", Prompt: t.Prompt, Dir: t.Dir, Options: opts, Retry: t.Retry, TriggerID: t.ID,
		CreatedAt: now, NextAt: now, NextScheduled: now}
	return st.CreateCronJob(ctx, j)
}
