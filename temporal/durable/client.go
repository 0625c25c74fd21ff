package durable

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/gantry-dev/gantry/runqueue"
	"github.com/gantry-dev/gantry/temporal/claimcheck"
	"github.com/gantry-dev/gantry/transcript"
)

// StartOptions configure [Start]; the zero value of each field is its
// default.
type StartOptions struct {
	// RunID is the workflow id ("" = a new UUID).
	RunID string
	// TaskQueue is the queue the workers poll ("" = DefaultTaskQueue).
	TaskQueue string
	// Run are the engine's settings for the run.
	Run RunOptions
	// Origin says where the run comes from, as the API's run record
	// shows it (zero = Kind runqueue.OriginCLI).
	Origin runqueue.Origin
	// Resume continues the conversation of the ended run with this id: the
	// new run (its own id) sends that conversation and then the prompt,
	// and appends to its transcript (session), as `gantry --resume` does
	// in-process ("" = a new conversation).
	Resume string
}

// Start starts a run of prompt under spec and returns its id.
func Start(ctx context.Context, c client.Client, spec Spec, prompt string, opts StartOptions) (string, error) {
	if spec.WorkDir == "" {
		return "", errors.New("durable: Spec.WorkDir is required")
	}
	id := opts.RunID
	if id == "" {
		id = transcript.NewUUID()
	}
	origin := opts.Origin
	if origin.Kind == "" {
		origin.Kind = runqueue.OriginCLI
	}
	req := RequestOf(spec, prompt)
	req.Origin = origin
	in := RunInput{Spec: spec, Prompt: prompt, Options: opts.Run}
	if opts.Resume != "" {
		conv, err := Resumable(ctx, c, opts.Resume)
		if err != nil {
			return "", err
		}
		in.Resume, req.Options.Resume = conv, conv.Session
	}
	if err := startWorkflow(ctx, c, id, opts.TaskQueue, in, req); err != nil {
		return "", fmt.Errorf("durable: start the run: %w", err)
	}
	return id, nil
}

// RequestOf is the run request a spec and a prompt stand for: what the
// API's run record shows (prompt, directory, flags).
func RequestOf(spec Spec, prompt string) runqueue.Request {
	return runqueue.Request{Prompt: prompt, Dir: spec.WorkDir, Options: runqueue.Options{
		Model: spec.Model, Mode: spec.PermissionMode, Allow: spec.Allow, Deny: spec.Deny,
		MaxTurns: spec.MaxTurns, MaxBudgetUSD: spec.MaxBudgetUSD,
		SystemPrompt: spec.SystemPrompt, AppendSystemPrompt: spec.AppendSystemPrompt,
	}}
}

// SpecOf is the spec of a run request.
func SpecOf(req runqueue.Request) Spec {
	o := req.Options
	return Spec{WorkDir: req.Dir, Model: o.Model, PermissionMode: o.Mode, Allow: o.Allow, Deny: o.Deny,
		MaxTurns: o.MaxTurns, MaxBudgetUSD: o.MaxBudgetUSD, SystemPrompt: o.SystemPrompt, AppendSystemPrompt: o.AppendSystemPrompt}
}

// memoOf is the memo of a run: the request (prompt, directory, agent
// options, origin, key) and the whole spec, so that the run's record in
// Temporal's visibility (List, Get, the Web UI) shows what was asked
// without reading the history.
func memoOf(spec Spec, req runqueue.Request) (map[string]any, error) {
	r, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	s, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	return map[string]any{memoRequest: string(r), memoSpec: string(s)}, nil
}

// startWorkflow starts the run workflow id with in, its memo made of req.
// An id used before (by any run, ended or not) is refused.
func startWorkflow(ctx context.Context, c client.Client, id, queue string, in RunInput, req runqueue.Request) error {
	if queue == "" {
		queue = DefaultTaskQueue
	}
	memo, err := memoOf(in.Spec, req)
	if err != nil {
		return err
	}
	_, err = c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: id, TaskQueue: queue,
		WorkflowIDConflictPolicy:                 enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
		WorkflowExecutionErrorWhenAlreadyStarted: true,
		WorkflowIDReusePolicy:                    enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		Memo:                                     memo,
	}, WorkflowName, in)
	return err
}

// ErrNotEnded is returned for a run to resume that has not ended.
var ErrNotEnded = errors.New("durable: the run has not ended")

// Resumable returns the conversation of the ended run runID, for a run
// that continues it ([StartOptions.Resume]). The run's workflow is asked
// (a query, which Temporal answers for a closed workflow too, from its
// history, while the namespace retains it): a worker must be running.
func Resumable(ctx context.Context, c client.Client, runID string) (*Conversation, error) {
	v, err := c.QueryWorkflow(ctx, runID, "", QueryConversation)
	if err != nil {
		return nil, fmt.Errorf("durable: resume run %s: %w", runID, err)
	}
	var conv Conversation
	if err := v.Get(&conv); err != nil {
		return nil, fmt.Errorf("durable: resume run %s: %w", runID, err)
	}
	if !conv.Done {
		return nil, fmt.Errorf("%w: run %s still runs; resume it once it ended", ErrNotEnded, runID)
	}
	return &conv, nil
}

// Events returns the run's events after after, its pending asks and
// whether it ended.
func Events(ctx context.Context, c client.Client, runID string, after int) (*EventsPage, error) {
	v, err := c.QueryWorkflow(ctx, runID, "", QueryEvents, EventsQuery{After: after})
	if err != nil {
		return nil, fmt.Errorf("durable: query run %s: %w", runID, err)
	}
	var page EventsPage
	if err := v.Get(&page); err != nil {
		return nil, fmt.Errorf("durable: query run %s: %w", runID, err)
	}
	return &page, nil
}

// FollowOptions configure [Follow].
type FollowOptions struct {
	// After is the last event already seen (0 = from the start).
	After int
	// Poll is the longest a follower goes without asking the run for new
	// events when its history says nothing (0 = DefaultFollowPoll).
	Poll time.Duration
}

// DefaultFollowPoll is [FollowOptions.Poll]'s default: a safety net, as
// followers are woken by the run's history.
const DefaultFollowPoll = 2 * time.Second

// Follow yields the run's events in order until its result event. Each
// pending ask is yielded once, as its EventAsk; answer it with [Answer].
//
// It does not poll at a fixed rate: it long-polls the run's history
// (Temporal answers when an event is appended — a workflow task
// completed, an activity scheduled or done, an update accepted) and asks
// the run for its events each time, and at the latest every Poll. A query
// that fails (no worker yet, a network hiccup) is retried until ctx ends;
// an unknown run, or events this client cannot decode (a blob missing
// from its claim-check store), end it with the error.
func Follow(ctx context.Context, c client.Client, runID string, opts FollowOptions) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		poll := opts.Poll
		if poll <= 0 {
			poll = DefaultFollowPoll
		}
		// The history is watched from the first wait on: a reader that
		// only wants what is recorded (a page) never reads it.
		wctx, stop := context.WithCancel(ctx)
		defer stop()
		wake := make(chan struct{}, 1)
		watching := false
		after := opts.After
		t := time.NewTimer(0)
		defer t.Stop()
		for first := true; ; first = false {
			if !first && !watching {
				go watchHistory(wctx, c, runID, poll, wake)
				watching = true
			}
			select {
			case <-ctx.Done():
				yield(Event{}, ctx.Err())
				return
			case <-t.C:
			case <-wake:
			}
			page, err := Events(ctx, c, runID, after)
			if err != nil {
				var nf *serviceerror.NotFound
				// A run that does not exist, or a blob this client's
				// store lacks, will not heal by asking again.
				if errors.As(err, &nf) || errors.Is(err, claimcheck.ErrNotFound) || errors.Is(err, claimcheck.ErrCorrupt) {
					yield(Event{}, err)
					return
				}
				t.Reset(min(poll, 200*time.Millisecond))
				continue
			}
			for _, e := range page.Events {
				after = e.Seq
				if !yield(e, nil) {
					return
				}
				if e.Type == EventResult {
					return
				}
			}
			if !t.Stop() {
				select {
				case <-t.C:
				default:
				}
			}
			t.Reset(poll)
		}
	}
}

// watchHistory signals wake (without blocking) each time the run's
// history grows, until ctx ends. After the history of one execution ends
// (the run closed or continued as new) it opens the current one again.
func watchHistory(ctx context.Context, c client.Client, runID string, pause time.Duration, wake chan<- struct{}) {
	for ctx.Err() == nil {
		it := c.GetWorkflowHistory(ctx, runID, "", true, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for it.HasNext() {
			if _, err := it.Next(); err != nil {
				break
			}
			select {
			case wake <- struct{}{}:
			default:
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(pause):
		}
	}
}

// Answer answers the pending ask id of the run; the error says why an
// answer was refused (no such ask, already answered, not valid).
func Answer(ctx context.Context, c client.Client, runID, id string, answer []byte) error {
	h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: runID, UpdateName: UpdateAnswer,
		Args:         []any{AnswerInput{ID: id, Answer: answer}},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err != nil {
		return fmt.Errorf("durable: answer %s: %w", id, err)
	}
	if err := h.Get(ctx, nil); err != nil {
		return fmt.Errorf("durable: answer %s: %w", id, err)
	}
	return nil
}

// Wait waits for the run's result.
func Wait(ctx context.Context, c client.Client, runID string) (*Result, error) {
	var res Result
	if err := c.GetWorkflow(ctx, runID, "").Get(ctx, &res); err != nil {
		return nil, fmt.Errorf("durable: run %s: %w", runID, err)
	}
	return &res, nil
}

// Cancel asks the run to stop: the workflow is cancelled, the running
// activity's context is cancelled at its next heartbeat, and the run ends
// with an interrupted result.
func Cancel(ctx context.Context, c client.Client, runID string) error {
	if err := c.CancelWorkflow(ctx, runID, ""); err != nil {
		return fmt.Errorf("durable: cancel %s: %w", runID, err)
	}
	return nil
}
