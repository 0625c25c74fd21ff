package durable

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/gantry-dev/gantry/session"
	"github.com/gantry-dev/gantry/temporal/claimcheck"
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
}

// Start starts a run of prompt under spec and returns its id.
func Start(ctx context.Context, c client.Client, spec Spec, prompt string, opts StartOptions) (string, error) {
	if spec.WorkDir == "" {
		return "", errors.New("durable: Spec.WorkDir is required")
	}
	id := opts.RunID
	if id == "" {
		id = session.NewUUID()
	}
	q := opts.TaskQueue
	if q == "" {
		q = DefaultTaskQueue
	}
	_, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: id, TaskQueue: q,
		WorkflowIDConflictPolicy:                 enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
		WorkflowExecutionErrorWhenAlreadyStarted: true,
		WorkflowIDReusePolicy:                    enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
	}, WorkflowName, RunInput{Spec: spec, Prompt: prompt, Options: opts.Run})
	if err != nil {
		return "", fmt.Errorf("durable: start the run: %w", err)
	}
	return id, nil
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
	// Poll is the interval between queries (0 = 200 ms).
	Poll time.Duration
}

// Follow yields the run's events in order until its result event. Each
// pending ask is yielded once, as its EventAsk; answer it with [Answer].
// A query that fails (no worker yet, a network hiccup) is retried until
// ctx ends; an unknown run, or events this client cannot decode (a blob
// missing from its claim-check store), end it with the error.
func Follow(ctx context.Context, c client.Client, runID string, opts FollowOptions) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		poll := opts.Poll
		if poll <= 0 {
			poll = 200 * time.Millisecond
		}
		after := opts.After
		t := time.NewTimer(0)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				yield(Event{}, ctx.Err())
				return
			case <-t.C:
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
				t.Reset(poll)
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
			t.Reset(poll)
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
