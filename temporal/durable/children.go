package durable

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/workflow"

	"github.com/gantry-dev/gantry/agent"
	"github.com/gantry-dev/gantry/builtin/agenttool"
	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/tool"
)

// The workflow side of subagents: an Agent call's child workflow, the
// background children and their notes, TaskOutput and TaskStop on them,
// and the children's asks shown (and answered) through the parent.

// child is a background subagent's run.
type child struct {
	id     string
	info   AgentInfo
	cancel workflow.CancelFunc
	done   bool
	res    *Result
}

// childAsk tells a parent that its child's run started (Done false) or
// stopped (Done true; Ask.Answer set when answered) waiting for an answer.
type childAsk struct {
	RunID string `json:"run_id"`
	Ask   Ask    `json:"ask"`
	Done  bool   `json:"done,omitempty"`
}

// childID is the run id of the subagent an Agent call starts: stable for
// the call, so a replay or a retry finds the same child.
func childID(parent, toolUseID string) string { return parent + "-agent-" + toolUseID }

// spawn runs an Agent call's subagent as a child workflow and returns
// what became of it: in the foreground its outcome, once it ended; in the
// background its task, once it started. The child is cancelled with the
// parent (and, by its parent close policy, when the parent closes in any
// other way). ctx is the calling coroutine's (the workflow's, or a batch's
// when Agent calls run in parallel).
func (r *runner) spawn(ctx workflow.Context, u llm.Block, sp *spawnRequest) *agentReply {
	spec := sp.Spec
	info := *spec.Agent
	info.ParentRunID = r.runID
	spec.Agent = &info
	if r.spec.MaxBudgetUSD > 0 {
		spec.MaxBudgetUSD = max(r.spec.MaxBudgetUSD-r.st.CostUSD, 1e-9)
	}
	// The rules granted to the parent so far are the child's too (in-process
	// the child shares the parent's permission engine).
	if len(r.st.Granted) > 0 {
		spec.Allow = append(slices.Clone(spec.Allow), r.st.Granted...)
	}
	id := childID(r.runID, u.ID)
	cctx, cancel := workflow.WithCancel(ctx)
	cctx = workflow.WithChildOptions(cctx, workflow.ChildWorkflowOptions{
		WorkflowID:          id,
		ParentClosePolicy:   enumspb.PARENT_CLOSE_POLICY_REQUEST_CANCEL,
		WaitForCancellation: true,
	})
	fut := workflow.ExecuteChildWorkflow(cctx, WorkflowName, RunInput{Spec: spec, Prompt: sp.Prompt, Options: r.opts})
	if err := fut.GetChildWorkflowExecution().Get(ctx, nil); err != nil {
		cancel()
		return &agentReply{Outcome: &agenttool.Outcome{AgentID: id, AgentType: info.Type, IsError: true,
			Subtype: agent.SubtypeDuringExecution, Text: "the subagent's run could not start: " + rootMessage(err)}}
	}
	ev := AgentEvent{RunID: id, Type: info.Type, Description: info.Description, ParentToolUseID: u.ID,
		Background: info.Background, Status: "running"}
	r.emit(Event{Type: EventAgent, Agent: &ev})
	wait := func(ctx workflow.Context) *Result {
		var res Result
		if err := fut.Get(ctx, &res); err != nil {
			return &Result{Subtype: agent.SubtypeDuringExecution, IsError: true, RunID: id,
				Text: "the subagent's run failed: " + rootMessage(err)}
		}
		return &res
	}
	if !info.Background {
		res := wait(ctx)
		cancel() // the child has ended: release the context
		r.childEnded(ev, res)
		return &agentReply{Outcome: outcomeOf(id, info.Type, res)}
	}
	c := &child{id: id, info: info, cancel: cancel}
	if r.children == nil {
		r.children = map[string]*child{}
	}
	r.children[id] = c
	workflow.Go(r.ctx, func(ctx workflow.Context) {
		res := wait(ctx)
		c.done, c.res = true, res
		status := r.childEnded(ev, res)
		r.st.Inbox = append(r.st.Inbox, agent.TaskNotification(info.Description, info.Type, id, status, res.Text))
	})
	return &agentReply{Started: &agenttool.Started{TaskID: id, AgentID: id}}
}

// childEnded adds a child's usage and cost to the run's, emits its end
// and returns its status (completed, failed, killed).
func (r *runner) childEnded(ev AgentEvent, res *Result) string {
	r.st.Usage = r.st.Usage.Add(res.Usage)
	r.st.CostUSD += res.CostUSD
	ev.Status = childStatus(res)
	ev.Result = res
	r.emit(Event{Type: EventAgent, Agent: &ev})
	return ev.Status
}

func childStatus(res *Result) string {
	switch {
	case res.Subtype == agent.SubtypeInterrupted:
		return "killed"
	case res.IsError:
		return "failed"
	}
	return "completed"
}

func outcomeOf(id, typ string, res *Result) *agenttool.Outcome {
	return &agenttool.Outcome{AgentID: id, AgentType: typ, Text: res.Text, IsError: res.IsError, Subtype: res.Subtype,
		Turns: res.NumTurns, Tokens: res.Usage.PromptTokens() + res.Usage.OutputTokens, CostUSD: res.CostUSD}
}

// runningChildren counts the background children still running.
func (r *runner) runningChildren() int {
	n := 0
	for _, c := range r.children {
		if !c.done {
			n++
		}
	}
	return n
}

// stopChildren cancels the background children still running (the run
// ends without waiting for them).
func (r *runner) stopChildren() {
	for _, c := range r.children {
		if !c.done {
			c.cancel()
		}
	}
}

// deliverNotes adds the queued notes (background agents' results) to the
// conversation, as one user message.
func (r *runner) deliverNotes() {
	if len(r.st.Inbox) == 0 {
		return
	}
	var blocks []llm.Block
	for _, n := range r.st.Inbox {
		blocks = append(blocks, llm.Text(n))
	}
	r.st.Inbox = nil
	r.appendMessage(llm.UserMessage(blocks...))
}

// waitBackground waits, when the model ended its turn, for a background
// agent to end; it reports whether a note came for the model (as the
// in-process loop of an unattended run does).
func (r *runner) waitBackground() bool {
	if len(r.st.Inbox) == 0 && r.runningChildren() > 0 {
		_ = workflow.Await(r.ctx, func() bool { return len(r.st.Inbox) > 0 || r.runningChildren() == 0 })
	}
	return len(r.st.Inbox) > 0 && r.ctx.Err() == nil
}

// taskInput is the input of TaskOutput and TaskStop (and their aliases).
type taskInput struct {
	TaskID  string   `json:"task_id"`
	ShellID string   `json:"shell_id"`
	Block   *bool    `json:"block"`
	Timeout *float64 `json:"timeout"`
}

// taskCall answers TaskOutput and TaskStop calls about the run's
// background agents in the workflow (they are child workflows, not tasks
// of a worker); other calls go to the tool activity (ok false).
// ctx is the calling coroutine's.
func (r *runner) taskCall(ctx workflow.Context, u llm.Block) (res *tool.Result, ok bool) {
	var stop bool
	switch u.Name {
	case "TaskOutput", "BashOutput", "AgentOutput":
	case "TaskStop", "KillShell":
		stop = true
	default:
		return nil, false
	}
	var in taskInput
	if json.Unmarshal(u.Input, &in) != nil {
		return nil, false
	}
	id := in.TaskID
	if id == "" {
		id = in.ShellID
	}
	c := r.children[id]
	if c == nil {
		return nil, false
	}
	if stop {
		if c.done {
			return tool.Errorf("Background agent %q (task %s) is not running: it %s.", c.info.Description, c.id, childStatus(c.res)), true
		}
		c.cancel()
		_, _ = workflow.AwaitWithTimeout(ctx, time.Minute, func() bool { return c.done })
		return tool.TextResult(fmt.Sprintf("Stopped background agent %q (task %s).", c.info.Description, c.id)), true
	}
	if !c.done && (in.Block == nil || *in.Block) {
		wait := 30 * time.Second
		if in.Timeout != nil && *in.Timeout > 0 {
			wait = min(time.Duration(*in.Timeout*float64(time.Millisecond)), 10*time.Minute)
		}
		_, _ = workflow.AwaitWithTimeout(ctx, wait, func() bool { return c.done })
	}
	status := fmt.Sprintf("Task %s (background agent %q, %s): ", c.id, c.info.Description, c.info.Type)
	if !c.done {
		return tool.TextResult(status + "running\n\n(no output yet: a durable background agent reports when it ends; its events are in its own run, " + c.id + ")"), true
	}
	return tool.TextResult(status + childStatus(c.res) + "\n\n" + strings.TrimSpace(c.res.Text)), true
}

// receiveSignals starts the goroutines that take the answers a parent
// forwards to this run's asks, and the asks of this run's children.
func (r *runner) receiveSignals() {
	workflow.Go(r.ctx, func(ctx workflow.Context) {
		ch := workflow.GetSignalChannel(ctx, SignalAnswer)
		for {
			var in AnswerInput
			if !ch.Receive(ctx, &in) {
				return
			}
			for _, a := range r.pending {
				if a.ID == in.ID && a.Answer == nil && validAnswer(a.Kind, in.Answer) == nil {
					a.Answer = in.Answer
				}
			}
		}
	})
	workflow.Go(r.ctx, func(ctx workflow.Context) {
		ch := workflow.GetSignalChannel(ctx, SignalChildAsk)
		for {
			var m childAsk
			if !ch.Receive(ctx, &m) {
				return
			}
			id := m.RunID + "/" + m.Ask.ID
			if !m.Done {
				a := m.Ask
				a.ID, a.Agent = id, m.RunID
				r.childAsks = append(r.childAsks, &a)
				r.emit(Event{Type: EventAsk, Ask: &a})
				continue
			}
			i := slices.IndexFunc(r.childAsks, func(a *Ask) bool { return a.ID == id })
			if i < 0 {
				continue
			}
			a := r.childAsks[i]
			r.childAsks = slices.Delete(r.childAsks, i, i+1)
			if m.Ask.Answer != nil {
				answered := *a
				answered.Answer = m.Ask.Answer
				r.emit(Event{Type: EventAnswered, Ask: &answered})
			}
		}
	})
}

// tellParent tells a subagent's parent that this run waits for an answer
// to ask (done false) or no longer does (done true). ctx is the calling
// coroutine's.
func (r *runner) tellParent(ctx workflow.Context, ask *Ask, done bool) {
	if r.spec.Agent == nil || r.spec.Agent.ParentRunID == "" {
		return
	}
	if ctx.Err() != nil {
		ctx, _ = workflow.NewDisconnectedContext(ctx)
	}
	// Not waited for: a parent that has ended has nobody to show it to.
	workflow.SignalExternalWorkflow(ctx, r.spec.Agent.ParentRunID, "", SignalChildAsk, childAsk{RunID: r.runID, Ask: *ask, Done: done})
}

// findAsk returns the pending ask with id: the run's own or a child's.
func (r *runner) findAsk(id string) *Ask {
	for _, a := range r.pending {
		if a.ID == id {
			return a
		}
	}
	for _, a := range r.childAsks {
		if a.ID == id {
			return a
		}
	}
	return nil
}

// answer records an answer given through the answer update; a child's ask
// is answered by forwarding the answer to the child.
func (r *runner) answer(ctx workflow.Context, in AnswerInput) error {
	a := r.findAsk(in.ID)
	if a == nil {
		return fmt.Errorf("no pending ask %q", in.ID)
	}
	a.Answer = in.Answer
	if a.Agent == "" {
		return nil
	}
	err := workflow.SignalExternalWorkflow(ctx, a.Agent, "", SignalAnswer,
		AnswerInput{ID: strings.TrimPrefix(in.ID, a.Agent+"/"), Answer: in.Answer}).Get(ctx, nil)
	if err != nil {
		a.Answer = nil
		return fmt.Errorf("forward the answer to the subagent's run %s: %w", a.Agent, err)
	}
	return nil
}
