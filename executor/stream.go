package executor

import (
	"bytes"
	"context"
	"encoding/json"
	"iter"
	"runtime/debug"
	"sync"

	"github.com/gantry-dev/gantry/internal/textutil"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"

	"github.com/gantry-dev/gantry/tool"
)

// Stream runs the calls of one model message while the message streams.
// Feed it with [Stream.Partial] (WAIT updates for a block still streaming)
// and [Stream.Add] (a complete call); end with [Stream.Wait] (or
// [Stream.Close] and [Stream.Results]), or with [Stream.Discard] when the
// model's stream failed or is retried. Exactly one of Wait or Discard must
// be called, to release the stream's resources.
//
// Scheduling: calls start in the model's order. A concurrency-safe call
// starts at once if everything running is concurrency-safe (and fewer than
// the concurrency cap run); any other call waits until nothing runs and then
// runs alone. A call never overtakes an earlier one that is waiting. Calls
// that fail lookup or validation get their result at once and do not take
// part in scheduling.
//
// The methods are safe for concurrent use, but Add must be called in the
// model's order.
type Stream struct {
	e    *Executor
	sess *SharedEnv

	ctx       context.Context
	cancel    context.CancelCauseFunc
	stopAfter func() bool

	mu            sync.Mutex
	cond          *sync.Cond
	jobs          []*job
	partials      map[string]*job
	head          int // first job that may still be queued
	running       int
	runningUnsafe bool
	last          *group // group of the last call scheduled
	closed        bool
	discarded     bool
	stop          bool
	stopReason    string
	signals       []Signal
	wg            sync.WaitGroup
	deferStart    bool          // Run: Add queues, runAll starts
	pending       int           // calls added without an outcome yet
	done          chan struct{} // closed when closed and pending == 0 (made by Done)
	doneClosed    bool
}

// Stream starts a streaming run of one model message's calls in session s.
// Cancelling ctx is the user's interrupt: calls whose tool's interrupt
// behaviour is cancel stop, "block" ones finish within their deadline, and
// every call still gets an outcome.
func (e *Executor) Stream(ctx context.Context, s *SharedEnv) *Stream {
	st := e.newStream(ctx, s)
	st.ctx, st.cancel = context.WithCancelCause(ctx)
	st.stopAfter = context.AfterFunc(st.ctx, func() {
		st.mu.Lock()
		skipped := st.pump()
		st.mu.Unlock()
		st.finishSkipped(skipped)
	})
	return st
}

func (e *Executor) newStream(ctx context.Context, s *SharedEnv) *Stream {
	st := &Stream{e: e, sess: s, ctx: ctx}
	st.cond = sync.NewCond(&st.mu)
	return st
}

// runStream is the stream behind Run: all calls are known before any
// starts, nothing can be discarded, and queued calls are finalised when the
// running ones end, so it needs neither its own cancellable context nor an
// AfterFunc.
func (e *Executor) runStream(ctx context.Context, s *SharedEnv, calls []Call) *Batch {
	st := e.newStream(ctx, s)
	st.deferStart = true
	st.jobs = make([]*job, 0, len(calls))
	for _, c := range calls {
		st.Add(c)
	}
	st.runAll()
	return st.Wait()
}

// Partial reports the input prefix of a tool-use block that is still
// streaming; call it for every delta with the whole prefix so far (nil
// when the block starts). It never validates or runs anything. A WAIT
// status event shows the call early: one when the block starts, then one
// each time the prefix grew by 512 bytes, carrying the prefix repaired into
// valid JSON (see [RepairJSONPrefix]). A tool that implements
// [tool.PartialObserver] gets the repaired input too, at most once per
// [Options.PartialInterval] and only when it changed, from the calling
// goroutine; a [tool.CallFactory] tool's instance for the call is made at
// the first Partial and runs the complete call. Without a status receiver
// and an observing tool, Partial costs a map lookup.
func (s *Stream) Partial(id, name string, jsonPrefix []byte) {
	s.mu.Lock()
	if s.closed || s.discarded {
		s.mu.Unlock()
		return
	}
	j := s.partials[id]
	if j == nil {
		if s.partials == nil {
			s.partials = make(map[string]*job)
		}
		j = &job{status: s.e.cfg.status}
		s.partials[id] = j
	}
	s.mu.Unlock()
	p := &j.part
	p.mu.Lock()
	if p.sealed {
		p.mu.Unlock()
		return
	}
	if !p.resolved {
		p.resolved = true
		s.resolvePartial(p, id, name)
	}
	status := j.status != nil && (jsonPrefix == nil || len(jsonPrefix)-p.shown >= partialStatusBytes)
	deliver := p.obs != nil && len(jsonPrefix) > 0 &&
		(s.e.cfg.partialEvery <= 0 || p.last.IsZero() || s.e.cfg.now().Sub(p.last) >= s.e.cfg.partialEvery)
	if !status && !deliver {
		p.mu.Unlock()
		return
	}
	var in json.RawMessage
	if len(jsonPrefix) > 0 {
		in = RepairJSONPrefix(jsonPrefix)
	}
	if status {
		p.shown = len(jsonPrefix)
		j.emit(func(st *tool.Status) {
			st.ToolUseID, st.Name, st.Phase = id, name, tool.PhaseWait
			if in != nil {
				st.Input = in
			}
		})
	}
	if deliver && len(in) > 0 && in[0] == '{' && !bytes.Equal(in, p.sent) {
		p.sent, p.last = in, s.e.cfg.now()
		s.observe(p, id, name, in)
	}
	p.mu.Unlock()
}

// observe delivers one partial input. A panicking observer is logged and
// gets no more partials of the call (the call itself still runs). p.mu is
// held.
func (s *Stream) observe(p *partial, id, name string, in json.RawMessage) {
	defer func() {
		if r := recover(); r != nil {
			p.obs = nil
			s.e.log.Error("tool panicked observing partial input", "tool", name, "id", id, "panic", r, "stack", string(debug.Stack()))
		}
	}()
	p.obs.ObservePartial(s.ctx, p.env, in)
}

// resolvePartial looks up the tool of a streaming call and, for a tool
// that observes partial input or runs one instance per call, prepares it.
// p.mu is held.
func (s *Stream) resolvePartial(p *partial, id, name string) {
	t, ok := s.e.resolver.Lookup(name)
	if !ok || t == nil {
		return
	}
	f, perCall := tool.As[tool.CallFactory](t)
	obs, observes := tool.As[tool.PartialObserver](t)
	if !perCall && !observes {
		return
	}
	if perCall {
		if p.inst = newCall(s.e, f, id, name); p.inst == nil {
			return
		}
		obs, observes = p.inst.(tool.PartialObserver)
	}
	if observes {
		p.obs, p.env = obs, s.sess.callEnv(id)
	}
}

// Add takes a complete call. It looks the tool up and validates the input
// at once (emitting WAIT), then starts the call or queues it. Calls added
// after Close, Wait or Discard are ignored.
func (s *Stream) Add(c Call) {
	s.mu.Lock()
	if s.closed || s.discarded {
		s.mu.Unlock()
		return
	}
	var j *job
	if s.partials != nil {
		j = s.partials[c.ID]
		delete(s.partials, c.ID)
	}
	if j == nil {
		j = &job{status: s.e.cfg.status}
	}
	j.idx, j.call, j.done = len(s.jobs), c, make(chan struct{})
	s.jobs = append(s.jobs, j)
	s.pending++
	s.mu.Unlock()

	if !s.e.prepare(s.ctx, j) {
		s.mu.Lock()
		j.state = stateDone
		s.mu.Unlock()
		s.finalize(j)
		return
	}
	s.mu.Lock()
	safe := j.out.Traits.ConcurrencySafe
	if s.last != nil && s.last.safe && safe && s.last.ctx.Err() == nil {
		j.group = s.last
	} else {
		g := &group{safe: safe, ctx: s.ctx}
		if safe && !s.deferStart {
			// Only parallel calls have siblings to cancel. (Run creates
			// the context in runAll, only where it can be needed.)
			g.ctx, g.cancel = context.WithCancelCause(s.ctx)
		}
		j.group = g
		s.last = g
	}
	j.group.n++
	j.group.cancelSib = j.group.cancelSib || j.spec.CancelSiblingsOnError
	if s.deferStart {
		s.mu.Unlock()
		return
	}
	skipped := s.pump()
	s.mu.Unlock()
	s.finishSkipped(skipped)
}

// pump starts queued calls that may start, in order, and returns the
// queued calls that must not run at all (interrupt, stop, sibling failure).
// s.mu must be held.
func (s *Stream) pump() []*job {
	skipped, _ := s.pumpInline(false)
	return skipped
}

// pumpInline is pump; with inline, the first call that may start is not
// started on a goroutine but returned, for the caller to run it in its own
// goroutine (Run does, saving a goroutine hand-off per call).
func (s *Stream) pumpInline(inline bool) (skipped []*job, next *job) {
	for i := s.head; i < len(s.jobs); i++ {
		j := s.jobs[i]
		if j.state != stateQueued || j.group == nil {
			if i == s.head && j.state != stateQueued {
				s.head++
			}
			continue
		}
		if s.ctx.Err() != nil || s.stop || j.group.ctx.Err() != nil {
			j.state = stateDone
			skipped = append(skipped, j)
			if i == s.head {
				s.head++
			}
			continue
		}
		safe := j.out.Traits.ConcurrencySafe
		if !(s.running == 0 || (safe && !s.runningUnsafe && s.running < s.e.cfg.maxConc)) {
			break
		}
		j.state = stateRunning
		s.running++
		if !safe {
			s.runningUnsafe = true
		}
		if inline && next == nil {
			next = j
			continue
		}
		s.wg.Add(1)
		go s.exec(j)
	}
	return skipped, next
}

// finishSkipped gives calls that never ran their outcome.
func (s *Stream) finishSkipped(js []*job) {
	for _, j := range js {
		cause := context.Cause(j.group.ctx)
		if cause == nil {
			cause = ErrInterrupted
		}
		s.mu.Lock()
		if s.stop && s.ctx.Err() == nil {
			cause = ErrInterrupted
		}
		s.mu.Unlock()
		k, msg := cancelText(cause, j.spec.Name, false)
		s.e.fail(&j.out, k, cause, "%s", msg)
		s.finalize(j)
	}
}

// exec runs a started call on the goroutine pump made for it: the
// pipeline and the tool's Call both run here. When the call is abandoned
// (it ignored its cancellation), the abandon timer's goroutine ends the
// job and this goroutine ends when the tool returns.
func (s *Stream) exec(j *job) {
	if s.e.execute(s, j, true) {
		s.endExec(j)
	}
}

// endExec ends a job started on a goroutine of its own.
func (s *Stream) endExec(j *job) {
	defer s.wg.Done()
	s.endJob(j, false)
}

// runJob runs a started call on the caller's goroutine (Run) to its end
// and returns the next call for the caller to run.
func (s *Stream) runJob(j *job) *job {
	s.e.execute(s, j, false)
	return s.endJob(j, true)
}

// endJob ends a call that ran (cancelling its siblings if it failed and
// asks for it), gives it its outcome and starts what may start next; with
// inline, it returns the next call for the caller to run.
func (s *Stream) endJob(j *job, inline bool) *job {
	o := &j.out
	if j.spec.CancelSiblingsOnError && j.group.cancel != nil && (o.Kind == KindToolError || o.Kind == KindPanic || o.Kind == KindTimeout) {
		j.group.cancel(&siblingError{id: j.call.ID, name: j.spec.Name, text: o.Result.TextContent()})
	}
	s.finalize(j)
	s.mu.Lock()
	s.running--
	if !j.out.Traits.ConcurrencySafe || !j.group.safe {
		s.runningUnsafe = false
	}
	j.state = stateDone
	skipped, next := s.pumpInline(inline)
	s.mu.Unlock()
	s.finishSkipped(skipped)
	return next
}

// runAll is Run's scheduler: the calls were added without starting them;
// it starts them, running one at a time in the caller's goroutine.
func (s *Stream) runAll() {
	s.mu.Lock()
	s.deferStart = false
	for _, j := range s.jobs {
		if g := j.group; g != nil && g.cancel == nil && g.safe && g.n > 1 && g.cancelSib {
			g.ctx, g.cancel = context.WithCancelCause(s.ctx)
		}
	}
	skipped, next := s.pumpInline(true)
	s.mu.Unlock()
	s.finishSkipped(skipped)
	for next != nil {
		next = s.runJob(next)
	}
}

// finalize budgets the result, records stats and signals, ends the span,
// emits the final status and releases waiters.
func (s *Stream) finalize(j *job) {
	e := s.e
	o := &j.out
	if o.Result == nil {
		o.Result = tool.Errorf("internal error: the call to %s produced no result", j.call.Name)
		o.Kind = KindInternal
	}
	if j.spec != nil {
		dir := ""
		if lim := j.spec.ResultLimit(); lim >= 0 && tool.TextLen(o.Result.Content) > lim {
			dir = e.resultsDir(s.sess.callEnv(j.call.ID))
			r, path, err := applyBudget(o.Result, lim, e.cfg.previewChars, dir, j.call.ID)
			if err != nil {
				e.log.Warn("could not save oversized result", "tool", j.spec.Name, "id", j.call.ID, "err", err)
			}
			o.Result, o.ResultPath = r, path
		}
	}
	sigs := e.stats.record(o)
	if len(sigs) > 0 {
		s.mu.Lock()
		s.signals = append(s.signals, sigs...)
		s.mu.Unlock()
		if e.cfg.signal != nil {
			for _, sg := range sigs {
				e.cfg.signal(sg)
			}
		}
	}
	if o.Stop {
		s.mu.Lock()
		if !s.stop {
			s.stop, s.stopReason = true, o.StopReason
		}
		s.mu.Unlock()
	}
	isErr := o.Kind != KindOK || o.Result.IsError
	if j.span != nil {
		if isErr {
			et := string(o.Kind)
			if et == "" {
				et = string(KindToolError)
			}
			j.span.SetAttributes(attribute.String("error.type", et))
			j.span.SetStatus(codes.Error, textutil.Truncate(o.Result.TextContent(), 200))
		}
		if o.Tool != "" && o.Tool != o.Name {
			j.span.SetAttributes(attribute.String("gen_ai.tool.name", o.Tool))
		}
		j.span.End()
	}
	if e.log.Enabled(s.ctx, -4) {
		e.log.Debug("tool call", "tool", o.Name, "id", o.ID, "kind", string(o.Kind), "is_error", isErr,
			"duration", o.Duration, "coerced", o.Coerced)
	}
	end := e.cfg.now()
	j.emit(func(st *tool.Status) {
		st.ToolUseID, st.Name = j.call.ID, j.call.Name
		switch {
		case o.Observable != nil:
			st.Input = o.Observable
		case o.Input != nil:
			st.Input = o.Input
		}
		st.Phase = tool.PhaseSuccess
		if isErr {
			st.Phase = tool.PhaseError
		}
		st.Result = o.Result
		st.Progress = nil
		if !o.Start.IsZero() {
			st.End, st.Duration = end, o.Duration
		}
	})
	j.part.release()
	close(j.done)
	s.mu.Lock()
	s.pending--
	s.signalDone()
	s.cond.Broadcast()
	s.mu.Unlock()
}

// dropPartials releases the calls whose input streamed but that never
// arrived. s.mu must be held.
func (s *Stream) dropPartials() {
	for _, j := range s.partials {
		j.part.release()
	}
	s.partials = nil
}

// Done returns a channel that is closed once the stream is closed (by
// Close, Wait or Discard) and every call added has its outcome: a caller
// can wait for it in a select together with other work (delivering status
// events, say) without a goroutine of its own, then call [Stream.Wait],
// which no longer blocks on calls.
func (s *Stream) Done() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done == nil {
		s.done = make(chan struct{})
		s.signalDone()
	}
	return s.done
}

// signalDone closes the Done channel when it is due. s.mu must be held.
func (s *Stream) signalDone() {
	if s.done != nil && !s.doneClosed && s.closed && s.pending == 0 {
		s.doneClosed = true
		close(s.done)
	}
}

func (s *Stream) isDiscarded() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.discarded
}

// Close says no more calls will be added. Calls keep running; use
// [Stream.Results] or [Stream.Wait] for their outcomes.
func (s *Stream) Close() {
	s.mu.Lock()
	s.closed = true
	s.dropPartials()
	s.signalDone()
	s.cond.Broadcast()
	s.mu.Unlock()
}

// Results closes nothing: it yields the outcomes in the model's order as
// each becomes available, until the stream is closed and every call has
// been yielded. Call [Stream.Close] (or [Stream.Wait]) for it to end.
func (s *Stream) Results() iter.Seq[*Outcome] {
	return func(yield func(*Outcome) bool) {
		for i := 0; ; i++ {
			s.mu.Lock()
			for i >= len(s.jobs) && !s.closed && !s.discarded {
				s.cond.Wait()
			}
			if i >= len(s.jobs) || s.discarded {
				s.mu.Unlock()
				return
			}
			j := s.jobs[i]
			s.mu.Unlock()
			<-j.done
			if s.isDiscarded() {
				return
			}
			if !yield(&j.out) {
				return
			}
		}
	}
}

// Wait closes the stream, waits for every call and returns the batch. It
// returns an empty batch after [Stream.Discard].
func (s *Stream) Wait() *Batch {
	s.Close()
	b := &Batch{}
	s.mu.Lock()
	discarded := s.discarded
	jobs := s.jobs
	s.mu.Unlock()
	if !discarded {
		b.Outcomes = make([]*Outcome, len(jobs))
		for i, j := range jobs {
			<-j.done
			b.Outcomes[i] = &j.out
		}
	}
	s.wg.Wait()
	s.mu.Lock()
	b.Stop, b.StopReason = s.stop, s.stopReason
	b.Signals = s.signals
	b.Interrupted = s.ctx.Err() != nil && context.Cause(s.ctx) != ErrInterrupted
	discarded = s.discarded
	s.mu.Unlock()
	s.release()
	if discarded {
		return &Batch{}
	}
	return b
}

func (s *Stream) release() {
	if s.stopAfter != nil {
		s.stopAfter()
	}
	if s.cancel != nil {
		s.cancel(nil)
	}
}

// Discard abandons the stream: the model's reply failed or is retried, so
// its tool-use blocks will never be sent and their results must not be
// either. Calls already started are cancelled (calls whose tool's interrupt
// behaviour is block finish first), queued ones never run, and every result
// is dropped. Discard returns when no call of the stream runs any more.
// Context modifiers of discarded calls are not applied.
func (s *Stream) Discard() {
	s.mu.Lock()
	if s.discarded {
		s.mu.Unlock()
		return
	}
	s.discarded, s.closed = true, true
	s.dropPartials()
	s.signalDone()
	s.cond.Broadcast()
	s.mu.Unlock()
	if s.cancel != nil {
		s.cancel(ErrDiscarded)
	}
	// The AfterFunc finishes queued calls; wait for running ones.
	s.wg.Wait()
	s.mu.Lock()
	skipped := s.pump()
	s.mu.Unlock()
	s.finishSkipped(skipped)
	s.release()
}

// newCall makes a per-call instance ([tool.CallFactory]); a factory that
// panics or returns nil gives nil (the call then fails as a bug in the
// tool).
func newCall(e *Executor, f tool.CallFactory, id, name string) (inst tool.Tool) {
	defer func() {
		if r := recover(); r != nil {
			inst = nil
			e.log.Error("tool panicked making a per-call instance", "tool", name, "id", id, "panic", r, "stack", string(debug.Stack()))
		}
	}()
	return f.NewCall(id)
}
