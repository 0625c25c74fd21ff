package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"time"

	"github.com/gantry-dev/gantry/interaction"
	"github.com/gantry-dev/gantry/runqueue"
	"github.com/gantry-dev/gantry/store"
)

// Journal is the [runqueue.Journal] over the durable store: run records
// with a lease (renewed by the server while the run is live) and their
// events.
type Journal struct {
	Runs  store.Runs
	Lease time.Duration
	Now   func() time.Time
}

func (j *Journal) record(r runqueue.Run) (store.RunRecord, error) {
	data, err := json.Marshal(r)
	if err != nil {
		return store.RunRecord{}, err
	}
	o := r.Request.Origin
	kind := o.Kind
	if kind == "" {
		kind = runqueue.OriginAPI
	}
	rec := store.RunRecord{ID: r.ID, Key: r.Request.Key, Status: string(r.Status), Owner: r.Owner,
		Origin: kind, JobID: o.JobID, TriggerID: o.TriggerID, Serial: o.Serial, Data: data, CreatedAt: r.CreatedAt}
	if o.Exclusive || o.MaxQueued > 0 {
		rec.Guard = &store.RunGuard{Exclusive: o.Exclusive, MaxQueued: o.MaxQueued}
	}
	if !r.Status.Ended() && r.Owner != "" {
		rec.LeaseUntil = j.Now().Add(j.Lease)
	}
	return rec, nil
}

// Create implements [runqueue.Journal].
func (j *Journal) Create(ctx context.Context, r runqueue.Run) (runqueue.Run, error) {
	rec, err := j.record(r)
	if err != nil {
		return runqueue.Run{}, err
	}
	got, err := j.Runs.CreateRun(ctx, rec)
	if errors.Is(err, store.ErrExists) && got.ID != "" {
		old, derr := decodeRun(got)
		if derr != nil {
			return runqueue.Run{}, derr
		}
		return old, fmt.Errorf("%w (run %s)", runqueue.ErrDuplicate, old.ID)
	}
	if errors.Is(err, store.ErrOverlap) {
		return runqueue.Run{}, fmt.Errorf("%w: %w", runqueue.ErrOverlap, err)
	}
	return r, err
}

// Update implements [runqueue.Journal].
func (j *Journal) Update(ctx context.Context, r runqueue.Run) error {
	rec, err := j.record(r)
	if err != nil {
		return err
	}
	return j.Runs.UpdateRun(ctx, rec)
}

var _ runqueue.SharedQueue = (*Journal)(nil)

// Enqueue implements [runqueue.SharedQueue]: the run, recorded queued by
// this process, is given to the shared queue (no owner, no lease).
func (j *Journal) Enqueue(ctx context.Context, r runqueue.Run) error {
	owner := r.Owner
	r.Owner, r.Status = "", runqueue.StatusQueued
	rec, err := j.record(r)
	if err != nil {
		return err
	}
	if owner == "" {
		return j.Runs.UpdateRun(ctx, rec)
	}
	ok, err := j.Runs.UpdateRunIf(ctx, rec, store.RunQueued, owner)
	if err == nil && !ok {
		// Claimed from the shared queue and not started (a shutdown).
		ok, err = j.Runs.UpdateRunIf(ctx, rec, store.RunRunning, owner)
	}
	if err == nil && !ok {
		err = fmt.Errorf("serve: run %s is no longer queued here", r.ID)
	}
	return err
}

// Append implements [runqueue.Journal].
func (j *Journal) Append(ctx context.Context, runID string, evs []runqueue.Event) error {
	out := make([]store.RunEvent, len(evs))
	for i, e := range evs {
		out[i] = store.RunEvent{Seq: e.Seq, Type: e.Type, Data: e.Data}
	}
	return j.Runs.AppendRunEvents(ctx, runID, out)
}

// decodeRun reads a stored run; the status column wins (a reaped run is
// lost whatever its data said).
func decodeRun(rec store.RunRecord) (runqueue.Run, error) {
	var r runqueue.Run
	if err := json.Unmarshal(rec.Data, &r); err != nil {
		return runqueue.Run{}, fmt.Errorf("serve: run %s: %w", rec.ID, err)
	}
	r.Status, r.Owner = runqueue.Status(rec.Status), rec.Owner
	// Events recorded after the record's last update (the process died
	// before it wrote its count, or the run is live elsewhere).
	r.Events = max(r.Events, rec.LastSeq)
	return r, nil
}

// Engine is the engine of `gantry serve`: a [runqueue.Local] whose runs are
// journaled in the durable store, and which answers Get, List and Events
// from the store for runs of other processes or earlier lives of this one
// (answering and cancelling need the process that runs them).
type Engine struct {
	local *runqueue.Local
	runs  store.Runs
	// poll is how often a stored run of another process is re-read while
	// it is followed.
	poll time.Duration
}

var _ runqueue.Engine = (*Engine)(nil)

// Stored returns a read-only engine over the runs recorded in the store:
// Get, List and Events (following live runs of serve processes by polling
// the store); Start, Answer and Cancel fail with [runqueue.ErrClosed] (only
// the process that runs a run can answer or cancel it — through its API).
func Stored(runs store.Runs) *Engine {
	return &Engine{runs: runs, poll: 250 * time.Millisecond}
}

// localGet asks the local engine, if any.
func (e *Engine) localGet(ctx context.Context, id string) (runqueue.Run, error) {
	if e.local == nil {
		return runqueue.Run{}, runqueue.ErrNotFound
	}
	return e.local.Get(ctx, id)
}

var errReadOnly = fmt.Errorf("%w: this engine only reads the store; use the API of the serve process", runqueue.ErrClosed)

// Start implements [runqueue.Engine].
func (e *Engine) Start(ctx context.Context, req runqueue.Request) (runqueue.Run, error) {
	if e.local == nil {
		return runqueue.Run{}, errReadOnly
	}
	return e.local.Start(ctx, req)
}

// Get implements [runqueue.Engine].
func (e *Engine) Get(ctx context.Context, id string) (runqueue.Run, error) {
	r, err := e.localGet(ctx, id)
	if !errors.Is(err, runqueue.ErrNotFound) {
		return r, err
	}
	rec, err := e.runs.GetRun(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return runqueue.Run{}, fmt.Errorf("%w: run %q", runqueue.ErrNotFound, id)
	}
	if err != nil {
		return runqueue.Run{}, err
	}
	return decodeRun(rec)
}

// List implements [runqueue.Engine]: every process's runs, from the store,
// with this process's live records (pending asks) where it has them.
func (e *Engine) List(ctx context.Context, f runqueue.Filter) ([]runqueue.Run, error) {
	sf := store.RunFilter{Origin: f.Origin, JobID: f.JobID, TriggerID: f.TriggerID, Limit: f.Limit}
	for _, s := range f.Status {
		sf.Status = append(sf.Status, string(s))
	}
	recs, err := e.runs.ListRuns(ctx, sf)
	if err != nil {
		return nil, err
	}
	out := make([]runqueue.Run, 0, len(recs))
	for _, rec := range recs {
		if r, err := e.localGet(ctx, rec.ID); err == nil {
			out = append(out, r)
			continue
		}
		r, err := decodeRun(rec)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// Events implements [runqueue.Engine].
func (e *Engine) Events(ctx context.Context, id string, after int64) iter.Seq2[runqueue.Event, error] {
	if _, err := e.localGet(ctx, id); err == nil {
		return e.local.Events(ctx, id, after)
	}
	return func(yield func(runqueue.Event, error) bool) {
		var t *time.Ticker
		for {
			evs, err := e.runs.RunEvents(ctx, id, after, 500)
			if err != nil {
				yield(runqueue.Event{}, err)
				return
			}
			for _, ev := range evs {
				if !yield(runqueue.Event{Seq: ev.Seq, Type: ev.Type, Data: ev.Data}, nil) {
					return
				}
				after = ev.Seq
			}
			if len(evs) > 0 {
				continue
			}
			r, err := e.Get(ctx, id)
			if err != nil {
				yield(runqueue.Event{}, err)
				return
			}
			if r.Status.Ended() {
				// Events written between the read above and the end.
				if r.Events <= after {
					return
				}
				continue
			}
			if t == nil {
				t = time.NewTicker(e.poll)
				defer t.Stop()
			}
			select {
			case <-ctx.Done():
				yield(runqueue.Event{}, ctx.Err())
				return
			case <-t.C:
			}
		}
	}
}

// Answer implements [runqueue.Engine].
func (e *Engine) Answer(ctx context.Context, runID, askID string, a interaction.Answer) error {
	if e.local == nil {
		return errReadOnly
	}
	err := e.local.Answer(ctx, runID, askID, a)
	if errors.Is(err, runqueue.ErrNotFound) {
		return e.notHere(ctx, runID, err)
	}
	return err
}

// Cancel implements [runqueue.Engine]. A run of the shared queue (queued,
// no process has claimed it) is cancelled in the store by whichever
// process is asked.
func (e *Engine) Cancel(ctx context.Context, id string) error {
	if e.local == nil {
		return errReadOnly
	}
	err := e.local.Cancel(ctx, id)
	if !errors.Is(err, runqueue.ErrNotFound) {
		return err
	}
	if rec, gerr := e.runs.GetRun(ctx, id); gerr == nil && rec.Status == store.RunQueued && rec.Owner == "" {
		r, derr := decodeRun(rec)
		if derr != nil {
			return derr
		}
		r.Status, r.Error, r.EndedAt = runqueue.StatusCancelled, "cancelled", time.Now()
		data, merr := json.Marshal(r)
		if merr != nil {
			return merr
		}
		rec.Status, rec.Data = string(r.Status), data
		ok, uerr := e.runs.UpdateRunIf(ctx, rec, store.RunQueued, "")
		if uerr != nil {
			return uerr
		}
		if ok {
			return nil
		}
		// Claimed meanwhile: its process cancels it.
	}
	return e.notHere(ctx, id, err)
}

// notHere explains a run this process does not run.
func (e *Engine) notHere(ctx context.Context, id string, err error) error {
	if _, lerr := e.localGet(ctx, id); lerr == nil {
		return err // ours: the ask is what is missing
	}
	r, gerr := e.Get(ctx, id)
	switch {
	case gerr != nil:
		return err
	case r.Status.Ended():
		return fmt.Errorf("%w: run %s is %s", runqueue.ErrEnded, id, r.Status)
	}
	return fmt.Errorf("%w: run %s is run by another process (%s); ask that one", runqueue.ErrNotFound, id, r.Owner)
}
