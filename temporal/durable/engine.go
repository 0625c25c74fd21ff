package durable

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/gantry-dev/gantry/interaction"
	"github.com/gantry-dev/gantry/runqueue"
	"github.com/gantry-dev/gantry/transcript"
)

// Memo fields of a run: its runqueue.Request and its Spec, as JSON.
const (
	memoRequest = "gantry_request"
	memoSpec    = "gantry_spec"
)

// EngineOptions configure an [Engine]; the zero value of each field is its
// default.
type EngineOptions struct {
	// TaskQueue is the workers' queue ("" = DefaultTaskQueue).
	TaskQueue string
	// Run are the engine's settings for every run.
	Run RunOptions
	// Poll is the longest Events goes without asking a run for new
	// events (0 = DefaultFollowPoll); it is woken sooner by the run's
	// history (see [Follow]).
	Poll time.Duration
	// DataConverter decodes the runs' memos: the client's converter when
	// it has a codec (a claim-check store: package claimcheck); nil = the
	// default converter.
	DataConverter converter.DataConverter
	// Live, when set, is the broker of the runs' live events (text
	// deltas as the model writes them): the workers publish to it (in
	// this process, or through its HTTP handler) and [Engine.Live] reads
	// it.
	Live *Broker
}

// Engine is the run queue (package runqueue) on Temporal: Start starts a
// workflow (the request's Key becomes its id, so a Key starts at most one
// run ever), Get and List read Temporal's records, Events follows a run
// through its events query as stream-json lines, Answer and Cancel are an
// update and a cancellation. It holds nothing itself: any number of
// engines (gantry-temporal serve processes) can share the runs.
type Engine struct {
	c    client.Client
	opts EngineOptions
}

var _ runqueue.Engine = (*Engine)(nil)

// NewEngine returns the engine over c.
func NewEngine(c client.Client, opts EngineOptions) *Engine {
	if opts.TaskQueue == "" {
		opts.TaskQueue = DefaultTaskQueue
	}
	if opts.DataConverter == nil {
		opts.DataConverter = converter.GetDefaultDataConverter()
	}
	return &Engine{c: c, opts: opts}
}

var _ runqueue.Live = (*Engine)(nil)

// Live implements runqueue.Live: the run's live events from the engine's
// broker (without one, none: the sequence ends with ctx).
func (e *Engine) Live(ctx context.Context, id string) iter.Seq[runqueue.Event] {
	if e.opts.Live == nil {
		return func(func(runqueue.Event) bool) { <-ctx.Done() }
	}
	return e.opts.Live.Live(ctx, id)
}

// keyID is the run id of a request with a Key: stable, so that a second
// Start with the Key finds the first run.
func keyID(key string) string {
	sum := sha256.Sum256([]byte("gantry-run-key\x00" + key))
	h := hex.EncodeToString(sum[:16])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// Start implements runqueue.Engine.
func (e *Engine) Start(ctx context.Context, req runqueue.Request) (runqueue.Run, error) {
	if err := req.Validate(); err != nil {
		return runqueue.Run{}, err
	}
	var resume *Conversation
	if req.Options.Resume != "" {
		conv, err := Resumable(ctx, e.c, req.Options.Resume)
		switch {
		case errors.Is(err, ErrNotEnded):
			return runqueue.Run{}, fmt.Errorf("%w: %v", runqueue.ErrInvalid, err)
		case err != nil:
			return runqueue.Run{}, fmt.Errorf("%w: session %s: %v", runqueue.ErrNotFound, req.Options.Resume, err)
		}
		// The record names the session the run continues.
		resume, req.Options.Resume = conv, conv.Session
	}
	spec := SpecOf(req)
	id := transcript.NewUUID()
	if req.Key != "" {
		id = keyID(req.Key)
	}
	err := startWorkflow(ctx, e.c, id, e.opts.TaskQueue, RunInput{Spec: spec, Prompt: req.Prompt, Options: e.opts.Run, Resume: resume}, req)
	if err != nil {
		var started *serviceerror.WorkflowExecutionAlreadyStarted
		if errors.As(err, &started) {
			run, gerr := e.Get(ctx, id)
			if gerr != nil {
				return runqueue.Run{}, gerr
			}
			return run, fmt.Errorf("%w: key %q is run %s", runqueue.ErrDuplicate, req.Key, id)
		}
		return runqueue.Run{}, fmt.Errorf("runqueue: start on Temporal: %w", err)
	}
	return e.Get(ctx, id)
}

// Get implements runqueue.Engine.
func (e *Engine) Get(ctx context.Context, id string) (runqueue.Run, error) {
	d, err := e.c.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		return runqueue.Run{}, notFound(err, id)
	}
	run := record(d.GetWorkflowExecutionInfo(), e.opts.DataConverter)
	if run.Status.Ended() {
		var res Result
		if err := e.c.GetWorkflow(ctx, id, "").Get(ctx, &res); err == nil {
			run.Result = &runqueue.Result{Subtype: res.Subtype, IsError: res.IsError, Text: res.Text, NumTurns: res.NumTurns,
				CostUSD: res.CostUSD, DurationMS: res.Duration.Milliseconds()}
			run.Status = statusOf(&res)
		} else if run.Status != runqueue.StatusCancelled {
			run.Error = err.Error()
		}
	}
	if page, err := Events(ctx, e.c, id, 1<<62); err == nil {
		run.Events = int64(page.Last)
		for _, a := range page.Pending {
			if a.Answer != nil {
				continue
			}
			req, err := runqueue.DecodeRequest(a.Kind, a.Request)
			if err != nil {
				continue
			}
			run.Asks = append(run.Asks, runqueue.Ask{ID: a.ID, Kind: a.Kind, Request: req, CreatedAt: a.At})
		}
		if run.Status == runqueue.StatusRunning && page.Last == 0 {
			run.Status = runqueue.StatusQueued
		}
	}
	return run, nil
}

// record builds a run's record from Temporal's: the request from the
// memo, and for the fire of a job (a schedule started it) the fire's
// scheduled time and key.
func record(info *workflowpb.WorkflowExecutionInfo, dc converter.DataConverter) runqueue.Run {
	id, started := info.GetExecution().GetWorkflowId(), info.GetStartTime().AsTime()
	run := runqueue.Run{ID: id, SessionID: id, CreatedAt: started, StartedAt: started, Owner: "temporal"}
	var memoErr error
	if memo := info.GetMemo().GetFields()[memoRequest]; memo != nil {
		var s string
		if memoErr = dc.FromPayload(memo, &s); memoErr == nil {
			_ = json.Unmarshal([]byte(s), &run.Request)
		}
	}
	o := &run.Request.Origin
	if p := info.GetSearchAttributes().GetIndexedFields()[attrScheduledStart]; p != nil && o.JobID != "" && o.ScheduledAt.IsZero() {
		var at time.Time
		// Search attributes are never encoded by a codec.
		if err := converter.GetDefaultDataConverter().FromPayload(p, &at); err == nil && !at.IsZero() {
			o.ScheduledAt = at
			run.Request.Key = runqueue.FireKey(o.JobID, at)
		}
	}
	if r := run.Request.Options.Resume; r != "" {
		run.SessionID = r // a resumed run writes to the session it continues
	}
	st, closed := info.GetStatus(), info.GetCloseTime()
	switch st {
	case enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW:
		run.Status = runqueue.StatusRunning
	case enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED:
		run.Status = runqueue.StatusSucceeded
	case enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED:
		run.Status = runqueue.StatusCancelled
	case enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED, enumspb.WORKFLOW_EXECUTION_STATUS_TIMED_OUT:
		run.Status, run.Error = runqueue.StatusLost, "the workflow was "+strings.ToLower(strings.TrimPrefix(st.String(), "WORKFLOW_EXECUTION_STATUS_"))
	default:
		run.Status = runqueue.StatusFailed
	}
	if run.Status.Ended() && closed != nil {
		run.EndedAt = closed.AsTime()
	}
	if memoErr != nil && run.Error == "" {
		// A request that cannot be read (a claim-check blob this
		// process's store lacks) is said, not shown as empty.
		run.Error = "the run's request cannot be read: " + memoErr.Error()
	}
	return run
}

// statusOf maps a result to the run's final state.
func statusOf(r *Result) runqueue.Status {
	switch {
	case r.Subtype == "interrupted":
		return runqueue.StatusCancelled
	case r.IsError:
		return runqueue.StatusFailed
	}
	return runqueue.StatusSucceeded
}

// List implements runqueue.Engine: the runs Temporal's visibility knows,
// newest first.
func (e *Engine) List(ctx context.Context, f runqueue.Filter) ([]runqueue.Run, error) {
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	var out []runqueue.Run
	var token []byte
	for {
		resp, err := e.c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Query: fmt.Sprintf("WorkflowType = '%s'", WorkflowName), NextPageToken: token})
		if err != nil {
			return nil, fmt.Errorf("runqueue: list on Temporal: %w", err)
		}
		for _, info := range resp.GetExecutions() {
			run := record(info, e.opts.DataConverter)
			if !f.Match(run) {
				continue
			}
			out = append(out, run)
			if len(out) == limit {
				return out, nil
			}
		}
		token = resp.GetNextPageToken()
		if len(token) == 0 {
			return out, nil
		}
	}
}

// Events implements runqueue.Engine: the run's events as stream-json
// lines, numbered as the workflow numbers them.
func (e *Engine) Events(ctx context.Context, id string, after int64) iter.Seq2[runqueue.Event, error] {
	return func(yield func(runqueue.Event, error) bool) {
		if _, err := e.c.DescribeWorkflowExecution(ctx, id, ""); err != nil {
			yield(runqueue.Event{}, notFound(err, id))
			return
		}
		for ev, err := range Follow(ctx, e.c, id, FollowOptions{After: int(after), Poll: e.opts.Poll}) {
			if err != nil {
				yield(runqueue.Event{}, err)
				return
			}
			line, err := Line(id, ev)
			if err != nil {
				yield(runqueue.Event{}, err)
				return
			}
			if !yield(line, nil) {
				return
			}
		}
	}
}

// Line turns a run's event into its stream-json line.
func Line(runID string, ev Event) (runqueue.Event, error) {
	var v any
	typ := ev.Type
	switch ev.Type {
	case EventInit:
		typ = "system"
		v = map[string]any{"type": typ, "subtype": "init", "session_id": runID, "model": ev.Text, "tools": ev.Tools}
	case EventMessage:
		typ = string(ev.Message.Role)
		v = map[string]any{"type": typ, "message": ev.Message, "session_id": runID, "parent_tool_use_id": nil}
	case EventToolResult:
		v = map[string]any{"type": typ, "tool": ev.Tool, "session_id": runID}
	case EventNotice:
		typ = "system"
		v = map[string]any{"type": typ, "subtype": "notice", "text": ev.Text, "session_id": runID}
	case EventAsk:
		req, err := runqueue.DecodeRequest(ev.Ask.Kind, ev.Ask.Request)
		if err != nil {
			return runqueue.Event{}, err
		}
		line := runqueue.AskLine(runqueue.Ask{ID: ev.Ask.ID, Kind: ev.Ask.Kind, Request: req, CreatedAt: ev.Ask.At})
		b, err := json.Marshal(line)
		if err != nil {
			return runqueue.Event{}, err
		}
		return runqueue.Event{Seq: int64(ev.Seq), Type: "control_request", Data: b}, nil
	case EventAnswered:
		b, err := json.Marshal(runqueue.AskResolvedLine(ev.Ask.ID, "answered"))
		if err != nil {
			return runqueue.Event{}, err
		}
		var head struct {
			Type string `json:"type"`
		}
		json.Unmarshal(b, &head)
		return runqueue.Event{Seq: int64(ev.Seq), Type: head.Type, Data: b}, nil
	case EventAgent:
		typ = "system"
		v = map[string]any{"type": typ, "subtype": "subagent", "agent": ev.Agent, "session_id": runID,
			"parent_tool_use_id": ev.Agent.ParentToolUseID}
	case EventCompact:
		typ = "system"
		v = map[string]any{"type": typ, "subtype": "compact_boundary", "session_id": runID,
			"compact_metadata": map[string]any{"trigger": "auto", "pre_tokens": ev.Compact.PromptTokens}}
	case EventResult:
		r := ev.Result
		v = map[string]any{"type": "result", "subtype": r.Subtype, "is_error": r.IsError, "result": r.Text, "session_id": runID,
			"num_turns": r.NumTurns, "duration_ms": r.Duration.Milliseconds(), "total_cost_usd": r.CostUSD, "usage": r.Usage,
			"stop_reason": r.StopReason}
	default:
		v = map[string]any{"type": typ}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return runqueue.Event{}, err
	}
	return runqueue.Event{Seq: int64(ev.Seq), Type: typ, Data: b}, nil
}

// Answer implements runqueue.Engine.
func (e *Engine) Answer(ctx context.Context, runID, askID string, a interaction.Answer) error {
	if a == nil {
		return fmt.Errorf("%w: no answer", runqueue.ErrInvalid)
	}
	if err := runqueue.CheckAnswer(a); err != nil {
		return err
	}
	run, err := e.Get(ctx, runID)
	if err != nil {
		return err
	}
	var ask *runqueue.Ask
	for i := range run.Asks {
		if run.Asks[i].ID == askID {
			ask = &run.Asks[i]
		}
	}
	if ask == nil || run.Status.Ended() {
		return fmt.Errorf("%w: run %s has no pending ask %q", runqueue.ErrNotFound, runID, askID)
	}
	if ask.Kind != a.Kind() {
		return fmt.Errorf("%w: ask %s is a %s ask, not %s", runqueue.ErrInvalid, askID, ask.Kind, a.Kind())
	}
	b, err := json.Marshal(a)
	if err != nil {
		return fmt.Errorf("%w: %v", runqueue.ErrInvalid, err)
	}
	if err := Answer(ctx, e.c, runID, askID, b); err != nil {
		if strings.Contains(err.Error(), "no pending ask") || strings.Contains(err.Error(), "already answered") {
			return fmt.Errorf("%w: %v", runqueue.ErrNotFound, err)
		}
		return err
	}
	return nil
}

// Cancel implements runqueue.Engine.
func (e *Engine) Cancel(ctx context.Context, id string) error {
	run, err := e.Get(ctx, id)
	if err != nil {
		return err
	}
	if run.Status.Ended() {
		return fmt.Errorf("%w: run %s is %s", runqueue.ErrEnded, id, run.Status)
	}
	return Cancel(ctx, e.c, id)
}

func notFound(err error, id string) error {
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return fmt.Errorf("%w: run %s", runqueue.ErrNotFound, id)
	}
	return err
}
