package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gantry-dev/gantry/executor"
	"github.com/gantry-dev/gantry/hook"
	"github.com/gantry-dev/gantry/internal/offstack"
	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/tool"
	"github.com/gantry-dev/gantry/transcript"
)

// run is the state of one Run.
type run struct {
	a       *Agent
	yield   func(Event, error) bool
	cancel  context.CancelFunc
	stopped bool // the consumer stopped iterating
	start   time.Time
	turns   int
	usage   llm.Usage
	cost    float64
	last    llm.StopReason
	// lastCost is the cost of the last reply.
	lastCost float64
	text     string
	mode     tool.Mode  // the mode last reported (InitEvent, ModeEvent)
	out      *outputRun // structured output, if the run has a schema
	answer   json.RawMessage
	// enc keeps the conversation's messages as the provider encoded them,
	// so that a turn encodes only what it adds; it lives as long as the
	// run, so that an idle session does not hold a second copy.
	enc llm.MessageEncodings
}

// emit delivers an event; false means the consumer is gone.
func (r *run) emit(ev Event) bool {
	if r.stopped {
		return false
	}
	if !r.yield(ev, nil) {
		r.stopped = true
		r.cancel()
	}
	return !r.stopped
}

func (r *run) drain() {
	for _, s := range r.a.takeStatuses() {
		r.emit(&ToolStatus{Status: s})
	}
	for _, e := range r.a.kids.takeEvents() {
		r.emit(e)
	}
}

// absorb adds the usage and cost of the subagents that ended since the last
// call to the run's and the session's.
func (r *run) absorb() {
	u, c := r.a.kids.takeUsage()
	r.usage, r.cost = r.usage.Add(u), r.cost+c
	r.a.usage, r.a.cost = r.a.usage.Add(u), r.a.cost+c
}

// deliverNotes adds the queued notes (background results, messages) to
// the conversation.
func (r *run) deliverNotes() bool {
	notes := r.a.kids.takeInbox()
	if len(notes) == 0 {
		return true
	}
	var blocks []llm.Block
	for _, n := range notes {
		blocks = append(blocks, llm.Text(n))
	}
	return r.appendMessage(llm.UserMessage(blocks...))
}

// waitBackground waits, when the model ended its turn, for a background
// subagent to end (or a note to arrive). It reports whether there is
// something new for the model.
func (r *run) waitBackground(ctx context.Context) bool {
	a := r.a
	if !a.opts.WaitForBackground {
		return false
	}
	for {
		running, notes := a.kids.waiting()
		if notes > 0 {
			return true
		}
		if running == 0 {
			return false
		}
		select {
		case <-a.kids.wake:
		case <-a.notify:
			r.drain()
		case <-ctx.Done():
			return false
		}
	}
}

// finish emits the final result (and err after it, if any).
func (r *run) finish(subtype string, isErr bool, text string, err error) {
	r.recordTip()
	r.drain()
	r.absorb()
	res := &ResultEvent{
		Subtype: subtype, IsError: isErr, Text: text, SessionID: r.a.id, NumTurns: r.turns,
		Usage: r.usage, CostUSD: r.cost, Duration: r.a.now().Sub(r.start), StopReason: r.last,
		Structured: r.answer,
	}
	r.a.recordSystem("result", res)
	if r.emit(res) && err != nil {
		r.stopped = !r.yield(nil, err)
	}
}

func (r *run) loop(ctx context.Context, prompt []llm.Block) {
	// The loop's own frame stays small: its goroutine (the caller's) spends
	// the session waiting for the model below it, and every byte of the
	// frames on that path is a byte of every waiting session's stack. The
	// work before and after each request is in methods of their own.
	if !r.begin(ctx, prompt) {
		return
	}
	maxTurns := r.a.opts.MaxTurns
	if maxTurns <= 0 {
		maxTurns = DefaultMaxTurns
	}
	stopHookActive := false
	for r.beforeTurn(ctx, maxTurns) {
		resp, batch, preErrs, err := r.turn(ctx)
		if !r.afterTurn(ctx, resp, batch, preErrs, err, &stopHookActive) {
			return
		}
	}
}

// begin starts a run: the init event and notices, the UserPromptSubmit
// hooks, the prompt in the conversation. false means the run ended.
func (r *run) begin(ctx context.Context, prompt []llm.Block) bool {
	a := r.a
	env := a.execSess.Env()
	r.mode = env.Mode
	r.emit(&InitEvent{SessionID: a.id, Model: a.opts.Model, WorkDir: env.WorkDir, Tools: r.toolNames(), Mode: env.Mode})
	for _, n := range a.notices {
		r.emit(&NoticeEvent{Text: n})
	}
	a.notices = nil
	// Tools whose factory or session-time description failed are left out
	// of the pool (built for the tool list above): say so, once per error.
	if err := a.pool.Err(); err != nil && err.Error() != a.poolErr {
		a.poolErr = err.Error()
		r.emit(&NoticeEvent{Text: "tools left out of this session: " + a.poolErr})
	}

	blocks := slices.Clone(prompt)
	if out := a.hook(ctx, &hook.Input{Event: hook.UserPromptSubmit, Prompt: llm.UserMessage(prompt...).Text()}); out != nil {
		if out.SystemMessage != "" {
			r.emit(&NoticeEvent{Text: out.SystemMessage})
		}
		if out.Block {
			r.finish(SubtypeBlocked, true, "prompt blocked by a hook: "+out.Reason, nil)
			return false
		}
		if out.AdditionalContext != "" {
			blocks = append(blocks, llm.Text(out.AdditionalContext))
		}
	}
	uuid := transcript.NewUUID()
	cp := r.checkpointTurn(ctx, uuid, llm.UserMessage(prompt...).Text())
	if !r.appendMessageAs(llm.UserMessage(blocks...), uuid, cp, nil) {
		return false
	}
	return true
}

// beforeTurn checks the limits and adds what goes before the next request
// (notes, compaction, reminders). false means the run ended.
func (r *run) beforeTurn(ctx context.Context, maxTurns int) bool {
	if ctx.Err() != nil {
		r.finish(SubtypeInterrupted, true, "interrupted", nil)
		return false
	}
	if r.turns >= maxTurns {
		r.a.stopBackground(context.WithoutCancel(ctx))
		r.finish(SubtypeMaxTurns, true, fmt.Sprintf("stopped after %d turns (max turns)", r.turns), nil)
		return false
	}
	if !r.deliverNotes() {
		return false
	}
	if err := r.maybeCompact(ctx); err != nil {
		r.emit(&NoticeEvent{Text: "compaction failed: " + err.Error()})
	}
	if !r.remind(ctx) {
		return false
	}
	return true
}

// afterTurn acts on a turn's reply and batch: tool results, structured
// output, completion, signals, budgets, Stop hooks. true means another
// turn follows; false that the run ended.
func (r *run) afterTurn(ctx context.Context, resp *llm.Response, batch *executor.Batch, preErrs map[string]*tool.Result, err error, stopHookActive *bool) bool {
	a := r.a
	if r.stopped || errors.Is(err, errEnded) {
		return false
	}
	if err != nil {
		if ctx.Err() != nil {
			r.finish(SubtypeInterrupted, true, "interrupted", nil)
			return false
		}
		r.finish(SubtypeDuringExecution, true, err.Error(), err)
		return false
	}
	if !r.emit(&TurnEnd{Turn: r.turns, StopReason: resp.StopReason, Usage: resp.Usage, CostUSD: r.lastCost}) {
		return false
	}

	uses := resp.Message.ToolUses()
	if len(uses) > 0 {
		if !r.sendResults(uses, batch, preErrs) {
			return false
		}
	}
	if v, exhausted := r.checkOutput(batch); v != nil {
		r.a.stopBackground(context.WithoutCancel(ctx))
		r.answer = v
		r.finish(SubtypeSuccess, false, r.text, nil)
		return false
	} else if exhausted {
		r.outputExhausted()
		return false
	}
	switch done, handoff := control(batch); {
	case done != nil:
		r.a.stopBackground(context.WithoutCancel(ctx))
		r.finish(SubtypeSuccess, false, done.CompletionText(), nil)
		return false
	case handoff != nil:
		old := r.a.id
		if err := r.handOff(ctx, handoff.HandoffContext()); err != nil {
			r.finish(SubtypeDuringExecution, true, err.Error(), err)
			return false
		}
		if !r.emit(&NoticeEvent{Text: fmt.Sprintf("new_task: session %s ended; the task goes on in the new session %s from the handed-over context", old, r.a.id)}) {
			return false
		}
		return true
	}
	if batch != nil && batch.Stop {
		r.finish(SubtypeInterrupted, true, batch.StopReason, nil)
		return false
	}
	if ctx.Err() != nil || (batch != nil && batch.Interrupted) {
		r.finish(SubtypeInterrupted, true, "interrupted", nil)
		return false
	}
	if batch != nil && len(batch.Signals) > 0 {
		for _, s := range batch.Signals {
			r.emit(&NoticeEvent{Text: s.Message})
		}
		a.signals += len(batch.Signals)
		if a.opts.StopOnSignal || a.signals >= 2 {
			r.finish(SubtypeToolLoop, true, batch.Signals[0].Message, nil)
			return false
		}
		note := llm.UserText("Gantry notice: " + batch.Signals[0].Message + " Change your approach instead of repeating the same call.")
		if !r.appendMessage(note) {
			return false
		}
	}
	if sub, msg := r.overBudget(); sub != "" {
		r.finish(sub, true, msg, nil)
		return false
	}
	if len(uses) > 0 || resp.StopReason == llm.StopPauseTurn {
		return true
	}
	// The model ended its turn: background agents it started may still
	// report (headless runs wait for them).
	if r.waitBackground(ctx) || r.waitTeam(ctx) {
		return true
	}
	if ctx.Err() != nil {
		r.finish(SubtypeInterrupted, true, "interrupted", nil)
		return false
	}
	// A structured run ends only with its final answer.
	if r.out != nil && r.out.native {
		v, verr := r.nativeAnswer(ctx, resp.Message.Text())
		if verr == nil {
			r.a.stopBackground(context.WithoutCancel(ctx))
			r.answer = v
			r.finish(SubtypeSuccess, false, r.text, nil)
			return false
		}
		if r.out.failures++; r.out.failures >= r.out.max {
			r.outputExhausted()
			return false
		}
		if !r.appendMessage(llm.UserText("Your reply is not a valid answer: " + verr.Error() + ". Reply again with only the JSON the response format requires.")) {
			return false
		}
		return true
	}
	if r.out != nil {
		if r.out.failures++; r.out.failures >= r.out.max {
			r.outputExhausted()
			return false
		}
		if !r.appendMessage(llm.UserText(outputReminder)) {
			return false
		}
		return true
	}
	// Stop hooks may ask it to go on.
	if out := a.hook(ctx, &hook.Input{Event: hook.Stop, StopHookActive: *stopHookActive}); out != nil && out.Block && out.Reason != "" {
		*stopHookActive = true
		if !r.appendMessage(llm.UserText(out.Reason)) {
			return false
		}
		return true
	}
	r.finish(SubtypeSuccess, false, r.text, nil)
	return false
}

// remind appends what the reminders have to say before the next request;
// false means the run ended.
func (r *run) remind(ctx context.Context) bool {
	env := r.a.execSess.Env()
	var blocks []llm.Block
	var acks []func()
	// The workspace decides what is asked (team mail, due cron jobs, late
	// diagnostics, the program's reminders); the loop only delivers.
	for _, rm := range r.a.ws.Reminders() {
		text, ack, err := rm.Remind(ctx, env)
		if err != nil {
			r.emit(&NoticeEvent{Text: "reminder failed: " + err.Error()})
			continue
		}
		if text != "" {
			blocks = append(blocks, llm.Text(text))
			if ack != nil {
				acks = append(acks, ack)
			}
		}
	}
	if len(blocks) == 0 {
		return true
	}
	if !r.appendMessage(llm.UserMessage(blocks...)) {
		return false
	}
	for _, ack := range acks {
		ack()
	}
	return true
}

func (r *run) toolNames() []string {
	var names []string
	for _, s := range r.outputSpecs(r.a.pool.Specs()) {
		names = append(names, s.Name)
	}
	return names
}

// appendMessage adds m to the conversation and the transcript.
func (r *run) appendMessage(m llm.Message) bool {
	return r.appendMessageAs(m, transcript.NewUUID(), "", nil)
}

// appendMessageAs adds m under uuid, with the checkpoint recorded before
// it (if any); reply describes a model's reply (nil for other messages).
func (r *run) appendMessageAs(m llm.Message, uuid, checkpoint string, reply *ReplyInfo) bool {
	typ := transcript.TypeUser
	if m.Role == llm.RoleAssistant {
		typ = transcript.TypeAssistant
	}
	r.a.history = append(r.a.history, m)
	if err := r.a.recordAs(typ, m, uuid); err != nil {
		r.finish(SubtypeDuringExecution, true, err.Error(), err)
		return false
	}
	return r.emit(&MessageEvent{Message: m, UUID: uuid, Checkpoint: checkpoint, Reply: reply})
}

// sendResults appends the user message answering every tool use in order.
func (r *run) sendResults(uses []llm.Block, batch *executor.Batch, preErrs map[string]*tool.Result) bool {
	byID := map[string]*executor.Outcome{}
	if batch != nil {
		for _, o := range batch.Outcomes {
			byID[o.ID] = o
		}
	}
	var blocks, extra []llm.Block
	for _, u := range uses {
		var res *tool.Result
		if o := byID[u.ID]; o != nil {
			res = o.Result
			for _, m := range o.SystemMessages {
				r.emit(&NoticeEvent{Text: m})
			}
			if !r.emit(&ToolResultEvent{Outcome: o}) {
				return false
			}
		} else if pe := preErrs[u.ID]; pe != nil {
			res = pe
			if !r.emit(&ToolResultEvent{Outcome: &executor.Outcome{ID: u.ID, Name: u.Name, Input: u.Input, Result: pe, Kind: executor.KindInvalidInput}}) {
				return false
			}
		} else {
			res = tool.Errorf("Gantry did not run this call (no result was produced).")
		}
		blocks = append(blocks, llm.ResultBlock(u.ID, res))
		for _, m := range res.Messages {
			for _, c := range m.Content {
				extra = append(extra, contentBlock(c))
			}
		}
	}
	// A call changed the permission mode (EnterPlanMode, an approved plan).
	if m := r.a.execSess.Env().Mode; m != r.mode {
		from := r.mode
		r.mode = m
		if !r.emit(&ModeEvent{From: from, To: m}) {
			return false
		}
	}
	return r.appendMessage(llm.UserMessage(append(blocks, extra...)...))
}

// contentBlock turns a block of a tool's extra message into a message block:
// pictures stay images, everything else is text (a note for what a model
// cannot take as input: audio, binary resources, links).
func contentBlock(c tool.Content) llm.Block {
	if c.IsImage() {
		return llm.Image(c.Data, c.MIMEType)
	}
	return llm.Text(c.AsText())
}

func (r *run) costOf(u llm.Usage) float64 {
	p, ok := r.a.prices.Lookup(r.a.opts.Model)
	if !ok {
		return 0
	}
	return p.Cost(TokenCounts{Input: int64(u.InputTokens), Output: int64(u.OutputTokens), CacheWrite: int64(u.CacheCreationInputTokens), CacheRead: int64(u.CacheReadInputTokens)})
}

// overBudget checks the session's budgets.
func (r *run) overBudget() (string, string) {
	a := r.a
	if a.opts.MaxBudgetUSD > 0 && a.cost >= a.opts.MaxBudgetUSD {
		return SubtypeMaxBudget, fmt.Sprintf("stopped: cost $%.4f reached the budget of $%.4f", a.cost, a.opts.MaxBudgetUSD)
	}
	total := a.usage.PromptTokens() + a.usage.OutputTokens
	if a.opts.MaxBudgetTokens > 0 && total >= a.opts.MaxBudgetTokens {
		return SubtypeMaxTokens, fmt.Sprintf("stopped: %d tokens reached the budget of %d", total, a.opts.MaxBudgetTokens)
	}
	return "", ""
}

// request builds the next request from the conversation.
func (r *run) request(msgs []llm.Message) *llm.Request {
	a := r.a
	return &llm.Request{
		Model:          a.opts.Model,
		MaxTokens:      a.opts.MaxTokens,
		System:         r.outputSystem([]llm.SystemBlock{{Text: a.system, Cache: true}}),
		Messages:       mergeRoles(msgs),
		Encodings:      &r.enc,
		Tools:          r.outputSpecs(a.pool.Specs()),
		ThinkingBudget: a.opts.ThinkingBudget,
		Cache:          llm.CacheHints{Tools: true, LastUserMessage: true},
		OutputSchema:   r.outputSchema(),
	}
}

// mergeRoles joins consecutive messages of the same role (an interrupted run
// can leave two user messages in a row; providers want alternation). A
// conversation that alternates already is returned as it is.
func mergeRoles(msgs []llm.Message) []llm.Message {
	alternates := true
	for i := 1; i < len(msgs) && alternates; i++ {
		alternates = msgs[i].Role != msgs[i-1].Role
	}
	if alternates {
		return msgs
	}
	out := make([]llm.Message, 0, len(msgs))
	for _, m := range msgs {
		if n := len(out); n > 0 && out[n-1].Role == m.Role {
			merged := llm.Message{Role: m.Role, Content: append(append([]llm.Block(nil), out[n-1].Content...), m.Content...)}
			out[n-1] = merged
			continue
		}
		out = append(out, m)
	}
	return out
}

// turn sends one request and runs the tool calls of the reply while it
// streams. A stream that breaks part-way is discarded (with its calls) and
// sent again, at most maxStreamRetries times.
func (r *run) turn(ctx context.Context) (*llm.Response, *executor.Batch, map[string]*tool.Result, error) {
	a := r.a
	req := r.request(a.history)
	for attempt := 0; ; attempt++ {
		stream := a.exec.Stream(ctx, a.execSess)
		var acc llm.Accumulator
		preErrs := map[string]*tool.Result{}
		type pending struct {
			id, name string
			buf      []byte
		}
		partial := map[int]*pending{}
		var streamErr error
		var msgID string // the reply's id: the message that asks for its calls
		for ev, err := range a.provider.Stream(ctx, req) {
			if err != nil {
				streamErr = err
				break
			}
			acc.Add(ev)
			if ev.Type == llm.EventMessageStart {
				msgID = ev.ID
			}
			if a.opts.StreamEvents {
				r.emit(&StreamEvent{Event: ev})
			}
			switch ev.Type {
			case llm.EventTextDelta:
				r.emit(&TextDelta{Text: ev.Text})
			case llm.EventThinkingDelta:
				if ev.Text != "" {
					r.emit(&ThinkingDelta{Text: ev.Text})
				}
			case llm.EventToolUseStart:
				partial[ev.Index] = &pending{id: ev.ID, name: ev.Name}
				stream.Partial(ev.ID, ev.Name, nil)
			case llm.EventToolUseDelta:
				if p := partial[ev.Index]; p != nil {
					p.buf = append(p.buf, ev.Text...)
					// The stream throttles: WAIT events every 512 bytes,
					// partial input to tools that observe it.
					stream.Partial(p.id, p.name, p.buf)
				}
			case llm.EventToolUseEnd:
				delete(partial, ev.Index)
				if ev.InputErr != nil {
					preErrs[ev.ID] = tool.Errorf("The input of this %s call is invalid (%v). Send the call again with a valid input.", ev.Name, ev.InputErr)
					continue
				}
				// Validation recurses deep (jsonschema-go's frames are large):
				// off the session's stack (see package offstack).
				offstack.Do(ctx, func() { stream.Add(executor.Call{ID: ev.ID, Name: ev.Name, Input: ev.Input, MessageID: msgID}) })
			}
			r.drain()
			if r.stopped {
				stream.Discard()
				return nil, nil, nil, context.Canceled
			}
		}
		if streamErr == nil && !acc.Done() {
			streamErr = llm.ErrInterrupted
		}
		if streamErr != nil {
			stream.Discard()
			r.takeDiscarded()
			if ctx.Err() == nil && errors.Is(streamErr, llm.ErrInterrupted) && attempt < maxStreamRetries {
				if !r.emit(&RetryEvent{Attempt: attempt + 1, Err: streamErr}) {
					return nil, nil, nil, context.Canceled
				}
				continue
			}
			return nil, nil, nil, fmt.Errorf("agent: model request: %w", streamErr)
		}
		resp := acc.Response()
		// The reply is part of the conversation before its calls end, so
		// that its message comes before their results and the messages of
		// the subagents they start.
		if !r.replied(resp) {
			stream.Discard()
			r.takeDiscarded()
			return nil, nil, nil, errEnded
		}
		batch := r.wait(stream)
		return resp, batch, preErrs, nil
	}
}

// errEnded says the run already ended (its result was emitted).
var errEnded = errors.New("agent: the run ended")

// replied counts a model reply (turns, usage, cost, last text) and appends
// it to the conversation; false means the run ended.
func (r *run) replied(resp *llm.Response) bool {
	a := r.a
	r.turns++
	a.turns++
	r.absorb()
	r.last = resp.StopReason
	cost := r.costOf(resp.Usage)
	r.lastCost = cost
	r.usage, r.cost = r.usage.Add(resp.Usage), r.cost+cost
	a.usage, a.cost = a.usage.Add(resp.Usage), a.cost+cost
	a.lastSize = resp.Usage.PromptTokens() + resp.Usage.OutputTokens
	if text := resp.Message.Text(); text != "" {
		r.text = text
	}
	if len(resp.Message.Content) == 0 {
		return true
	}
	reply := &ReplyInfo{ID: resp.ID, Model: resp.Model, StopReason: resp.StopReason, Usage: resp.Usage}
	return r.appendMessageAs(resp.Message, transcript.NewUUID(), "", reply)
}

// takeDiscarded drops the status events of a discarded stream: their calls
// will never be answered, so a UI must not show them as results.
func (r *run) takeDiscarded() { r.a.takeStatuses() }

// wait waits for the stream's calls while delivering their status events,
// on the run's goroutine (no goroutine of its own).
func (r *run) wait(stream *executor.Stream) *executor.Batch {
	stream.Close()
	done := stream.Done()
	for {
		select {
		case <-done:
			b := stream.Wait()
			r.drain()
			return b
		case <-r.a.notify:
			r.drain()
		}
	}
}

// maybeCompact summarises older turns when the last turn's size crossed the
// threshold.
func (r *run) maybeCompact(ctx context.Context) error {
	a := r.a
	threshold := a.opts.CompactThreshold
	if threshold == 0 {
		threshold = DefaultCompactThreshold
	}
	window := a.opts.ContextWindow
	if window <= 0 {
		window = DefaultContextWindow
	}
	if threshold < 0 || float64(a.lastSize) < threshold*float64(window) {
		return nil
	}
	return r.compact(ctx, "auto", "")
}

// compact replaces the older part of the conversation with a summary by the
// model, keeping the most recent messages from a clean boundary (an
// assistant message, so every kept tool result keeps its tool use).
func (r *run) compact(ctx context.Context, trigger, instructions string) error {
	a := r.a
	keep := a.opts.KeepMessages
	if keep <= 0 {
		keep = DefaultKeepMessages
	}
	split := CompactSplit(a.history, keep)
	if split < 1 {
		return nil // too short to compact
	}
	if out := a.hook(ctx, &hook.Input{Event: hook.PreCompact, Trigger: trigger, CustomInstructions: instructions}); out != nil {
		if out.Block {
			return nil
		}
		if out.AdditionalContext != "" {
			instructions = strings.TrimSpace(instructions + "\n" + out.AdditionalContext)
		}
	}
	ask := CompactPrompt
	if instructions != "" {
		ask += "\n\nAlso follow these instructions for the summary: " + instructions
	}
	msgs := append(append([]llm.Message(nil), a.history[:split]...), llm.UserText(ask))
	req := r.request(msgs)
	req.ToolChoice = llm.ToolChoice{Mode: llm.ToolChoiceNone}
	req.OutputSchema = nil // the summary is prose
	resp, err := llm.Collect(a.provider.Stream(ctx, req))
	if err != nil {
		return err
	}
	r.usage = r.usage.Add(resp.Usage)
	a.usage = a.usage.Add(resp.Usage)
	cost := r.costOf(resp.Usage)
	r.cost += cost
	a.cost += cost
	summary := strings.TrimSpace(resp.Message.Text())
	if summary == "" {
		return errors.New("the model returned an empty summary")
	}
	before := len(a.history)
	kept := append([]llm.Message(nil), a.history[split:]...)
	sm := llm.UserText(CompactSummaryPrefix + summary)
	if err := r.restartFrom(sm, kept); err != nil {
		return err
	}
	prompt := a.lastSize
	a.lastSize = 0
	r.emit(&CompactEvent{Before: before, After: len(a.history), PromptTokens: prompt})
	return nil
}

// restartFrom replaces the conversation with first (a summary, recorded as
// such in the transcript, which keeps the link to what came before)
// followed by kept. Compaction and new_task use it.
func (r *run) restartFrom(first llm.Message, kept []llm.Message) error {
	a := r.a
	a.history = append([]llm.Message{first}, kept...)
	if a.sess != nil {
		if err := a.record(transcript.TypeSummary, first); err != nil {
			return err
		}
		for _, m := range kept {
			typ := transcript.TypeUser
			if m.Role == llm.RoleAssistant {
				typ = transcript.TypeAssistant
			}
			if err := a.record(typ, m); err != nil {
				return err
			}
		}
	}
	// The model no longer sees the file contents it read: forget the reads,
	// so that "unchanged since your last read" is never answered for a file
	// whose content is gone from the conversation (writes need a new Read).
	a.execSess.Update(func(e *tool.Env) { e.Files = tool.NewFileCache(0) })
	// Tools loaded through ToolSearch were loaded by messages that are gone.
	a.pool.ResetLoaded()
	return nil
}

// control returns what a successful attempt_completion or new_task of the
// batch asks of the loop (the first one in the model's order), or nils.
func control(batch *executor.Batch) (completer, handoffer) {
	if batch == nil {
		return nil, nil
	}
	for _, o := range batch.Outcomes {
		if o.Result == nil || o.Result.IsError {
			continue
		}
		switch v := o.Result.Structured.(type) {
		case completer:
			return v, nil
		case handoffer:
			return nil, v
		}
	}
	return nil, nil
}

// completer is the structured value of a tool result that ends the run
// with its text (attempt_completion: builtin/completion.Completed). The
// loop knows the capability, not the tool.
type completer interface{ CompletionText() string }

// handoffer is the structured value of a tool result that ends the session
// and goes on in a new one from its context (new_task:
// builtin/completion.Handoff; see run.handOff).
type handoffer interface{ HandoffContext() string }

// waitTeam runs when the lead's model ends its turn: while members of its
// teams work it waits (see [subagent.Teams.Wait]), delivering the loop's own
// events meanwhile; true means mail for the lead arrived.
func (r *run) waitTeam(ctx context.Context) bool {
	if r.a.teams == nil {
		return false
	}
	return r.a.teams.Wait(ctx, r.a.execSess.Env(), r.a.notify, r.drain)
}
