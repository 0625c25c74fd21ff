// Package task holds the shared task-list tools: TaskCreate, TaskGet,
// TaskList and TaskUpdate. The list lives in a [store.Tasks] found among the
// environment's services and is shared by a session, its subagents and its
// team (the [store.Scope] service names the list and the calling agent;
// without one the list is the session's own).
//
// The tools change only Gantry's own task list, so they allow themselves
// (deny rules and plan mode still apply); their input shapes match the
// reference agent's.
package task

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/gantry-dev/gantry/internal/textutil"

	"github.com/gantry-dev/gantry/store"
	"github.com/gantry-dev/gantry/tool"
)

// CreateInput is the input of TaskCreate.
type CreateInput struct {
	Subject     string         `json:"subject" jsonschema:"A short imperative title (\"Fix the login test\")."`
	Description string         `json:"description" jsonschema:"What needs doing and how to know it is done."`
	ActiveForm  string         `json:"activeForm,omitempty" jsonschema:"Present-continuous form shown while the task runs (\"Fixing the login test\")."`
	Metadata    map[string]any `json:"metadata,omitempty" jsonschema:"Free-form data to keep with the task."`
}

// GetInput is the input of TaskGet.
type GetInput struct {
	TaskID string `json:"taskId" jsonschema:"The task's id."`
}

// UpdateInput is the input of TaskUpdate.
type UpdateInput struct {
	TaskID       string         `json:"taskId" jsonschema:"The task's id."`
	Subject      *string        `json:"subject,omitempty" jsonschema:"New title."`
	Description  *string        `json:"description,omitempty" jsonschema:"New description."`
	ActiveForm   *string        `json:"activeForm,omitempty" jsonschema:"New present-continuous form."`
	Status       *string        `json:"status,omitempty" enum:"pending,in_progress,completed,deleted" jsonschema:"New status; in_progress claims the task, deleted removes it from the list."`
	AddBlocks    []string       `json:"addBlocks,omitempty" jsonschema:"Ids of tasks that cannot start until this one is completed."`
	AddBlockedBy []string       `json:"addBlockedBy,omitempty" jsonschema:"Ids of tasks that must be completed before this one."`
	Owner        *string        `json:"owner,omitempty" jsonschema:"The agent working on the task (empty to release it)."`
	Metadata     map[string]any `json:"metadata,omitempty" jsonschema:"Keys to merge into the task's metadata; a null value removes a key."`
}

// ListResult is the structured result of TaskList.
type ListResult struct {
	Tasks []store.Task `json:"tasks"`
	// Claimable are the ids of pending, unowned tasks whose blockers are all
	// completed.
	Claimable []string `json:"claimable"`
}

const (
	createDescription = `Adds a task to the shared task list (shared with your subagents and team). Use it to plan multi-step work that others may pick up, or that must survive the conversation. Give each task a clear subject and a description that says when it is done; link order with TaskUpdate's addBlocks/addBlockedBy.`
	getDescription    = `Shows one task of the shared task list: subject, description, status, owner, dependencies and metadata.`
	listDescription   = `Lists the shared task list: every task that is not deleted with its status, owner and dependencies, and which tasks are claimable (pending, unowned, not blocked). Check it before picking up work and after completing a task.`
	updateDescription = `Changes a task of the shared task list. Set status to in_progress when you start a task (this claims it; a task owned by another agent or blocked by an unfinished task cannot be claimed), to completed when it is done, to deleted to drop it. addBlocks/addBlockedBy add dependencies (a cycle is refused). Metadata keys are merged; a null value removes one.`
)

// maxRetries bounds the read-modify-write retries of TaskUpdate when other
// agents change the task at the same moment.
const maxRetries = 8

// scope returns the caller's list and name.
func scope(env *tool.Env) (list, name string) {
	sc, _ := tool.Use[store.Scope](env)
	sid := ""
	if env != nil {
		sid = env.SessionID
	}
	return sc.List(sid), sc.Name
}

func tasks(env *tool.Env) (store.Tasks, *tool.Result) {
	ts, err := tool.Use[store.Tasks](env)
	if err != nil {
		return nil, tool.Errorf("The task list is not available in this session (%v).", err)
	}
	return ts, nil
}

// allowSelf lets the task tools run without a prompt: they change only the
// agent's own task list.
func allowSelf[In any](what string) tool.Option {
	return tool.PermissionFunc(func(context.Context, *tool.Env, In) tool.PermissionResult {
		return tool.PermissionResult{Behavior: tool.Allow, Reason: what + " changes only the session's task list"}
	})
}

// modelError turns a store error into a result the model can act on; other
// errors are returned as they are.
func modelError(err error) (*tool.Result, error) {
	for _, known := range []error{store.ErrNotFound, store.ErrInvalid, store.ErrCycle, store.ErrClaimed, store.ErrNotClaimable, store.ErrVersion} {
		if errors.Is(err, known) {
			return tool.ErrorResult(err), nil
		}
	}
	return nil, err
}

// Tools returns TaskCreate, TaskGet, TaskList and TaskUpdate.
func Tools() []tool.Tool {
	return []tool.Tool{NewCreate(), NewGet(), NewList(), NewUpdate()}
}

// NewCreate returns TaskCreate.
func NewCreate() tool.Tool {
	return tool.Must(tool.New("TaskCreate", createDescription,
		func(ctx context.Context, env *tool.Env, in CreateInput) (*tool.Result, error) {
			ts, bad := tasks(env)
			if bad != nil {
				return bad, nil
			}
			list, _ := scope(env)
			t, err := ts.CreateTask(ctx, list, store.NewTask{Subject: in.Subject, Description: in.Description, ActiveForm: in.ActiveForm, Metadata: in.Metadata})
			if err != nil {
				return modelError(err)
			}
			r := tool.TextResult(fmt.Sprintf("Task #%s created: %s", t.ID, t.Subject))
			r.Structured = t
			return r, nil
		},
		tool.WithTraits(tool.Traits{NonDestructive: true, Planning: true}), // writes run alone, in the model's order; the task list is planning state (runs in plan mode)
		allowSelf[CreateInput]("TaskCreate"),
		tool.DescribeFunc(func(in CreateInput) string { return "Create task: " + oneLine(in.Subject) }),
	))
}

// NewGet returns TaskGet.
func NewGet() tool.Tool {
	return tool.Must(tool.New("TaskGet", getDescription,
		func(ctx context.Context, env *tool.Env, in GetInput) (*tool.Result, error) {
			ts, bad := tasks(env)
			if bad != nil {
				return bad, nil
			}
			list, _ := scope(env)
			t, err := ts.GetTask(ctx, list, trimID(in.TaskID))
			if err != nil {
				return modelError(err)
			}
			r := tool.TextResult(Render(t))
			r.Structured = t
			return r, nil
		},
		tool.WithTraits(tool.ReadOnlyTraits),
		tool.DescribeFunc(func(in GetInput) string { return "Get task #" + oneLine(trimID(in.TaskID)) }),
	))
}

// NewList returns TaskList.
func NewList() tool.Tool {
	return tool.Must(tool.NewNoInput("TaskList", listDescription,
		func(ctx context.Context, env *tool.Env) (*tool.Result, error) {
			ts, bad := tasks(env)
			if bad != nil {
				return bad, nil
			}
			list, _ := scope(env)
			all, err := ts.ListTasks(ctx, list)
			if err != nil {
				return nil, err
			}
			res := ListResult{Tasks: all, Claimable: Claimable(all)}
			if res.Tasks == nil {
				res.Tasks = []store.Task{}
			}
			if res.Claimable == nil {
				res.Claimable = []string{}
			}
			r := tool.TextResult(RenderList(all))
			r.Structured = res
			return r, nil
		},
		tool.WithTraits(tool.ReadOnlyTraits),
	))
}

// Claimable returns the ids of the claimable tasks of a listing (deleted
// tasks are absent from it, so they count as done).
func Claimable(all []store.Task) []string {
	open := map[string]bool{}
	for _, t := range all {
		open[t.ID] = t.Open()
	}
	var out []string
	for _, t := range all {
		if store.Claimable(t, func(id string) bool { return !open[id] }) {
			out = append(out, t.ID)
		}
	}
	return out
}

// NewUpdate returns TaskUpdate.
func NewUpdate() tool.Tool {
	return tool.Must(tool.New("TaskUpdate", updateDescription,
		func(ctx context.Context, env *tool.Env, in UpdateInput) (*tool.Result, error) {
			ts, bad := tasks(env)
			if bad != nil {
				return bad, nil
			}
			list, me := scope(env)
			id := trimID(in.TaskID)
			for range maxRetries {
				cur, err := ts.GetTask(ctx, list, id)
				if err != nil {
					return modelError(err)
				}
				p, msg := patch(cur, in, me)
				if msg != "" {
					return tool.Errorf("%s", msg), nil
				}
				if p.Status != nil && *p.Status == store.TaskInProgress && cur.Status != store.TaskInProgress {
					if res := checkClaim(ctx, ts, list, cur, p); res != nil {
						return res, nil
					}
				}
				t, err := ts.UpdateTask(ctx, list, id, p)
				if errors.Is(err, store.ErrVersion) {
					continue // someone else changed it: read again, check again
				}
				if err != nil {
					return modelError(err)
				}
				r := tool.TextResult(fmt.Sprintf("Task #%s updated.\n%s", t.ID, Render(t)))
				r.Structured = t
				return r, nil
			}
			return tool.Errorf("Task #%s keeps changing under concurrent updates; read it with TaskGet and try again.", id), nil
		},
		tool.WithTraits(tool.Traits{NonDestructive: true, Planning: true}), // writes run alone, in the model's order; the task list is planning state (runs in plan mode)
		allowSelf[UpdateInput]("TaskUpdate"),
		tool.DescribeFunc(func(in UpdateInput) string {
			d := "Update task #" + oneLine(trimID(in.TaskID))
			if in.Status != nil {
				d += " → " + oneLine(*in.Status)
			}
			return d
		}),
	))
}

// patch builds the store patch of an update read against cur, or says why
// the update is refused.
func patch(cur store.Task, in UpdateInput, me string) (store.TaskPatch, string) {
	p := store.TaskPatch{
		Subject: in.Subject, Description: in.Description, ActiveForm: in.ActiveForm, Owner: in.Owner,
		AddBlocks: trimIDs(in.AddBlocks), AddBlockedBy: trimIDs(in.AddBlockedBy), Metadata: in.Metadata,
		IfVersion: cur.Version,
	}
	if in.Status != nil {
		st := store.TaskStatus(*in.Status)
		p.Status = &st
	}
	if p.Status != nil && *p.Status == store.TaskInProgress {
		// Starting a task claims it: for the owner named in the call,
		// else for the caller, else for whoever owns it already.
		owner := cur.Owner
		switch {
		case p.Owner != nil:
			owner = *p.Owner
		case me != "":
			owner = me
		}
		if cur.Owner != "" && owner != cur.Owner {
			return p, fmt.Sprintf("Task #%s is owned by %s; pick a claimable task from TaskList instead.", cur.ID, cur.Owner)
		}
		if owner != "" {
			p.Owner = &owner
		}
	}
	return p, ""
}

// checkClaim refuses to start a task blocked by unfinished tasks.
func checkClaim(ctx context.Context, ts store.Tasks, list string, cur store.Task, p store.TaskPatch) *tool.Result {
	var open []string
	for _, b := range cur.BlockedBy {
		bt, err := ts.GetTask(ctx, list, b)
		if err == nil && bt.Open() {
			open = append(open, "#"+b)
		}
	}
	for _, b := range p.AddBlockedBy {
		if bt, err := ts.GetTask(ctx, list, b); err == nil && bt.Open() {
			open = append(open, "#"+b)
		}
	}
	if len(open) > 0 {
		return tool.Errorf("Task #%s is blocked by %s, which %s not completed yet; work on a claimable task first.", cur.ID, strings.Join(open, ", "), map[bool]string{true: "is", false: "are"}[len(open) == 1])
	}
	return nil
}

// trimID accepts "#3" for "3".
func trimID(id string) string { return strings.TrimPrefix(strings.TrimSpace(id), "#") }

func trimIDs(ids []string) []string {
	var out []string
	for _, id := range ids {
		out = append(out, trimID(id))
	}
	return out
}

func oneLine(s string) string {
	return textutil.OneLine(s, 80)
}

// Render shows one task in full.
func Render(t store.Task) string {
	var b strings.Builder
	fmt.Fprintf(&b, "#%s %s\nstatus: %s", t.ID, t.Subject, t.Status)
	if t.Owner != "" {
		fmt.Fprintf(&b, "\nowner: %s", t.Owner)
	}
	if t.ActiveForm != "" {
		fmt.Fprintf(&b, "\nactiveForm: %s", t.ActiveForm)
	}
	if len(t.BlockedBy) > 0 {
		fmt.Fprintf(&b, "\nblocked by: %s", hashIDs(t.BlockedBy))
	}
	if len(t.Blocks) > 0 {
		fmt.Fprintf(&b, "\nblocks: %s", hashIDs(t.Blocks))
	}
	if len(t.Metadata) > 0 {
		fmt.Fprintf(&b, "\nmetadata: %s", metaString(t.Metadata))
	}
	if t.Description != "" {
		fmt.Fprintf(&b, "\n\n%s", t.Description)
	}
	return b.String()
}

// RenderList shows a listing, one task a line, then what is claimable.
func RenderList(all []store.Task) string {
	if len(all) == 0 {
		return "The task list is empty."
	}
	var b strings.Builder
	open := map[string]bool{}
	for _, t := range all {
		open[t.ID] = t.Open()
	}
	for _, t := range all {
		fmt.Fprintf(&b, "#%s [%s] %s", t.ID, t.Status, t.Subject)
		if t.Owner != "" {
			fmt.Fprintf(&b, " (owner: %s)", t.Owner)
		}
		var waiting []string
		for _, id := range t.BlockedBy {
			if open[id] {
				waiting = append(waiting, id)
			}
		}
		if len(waiting) > 0 && t.Open() {
			fmt.Fprintf(&b, " [blocked by %s]", hashIDs(waiting))
		}
		b.WriteByte('\n')
	}
	if c := Claimable(all); len(c) > 0 {
		fmt.Fprintf(&b, "\nClaimable: %s", hashIDs(c))
	} else {
		b.WriteString("\nClaimable: none")
	}
	return b.String()
}

func hashIDs(ids []string) string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = "#" + id
	}
	return strings.Join(out, ", ")
}

func metaString(m map[string]any) string {
	b, err := json.Marshal(m)
	if err != nil {
		return fmt.Sprint(m)
	}
	return string(b)
}
