// Package durable runs Gantry agents as Temporal workflows: a run is a
// workflow (workflow id = run id) whose code is the agent loop, a model call
// is an activity, a tool call is an activity that runs Gantry's own pipeline
// (validation, hooks, permissions, sandbox) in the run's working directory,
// and a permission ask or a question to the user is the workflow waiting for
// an update, which costs no worker memory while it waits.
//
// A worker registers [RunWorkflow] and the [Activities] with [Register];
// a client starts runs with [Start], follows them with [Follow] and answers
// their asks with [Answer]. The gantry-temporal command wires both to flags.
//
// A side-effecting tool call whose worker died mid-call is never run again
// blindly: Write and Edit compare the file with the hash taken before the
// call (unchanged: the call is run; changed: the model is told), anything
// else comes back to the model as an interrupted call with what is known.
// See docs/distributed.md in the repository for the whole mapping.
package durable

import (
	"encoding/json"
	"time"

	"github.com/gantry-dev/gantry/interaction"
	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/tool"
)

// Names of the workflow, its queries and updates, and the activities.
const (
	WorkflowName = "gantry.run"
	// QueryEvents returns the run's events after a sequence number
	// ([EventsQuery] in, [EventsPage] out).
	QueryEvents = "events"
	// UpdateAnswer answers a pending ask ([AnswerInput] in).
	UpdateAnswer = "answer"
	// QueryConversation returns a run's conversation ([Conversation]),
	// also after the run ended: [Start] with StartOptions.Resume reads it.
	QueryConversation = "conversation"
	// SignalAnswer answers a pending ask of a subagent's run ([AnswerInput]
	// in); its parent forwards the answers given through it this way.
	SignalAnswer = "answer-signal"
	// SignalChildAsk tells a parent run that its subagent's run started or
	// stopped waiting for an answer ([childAsk] in).
	SignalChildAsk = "child-ask"

	activityPrepare    = "gantry.prepare"
	activityModel      = "gantry.model"
	activityTool       = "gantry.tool"
	activityRelease    = "gantry.release"
	activityTranscript = "gantry.transcript"
)

// Defaults of [Spec] and [WorkerOptions].
const (
	DefaultTaskQueue = "gantry"
	DefaultMaxTurns  = 100
	// DefaultHeartbeatTimeout is how long an activity may go without a
	// heartbeat before Temporal gives it to another worker: a worker that
	// dies is noticed within it.
	DefaultHeartbeatTimeout = 20 * time.Second
	// DefaultHistoryEvents is the history length at which a run continues
	// as new at its next turn boundary (Temporal also suggests it).
	DefaultHistoryEvents = 10_000
)

// Spec is what travels with a run to whichever worker executes it: the
// flags of `gantry -p` with the same meaning. The zero value of every field
// is the CLI's default.
type Spec struct {
	// WorkDir is the working directory on the worker (absolute). Required.
	WorkDir string `json:"work_dir"`
	// Model is the model name ("" = GANTRY_MODEL on the worker, else the
	// provider's default).
	Model string `json:"model,omitempty"`
	// MaxTokens bounds each reply (0 = the provider's default).
	MaxTokens int `json:"max_tokens,omitempty"`
	// PermissionMode is the initial mode ("" = the settings', else default).
	PermissionMode tool.Mode `json:"permission_mode,omitempty"`
	// Allow and Deny are permission rules, as --allowedTools and
	// --disallowedTools take them ("Read", "Bash(git diff *)").
	Allow []string `json:"allow,omitempty"`
	Deny  []string `json:"deny,omitempty"`
	// NoSettings ignores the settings files; Trusted trusts the working
	// directory's settings, hooks and MCP servers.
	NoSettings bool `json:"no_settings,omitempty"`
	Trusted    bool `json:"trusted,omitempty"`
	// MaxTurns bounds the model turns (0 = DefaultMaxTurns); MaxBudgetUSD
	// stops the run once its cost reaches it (0 = none).
	MaxTurns     int     `json:"max_turns,omitempty"`
	MaxBudgetUSD float64 `json:"max_budget_usd,omitempty"`
	// SystemPrompt replaces the built-in instructions; AppendSystemPrompt
	// is added after the environment facts and memory files.
	SystemPrompt       string `json:"system_prompt,omitempty"`
	AppendSystemPrompt string `json:"append_system_prompt,omitempty"`
	// NoEnvFacts and NoMemoryFiles leave the environment section and the
	// memory files out of the system prompt.
	NoEnvFacts    bool `json:"no_env_facts,omitempty"`
	NoMemoryFiles bool `json:"no_memory_files,omitempty"`
	// NoTranscript writes no session transcript on the workers.
	NoTranscript bool `json:"no_transcript,omitempty"`
	// ContextWindow is the model's context size in tokens (0 =
	// agent.DefaultContextWindow); CompactThreshold the fraction of it at
	// which older turns are summarised (0 = agent.DefaultCompactThreshold,
	// negative = never); KeepMessages how many recent messages compaction
	// keeps (0 = agent.DefaultKeepMessages). As agent.Options.
	ContextWindow    int     `json:"context_window,omitempty"`
	CompactThreshold float64 `json:"compact_threshold,omitempty"`
	KeepMessages     int     `json:"keep_messages,omitempty"`
	// Tools, when not nil, narrows the run's pool to these tools (a
	// subagent's pool, as its agent type allows; empty = no tools).
	Tools []string `json:"tools"`
	// Agent is set for a subagent's run (a child workflow).
	Agent *AgentInfo `json:"agent,omitempty"`
}

// AgentInfo describes a subagent's run: its type and the parent call that
// started it.
type AgentInfo struct {
	Type        string `json:"type"`
	Description string `json:"description,omitempty"`
	Name        string `json:"name,omitempty"`
	// ParentRunID is the run whose Agent call started this one;
	// ParentToolUseID that call's id.
	ParentRunID     string `json:"parent_run_id"`
	ParentToolUseID string `json:"parent_tool_use_id"`
	Background      bool   `json:"background,omitempty"`
}

// RunInput is the workflow's input: the spec and the prompt of a new run,
// or the state of a run that continued as new.
type RunInput struct {
	Spec   Spec   `json:"spec"`
	Prompt string `json:"prompt,omitempty"`
	// State is set when the run continues as new.
	State *State `json:"state,omitempty"`
	// Options are the engine's settings for this run.
	Options RunOptions `json:"options,omitzero"`
	// Resume, when set, continues an earlier run's conversation: the
	// prompt is added to it ([StartOptions.Resume]).
	Resume *Conversation `json:"resume,omitempty"`
}

// Conversation is a run's conversation as [QueryConversation] returns it
// and a resumed run starts from.
type Conversation struct {
	// Session is the session (transcript) id: the run id, or the session
	// of the run it resumed.
	Session  string        `json:"session"`
	Messages []llm.Message `json:"messages"`
	// Compacted says Messages[0] is a compaction summary; Base is how many
	// messages the transcript holds before Messages[0].
	Compacted bool `json:"compacted,omitempty"`
	Base      int  `json:"base,omitempty"`
	// Done is true once the run ended.
	Done bool `json:"done"`
}

// RunOptions are how the engine runs a workflow; the zero value of each
// field is its default.
type RunOptions struct {
	Timeouts Timeouts `json:"timeouts,omitzero"`
	// HistoryEvents is the history length at which the run continues as
	// new at its next turn boundary (0 = DefaultHistoryEvents; Temporal's
	// own suggestion is followed as well).
	HistoryEvents int `json:"history_events,omitempty"`
}

// State is the conversation and the counters of a run, carried across
// continue-as-new.
type State struct {
	System   string        `json:"system"`
	Mode     tool.Mode     `json:"mode,omitempty"`
	Loaded   []string      `json:"loaded,omitempty"` // tools loaded through ToolSearch
	Messages []llm.Message `json:"messages"`
	Turns    int           `json:"turns"`
	Usage    llm.Usage     `json:"usage"`
	CostUSD  float64       `json:"cost_usd"`
	Text     string        `json:"text,omitempty"`
	Started  time.Time     `json:"started"`
	// Events after Seq are kept; Seq is the sequence number of the last
	// event dropped when the run continued as new.
	Seq    int     `json:"seq"`
	Events []Event `json:"events,omitempty"`
	// Written is how many messages of Messages are in the transcript.
	Written int `json:"written,omitempty"`
	// Granted are the allow rules the user granted during the run ("allow
	// for this session", "always allow"); Files the file read-state (what
	// the model read or wrote, by hash). Both travel to the worker of each
	// tool call (see carry.go).
	Granted []string         `json:"granted,omitempty"`
	Files   []tool.FileState `json:"files,omitempty"`
	// Session is the transcript's session id ("" = the run id; a resumed
	// run's is the session it continues).
	Session string `json:"session,omitempty"`
	// Base is how many transcript messages come before Messages[0] (the
	// conversations before compactions and resumes); Compacted says
	// Messages[0] is a compaction summary.
	Base      int  `json:"base,omitempty"`
	Compacted bool `json:"compacted,omitempty"`
	// Compactions counts the compactions; LastSize is the prompt and
	// output tokens of the last model call (compaction's trigger).
	Compactions int `json:"compactions,omitempty"`
	LastSize    int `json:"last_size,omitempty"`
	// Inbox holds the notes (background agents' results) for the next
	// turn.
	Inbox []string `json:"inbox,omitempty"`
}

// Event types.
const (
	EventInit       = "init"
	EventMessage    = "message"
	EventToolResult = "tool_result"
	EventAsk        = "ask"
	EventAnswered   = "answered"
	EventNotice     = "notice"
	EventResult     = "result"
	// EventAgent: a subagent's run started or ended (Agent is set).
	EventAgent = "agent"
	// EventCompact: older turns were replaced by a summary (Compact is
	// set).
	EventCompact = "compact"
)

// Event is one thing that happened in a run, numbered from 1.
type Event struct {
	Seq  int    `json:"seq"`
	Type string `json:"type"`
	// Message is set for EventMessage (each assistant message and each
	// user message carrying tool results).
	Message *llm.Message `json:"message,omitempty"`
	// Tool is set for EventToolResult.
	Tool *ToolOutcome `json:"tool,omitempty"`
	// Ask is set for EventAsk and EventAnswered.
	Ask *Ask `json:"ask,omitempty"`
	// Result is set for EventResult (always the last event).
	Result *Result `json:"result,omitempty"`
	// Text is the notice, or the init event's model.
	Text string `json:"text,omitempty"`
	// Tools are the init event's tool names.
	Tools []string `json:"tools,omitempty"`
	// Agent is set for EventAgent.
	Agent *AgentEvent `json:"agent,omitempty"`
	// Compact is set for EventCompact.
	Compact *CompactInfo `json:"compact,omitempty"`
}

// AgentEvent says a subagent's run (a child workflow) started or ended.
type AgentEvent struct {
	// RunID is the child's run id (workflow id): its events, asks and
	// transcript are under it. For a background agent it is the task id.
	RunID           string `json:"run_id"`
	Type            string `json:"type"`
	Description     string `json:"description,omitempty"`
	ParentToolUseID string `json:"parent_tool_use_id"`
	Background      bool   `json:"background,omitempty"`
	// Status is "running", then "completed", "failed" or "killed".
	Status string `json:"status"`
	// Result is the child's result once it ended.
	Result *Result `json:"result,omitempty"`
}

// CompactInfo describes a compaction: the messages before and after, and
// the prompt size that triggered it.
type CompactInfo struct {
	Before       int `json:"before"`
	After        int `json:"after"`
	PromptTokens int `json:"prompt_tokens"`
}

// ToolOutcome summarises one tool call for the events.
type ToolOutcome struct {
	ID       string        `json:"id"`
	Name     string        `json:"name"`
	Kind     string        `json:"kind,omitempty"`
	IsError  bool          `json:"is_error,omitempty"`
	Duration time.Duration `json:"duration,omitempty"`
	// Recovered says the call's worker died and what became of the call
	// ("rerun", "confirmed", "interrupted").
	Recovered string `json:"recovered,omitempty"`
}

// Ask is a question waiting for a person: a permission ask, an
// AskUserQuestion, a plan approval.
type Ask struct {
	// ID names the ask in [AnswerInput] ("<tool-use id>#<n>").
	ID        string           `json:"id"`
	ToolUseID string           `json:"tool_use_id"`
	Kind      interaction.Kind `json:"kind"`
	// Request is the interaction request as JSON (for a permission ask an
	// interaction.PermissionRequest: tool_name, input, description,
	// reason, suggestions).
	Request json.RawMessage `json:"request"`
	// Answer is set once answered (as the interaction answer's JSON).
	Answer json.RawMessage `json:"answer,omitempty"`
	// At is when the run started waiting.
	At time.Time `json:"at,omitzero"`
	// Agent is the run id of the subagent that asked, for an ask of a
	// child shown by its parent ("" = the run's own ask). Its ID is then
	// "<child run id>/<the child's ask id>"; the child's own run lists it
	// under the child's ask id.
	Agent string `json:"agent,omitempty"`
}

// AnswerInput answers the ask with ID: Answer is the JSON of the
// interaction answer of the ask's kind (for a permission ask
// {"choice":"allow_once"} or {"choice":"deny","message":"…"}).
type AnswerInput struct {
	ID     string          `json:"id"`
	Answer json.RawMessage `json:"answer"`
}

// Result is the end of a run, as agent.ResultEvent says it.
type Result struct {
	Subtype    string         `json:"subtype"`
	IsError    bool           `json:"is_error"`
	Text       string         `json:"result"`
	RunID      string         `json:"run_id"`
	NumTurns   int            `json:"num_turns"`
	Usage      llm.Usage      `json:"usage"`
	CostUSD    float64        `json:"total_cost_usd"`
	Duration   time.Duration  `json:"duration_ms"`
	StopReason llm.StopReason `json:"stop_reason,omitempty"`
}

// EventsQuery asks for the events after After.
type EventsQuery struct {
	After int `json:"after"`
}

// EventsPage is the answer to [QueryEvents].
type EventsPage struct {
	Events []Event `json:"events"`
	// Pending are the asks waiting for an answer.
	Pending []Ask `json:"pending,omitempty"`
	// Done is true once the result event was emitted.
	Done bool `json:"done"`
	// First is the sequence number of the oldest event still kept; Last
	// the newest's (0 = none yet).
	First int `json:"first"`
	Last  int `json:"last"`
}

// modelInput is the model activity's input.
type modelInput struct {
	RunID    string        `json:"run_id"`
	Spec     Spec          `json:"spec"`
	System   string        `json:"system"`
	Loaded   []string      `json:"loaded,omitempty"`
	Messages []llm.Message `json:"messages"`
	// Summary asks for a compaction summary: the tools are sent (the
	// prompt cache stays warm) but the model may not call them.
	Summary bool `json:"summary,omitempty"`
}

// modelOutput is the model activity's result: the final message.
type modelOutput struct {
	Message    llm.Message    `json:"message"`
	StopReason llm.StopReason `json:"stop_reason"`
	Usage      llm.Usage      `json:"usage"`
	Model      string         `json:"model,omitempty"`
	// Invalid maps the ids of tool uses whose input was not valid JSON to
	// the parse error.
	Invalid map[string]string `json:"invalid,omitempty"`
	// Parallel are the ids of the tool uses that are read-only and
	// concurrency-safe (by the worker's pool): the workflow runs
	// consecutive ones at once, at most MaxParallel together. Decided here
	// so that it is in the history: the workflow replays the same batches.
	Parallel    []string `json:"parallel,omitempty"`
	MaxParallel int      `json:"max_parallel,omitempty"`
}

// prepareOutput is what the prepare activity found on the worker.
type prepareOutput struct {
	System string    `json:"system"`
	Mode   tool.Mode `json:"mode"`
	Tools  []string  `json:"tools"`
	Model  string    `json:"model"`
}

// toolInput is the tool activity's input.
type toolInput struct {
	RunID  string          `json:"run_id"`
	Spec   Spec            `json:"spec"`
	Mode   tool.Mode       `json:"mode,omitempty"`
	Loaded []string        `json:"loaded,omitempty"`
	ID     string          `json:"id"`
	Name   string          `json:"name"`
	Input  json.RawMessage `json:"input"`
	// Answers are the answers to the asks this call made so far, in order.
	Answers []json.RawMessage `json:"answers,omitempty"`
	// Granted are the run's granted allow rules; Files the read-state of
	// the files the call names (verified against the files before use).
	Granted []string         `json:"granted,omitempty"`
	Files   []tool.FileState `json:"files,omitempty"`
	// Agent is, for an Agent call run again, what became of the subagent
	// it asked for (its outcome, or its task when in the background).
	Agent *agentReply `json:"agent,omitempty"`
	// Epoch is the number of compactions so far: a worker whose runtime
	// saw fewer forgets the file reads (the model no longer sees them).
	Epoch int `json:"epoch,omitempty"`
}

// toolOutput is the tool activity's result: either the call's result or
// an ask to put to a person.
type toolOutput struct {
	Result    *tool.Result `json:"result,omitempty"`
	Outcome   ToolOutcome  `json:"outcome"`
	Ask       *Ask         `json:"ask,omitempty"`
	Mode      tool.Mode    `json:"mode,omitempty"`
	Loaded    []string     `json:"loaded,omitempty"`
	Stop      bool         `json:"stop,omitempty"`
	StopWhy   string       `json:"stop_reason,omitempty"`
	Notices   []string     `json:"notices,omitempty"`
	ExtraText []string     `json:"extra,omitempty"` // extra messages the tool added, as text
	// Granted are the allow rules granted during the call; Files the
	// read-state the call recorded.
	Granted []string         `json:"granted,omitempty"`
	Files   []tool.FileState `json:"files,omitempty"`
	// Spawn is an Agent call's subagent to run (the workflow starts it as
	// a child workflow and runs the call again with its outcome).
	Spawn *spawnRequest `json:"spawn,omitempty"`
}

// transcriptInput appends messages to the run's session transcript.
type transcriptInput struct {
	RunID   string `json:"run_id"`
	WorkDir string `json:"work_dir"`
	// From is how many conversation messages the transcript holds before
	// Messages[0] (its user, assistant and summary records).
	From     int           `json:"from"`
	Messages []llm.Message `json:"messages"`
	// Summary says Messages[0] is a compaction summary.
	Summary bool    `json:"summary,omitempty"`
	Result  *Result `json:"result,omitempty"`
}
