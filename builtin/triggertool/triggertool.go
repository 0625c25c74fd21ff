// Package triggertool holds the RemoteTrigger tool: it lists, shows,
// creates, changes and runs triggers (named, stored run templates — see
// package trigger) and lists their runs and run logs. It talks to a remote
// `gantry serve` when one is configured ([Options.Remote]), else to the
// durable store of the session, where a run request is handed to the local
// serve process (or, when none is running, queued for the next one).
//
// A trigger a session creates or changes is never wider than the session:
// its directory is the session's (or inside it), its permission mode the
// session's or narrower, and it carries no allow rules. Reading is allowed
// without a prompt; creating, changing and running ask unless an allow
// rule names the tool.
package triggertool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gantry-dev/gantry/internal/textutil"

	"github.com/gantry-dev/gantry/internal/trigger"
	"github.com/gantry-dev/gantry/runqueue"
	"github.com/gantry-dev/gantry/serveapi"
	"github.com/gantry-dev/gantry/store"
	"github.com/gantry-dev/gantry/tool"
)

// Name is the tool's name.
const Name = "RemoteTrigger"

// Input is the tool's input.
type Input struct {
	Action    string         `json:"action" enum:"list,get,create,update,run,list_runs,get_run_log" jsonschema:"list: all triggers; get: one trigger; create/update: a trigger from body; run: start a run of trigger_id now; list_runs: the runs of trigger_id (or of every trigger); get_run_log: the events of run session_id from cursor."`
	TriggerID string         `json:"trigger_id,omitempty" jsonschema:"The trigger's id or name (get, update, run, list_runs)."`
	SessionID string         `json:"session_id,omitempty" jsonschema:"The run's id, as list_runs gives it (get_run_log)."`
	Cursor    string         `json:"cursor,omitempty" jsonschema:"get_run_log: the next_cursor of the previous page (empty = from the start)."`
	Body      map[string]any `json:"body,omitempty" jsonschema:"create/update: {name, description, prompt, dir, model, permission_mode, disallowed_tools, max_turns, max_budget_usd, cron (5 fields, local time), timezone, catchup (once|none), retry}; update changes only the fields given."`
}

// Options configure the tool.
type Options struct {
	// Remote, when set, returns the client of the serve process the tool
	// talks to for every action (a configured remote serve). Nil: the
	// session's durable store.
	Remote func() (*serveapi.Client, error)
	// Local, when set, finds the serve process running on the local store,
	// to which run requests are sent (nil or an error: the run is queued
	// in the store for the next serve).
	Local func() (*serveapi.Client, error)
}

const description = `Manages triggers: named, stored agent-run templates (prompt, directory, model, permissions, optional cron schedule) that gantry serve runs — on their schedule, or now with action "run". list/get show triggers; create/update take a body; run starts a run and returns its id; list_runs shows a trigger's runs; get_run_log pages through a run's events (stream-json lines). A trigger you create runs in this session's directory (or a subdirectory) with this session's permission mode or a narrower one.`

// New returns the RemoteTrigger tool.
func New(o Options) tool.Tool {
	return tool.Must(tool.New(Name, description,
		func(ctx context.Context, env *tool.Env, in Input) (*tool.Result, error) {
			b, err := backendOf(env, o)
			if err != nil {
				return tool.ErrorResult(err), nil
			}
			res, err := do(ctx, env, b, in)
			if err != nil {
				if modelError(err) {
					return tool.ErrorResult(err), nil
				}
				return nil, err
			}
			return res, nil
		},
		tool.TraitsFunc(func(in Input) tool.Traits {
			if readOnly(in.Action) {
				return tool.ReadOnlyTraits
			}
			return tool.Traits{NonDestructive: true}
		}),
		tool.PermissionFunc(func(_ context.Context, _ *tool.Env, in Input) tool.PermissionResult {
			if readOnly(in.Action) {
				return tool.PermissionResult{Behavior: tool.Allow, Reason: "reads triggers and runs"}
			}
			// Starting or scheduling unattended runs: left to the rules
			// and the mode (it asks unless an allow rule names the tool).
			return tool.PermissionResult{}
		}),
		tool.DescribeFunc(func(in Input) string {
			s := "RemoteTrigger " + in.Action
			if in.TriggerID != "" {
				s += " " + in.TriggerID
			}
			return s
		}),
	))
}

func readOnly(action string) bool {
	switch action {
	case "list", "get", "list_runs", "get_run_log":
		return true
	}
	return false
}

func modelError(err error) bool {
	for _, e := range []error{store.ErrNotFound, store.ErrInvalid, store.ErrExists, runqueue.ErrNotFound, runqueue.ErrInvalid, runqueue.ErrDuplicate, runqueue.ErrEnded, errUsage} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

var errUsage = errors.New("usage")

// backend is where the tool reads and writes.
type backend struct {
	remote *serveapi.Client // every action (nil = local)
	store  interface {
		trigger.Store
		store.Runs
	}
	local func() (*serveapi.Client, error)
}

func backendOf(env *tool.Env, o Options) (backend, error) {
	if o.Remote != nil {
		c, err := o.Remote()
		if err != nil {
			return backend{}, fmt.Errorf("the configured gantry serve is unavailable: %w", err)
		}
		return backend{remote: c}, nil
	}
	tr, err1 := tool.Use[store.Triggers](env)
	jobs, err2 := tool.Use[store.CronJobs](env)
	runs, err3 := tool.Use[store.Runs](env)
	if err := errors.Join(err1, err2, err3); err != nil {
		return backend{}, fmt.Errorf("triggers need the durable store or a configured gantry serve, and this session has neither")
	}
	return backend{store: localStore{tr, jobs, runs}, local: o.Local}, nil
}

type localStore struct {
	store.Triggers
	store.CronJobs
	store.Runs
}

func bounds(env *tool.Env) *trigger.Bounds {
	return &trigger.Bounds{Mode: env.Mode, Dirs: append([]string{env.WorkDir}, env.AdditionalDirs...)}
}

func do(ctx context.Context, env *tool.Env, b backend, in Input) (*tool.Result, error) {
	need := func(what, v string) error {
		if strings.TrimSpace(v) == "" {
			return fmt.Errorf("%w: action %s needs %s", errUsage, in.Action, what)
		}
		return nil
	}
	switch in.Action {
	case "list":
		ts, err := b.list(ctx)
		if err != nil {
			return nil, err
		}
		return structured(renderTriggers(ts), map[string]any{"triggers": ts}), nil
	case "get":
		if err := need("trigger_id", in.TriggerID); err != nil {
			return nil, err
		}
		t, err := b.get(ctx, in.TriggerID)
		if err != nil {
			return nil, err
		}
		return structured(renderTriggers([]trigger.Trigger{t}), t), nil
	case "create", "update":
		if in.Action == "update" {
			if err := need("trigger_id", in.TriggerID); err != nil {
				return nil, err
			}
		}
		raw, err := json.Marshal(in.Body)
		if err != nil {
			return nil, err
		}
		body, err := trigger.ParseBody(raw)
		if err != nil {
			return nil, err
		}
		t, err := b.save(ctx, env, in.Action, in.TriggerID, body)
		if err != nil {
			return nil, err
		}
		return structured(fmt.Sprintf("Trigger %s (%s) %sd.\n%s", t.Name, t.ID, in.Action, renderTriggers([]trigger.Trigger{t})), t), nil
	case "run":
		if err := need("trigger_id", in.TriggerID); err != nil {
			return nil, err
		}
		return b.run(ctx, in.TriggerID)
	case "list_runs":
		runs, err := b.runs(ctx, in.TriggerID)
		if err != nil {
			return nil, err
		}
		return structured(renderRuns(runs), map[string]any{"runs": runs}), nil
	case "get_run_log":
		if err := need("session_id", in.SessionID); err != nil {
			return nil, err
		}
		after := int64(0)
		if in.Cursor != "" {
			n, err := strconv.ParseInt(in.Cursor, 10, 64)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("%w: cursor %q is not a next_cursor this tool gave", errUsage, in.Cursor)
			}
			after = n
		}
		return b.log(ctx, in.SessionID, after)
	}
	return nil, fmt.Errorf("%w: unknown action %q", errUsage, in.Action)
}

func structured(text string, v any) *tool.Result {
	r := tool.TextResult(text)
	r.Structured = v
	return r
}

func (b backend) list(ctx context.Context) ([]trigger.Trigger, error) {
	if b.remote != nil {
		var out struct {
			Triggers []trigger.Trigger `json:"triggers"`
		}
		err := b.remote.Do(ctx, http.MethodGet, "/v1/triggers", nil, &out)
		return out.Triggers, err
	}
	return trigger.List(ctx, b.store)
}

func (b backend) get(ctx context.Context, id string) (trigger.Trigger, error) {
	if b.remote != nil {
		var t trigger.Trigger
		err := b.remote.Do(ctx, http.MethodGet, "/v1/triggers/"+url.PathEscape(id), nil, &t)
		return t, err
	}
	return trigger.Get(ctx, b.store, id)
}

// save creates or updates a trigger within the session's bounds.
func (b backend) save(ctx context.Context, env *tool.Env, action, id string, body trigger.Body) (trigger.Trigger, error) {
	bd := bounds(env)
	if b.remote == nil {
		if action == "create" {
			return trigger.Create(ctx, b.store, body, env.WorkDir, bd, time.Now())
		}
		return trigger.Update(ctx, b.store, id, body, bd, time.Now())
	}
	// Remote: check the bounds here, on the trigger as it will be.
	if action == "create" && body.Dir == nil {
		body.Dir = &env.WorkDir
	}
	var t trigger.Trigger
	if action == "update" {
		old, err := b.get(ctx, id)
		if err != nil {
			return trigger.Trigger{}, err
		}
		t = old
	}
	merged := t
	mergeCheck(&merged, body)
	if err := bd.Check(merged.Template); err != nil {
		return trigger.Trigger{}, err
	}
	var out trigger.Trigger
	if action == "create" {
		err := b.remote.Do(ctx, http.MethodPost, "/v1/triggers", body, &out)
		return out, err
	}
	err := b.remote.Do(ctx, http.MethodPatch, "/v1/triggers/"+url.PathEscape(t.ID), body, &out)
	return out, err
}

// mergeCheck applies the permission-relevant fields of body to t.
func mergeCheck(t *trigger.Trigger, body trigger.Body) {
	if body.Dir != nil {
		t.Dir = *body.Dir
	}
	if body.PermissionMode != nil {
		t.Options.Mode = *body.PermissionMode
	}
	if body.AllowedTools != nil {
		t.Options.Allow = body.AllowedTools
	}
}

func (b backend) run(ctx context.Context, id string) (*tool.Result, error) {
	c := b.remote
	if c == nil && b.local != nil {
		if lc, err := b.local(); err == nil {
			c = lc
		}
	}
	if c != nil {
		t, err := b.get(ctx, id)
		if err != nil {
			return nil, err
		}
		var r runqueue.Run
		if err := c.Do(ctx, http.MethodPost, "/v1/triggers/"+url.PathEscape(t.ID)+"/run", nil, &r); err != nil {
			return nil, err
		}
		return structured(fmt.Sprintf("Started run %s of trigger %s (%s). Follow it with list_runs or get_run_log (session_id %q).", r.ID, t.Name, r.Status, r.ID), r), nil
	}
	t, err := trigger.Get(ctx, b.store, id)
	if err != nil {
		return nil, err
	}
	j, err := trigger.Enqueue(ctx, b.store, t, time.Now())
	if err != nil {
		return nil, err
	}
	return structured(fmt.Sprintf("No gantry serve is running on this machine's store: the run of trigger %s is queued (job %s) and starts when `gantry serve` runs. list_runs shows it once started.", t.Name, j.ID), j), nil
}

func (b backend) runs(ctx context.Context, id string) ([]runqueue.Run, error) {
	f := runqueue.Filter{Origin: runqueue.OriginTrigger, Limit: 50}
	if id != "" {
		t, err := b.get(ctx, id)
		if err != nil {
			return nil, err
		}
		f.TriggerID = t.ID
	}
	if b.remote != nil {
		return b.remote.List(ctx, f)
	}
	recs, err := b.store.ListRuns(ctx, store.RunFilter{Origin: f.Origin, TriggerID: f.TriggerID, Limit: f.Limit})
	if err != nil {
		return nil, err
	}
	out := make([]runqueue.Run, 0, len(recs))
	for _, rec := range recs {
		var r runqueue.Run
		if json.Unmarshal(rec.Data, &r) == nil {
			r.Status = runqueue.Status(rec.Status)
			out = append(out, r)
		}
	}
	return out, nil
}

// logPage is how many events get_run_log returns at once.
const logPage = 50

func (b backend) log(ctx context.Context, runID string, after int64) (*tool.Result, error) {
	var page serveapi.EventPage
	if b.remote != nil {
		var err error
		if page, err = b.remote.EventPage(ctx, runID, after, logPage); err != nil {
			return nil, err
		}
	} else {
		rec, err := b.store.GetRun(ctx, runID)
		if err != nil {
			return nil, err
		}
		evs, err := b.store.RunEvents(ctx, runID, after, logPage)
		if err != nil {
			return nil, err
		}
		page.Next = after
		for _, e := range evs {
			page.Events = append(page.Events, runqueue.Event{Seq: e.Seq, Type: e.Type, Data: e.Data})
			page.Next = e.Seq
		}
		if rec.Status != store.RunQueued && rec.Status != store.RunRunning {
			page.Ended = len(evs) < logPage
		}
	}
	var sb strings.Builder
	for _, e := range page.Events {
		sb.Write(e.Data)
		sb.WriteByte('\n')
	}
	switch {
	case page.Ended:
		sb.WriteString("(end of the run's log)")
	case len(page.Events) == 0:
		sb.WriteString("(no new events yet; the run is still going)")
	default:
		fmt.Fprintf(&sb, "(more: call again with cursor %q)", strconv.FormatInt(page.Next, 10))
	}
	return structured(sb.String(), map[string]any{"events": page.Events, "next_cursor": strconv.FormatInt(page.Next, 10), "ended": page.Ended}), nil
}

func renderTriggers(ts []trigger.Trigger) string {
	if len(ts) == 0 {
		return "No triggers."
	}
	var sb strings.Builder
	for _, t := range ts {
		sched := "on demand"
		if t.Cron != "" {
			sched = "cron " + t.Cron
		}
		mode := string(t.Options.Mode)
		if mode == "" {
			mode = "default"
		}
		fmt.Fprintf(&sb, "%s  %s  [%s, mode %s]  %s\n  %s\n", t.ID, t.Name, sched, mode, t.Dir, oneLine(t.Prompt))
	}
	return strings.TrimRight(sb.String(), "\n")
}

func renderRuns(runs []runqueue.Run) string {
	if len(runs) == 0 {
		return "No runs."
	}
	var sb strings.Builder
	for _, r := range runs {
		res := r.Error
		if r.Result != nil {
			res = r.Result.Text
		}
		fmt.Fprintf(&sb, "%s  %-9s  %s  %s\n", r.ID, r.Status, r.CreatedAt.Local().Format("2006-01-02 15:04"), oneLine(res))
	}
	return strings.TrimRight(sb.String(), "\n")
}

func oneLine(s string) string {
	return textutil.OneLine(s, 100)
}
