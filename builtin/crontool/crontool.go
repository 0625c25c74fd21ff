// Package crontool holds the scheduling tools: CronCreate, CronDelete and
// CronList. A job is a prompt on a 5-field cron schedule in local time.
// A session-only job (durable false, the default) lives in the session's
// [cron.SessionJobs] (a service of the session) and fires between its turns as
// a new user turn; a durable job is stored in the durable store
// ([store.CronJobs] among the services) and run by `gantry serve`, in the
// session's directory and permission mode, even after the session ended.
//
// Session-only jobs change only the session's own schedule, so CronCreate
// and CronDelete allow themselves for them; creating a durable job (it will
// run unattended later) is left to the rules and the mode: it asks unless
// an allow rule names CronCreate.
package crontool

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gantry-dev/gantry/internal/textutil"

	"github.com/gantry-dev/gantry/cron"
	"github.com/gantry-dev/gantry/runqueue"
	"github.com/gantry-dev/gantry/store"
	"github.com/gantry-dev/gantry/tool"
)

// CreateInput is the input of CronCreate.
type CreateInput struct {
	Cron      string `json:"cron" jsonschema:"A 5-field cron expression in local time: minute hour day-of-month month day-of-week (\"*/10 * * * *\" every ten minutes, \"0 9 * * 1-5\" weekdays at 9:00)."`
	Prompt    string `json:"prompt" jsonschema:"The prompt to run at each fire, written to stand alone."`
	Recurring *bool  `json:"recurring,omitempty" jsonschema:"true (default): fire at every match until the job expires (7 days); false: fire once, at the next match."`
	Durable   *bool  `json:"durable,omitempty" jsonschema:"false (default): the job lives with this session and fires between its turns; true: stored and run by gantry serve, also after this session ends."`
}

// DeleteInput is the input of CronDelete.
type DeleteInput struct {
	ID string `json:"id" jsonschema:"The job's id, as CronCreate or CronList gave it."`
}

// Job is one job as the tools report it.
type Job struct {
	ID        string    `json:"id"`
	Cron      string    `json:"cron"`
	Prompt    string    `json:"prompt"`
	Recurring bool      `json:"recurring"`
	Durable   bool      `json:"durable"`
	NextRun   time.Time `json:"next_run,omitzero"`
	ExpiresAt time.Time `json:"expires_at,omitzero"`
	Dir       string    `json:"dir,omitempty"`
}

func fromStore(j store.CronJob, durable bool) Job {
	return Job{ID: j.ID, Cron: j.Cron, Prompt: j.Prompt, Recurring: j.Recurring, Durable: durable,
		NextRun: j.NextAt, ExpiresAt: j.ExpiresAt, Dir: j.Dir}
}

const (
	createDescription = `Schedules a prompt on a cron schedule (5 fields, local time). A session-only job (the default) fires between this session's turns as a new user message and ends with the session; a durable job (durable: true) is stored and run by gantry serve as its own agent run in this directory with this session's permission mode, also after the session ended. Recurring jobs (the default) expire after 7 days; recurring: false fires once. Jobs sharing a minute are spread by a small delay.`
	deleteDescription = `Deletes a scheduled job (session-only or durable) by its id.`
	listDescription   = `Lists the scheduled jobs: this session's and the durable ones, with their schedule, next run and prompt.`
)

// Tools returns CronCreate, CronDelete and CronList.
func Tools() []tool.Tool { return []tool.Tool{NewCreate(), NewDelete(), NewList()} }

func orTrue(b *bool) bool { return b == nil || *b }

// NewCreate returns CronCreate.
func NewCreate() tool.Tool {
	return tool.Must(tool.New("CronCreate", createDescription,
		func(ctx context.Context, env *tool.Env, in CreateInput) (*tool.Result, error) {
			sp := cron.Spec{Cron: in.Cron, Prompt: in.Prompt, Recurring: orTrue(in.Recurring), Dir: env.WorkDir, CreatedBy: env.SessionID}
			if in.Durable != nil && *in.Durable {
				return createDurable(ctx, env, sp)
			}
			s, err := tool.Use[*cron.SessionJobs](env)
			if err != nil {
				return tool.Errorf("Session-only jobs are not available in this session (%v).", err), nil
			}
			j, err := s.Add(sp)
			if err != nil {
				return tool.ErrorResult(err), nil
			}
			return created(fromStore(j, false)), nil
		},
		tool.WithTraits(tool.Traits{NonDestructive: true}),
		tool.PermissionFunc(func(_ context.Context, _ *tool.Env, in CreateInput) tool.PermissionResult {
			if in.Durable != nil && *in.Durable {
				// No opinion: an allow rule (CronCreate) or the mode decides,
				// else the call asks like any tool that is not read-only.
				return tool.PermissionResult{}
			}
			return tool.PermissionResult{Behavior: tool.Allow, Reason: "a session-only job changes only this session's schedule"}
		}),
		tool.DescribeFunc(func(in CreateInput) string {
			kind := "session"
			if in.Durable != nil && *in.Durable {
				kind = "durable"
			}
			return fmt.Sprintf("Schedule (%s, %s): %s", kind, in.Cron, oneLine(in.Prompt))
		}),
	))
}

// createDurable stores a durable job with the session's permission mode.
func createDurable(ctx context.Context, env *tool.Env, sp cron.Spec) (*tool.Result, error) {
	jobs, err := tool.Use[store.CronJobs](env)
	if err != nil {
		return tool.Errorf("Durable jobs need the durable store, which this session does not have (%v); create a session-only job instead.", err), nil
	}
	mode, err := JobMode(env.Mode)
	if err != nil {
		return tool.ErrorResult(err), nil
	}
	sp.Options = runqueue.Options{Mode: mode}
	j, err := cron.NewJob("", sp, time.Now())
	if err != nil {
		return tool.ErrorResult(err), nil
	}
	if j, err = jobs.CreateCronJob(ctx, j); err != nil {
		if errors.Is(err, store.ErrInvalid) {
			return tool.ErrorResult(err), nil
		}
		return nil, err
	}
	r := created(fromStore(j, true))
	r.Content[0].Text += "\nIt runs when a gantry serve process is running on this machine's store."
	return r, nil
}

// JobMode is the permission mode a durable job created in a session of
// mode m runs in: the session's own, never wider. bypassPermissions is
// refused (an unattended run may not skip every check).
func JobMode(m tool.Mode) (tool.Mode, error) {
	switch m {
	case "":
		return tool.ModeDefault, nil
	case tool.ModeBypassPermissions:
		return "", errors.New("a durable job cannot be created in bypassPermissions mode: it would run unattended with every check skipped")
	}
	return m, nil
}

func created(j Job) *tool.Result {
	kind := "Recurring"
	if !j.Recurring {
		kind = "One-shot"
	}
	where := "session-only"
	if j.Durable {
		where = "durable"
	}
	text := fmt.Sprintf("%s %s job %s scheduled (cron %q); next run %s.", kind, where, j.ID, j.Cron, j.NextRun.Local().Format("Mon 2006-01-02 15:04 MST"))
	if !j.ExpiresAt.IsZero() {
		text += fmt.Sprintf(" It expires %s.", j.ExpiresAt.Local().Format("2006-01-02 15:04 MST"))
	}
	r := tool.TextResult(text)
	r.Structured = j
	return r
}

// NewDelete returns CronDelete.
func NewDelete() tool.Tool {
	return tool.Must(tool.New("CronDelete", deleteDescription,
		func(ctx context.Context, env *tool.Env, in DeleteInput) (*tool.Result, error) {
			id := strings.TrimSpace(in.ID)
			if s, err := tool.Use[*cron.SessionJobs](env); err == nil && s.Delete(id) {
				return tool.TextResult("Deleted session-only job " + id + "."), nil
			}
			if jobs, err := tool.Use[store.CronJobs](env); err == nil {
				err := jobs.DeleteCronJob(ctx, id)
				if err == nil {
					return tool.TextResult("Deleted durable job " + id + "."), nil
				}
				if !errors.Is(err, store.ErrNotFound) {
					return nil, err
				}
			}
			return tool.Errorf("No scheduled job has the id %q (CronList shows them).", id), nil
		},
		tool.WithTraits(tool.Traits{NonDestructive: true}),
		tool.PermissionFunc(func(context.Context, *tool.Env, DeleteInput) tool.PermissionResult {
			return tool.PermissionResult{Behavior: tool.Allow, Reason: "deleting a job only stops future runs"}
		}),
		tool.DescribeFunc(func(in DeleteInput) string { return "Delete scheduled job " + oneLine(in.ID) }),
	))
}

// NewList returns CronList.
func NewList() tool.Tool {
	return tool.Must(tool.NewNoInput("CronList", listDescription,
		func(ctx context.Context, env *tool.Env) (*tool.Result, error) {
			jobs := []Job{}
			s, serr := tool.Use[*cron.SessionJobs](env)
			if serr == nil {
				for _, j := range s.List() {
					jobs = append(jobs, fromStore(j, false))
				}
			}
			st, derr := tool.Use[store.CronJobs](env)
			if derr == nil {
				all, err := st.ListCronJobs(ctx)
				if err != nil {
					return nil, err
				}
				for _, j := range all {
					jobs = append(jobs, fromStore(j, true))
				}
			}
			text := Render(jobs)
			switch {
			case serr != nil && derr != nil:
				// "No scheduled jobs." would claim an empty schedule that
				// was never looked at.
				return tool.Errorf("Scheduling is not available in this session: it has neither a session scheduler nor the durable store (gantry serve's database), so no job can be listed or created."), nil
			case serr != nil:
				text += "\n(This session has no session-only scheduler: only durable jobs are listed.)"
			case derr != nil:
				text += "\n(Durable jobs are not listed: this session has no durable store.)"
			}
			r := tool.TextResult(text)
			r.Structured = map[string]any{"jobs": jobs, "session_scheduler": serr == nil, "durable_store": derr == nil}
			return r, nil
		},
		tool.WithTraits(tool.ReadOnlyTraits),
	))
}

// Render lists jobs one per line.
func Render(jobs []Job) string {
	if len(jobs) == 0 {
		return "No scheduled jobs."
	}
	var b strings.Builder
	for _, j := range jobs {
		kind, where := "recurring", "session"
		if !j.Recurring {
			kind = "once"
		}
		if j.Durable {
			where = "durable"
		}
		fmt.Fprintf(&b, "%s  %-15s  %-9s  %-7s  next %s  %s\n", j.ID, j.Cron, kind, where,
			j.NextRun.Local().Format("2006-01-02 15:04"), oneLine(j.Prompt))
	}
	return strings.TrimRight(b.String(), "\n")
}

func oneLine(s string) string {
	return textutil.OneLine(s, 80)
}
