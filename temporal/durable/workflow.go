package durable

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/gantry-dev/gantry/agent"
	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/tool"
)

// Timeouts is how long activities may take; the zero value of each field
// takes the default in brackets.
type Timeouts struct {
	// Heartbeat is the heartbeat timeout of the model and tool activities:
	// a worker that dies is noticed within it [DefaultHeartbeatTimeout].
	Heartbeat time.Duration `json:"heartbeat,omitempty"`
	// Model bounds one model call [10 min]; Tool bounds one tool call
	// [1 h] (the tool's own deadline applies within it).
	Model time.Duration `json:"model,omitempty"`
	Tool  time.Duration `json:"tool,omitempty"`
}

func (t Timeouts) heartbeat() time.Duration {
	if t.Heartbeat > 0 {
		return t.Heartbeat
	}
	return DefaultHeartbeatTimeout
}

// runner is the state of one workflow execution.
type runner struct {
	ctx     workflow.Context
	runID   string
	spec    Spec
	st      *State
	pending []*Ask
	done    bool
	prices  agent.PriceTable
	to      Timeouts
	last    llm.StopReason
	opts    RunOptions
	// histLimit is the history length at which the run continues as new.
	histLimit int
	// children are the background subagents by run id (= task id);
	// childAsks the asks of children waiting for an answer (children.go).
	children  map[string]*child
	childAsks []*Ask
}

// RunWorkflow is the agent loop as a Temporal workflow. Its code uses only
// workflow APIs (time, goroutines, waiting), so it replays: every model call
// and tool call is an activity whose result is in the history.
func RunWorkflow(ctx workflow.Context, in RunInput) (*Result, error) {
	info := workflow.GetInfo(ctx)
	r := &runner{ctx: ctx, runID: info.WorkflowExecution.ID, spec: in.Spec, st: in.State, prices: agent.DefaultPrices(), opts: in.Options}
	r.to, r.histLimit = in.Options.Timeouts, in.Options.HistoryEvents
	if r.histLimit <= 0 {
		r.histLimit = DefaultHistoryEvents
	}
	if err := r.handlers(); err != nil {
		return nil, err
	}
	r.receiveSignals()
	if r.st == nil {
		r.st = &State{Started: workflow.Now(ctx)}
		if c := in.Resume; c != nil {
			// The earlier run's conversation, all in the transcript.
			r.st.Session, r.st.Messages, r.st.Base, r.st.Compacted = c.Session, c.Messages, c.Base, c.Compacted
			r.st.Written = len(c.Messages)
		}
		if err := r.start(in.Prompt); err != nil {
			if r.ctx.Err() != nil {
				return r.finish(agent.SubtypeInterrupted, true, "interrupted")
			}
			return r.finish(agent.SubtypeDuringExecution, true, err.Error())
		}
	}
	return r.loop()
}

// handlers registers the events and conversation queries and the answer
// update.
func (r *runner) handlers() error {
	if err := workflow.SetQueryHandler(r.ctx, QueryConversation, func() (Conversation, error) {
		if r.st == nil {
			return Conversation{}, errors.New("the run has not started")
		}
		return Conversation{Session: r.session(), Messages: r.st.Messages, Compacted: r.st.Compacted, Base: r.st.Base, Done: r.done}, nil
	}); err != nil {
		return err
	}
	if err := workflow.SetQueryHandler(r.ctx, QueryEvents, func(q EventsQuery) (EventsPage, error) {
		page := EventsPage{Done: r.done, First: r.st.Seq + 1, Last: lastSeq(r.st)}
		for _, e := range r.st.Events {
			if e.Seq > q.After {
				page.Events = append(page.Events, e)
			}
		}
		for _, a := range r.pending {
			page.Pending = append(page.Pending, *a)
		}
		for _, a := range r.childAsks {
			if a.Answer == nil {
				page.Pending = append(page.Pending, *a)
			}
		}
		return page, nil
	}); err != nil {
		return err
	}
	return workflow.SetUpdateHandlerWithOptions(r.ctx, UpdateAnswer, r.answer, workflow.UpdateHandlerOptions{Validator: func(in AnswerInput) error {
		if len(in.Answer) == 0 {
			return errors.New("the answer is empty")
		}
		a := r.findAsk(in.ID)
		if a == nil {
			return fmt.Errorf("no pending ask %q", in.ID)
		}
		if a.Answer != nil {
			return fmt.Errorf("ask %q is already answered", in.ID)
		}
		return validAnswer(a.Kind, in.Answer)
	}})
}

func (r *runner) emit(e Event) {
	last := r.st.Seq
	if n := len(r.st.Events); n > 0 {
		last = r.st.Events[n-1].Seq
	}
	e.Seq = last + 1
	r.st.Events = append(r.st.Events, e)
}

func (r *runner) activity(name string, timeout time.Duration, attempts int32) workflow.Context {
	return r.activityIn(r.ctx, name, timeout, attempts)
}

// activityIn is activity for a coroutine of the workflow (workflow.Go):
// each waits with its own context.
func (r *runner) activityIn(ctx workflow.Context, name string, timeout time.Duration, attempts int32) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: timeout,
		HeartbeatTimeout:    r.to.heartbeat(),
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    time.Second,
			BackoffCoefficient: 2,
			MaximumInterval:    30 * time.Second,
			MaximumAttempts:    attempts,
		},
	})
}

// start prepares the run on a worker (system prompt, mode, tools) and
// sends the prompt.
func (r *runner) start(prompt string) error {
	var prep prepareOutput
	ctx := r.activity(activityPrepare, 2*time.Minute, 3)
	if err := workflow.ExecuteActivity(ctx, activityPrepare, r.runID, r.spec).Get(ctx, &prep); err != nil {
		return fmt.Errorf("prepare the run: %w", err)
	}
	r.st.System, r.st.Mode = prep.System, prep.Mode
	r.emit(Event{Type: EventInit, Text: prep.Model, Tools: prep.Tools})
	r.appendMessage(llm.UserText(prompt))
	return nil
}

func (r *runner) appendMessage(m llm.Message) {
	r.st.Messages = append(r.st.Messages, m)
	r.emit(Event{Type: EventMessage, Message: &m})
}

func (r *runner) loop() (*Result, error) {
	maxTurns := r.spec.MaxTurns
	if maxTurns <= 0 {
		maxTurns = DefaultMaxTurns
	}
	for {
		if r.ctx.Err() != nil {
			return r.finish(agent.SubtypeInterrupted, true, "interrupted")
		}
		if r.st.Turns >= maxTurns {
			return r.finish(agent.SubtypeMaxTurns, true, fmt.Sprintf("stopped after %d turns (max turns)", r.st.Turns))
		}
		if r.continueAsNew() {
			r.transcript(nil)
			r.st.Seq, r.st.Events = lastSeq(r.st), nil
			return nil, workflow.NewContinueAsNewError(r.ctx, WorkflowName, RunInput{Spec: r.spec, State: r.st, Options: r.opts})
		}
		r.deliverNotes()
		r.maybeCompact()
		if r.ctx.Err() != nil {
			return r.finish(agent.SubtypeInterrupted, true, "interrupted")
		}
		var out modelOutput
		mctx := r.activity(activityModel, orDur(r.to.Model, 10*time.Minute), 5)
		err := workflow.ExecuteActivity(mctx, activityModel, modelInput{
			RunID: r.runID, Spec: r.spec, System: r.st.System, Loaded: r.st.Loaded, Messages: r.st.Messages,
		}).Get(mctx, &out)
		if err != nil {
			if r.ctx.Err() != nil || temporal.IsCanceledError(err) {
				return r.finish(agent.SubtypeInterrupted, true, "interrupted")
			}
			return r.finish(agent.SubtypeDuringExecution, true, "model request: "+rootMessage(err))
		}
		r.st.Turns++
		r.st.LastSize = out.Usage.PromptTokens() + out.Usage.OutputTokens
		r.st.Usage = r.st.Usage.Add(out.Usage)
		r.st.CostUSD += r.cost(out.Usage)
		r.last = out.StopReason
		if t := out.Message.Text(); t != "" {
			r.st.Text = t
		}
		if len(out.Message.Content) > 0 {
			r.appendMessage(out.Message)
		}
		uses := out.Message.ToolUses()
		if len(uses) > 0 {
			stop, why := r.tools(uses, out.Invalid, parallelSet(out))
			if stop {
				return r.finish(agent.SubtypeInterrupted, true, why)
			}
		}
		if r.ctx.Err() != nil {
			return r.finish(agent.SubtypeInterrupted, true, "interrupted")
		}
		if r.spec.MaxBudgetUSD > 0 && r.st.CostUSD >= r.spec.MaxBudgetUSD {
			return r.finish(agent.SubtypeMaxBudget, true, fmt.Sprintf("stopped: cost $%.4f reached the budget of $%.4f", r.st.CostUSD, r.spec.MaxBudgetUSD))
		}
		if len(uses) > 0 || out.StopReason == llm.StopPauseTurn {
			continue
		}
		// The model ended its turn: background agents it started may
		// still report (the run waits for them).
		if r.waitBackground() {
			continue
		}
		if r.ctx.Err() != nil {
			return r.finish(agent.SubtypeInterrupted, true, "interrupted")
		}
		return r.finish(agent.SubtypeSuccess, false, r.st.Text)
	}
}

// tools runs the calls of one assistant message, one activity each, and
// appends the user message with their results in the model's order.
// Consecutive calls in parallel (read-only and concurrency-safe, as the
// model activity found) run at once, as the in-process executor runs them;
// every other call runs alone, in order, after the calls before it ended.
// It reports whether the run must stop (a hook or a permission answer
// said so).
func (r *runner) tools(uses []llm.Block, invalid map[string]string, parallel parallelism) (bool, string) {
	var blocks, extra []llm.Block
	stop, why := false, ""
	for i := 0; i < len(uses); {
		// The batch: uses[i:j], more than one call only when parallel.
		j := i + 1
		for parallel.ok(uses[i].ID) && j < len(uses) && j-i < parallel.max && parallel.ok(uses[j].ID) {
			j++
		}
		batch := uses[i:j]
		outs := make([]*toolOutput, len(batch))
		run := func(ctx workflow.Context, k int) {
			u := batch[k]
			switch {
			case stop:
				outs[k] = &toolOutput{Result: tool.Errorf("Gantry did not run this call: the run was stopped (%s).", why)}
			case r.ctx.Err() != nil:
				outs[k] = &toolOutput{Result: tool.Errorf("The user interrupted this call before it ran.")}
			case invalid[u.ID] != "":
				outs[k] = &toolOutput{Result: tool.Errorf("The input of this %s call is invalid (%s). Send the call again with a valid input.", u.Name, invalid[u.ID]),
					Outcome: ToolOutcome{ID: u.ID, Name: u.Name, Kind: "invalid_input", IsError: true}}
			default:
				if res, ok := r.taskCall(ctx, u); ok {
					outs[k] = &toolOutput{Result: res, Outcome: ToolOutcome{ID: u.ID, Name: u.Name, Kind: "success", IsError: res.IsError}}
					return
				}
				outs[k] = r.tool(ctx, u)
			}
		}
		if len(batch) == 1 {
			run(r.ctx, 0)
		} else {
			wg := workflow.NewWaitGroup(r.ctx)
			for k := range batch {
				wg.Add(1)
				workflow.Go(r.ctx, func(ctx workflow.Context) {
					defer wg.Done()
					run(ctx, k)
				})
			}
			wg.Wait(r.ctx)
		}
		// The outcomes apply in the model's order, whatever order the
		// calls of a batch ended in.
		for k, out := range outs {
			if out.Outcome.ID != "" {
				for _, n := range out.Notices {
					r.emit(Event{Type: EventNotice, Text: n})
				}
				r.emit(Event{Type: EventToolResult, Tool: &out.Outcome})
			}
			if out.Mode != "" {
				r.st.Mode = out.Mode
			}
			if out.Loaded != nil {
				r.st.Loaded = out.Loaded
			}
			r.st.Files = mergeFiles(r.st.Files, out.Files)
			r.st.Granted = mergeGrants(r.st.Granted, out.Granted)
			for _, t := range out.ExtraText {
				extra = append(extra, llm.Text(t))
			}
			if out.Stop && !stop {
				stop, why = true, out.StopWhy
			}
			blocks = append(blocks, llm.ResultBlock(batch[k].ID, out.Result))
		}
		i = j
	}
	r.appendMessage(llm.UserMessage(append(blocks, extra...)...))
	return stop, why
}

// parallelism is which calls of a message may run at once.
type parallelism struct {
	ids map[string]bool
	max int
}

func parallelSet(out modelOutput) parallelism {
	p := parallelism{max: out.MaxParallel}
	if len(out.Parallel) < 2 || p.max < 2 {
		return p
	}
	p.ids = make(map[string]bool, len(out.Parallel))
	for _, id := range out.Parallel {
		p.ids[id] = true
	}
	return p
}

func (p parallelism) ok(id string) bool { return p.ids[id] }

// tool runs one call; an ask makes the workflow wait for its answer and
// run the call again with the answers so far.
// ctx is the calling coroutine's (the workflow's, or a batch's).
func (r *runner) tool(ctx workflow.Context, u llm.Block) *toolOutput {
	in := toolInput{RunID: r.runID, Spec: r.spec, ID: u.ID, Name: u.Name, Input: u.Input}
	for {
		in.Mode, in.Loaded, in.Epoch = r.st.Mode, r.st.Loaded, r.st.Compactions
		in.Granted, in.Files = r.st.Granted, carryFiles(r.st.Files, u.Input)
		var out toolOutput
		tctx := r.activityIn(ctx, activityTool, orDur(r.to.Tool, time.Hour), 3)
		err := workflow.ExecuteActivity(tctx, activityTool, in).Get(tctx, &out)
		if err != nil {
			msg := "The tool call failed on the worker: " + rootMessage(err)
			if r.ctx.Err() != nil || temporal.IsCanceledError(err) {
				msg = "The user interrupted this call."
			}
			return &toolOutput{Result: tool.Errorf("%s", msg), Outcome: ToolOutcome{ID: u.ID, Name: u.Name, Kind: "internal", IsError: true}}
		}
		if out.Spawn != nil && out.Ask == nil {
			if in.Agent != nil {
				return &toolOutput{Result: tool.Errorf("Gantry could not run this subagent (it was asked for twice)."), Outcome: ToolOutcome{ID: u.ID, Name: u.Name, Kind: "internal", IsError: true}}
			}
			// The subagent is a child workflow; the call runs again with
			// what became of it.
			in.Agent = r.spawn(ctx, u, out.Spawn)
			continue
		}
		if out.Ask == nil {
			if out.Result == nil {
				out.Result = tool.Errorf("Gantry did not run this call (no result was produced).")
			}
			return &out
		}
		ask := out.Ask
		ask.ID = fmt.Sprintf("%s#%d", u.ID, len(in.Answers)+1)
		ask.ToolUseID = u.ID
		ask.At = workflow.Now(ctx)
		r.transcriptIn(ctx, nil)
		r.pending = append(r.pending, ask)
		r.emit(Event{Type: EventAsk, Ask: ask})
		r.tellParent(ctx, ask, false)
		// Waiting holds no worker: the workflow leaves the cache when
		// evicted and is replayed from its history when the answer comes.
		if err := workflow.Await(ctx, func() bool { return ask.Answer != nil }); err != nil {
			r.pending = slices.DeleteFunc(r.pending, func(a *Ask) bool { return a == ask })
			r.tellParent(ctx, ask, true)
			return &toolOutput{Result: tool.Errorf("The user interrupted this call while it waited for an answer."), Outcome: ToolOutcome{ID: u.ID, Name: u.Name, Kind: "cancelled", IsError: true}}
		}
		r.pending = slices.DeleteFunc(r.pending, func(a *Ask) bool { return a == ask })
		r.tellParent(ctx, ask, true)
		answered := *ask
		r.emit(Event{Type: EventAnswered, Ask: &answered})
		in.Answers = append(in.Answers, ask.Answer)
	}
}

// finish emits the result and ends the workflow. After a cancellation the
// last bookkeeping (transcript, releasing the worker's runtime) runs on a
// disconnected context.
func (r *runner) finish(subtype string, isErr bool, text string) (*Result, error) {
	r.stopChildren()
	if r.ctx.Err() != nil {
		dctx, cancel := workflow.NewDisconnectedContext(r.ctx)
		defer cancel()
		r.ctx = dctx
	}
	res := &Result{
		Subtype: subtype, IsError: isErr, Text: text, RunID: r.runID, NumTurns: r.st.Turns,
		Usage: r.st.Usage, CostUSD: r.st.CostUSD, Duration: workflow.Now(r.ctx).Sub(r.st.Started), StopReason: r.last,
	}
	r.transcript(res)
	r.emit(Event{Type: EventResult, Result: res})
	r.done = true
	rctx := workflow.WithActivityOptions(r.ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute,
		RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 1}})
	// Best effort: a worker that keeps no runtime for the run has nothing
	// to release, and an idle runtime is released anyway.
	_ = workflow.ExecuteActivity(rctx, activityRelease, r.runID, res).Get(rctx, nil)
	return res, nil
}

// transcript appends the messages not yet written (and the result, at the
// end) to the session transcript on a worker, so `gantry --resume RUN-ID`
// continues the run in-process. A failure is a notice, not the run's end.
func (r *runner) transcript(res *Result) { r.transcriptIn(r.ctx, res) }

// transcriptIn is transcript for a coroutine of the workflow.
func (r *runner) transcriptIn(wctx workflow.Context, res *Result) {
	if r.spec.NoTranscript || (r.st.Written >= len(r.st.Messages) && res == nil) {
		return
	}
	ctx := r.activityIn(wctx, activityTranscript, time.Minute, 5)
	in := transcriptInput{RunID: r.session(), WorkDir: r.spec.WorkDir, From: r.st.Base + r.st.Written,
		Messages: r.st.Messages[r.st.Written:], Summary: r.st.Written == 0 && r.st.Compacted, Result: res}
	if err := workflow.ExecuteActivity(ctx, activityTranscript, in).Get(ctx, nil); err != nil {
		r.emit(Event{Type: EventNotice, Text: "the transcript could not be written: " + rootMessage(err)})
		return
	}
	r.st.Written = len(r.st.Messages)
}

func (r *runner) cost(u llm.Usage) float64 {
	p, ok := r.prices.Lookup(r.spec.Model)
	if !ok {
		return 0
	}
	return p.Cost(agent.TokenCounts{Input: int64(u.InputTokens), Output: int64(u.OutputTokens),
		CacheWrite: int64(u.CacheCreationInputTokens), CacheRead: int64(u.CacheReadInputTokens)})
}

// continueAsNew reports whether the history is long enough to continue as
// new (only at a turn boundary, with no ask pending and no background
// agent running: a child's completion goes to the run that started it).
func (r *runner) continueAsNew() bool {
	info := workflow.GetInfo(r.ctx)
	return len(r.pending) == 0 && len(r.childAsks) == 0 && r.runningChildren() == 0 &&
		(info.GetContinueAsNewSuggested() || info.GetCurrentHistoryLength() >= r.histLimit)
}

// session is the run's transcript session id.
func (r *runner) session() string {
	if r.st.Session != "" {
		return r.st.Session
	}
	return r.runID
}

func lastSeq(st *State) int {
	if n := len(st.Events); n > 0 {
		return st.Events[n-1].Seq
	}
	return st.Seq
}

func orDur(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// rootMessage is the message of the innermost error (an activity's
// application error rather than Temporal's wrapping).
func rootMessage(err error) string {
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		return app.Error()
	}
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err.Error()
		}
		err = u
	}
}
