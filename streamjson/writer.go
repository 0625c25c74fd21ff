package streamjson

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gantry-dev/gantry/agent"
	"github.com/gantry-dev/gantry/builtin/agenttool"
	"github.com/gantry-dev/gantry/builtin/shell"
	"github.com/gantry-dev/gantry/executor"
	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/transcript"
)

// Info is what system/init says besides the run's own facts (session,
// working directory, tools, model, mode).
type Info struct {
	// Version is Gantry's version.
	Version string
	// APIKeySource says where the model key came from ("ANTHROPIC_API_KEY",
	// "none", …).
	APIKeySource string
	// MCPServers are the session's MCP servers and their status.
	MCPServers []MCPServer
	// Agents are the agent types the Agent tool can start; Skills the
	// skills the Skill tool can load; SlashCommands the commands a prompt
	// may start with (the ones Serve runs itself, such as compact).
	Agents, Skills, SlashCommands []string
	// Plugins are the plugins loaded.
	Plugins []Plugin
}

// WriterOptions configure a [Writer]. The zero value writes the core
// messages with random uuids.
type WriterOptions struct {
	// Info is put into system/init; it is read at each InitEvent, so a
	// function lets it follow the session (MCP servers connecting).
	Info func() Info
	// Model is the model named in system/init when the run's InitEvent
	// names none.
	Model string
	// Partial writes stream_event messages for the model's raw stream
	// events (the SDK's includePartialMessages; they need the agent's
	// Options.StreamEvents).
	Partial bool
	// ToolProgress writes a tool_progress message for each status of a
	// tool call: WAIT with the partial input, DOING with its progress,
	// SUCCESS, ERROR (the CLI sets it with --include-partial-messages).
	ToolProgress bool
	// ReplayUser writes the prompt of each run as a user message too,
	// with its transcript uuid (the id of the checkpoint recorded before
	// it, if any): the CLI's --replay-user-messages.
	ReplayUser bool
	// NewUUID makes message uuids (nil = random version 4 uuids). It is
	// called from the goroutine of [Writer.JobEnded] too, so it must be
	// safe for concurrent use.
	NewUUID func() string
	// Now is the clock (nil = time.Now).
	Now func() time.Time
}

// Writer turns the events of agent runs into the SDK's messages and hands
// each to emit. Call [Writer.Event] for every event of a run and
// [Writer.Result] with its ResultEvent. A Writer is used by one goroutine
// at a time (the one iterating the run).
type Writer struct {
	emit func(v any) error
	opts WriterOptions

	session  string
	start    time.Time
	apiStart time.Time // when the current model request started (zero: none)
	apiDur   time.Duration
	models   map[string]*ModelUsage
	model    string // the last reply's model
	denials  []PermissionDenial
	results  map[string]*executor.Outcome // tool outcomes by call id, until their message
	calls    map[string]*callFacts        // facts of the turn's tool calls by id, until their result
	partial  partialState
	err      error // the first error of emit
	// called holds the tool_use ids of the assistant messages written this
	// turn; held the messages of subagents whose Agent call was not
	// written yet (under streaming execution a subagent can start while
	// its parent's reply still streams), by that call's id.
	called map[string]bool
	held   map[string][]func()
	// tasks are the subagents started, by the id of their Agent call.
	tasks map[string]*subTask

	sendMu sync.Mutex // serialises emit and guards err: JobEnded sends from other goroutines
	jobMu  sync.Mutex // guards jobs
	// jobs are the background commands seen, by job id, until their
	// task_notification was written.
	jobs map[string]*bgJob
}

// bgJob is what the Writer knows of a background command.
type bgJob struct {
	toolUseID, description, session string
	started                         bool           // its task_started was written
	end                             *shell.JobInfo // how it ended, when that came before task_started
}

// subTask is what the Writer knows of a subagent's Agent call.
type subTask struct {
	id, description, subagentType, prompt string
	background, started, notified         bool
	toolUses                              int // the calls of its replies
}

// NewWriter returns a Writer that hands every message to emit (which
// writes it as one line, or collects it).
func NewWriter(emit func(v any) error, opts WriterOptions) *Writer {
	if opts.NewUUID == nil {
		opts.NewUUID = transcript.NewUUID
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Writer{emit: emit, opts: opts}
}

// Err returns the first error emit returned.
func (w *Writer) Err() error {
	w.sendMu.Lock()
	defer w.sendMu.Unlock()
	return w.err
}

// SessionID returns the session of the last run seen ("" before one).
func (w *Writer) SessionID() string { return w.session }

func (w *Writer) send(v any) {
	w.sendMu.Lock()
	defer w.sendMu.Unlock()
	if err := w.emit(v); err != nil && w.err == nil {
		w.err = err
	}
}

// Begin starts a new turn (a run): durations, model usage and denials
// count from here. An InitEvent begins a turn too, if Begin was not
// called.
func (w *Writer) Begin() {
	w.start = w.opts.Now()
	w.apiStart = w.start
	w.apiDur = 0
	w.models = map[string]*ModelUsage{}
	w.denials = nil
	w.results = map[string]*executor.Outcome{}
	w.calls = map[string]*callFacts{}
	w.partial = partialState{}
	if w.called == nil {
		w.called = map[string]bool{} // kept across turns: a background subagent outlives its turn
	}
}

// Event writes the messages of one run event (none for most deltas and
// status events).
func (w *Writer) Event(ev agent.Event) {
	switch e := ev.(type) {
	case *agent.InitEvent:
		if w.models == nil {
			w.Begin()
		}
		w.session = e.SessionID
		w.init(e)
	case *agent.StreamEvent:
		if w.opts.Partial {
			for _, raw := range w.partial.events(e.Event) {
				w.send(StreamEventMessage{Type: "stream_event", Event: raw, UUID: w.opts.NewUUID(), SessionID: w.session})
			}
		}
	case *agent.MessageEvent:
		w.message(e.Message, e.UUID, e.Reply, nil)
	case *agent.ToolResultEvent:
		if o := e.Outcome; o != nil {
			if w.results == nil {
				w.results = map[string]*executor.Outcome{}
			}
			w.results[o.ID] = o
			if o.Kind == executor.KindDenied || o.Kind == executor.KindBlocked {
				in := o.Input
				if len(in) == 0 {
					in = json.RawMessage(`{}`)
				}
				w.denials = append(w.denials, PermissionDenial{ToolName: o.Name, ToolUseID: o.ID, ToolInput: in})
				w.denied(o, "")
			}
			w.taskEnded(o)
			w.jobStarted(o)
		}
	case *agent.ToolStatus:
		w.toolProgress(e.Status, nil)
	case *agent.SubagentEvent:
		// Never before the message holding its Agent call.
		w.after(e.ParentToolUseID, func() {
			w.subagent(e)
			if st, ok := subagentStatus(e.Event); ok {
				id := e.ParentToolUseID
				w.toolProgress(st, &id)
			}
		})
	case *agent.TurnEnd:
		if !w.apiStart.IsZero() {
			w.apiDur += w.opts.Now().Sub(w.apiStart)
			w.apiStart = time.Time{}
		}
		w.addUsage(e.Usage, e.CostUSD)
	case *agent.NoticeEvent:
		w.send(Informational{Type: "system", Subtype: "informational", Content: e.Text, Level: "notice", UUID: w.opts.NewUUID(), SessionID: w.session})
	case *agent.CompactEvent:
		w.CompactBoundary("auto", e)
	case *agent.RetryEvent:
		m := APIRetry{Type: "system", Subtype: "api_retry", Attempt: e.Attempt, MaxRetries: 2, Error: retryError(e.Err), UUID: w.opts.NewUUID(), SessionID: w.session}
		if e.Err != nil {
			m.GantryError = e.Err.Error()
			var ae *llm.APIError
			if errors.As(e.Err, &ae) && ae.StatusCode != 0 {
				m.ErrorStatus = ptr(ae.StatusCode)
			}
		}
		w.send(m)
	case *agent.ModeEvent:
		w.send(Status{Type: "system", Subtype: "status", PermissionMode: e.To, UUID: w.opts.NewUUID(), SessionID: w.session})
	}
}

func (w *Writer) init(e *agent.InitEvent) {
	var info Info
	if w.opts.Info != nil {
		info = w.opts.Info()
	}
	model := e.Model
	if model == "" {
		model = w.opts.Model
	}
	w.send(SystemInit{
		Type: "system", Subtype: "init", CWD: e.WorkDir, SessionID: e.SessionID, Tools: nonNil(e.Tools),
		MCPServers: nonNil(info.MCPServers), Model: model, PermissionMode: e.Mode,
		SlashCommands: nonNil(info.SlashCommands), APIKeySource: cmpOr(info.APIKeySource, "none"),
		ClaudeCodeVersion: info.Version, OutputStyle: "default", Agents: nonNil(info.Agents),
		Skills: nonNil(info.Skills), Plugins: nonNil(info.Plugins), UUID: w.opts.NewUUID(), GantryVersion: info.Version,
	})
}

func (w *Writer) addUsage(u llm.Usage, cost float64) {
	if w.models == nil {
		w.models = map[string]*ModelUsage{}
	}
	model := cmpOr(w.model, w.opts.Model)
	mu := w.models[model]
	if mu == nil {
		mu = &ModelUsage{ContextWindow: agent.DefaultContextWindow}
		w.models[model] = mu
	}
	mu.InputTokens += u.InputTokens
	mu.OutputTokens += u.OutputTokens
	mu.CacheReadInputTokens += u.CacheReadInputTokens
	mu.CacheCreationInputTokens += u.CacheCreationInputTokens
	mu.CostUSD += cost
}

// message writes a conversation message: an assistant reply as one
// message per block, tool results as one user message each, other user
// content (a tool's extra blocks, notes) as one user message. The first
// message written for m carries its transcript uuid (when it has one).
// The prompt itself (a main-agent user message without tool results) is
// written only with ReplayUser.
func (w *Writer) message(m llm.Message, uuid string, reply *agent.ReplyInfo, parent *string) {
	next := func() string {
		if uuid != "" {
			u := uuid
			uuid = ""
			return u
		}
		return w.opts.NewUUID()
	}
	if m.Role == llm.RoleAssistant {
		w.assistant(m, reply, parent, next)
		return
	}
	var rest []llm.Block
	hasResult := false
	for _, b := range m.Content {
		if b.Type != llm.TypeToolResult {
			rest = append(rest, b)
			continue
		}
		hasResult = true
		u := User{Type: "user", Message: UserParam{Role: "user", Content: []Block{APIBlock(b)}}, ParentToolUseID: parent,
			UUID: next(), SessionID: w.session}
		if parent == nil {
			u.ToolUseResult = sdkToolResult(w.results[b.ToolUseID], w.calls[b.ToolUseID], b, w.opts.Now)
			delete(w.results, b.ToolUseID)
			delete(w.calls, b.ToolUseID)
		}
		w.send(u)
	}
	if parent == nil && !hasResult && !w.opts.ReplayUser {
		return // the prompt, a reminder or a note Gantry added
	}
	if len(rest) > 0 {
		w.send(User{Type: "user", Message: UserParam{Role: "user", Content: APIBlocks(rest)}, ParentToolUseID: parent, UUID: next(), SessionID: w.session,
			IsReplay: parent == nil && !hasResult})
	}
	if parent == nil && hasResult {
		w.apiStart = w.opts.Now() // the next model request starts
	}
}

func (w *Writer) assistant(m llm.Message, reply *agent.ReplyInfo, parent *string, next func() string) {
	var info agent.ReplyInfo
	if reply != nil {
		info = *reply
	}
	model := cmpOr(info.Model, w.opts.Model)
	if parent == nil && info.Model != "" {
		w.model = info.Model
	}
	w.noteCalls(m, &info, parent)
	id := info.ID
	if id == "" {
		id = "msg_" + strings.ReplaceAll(w.opts.NewUUID(), "-", "")
	}
	for i, b := range m.Content {
		var stop *string
		if i == len(m.Content)-1 && info.StopReason != "" {
			stop = ptr(string(info.StopReason))
		}
		w.send(Assistant{Type: "assistant", Message: APIMessage{ID: id, Type: "message", Role: "assistant", Model: model,
			Content: []Block{APIBlock(b)}, StopReason: stop, Usage: usageShape(info.Usage)},
			ParentToolUseID: parent, UUID: next(), SessionID: w.session})
		if b.Type == llm.TypeToolUse {
			w.noteTask(b)
			w.release(b.ID)
		}
	}
}

// release marks the call id as written and writes the subagent messages
// held for it.
func (w *Writer) release(id string) {
	if w.called == nil {
		w.called = map[string]bool{}
	}
	w.called[id] = true
	held := w.held[id]
	delete(w.held, id)
	for _, f := range held {
		f()
	}
}

// after runs f once the assistant message holding call id was written
// (at once if it was).
func (w *Writer) after(id string, f func()) {
	if w.called[id] {
		f()
		return
	}
	if w.held == nil {
		w.held = map[string][]func(){}
	}
	w.held[id] = append(w.held[id], f)
}

// subagent writes what a subagent's event shows: its task_started (on its
// first event), its messages and its denied calls.
func (w *Writer) subagent(e *agent.SubagentEvent) {
	id := e.ParentToolUseID
	t := w.tasks[id]
	if t == nil {
		t = &subTask{}
		if w.tasks == nil {
			w.tasks = map[string]*subTask{}
		}
		w.tasks[id] = t
	}
	if !t.started {
		t.started, t.id = true, cmpOr(e.AgentID, id)
		w.send(TaskStarted{Type: "system", Subtype: "task_started", TaskID: t.id, ToolUseID: id, Description: t.description,
			SubagentType: cmpOr(e.AgentType, t.subagentType), IsBackgrounded: t.background, TaskType: "local_agent", Prompt: t.prompt,
			UUID: w.opts.NewUUID(), SessionID: w.session})
	}
	switch ev := e.Event.(type) {
	case *agent.MessageEvent:
		if ev.Message.Role == llm.RoleAssistant {
			for _, b := range ev.Message.Content {
				if b.Type == llm.TypeToolUse {
					t.toolUses++
				}
			}
		}
		w.message(ev.Message, ev.UUID, ev.Reply, &id)
	case *agent.ToolResultEvent:
		w.denied(ev.Outcome, e.AgentID)
	case *agent.ResultEvent:
		// The subagent's run ended (a background one too).
		status := "completed"
		if ev.IsError {
			status = "failed"
		}
		t.notified = true
		w.send(TaskNotification{Type: "system", Subtype: "task_notification", TaskID: t.id, ToolUseID: id, Status: status,
			Summary: cmpOr(summaryText(ev.Text), t.description),
			Usage:   &TaskUsage{TotalTokens: ev.Usage.PromptTokens() + ev.Usage.OutputTokens, ToolUses: t.toolUses, DurationMS: ev.Duration.Milliseconds()},
			UUID:    w.opts.NewUUID(), SessionID: w.session})
	}
}

// summaryText is a task's result as task_notification's summary: at most
// 1,000 characters.
func summaryText(s string) string {
	s = strings.TrimSpace(s)
	if r := []rune(s); len(r) > 1000 {
		s = string(r[:999]) + "…"
	}
	return s
}

// denied writes the permission_denied message of a denied or blocked
// call.
func (w *Writer) denied(o *executor.Outcome, agentID string) {
	if o == nil || (o.Kind != executor.KindDenied && o.Kind != executor.KindBlocked) {
		return
	}
	m := PermissionDenied{Type: "system", Subtype: "permission_denied", ToolName: o.Name, ToolUseID: o.ID, AgentID: agentID,
		UUID: w.opts.NewUUID(), SessionID: w.session}
	if o.Result != nil {
		m.Message = o.Result.TextContent()
	}
	switch {
	case o.Kind == executor.KindBlocked:
		m.DecisionReasonType = "hook"
	case o.Decision != nil:
		m.DecisionReasonType = o.Decision.Source
		if o.Decision.Rule != "" {
			m.DecisionReasonType = "rule"
		}
	}
	if o.Decision != nil {
		m.DecisionReason = o.Decision.Reason
	}
	w.send(m)
}

// taskEnded writes the task_notification of a foreground subagent whose
// Agent call returned.
func (w *Writer) taskEnded(o *executor.Outcome) {
	t := w.tasks[o.ID]
	if t == nil || !t.started || t.background || t.notified {
		return // a subagent's own result said it (or it runs on)
	}
	delete(w.tasks, o.ID)
	status := "completed"
	if o.Err != nil || (o.Result != nil && o.Result.IsError) {
		status = "failed"
	}
	n := TaskNotification{Type: "system", Subtype: "task_notification", TaskID: t.id, ToolUseID: o.ID, Status: status,
		Summary: t.description, UUID: w.opts.NewUUID(), SessionID: w.session}
	if o.Duration > 0 {
		n.Usage = &TaskUsage{DurationMS: o.Duration.Milliseconds()}
	}
	w.send(n)
}

// noteTask records an Agent call's description, type and prompt for its
// task_* messages.
func (w *Writer) noteTask(b llm.Block) {
	if b.Type != llm.TypeToolUse || (b.Name != agenttool.Name && b.Name != "Task") {
		return
	}
	var in struct {
		Description  string `json:"description"`
		Prompt       string `json:"prompt"`
		SubagentType string `json:"subagent_type"`
		Background   bool   `json:"run_in_background"`
	}
	_ = json.Unmarshal(b.Input, &in) // a bad input fails the call; the task shows what it can
	if w.tasks == nil {
		w.tasks = map[string]*subTask{}
	}
	t := w.tasks[b.ID]
	if t == nil {
		t = &subTask{}
		w.tasks[b.ID] = t
	}
	t.description, t.prompt, t.subagentType, t.background = in.Description, in.Prompt, in.SubagentType, in.Background
}

// flushHeld writes subagent messages still held at the end of a turn
// (their call was never written: nothing to order them after).
func (w *Writer) flushHeld() {
	ids := make([]string, 0, len(w.held))
	for id := range w.held {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		w.release(id)
	}
}

// Result builds the result message of a run (res nil: the run ended
// without one, runErr says why), writes it and returns it.
func (w *Writer) Result(res *agent.ResultEvent, runErr error) Result {
	if w.models == nil {
		w.Begin()
	}
	w.flushHeld()
	r := Result{Type: "result", SessionID: w.session, DurationAPIMS: w.apiDur.Milliseconds(),
		ModelUsage: map[string]ModelUsage{}, PermissionDenials: nonNil(w.denials), UUID: w.opts.NewUUID()}
	r.DurationMS = w.opts.Now().Sub(w.start).Milliseconds()
	for name, mu := range w.models {
		r.ModelUsage[name] = *mu
	}
	if res == nil {
		r.Subtype, r.IsError = ResultErrorDuringExecution, true
		msg := "the run ended without a result"
		if runErr != nil {
			msg = runErr.Error()
		}
		r.Errors = []string{msg}
		w.send(r)
		return r
	}
	if res.SessionID != "" {
		r.SessionID = res.SessionID
	}
	r.NumTurns, r.TotalCostUSD = res.NumTurns, res.CostUSD
	r.Usage = usageShape(res.Usage)
	r.Usage.ServerToolUse = &ServerTools{}
	r.Usage.ServiceTier = "standard"
	if res.StopReason != "" {
		r.StopReason = ptr(string(res.StopReason))
	}
	r.Subtype, r.TerminalReason = MapSubtype(res.Subtype)
	if r.Subtype != res.Subtype {
		r.GantrySubtype = res.Subtype
	}
	r.IsError = res.IsError
	if res.IsError {
		msg := res.Text
		if runErr != nil && !strings.Contains(msg, runErr.Error()) {
			msg = strings.TrimSpace(msg + ": " + runErr.Error())
		}
		r.Errors = []string{msg}
	} else {
		r.Result = ptr(res.Text)
		r.StructuredOutput = res.Structured
		if len(res.Structured) > 0 {
			// The reference agent's result is the structured answer as
			// JSON text (programs JSON.parse(result.result)).
			r.Result = ptr(string(res.Structured))
		}
	}
	w.send(r)
	return r
}

// retryError names a retried error the SDK's way (SDKAssistantMessageError).
func retryError(err error) string {
	switch {
	case err == nil:
		return "unknown"
	case errors.Is(err, llm.ErrOverloaded):
		return "overloaded"
	case errors.Is(err, llm.ErrRateLimited):
		return "rate_limit"
	case errors.Is(err, llm.ErrAuth):
		return "authentication_failed"
	case errors.Is(err, llm.ErrServer), errors.Is(err, llm.ErrInterrupted):
		return "server_error"
	}
	return "unknown"
}

// MapSubtype maps a Gantry result subtype to the SDK's subtype and
// terminal reason. Gantry-only reasons become error_during_execution.
func MapSubtype(gantry string) (subtype, terminal string) {
	switch gantry {
	case agent.SubtypeSuccess:
		return ResultSuccess, "completed"
	case agent.SubtypeMaxTurns:
		return ResultErrorMaxTurns, "max_turns"
	case agent.SubtypeMaxBudget:
		return ResultErrorMaxBudgetUSD, "budget_exhausted"
	case agent.SubtypeMaxStructuredRetries:
		return ResultErrorMaxStructuredOutputRetries, "structured_output_retry_exhausted"
	case agent.SubtypeMaxTokens:
		return ResultErrorDuringExecution, "budget_exhausted"
	case agent.SubtypeInterrupted:
		return ResultErrorDuringExecution, "aborted_streaming"
	case agent.SubtypeBlocked:
		return ResultErrorDuringExecution, "hook_stopped"
	case agent.SubtypeDuringExecution:
		return ResultErrorDuringExecution, "api_error"
	}
	return ResultErrorDuringExecution, ""
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// noteCalls records the facts tool_use_result needs of the calls in an
// assistant message: when each main-agent call was asked for, and for an
// Agent call what its subagent did (calls, tokens, models).
func (w *Writer) noteCalls(m llm.Message, info *agent.ReplyInfo, parent *string) {
	if w.calls == nil {
		w.calls = map[string]*callFacts{}
	}
	if parent != nil {
		f := w.calls[*parent]
		if f == nil {
			return
		}
		f.usage.InputTokens += info.Usage.InputTokens
		f.usage.OutputTokens += info.Usage.OutputTokens
		f.usage.CacheReadInputTokens += info.Usage.CacheReadInputTokens
		f.usage.CacheCreationInputTokens += info.Usage.CacheCreationInputTokens
		if info.Model != "" && !slices.Contains(f.models, info.Model) {
			f.models = append(f.models, info.Model)
		}
		for _, b := range m.Content {
			if b.Type == llm.TypeToolUse {
				f.toolUses++
			}
		}
		return
	}
	var now time.Time
	for _, b := range m.Content {
		if b.Type == llm.TypeToolUse {
			if now.IsZero() {
				now = w.opts.Now()
			}
			w.calls[b.ID] = &callFacts{asked: now}
		}
	}
}

// Compacting writes the status messages around a manual compaction:
// "compacting" when it starts (done false), then a null status with the
// compaction's result (err nil: success).
func (w *Writer) Compacting(done bool, err error) {
	m := Status{Type: "system", Subtype: "status", UUID: w.opts.NewUUID(), SessionID: w.session}
	switch {
	case !done:
		m.Status = ptr("compacting")
	case err != nil:
		m.CompactResult, m.CompactError = "failed", err.Error()
	default:
		m.CompactResult = "success"
	}
	w.send(m)
}

// CompactBoundary writes the system/compact_boundary message of a
// compaction; trigger is "auto" (near the context limit) or "manual"
// (/compact).
func (w *Writer) CompactBoundary(trigger string, e *agent.CompactEvent) {
	w.send(CompactBoundary{Type: "system", Subtype: "compact_boundary", CompactMetadata: CompactMetadata{Trigger: trigger, PreTokens: e.PromptTokens}, UUID: w.opts.NewUUID(), SessionID: w.session})
}

// jobStarted writes the task_started of a Bash call that started a
// background command (once the message holding the call was written),
// and its task_notification at once if the command already ended.
func (w *Writer) jobStarted(o *executor.Outcome) {
	if o.Result == nil || o.Result.IsError {
		return
	}
	out, ok := o.Result.Structured.(shell.BashOutput)
	if !ok || out.TaskID == "" {
		return
	}
	var in struct {
		Command string `json:"command"`
	}
	_ = json.Unmarshal(o.Input, &in) // the call ran, so its input parsed
	id, session := out.TaskID, w.session
	w.after(o.ID, func() {
		w.jobMu.Lock()
		defer w.jobMu.Unlock()
		if w.jobs == nil {
			w.jobs = map[string]*bgJob{}
		}
		j := w.jobs[id]
		if j == nil {
			j = &bgJob{}
			w.jobs[id] = j
		}
		j.toolUseID, j.description, j.session, j.started = o.ID, in.Command, session, true
		w.send(TaskStarted{Type: "system", Subtype: "task_started", TaskID: id, ToolUseID: o.ID, Description: in.Command,
			IsBackgrounded: true, TaskType: "local_bash", UUID: w.opts.NewUUID(), SessionID: session})
		if j.end != nil {
			w.jobNotification(j, *j.end)
		}
	})
}

// JobEnded writes the task_notification of a background Bash command that
// ended: status completed, failed (a non-zero exit) or stopped (TaskStop,
// the output limit, the session's end), with its output file and a
// one-line summary. Pass it to [shell.Jobs.Watch]; unlike the Writer's
// other methods it is safe to call from any goroutine, at any time. Only
// commands whose start the Writer saw are announced (a Jobs task of another
// kind, such as a background subagent, has its own messages); an end that
// arrives before the start was written is written right after it.
func (w *Writer) JobEnded(info shell.JobInfo) {
	if info.Kind != "shell" {
		return
	}
	w.jobMu.Lock()
	defer w.jobMu.Unlock()
	j := w.jobs[info.ID]
	if j == nil {
		// The Bash result naming this job is not seen yet (the command
		// can end before its call returns).
		if w.jobs == nil {
			w.jobs = map[string]*bgJob{}
		}
		w.jobs[info.ID] = &bgJob{end: &info}
		return
	}
	if !j.started {
		j.end = &info
		return
	}
	w.jobNotification(j, info)
}

// jobNotification writes a command's task_notification. Callers hold
// jobMu.
func (w *Writer) jobNotification(j *bgJob, info shell.JobInfo) {
	delete(w.jobs, info.ID)
	status, how := "completed", "completed"
	switch info.Status {
	case shell.TaskFailed:
		status, how = "failed", "failed"
	case shell.TaskKilled:
		status, how = "stopped", "was stopped"
	}
	summary := fmt.Sprintf("Background command %q %s", j.description, how)
	switch {
	case info.ExitCode != nil && info.Status != shell.TaskKilled:
		summary += fmt.Sprintf(" (exit code %d)", *info.ExitCode)
	case info.Note != "":
		summary += " (" + info.Note + ")"
	}
	n := TaskNotification{Type: "system", Subtype: "task_notification", TaskID: info.ID, ToolUseID: j.toolUseID, Status: status,
		OutputFile: info.OutputPath, Summary: summary, UUID: w.opts.NewUUID(), SessionID: j.session}
	w.send(n)
}
