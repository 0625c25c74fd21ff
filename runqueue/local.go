package runqueue

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/gantry-dev/gantry/interaction"
)

// Runner does the work of one run inside a [Local] engine: it assembles
// the agent session for the request, runs the prompt, reports each event
// through x.Emit and sends every ask through x.Channel. It returns the
// run's result (nil if the agent produced none) or an error. It must
// return promptly once ctx ends (a cancel or a forced shutdown).
//
// Package serve's AgentRunner is the Runner of `gantry serve`; tests use a
// [RunnerFunc] or the agent over a fake model.
type Runner interface {
	Run(ctx context.Context, req Request, x Exec) (*Result, error)
}

// RunnerFunc adapts a function to [Runner].
type RunnerFunc func(ctx context.Context, req Request, x Exec) (*Result, error)

// Run implements [Runner].
func (f RunnerFunc) Run(ctx context.Context, req Request, x Exec) (*Result, error) {
	return f(ctx, req, x)
}

// Exec connects one run to its engine.
type Exec struct {
	// RunID is the run's id.
	RunID string
	// Emit records one event: a stream-json line, given as a value that
	// marshals to a JSON object with a string "type" (or as the
	// json.RawMessage of one).
	Emit func(line any) error
	// Channel is the run's interaction channel: each request becomes a
	// pending [Ask] until it is answered, the run ends, or the ask times
	// out (then the request fails with interaction.ErrNobody, which denies
	// a tool call).
	Channel interaction.Channel
	// Started records the run's session (transcript) id.
	Started func(sessionID string)
}

// Defaults of [LocalOptions].
const (
	DefaultMaxRunning = 4
	DefaultAskTimeout = time.Hour
)

// LocalOptions configure [NewLocal]. Only Runner is required.
type LocalOptions struct {
	// Runner runs each run (required).
	Runner Runner
	// Owner names this process in Run.Owner ("" = "local:<pid>").
	Owner string
	// MaxRunning caps the runs running at once; more wait as queued
	// (0 = DefaultMaxRunning).
	MaxRunning int
	// AskTimeout is how long an ask waits for an answer before it is
	// denied (0 = DefaultAskTimeout, negative = no limit).
	AskTimeout time.Duration
	// Now is the clock (nil = time.Now).
	Now func() time.Time
	// Journal, when set, records runs and events durably and is notified
	// of every change (see [Journal]); nil keeps them in memory only.
	Journal Journal
	// OnFree, when set, is called (without the engine's lock, from any
	// goroutine) whenever an execution slot frees up, so that the owner of
	// a shared queue claims work at once ([SharedQueue]).
	OnFree func()
	// KeepEnded, when positive, bounds the ended runs kept in memory: the
	// oldest ended runs beyond it are forgotten (Get, List and Events no
	// longer know them; an engine with a Journal reads them from there).
	// 0 keeps every run, which suits short-lived engines only.
	KeepEnded int
	// Notify, when set, is called with each notification a run sends
	// (the PushNotification tool) after its event line is emitted: a
	// webhook, say. Its error is reported to the run's model; the
	// notification still counts as delivered to the stream.
	Notify func(ctx context.Context, runID string, n *interaction.NotificationRequest) error
}

// Journal is where a [Local] engine keeps runs durably. The engine calls
// it under no lock of its own; errors are reported to the caller that
// triggered them (Start) or recorded in the run (later writes).
type Journal interface {
	// Create records a new run; a run with the same non-empty
	// Request.Key gives the existing run and [ErrDuplicate].
	Create(ctx context.Context, r Run) (Run, error)
	// Update records the run's new state (not its events).
	Update(ctx context.Context, r Run) error
	// Append records events of a run (in order).
	Append(ctx context.Context, runID string, evs []Event) error
}

// SharedQueue is an optional interface of a [Journal] that keeps a queue
// shared by several engines (several processes on one database). A run
// that finds no free slot here — and every run of a cron job — is handed
// to it instead of waiting in this process's memory: the engine forgets
// it, and whichever engine has a free slot claims it (the owner of the
// journal claims with its own store call and gives each run to
// [Local.Adopt]).
type SharedQueue interface {
	// Enqueue puts a recorded queued run in the shared queue (no owner).
	Enqueue(ctx context.Context, r Run) error
}

// Local is the single-process [Engine]: runs are goroutines of this
// process, at most MaxRunning at once, their events kept in memory (and in
// the Journal when one is set) for every subscriber. Create it with
// [NewLocal] and stop it with [Local.Shutdown].
type Local struct {
	opts   LocalOptions
	now    func() time.Time
	base   context.Context
	stop   context.CancelFunc
	wg     sync.WaitGroup
	seq    uint64
	prefix string

	mu      sync.Mutex
	runs    map[string]*localRun
	order   []*localRun
	keys    map[string]*localRun
	queue   []*localRun
	resume  []chan struct{} // waiting runs answered, waiting for a slot
	running int             // slots held
	closed  bool
}

var _ Engine = (*Local)(nil)

type localRun struct {
	rec     Run
	events  []Event
	changed chan struct{} // closed and replaced at every change
	cancel  context.CancelFunc
	asks    map[string]*pendingAsk
	askSeq  int
	stopped bool // Cancel was called
	held    bool // holds an execution slot
	asking  int  // asks in flight
}

type pendingAsk struct {
	ask    Ask
	answer chan interaction.Answer
}

// NewLocal returns a running engine.
func NewLocal(opts LocalOptions) (*Local, error) {
	if opts.Runner == nil {
		return nil, errors.New("runqueue: LocalOptions.Runner is required")
	}
	if opts.Owner == "" {
		opts.Owner = "local:" + strconv.Itoa(os.Getpid())
	}
	if opts.MaxRunning <= 0 {
		opts.MaxRunning = DefaultMaxRunning
	}
	if opts.AskTimeout == 0 {
		opts.AskTimeout = DefaultAskTimeout
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	ctx, stop := context.WithCancel(context.Background())
	return &Local{opts: opts, now: now, base: ctx, stop: stop,
		prefix: "run-" + strconv.FormatInt(now().UnixMilli(), 36) + "-",
		runs:   map[string]*localRun{}, keys: map[string]*localRun{}}, nil
}

// Start implements [Engine].
func (l *Local) Start(ctx context.Context, req Request) (Run, error) {
	if err := req.Validate(); err != nil {
		return Run{}, err
	}
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return Run{}, ErrClosed
	}
	if r, ok := l.keys[req.Key]; ok && req.Key != "" {
		rec := r.snapshot()
		l.mu.Unlock()
		return rec, fmt.Errorf("%w (run %s)", ErrDuplicate, rec.ID)
	}
	l.seq++
	rec := Run{ID: l.prefix + strconv.FormatUint(l.seq, 10), Request: req, Status: StatusQueued,
		Owner: l.opts.Owner, CreatedAt: l.now()}
	l.mu.Unlock()

	if j := l.opts.Journal; j != nil {
		got, err := j.Create(ctx, rec)
		if err != nil {
			return got, err
		}
	}
	r := &localRun{rec: rec, changed: make(chan struct{}), asks: map[string]*pendingAsk{}}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		r.rec.Status, r.rec.Error, r.rec.EndedAt = StatusCancelled, "the engine shut down", l.now()
		l.journal(r.rec)
		return r.rec, ErrClosed
	}
	if o, ok := l.keys[req.Key]; ok && req.Key != "" {
		return o.snapshot(), fmt.Errorf("%w (run %s)", ErrDuplicate, o.rec.ID)
	}
	if sq, ok := l.opts.Journal.(SharedQueue); ok && (req.Origin.Kind == OriginCron || req.Origin.Serial ||
		l.running >= l.opts.MaxRunning || len(l.resume) > 0) {
		// Whoever has a free slot runs it (this process included).
		l.mu.Unlock()
		rec := r.rec
		rec.Owner = ""
		err := sq.Enqueue(ctx, rec)
		l.mu.Lock()
		if err == nil {
			return rec, nil
		}
		// Not shared: it waits here, under this process's lease.
	}
	l.add(r)
	if l.running < l.opts.MaxRunning && len(l.resume) == 0 {
		l.launch(r)
	} else {
		l.queue = append(l.queue, r)
	}
	return r.snapshot(), nil
}

// add makes r known; l.mu is held.
func (l *Local) add(r *localRun) {
	l.runs[r.rec.ID] = r
	l.order = append(l.order, r)
	if k := r.rec.Request.Key; k != "" {
		l.keys[k] = r
	}
}

// Free returns how many runs could start now.
func (l *Local) Free() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return 0
	}
	return max(0, l.opts.MaxRunning-l.running-len(l.queue)-len(l.resume))
}

// Adopt runs a run this engine claimed from a [SharedQueue]: rec is its
// record (queued or running, with this engine's Owner). It starts at once
// when a slot is free, else it waits in this engine's queue.
func (l *Local) Adopt(rec Run) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrClosed
	}
	if _, ok := l.runs[rec.ID]; ok {
		return fmt.Errorf("%w (run %s)", ErrDuplicate, rec.ID)
	}
	rec.Owner, rec.Status, rec.Asks = l.opts.Owner, StatusQueued, nil
	r := &localRun{rec: rec, changed: make(chan struct{}), asks: map[string]*pendingAsk{}}
	l.add(r)
	if l.running < l.opts.MaxRunning && len(l.resume) == 0 {
		l.launch(r)
	} else {
		l.queue = append(l.queue, r)
	}
	return nil
}

// launch starts r; l.mu is held.
func (l *Local) launch(r *localRun) {
	l.running++
	r.held = true
	ctx, cancel := context.WithCancel(l.base)
	r.cancel = cancel
	r.rec.Status, r.rec.StartedAt = StatusRunning, l.now()
	r.notify()
	rec := r.rec
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		l.journal(rec)
		x := Exec{
			RunID: rec.ID,
			Emit:  func(line any) error { return l.emit(r, line) },
			Channel: interaction.ChannelFunc(func(ctx context.Context, req interaction.Request) (interaction.Answer, error) {
				return l.ask(ctx, r, req)
			}),
			Started: func(id string) {
				l.mu.Lock()
				r.rec.SessionID = id
				rec := r.rec
				l.mu.Unlock()
				l.journal(rec)
			},
		}
		res, err := l.run(ctx, rec.Request, x)
		cancel()
		l.finish(r, res, err)
	}()
}

// run calls the runner, turning a panic into an error.
func (l *Local) run(ctx context.Context, req Request, x Exec) (res *Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			res, err = nil, fmt.Errorf("runqueue: the runner panicked: %v", p)
		}
	}()
	return l.opts.Runner.Run(ctx, req, x)
}

// finish records the end of r and starts the next queued run.
func (l *Local) finish(r *localRun, res *Result, err error) {
	l.mu.Lock()
	rec := r.rec
	rec.Result, rec.EndedAt, rec.Asks = res, l.now(), nil
	switch {
	case r.stopped:
		rec.Status = StatusCancelled
		rec.Error = "cancelled"
	case l.base.Err() != nil:
		rec.Status = StatusCancelled
		rec.Error = "cancelled: the engine shut down"
	case err == nil && res != nil && !res.IsError:
		rec.Status = StatusSucceeded
	default:
		rec.Status = StatusFailed
		if err != nil {
			rec.Error = err.Error()
		} else if res == nil {
			rec.Error = "the run ended without a result"
		}
	}
	l.mu.Unlock()
	// The journal first: whoever sees the run end (a subscriber, Get)
	// finds its final record in the journal too.
	l.journal(rec)
	l.mu.Lock()
	rec.Events = r.rec.Events
	r.rec = rec
	clear(r.asks)
	r.notify()
	l.evict()
	if r.held {
		r.held = false
		l.running--
	}
	free := l.release()
	l.mu.Unlock()
	if free && l.opts.OnFree != nil {
		l.opts.OnFree()
	}
}

// release hands free slots to answered waiting runs first, then to the
// queue; it reports whether a slot is left free. l.mu is held.
func (l *Local) release() bool {
	for len(l.resume) > 0 && l.running < l.opts.MaxRunning {
		l.running++
		close(l.resume[0])
		l.resume = l.resume[1:]
	}
	for len(l.queue) > 0 && l.running < l.opts.MaxRunning {
		next := l.queue[0]
		l.queue = l.queue[1:]
		l.launch(next)
	}
	return l.running < l.opts.MaxRunning && !l.closed
}

// wait marks r waiting for an answer and gives up its slot (for the first
// ask in flight).
func (l *Local) wait(r *localRun) {
	l.mu.Lock()
	r.asking++
	if r.asking > 1 || !r.held || r.rec.Status.Ended() {
		l.mu.Unlock()
		return
	}
	r.held = false
	l.running--
	r.rec.Status = StatusWaiting
	r.notify()
	rec := r.rec
	free := l.release()
	l.mu.Unlock()
	l.journal(rec)
	if free && l.opts.OnFree != nil {
		l.opts.OnFree()
	}
}

// unwait takes a slot again for r once its last ask in flight is over
// (answered runs go before queued ones). A run whose ctx ends meanwhile
// takes its slot anyway: it is ending, and finish gives the slot back.
func (l *Local) unwait(ctx context.Context, r *localRun) {
	l.mu.Lock()
	r.asking--
	if r.asking > 0 || r.held {
		l.mu.Unlock()
		return
	}
	if l.running < l.opts.MaxRunning || ctx.Err() != nil {
		l.running++
	} else {
		ch := make(chan struct{})
		l.resume = append(l.resume, ch)
		l.mu.Unlock()
		select {
		case <-ch:
			l.mu.Lock()
		case <-ctx.Done():
			l.mu.Lock()
			if i := slices.Index(l.resume, ch); i >= 0 {
				l.resume = slices.Delete(l.resume, i, i+1)
				l.running++
			} // else the slot was handed over meanwhile
		}
	}
	r.held = true
	if !r.rec.Status.Ended() {
		r.rec.Status = StatusRunning
	}
	r.notify()
	rec := r.rec
	l.mu.Unlock()
	l.journal(rec)
}

// evict forgets the oldest ended runs beyond KeepEnded; l.mu is held.
func (l *Local) evict() {
	if l.opts.KeepEnded <= 0 {
		return
	}
	ended := 0
	for _, r := range l.order {
		if r.rec.Status.Ended() {
			ended++
		}
	}
	drop := ended - l.opts.KeepEnded
	if drop <= 0 {
		return
	}
	l.order = slices.DeleteFunc(l.order, func(r *localRun) bool {
		if drop > 0 && r.rec.Status.Ended() {
			drop--
			delete(l.runs, r.rec.ID)
			if k := r.rec.Request.Key; k != "" && l.keys[k] == r {
				delete(l.keys, k)
			}
			return true
		}
		return false
	})
}

// journal records a run state; failures are only visible in memory
// (the run goes on).
func (l *Local) journal(r Run) {
	if l.opts.Journal != nil {
		_ = l.opts.Journal.Update(context.Background(), r)
	}
}

// emit records one event of r.
func (l *Local) emit(r *localRun, line any) error {
	data, err := marshalLine(line)
	if err != nil {
		return err
	}
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(data, &head); err != nil || head.Type == "" {
		return fmt.Errorf("%w: an event must be a JSON object with a \"type\"", ErrInvalid)
	}
	l.mu.Lock()
	ev := Event{Seq: int64(len(r.events)) + 1, Type: head.Type, Data: data}
	r.events = append(r.events, ev)
	r.rec.Events = ev.Seq
	r.notify()
	l.mu.Unlock()
	if j := l.opts.Journal; j != nil {
		return j.Append(context.Background(), r.rec.ID, []Event{ev})
	}
	return nil
}

func marshalLine(line any) (json.RawMessage, error) {
	var raw []byte
	switch v := line.(type) {
	case json.RawMessage:
		raw = v
	case []byte:
		raw = v
	}
	if raw != nil {
		// One line: an event is written as one SSE data line.
		var buf bytes.Buffer
		if err := json.Compact(&buf, raw); err != nil {
			return nil, fmt.Errorf("%w: event: %v", ErrInvalid, err)
		}
		return buf.Bytes(), nil
	}
	b, err := json.Marshal(line)
	if err != nil {
		return nil, fmt.Errorf("runqueue: event: %w", err)
	}
	return b, nil
}

// ask makes req a pending ask of r and waits for its answer.
func (l *Local) ask(ctx context.Context, r *localRun, req interaction.Request) (interaction.Answer, error) {
	if req == nil {
		return nil, errors.New("runqueue: nil request")
	}
	if n, ok := req.(*interaction.NotificationRequest); ok {
		// Nothing to decide: the notification is an event of the run.
		if err := l.emit(r, NotificationLine(n)); err != nil {
			return nil, err
		}
		a := &interaction.NotificationAnswer{Delivered: []string{"stream"}}
		if l.opts.Notify != nil {
			if err := l.opts.Notify(ctx, r.rec.ID, n); err != nil {
				a.Errors = append(a.Errors, err.Error())
			} else {
				a.Delivered = append(a.Delivered, "webhook")
			}
		}
		return a, nil
	}
	l.mu.Lock()
	if r.rec.Status.Ended() {
		l.mu.Unlock()
		return nil, ErrEnded
	}
	r.askSeq++
	p := &pendingAsk{ask: Ask{ID: "ask-" + strconv.Itoa(r.askSeq), Kind: req.Kind(), Request: req, CreatedAt: l.now()},
		answer: make(chan interaction.Answer, 1)}
	r.asks[p.ask.ID] = p
	r.rec.Asks = append(r.rec.Asks, p.ask)
	l.mu.Unlock()
	if err := l.emit(r, AskLine(p.ask)); err != nil {
		l.dropAsk(r, p.ask.ID, "error")
		return nil, err
	}
	l.wait(r)
	defer l.unwait(ctx, r)

	var timeout <-chan time.Time
	if l.opts.AskTimeout > 0 {
		t := time.NewTimer(l.opts.AskTimeout)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case a := <-p.answer:
		l.resolved(r, p.ask.ID, "answered")
		return a, nil
	case <-timeout:
		if l.dropAsk(r, p.ask.ID, "timeout") {
			return nil, &interaction.NobodyError{Why: fmt.Sprintf("nobody answered within %s", l.opts.AskTimeout)}
		}
		return <-p.answer, nil // answered at the same moment
	case <-ctx.Done():
		l.dropAsk(r, p.ask.ID, "cancelled")
		return nil, ctx.Err()
	}
}

// dropAsk removes a pending ask; it reports whether it was still pending.
func (l *Local) dropAsk(r *localRun, id, outcome string) bool {
	l.mu.Lock()
	_, ok := r.asks[id]
	delete(r.asks, id)
	r.rec.Asks = slices.DeleteFunc(r.rec.Asks, func(a Ask) bool { return a.ID == id })
	ended := r.rec.Status.Ended()
	l.mu.Unlock()
	if ok && !ended {
		l.resolved(r, id, outcome)
	}
	return ok
}

// resolved announces the end of an ask.
func (l *Local) resolved(r *localRun, id, outcome string) {
	_ = l.emit(r, AskResolvedLine(id, outcome))
}

// Answer implements [Engine].
func (l *Local) Answer(_ context.Context, runID, askID string, a interaction.Answer) error {
	if a == nil {
		return fmt.Errorf("%w: no answer", ErrInvalid)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	r, ok := l.runs[runID]
	if !ok {
		return fmt.Errorf("%w: run %q", ErrNotFound, runID)
	}
	p, ok := r.asks[askID]
	if !ok {
		return fmt.Errorf("%w: run %s has no pending ask %q", ErrNotFound, runID, askID)
	}
	if a.Kind() != p.ask.Kind {
		return fmt.Errorf("%w: ask %s is a %s request, the answer is for %s", ErrInvalid, askID, p.ask.Kind, a.Kind())
	}
	if err := CheckAnswer(a); err != nil {
		return err
	}
	delete(r.asks, askID)
	r.rec.Asks = slices.DeleteFunc(r.rec.Asks, func(x Ask) bool { return x.ID == askID })
	p.answer <- a
	r.notify()
	return nil
}

// Cancel implements [Engine].
func (l *Local) Cancel(_ context.Context, id string) error {
	l.mu.Lock()
	r, ok := l.runs[id]
	if !ok {
		l.mu.Unlock()
		return fmt.Errorf("%w: run %q", ErrNotFound, id)
	}
	if r.rec.Status.Ended() {
		l.mu.Unlock()
		return fmt.Errorf("%w: run %s is %s", ErrEnded, id, r.rec.Status)
	}
	r.stopped = true
	if r.rec.Status == StatusQueued {
		l.queue = slices.DeleteFunc(l.queue, func(q *localRun) bool { return q == r })
		r.rec.Status, r.rec.Error, r.rec.EndedAt = StatusCancelled, "cancelled", l.now()
		r.notify()
		rec := r.rec
		l.mu.Unlock()
		l.journal(rec)
		return nil
	}
	cancel := r.cancel
	l.mu.Unlock()
	cancel()
	return nil
}

// Get implements [Engine].
func (l *Local) Get(_ context.Context, id string) (Run, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r, ok := l.runs[id]
	if !ok {
		return Run{}, fmt.Errorf("%w: run %q", ErrNotFound, id)
	}
	return r.snapshot(), nil
}

// List implements [Engine].
func (l *Local) List(_ context.Context, f Filter) ([]Run, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []Run
	for i := len(l.order) - 1; i >= 0 && len(out) < f.limit(); i-- {
		if r := l.order[i]; f.Match(r.rec) {
			out = append(out, r.snapshot())
		}
	}
	return out, nil
}

// Events implements [Engine].
func (l *Local) Events(ctx context.Context, id string, after int64) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		l.mu.Lock()
		r, ok := l.runs[id]
		l.mu.Unlock()
		if !ok {
			yield(Event{}, fmt.Errorf("%w: run %q", ErrNotFound, id))
			return
		}
		// r is followed to its end even if it is evicted meanwhile.
		for {
			l.mu.Lock()
			var batch []Event
			if after < int64(len(r.events)) {
				batch = r.events[max(after, 0):]
			}
			ended, changed := r.rec.Status.Ended(), r.changed
			l.mu.Unlock()
			for _, ev := range batch {
				if !yield(ev, nil) {
					return
				}
				after = ev.Seq
			}
			if len(batch) > 0 {
				continue
			}
			if ended {
				return
			}
			select {
			case <-changed:
			case <-ctx.Done():
				yield(Event{}, ctx.Err())
				return
			}
		}
	}
}

// Shutdown stops the engine: it starts nothing new (queued runs are
// cancelled), waits for the running runs to end until ctx ends, then
// cancels those still running and waits for them to return. It returns
// ctx's error if it had to cancel runs.
func (l *Local) Shutdown(ctx context.Context) error {
	l.mu.Lock()
	l.closed = true
	queued := l.queue
	l.queue = nil
	now := l.now()
	var recs []Run
	for _, r := range queued {
		r.rec.Status, r.rec.Error, r.rec.EndedAt = StatusCancelled, "the engine shut down before it started", now
		r.notify()
		recs = append(recs, r.rec)
	}
	l.mu.Unlock()
	sq, shared := l.opts.Journal.(SharedQueue)
	for _, rec := range recs {
		// With a shared queue, another engine runs what this one did not
		// start.
		if shared {
			if sq.Enqueue(context.Background(), Run{ID: rec.ID, Request: rec.Request, Status: StatusQueued, Owner: rec.Owner,
				CreatedAt: rec.CreatedAt}) == nil {
				continue
			}
		}
		l.journal(rec)
	}
	done := make(chan struct{})
	go func() { l.wg.Wait(); close(done) }()
	select {
	case <-done:
		l.stop()
		return nil
	case <-ctx.Done():
		l.stop()
		<-done
		return ctx.Err()
	}
}

// snapshot copies the record; l.mu is held.
func (r *localRun) snapshot() Run {
	rec := r.rec
	rec.Asks = slices.Clone(rec.Asks)
	return rec
}

// notify wakes the subscribers; l.mu is held.
func (r *localRun) notify() {
	close(r.changed)
	r.changed = make(chan struct{})
}
