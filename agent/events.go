package agent

import (
	"encoding/json"
	"time"

	"github.com/gantry-dev/gantry/executor"
	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/tool"
)

// Event is one step of a run. The concrete types are [*InitEvent],
// [*TextDelta], [*ThinkingDelta], [*ToolStatus], [*ToolResultEvent],
// [*MessageEvent], [*StreamEvent], [*RetryEvent], [*CompactEvent], [*TurnEnd],
// [*NoticeEvent], [*ModeEvent] and [*ResultEvent]; switch on them.
type Event interface{ isEvent() }

// InitEvent opens a run: the session, model and tools in force.
type InitEvent struct {
	SessionID string
	Model     string
	WorkDir   string
	Tools     []string
	Mode      tool.Mode
}

// TextDelta is a piece of the model's reply text.
type TextDelta struct{ Text string }

// ThinkingDelta is a piece of the model's visible thinking.
type ThinkingDelta struct{ Text string }

// ToolStatus is a status event of a tool call (WAIT → DOING → SUCCESS |
// ERROR) with the call's merged state.
type ToolStatus struct{ Status tool.Status }

// ToolResultEvent is the outcome of one tool call, in the model's order,
// after the whole message's calls ended.
type ToolResultEvent struct{ Outcome *executor.Outcome }

// MessageEvent is a message appended to the conversation: the user's
// prompt, the assistant's reply of a turn, or the user message carrying
// the tool results.
type MessageEvent struct {
	Message llm.Message
	// UUID is the message's id in the transcript.
	UUID string
	// Checkpoint is the id of the checkpoint recorded before a user's
	// prompt (the workspace's checkpoints), its UUID; "" for other messages and
	// when no checkpoint was recorded. [Agent.RewindFiles] takes it.
	Checkpoint string
	// Reply describes an assistant reply of the model (nil for every other
	// message): the provider's message id, model, stop reason and usage.
	Reply *ReplyInfo
}

// ReplyInfo is what the provider said about one assistant reply.
type ReplyInfo struct {
	ID         string
	Model      string
	StopReason llm.StopReason
	Usage      llm.Usage
}

// StreamEvent is one raw event of the model's stream (message start, a
// text, thinking or tool-input delta, a block's end, the message's end),
// yielded only with [Options.StreamEvents], before the deltas it carries
// are yielded as [*TextDelta] and [*ThinkingDelta]. Events of a reply
// that is retried are not taken back.
type StreamEvent struct{ Event llm.Event }

// RetryEvent says a turn's request is sent again after a transient failure
// (the partial reply, if any, was discarded).
type RetryEvent struct {
	Attempt int
	Err     error
}

// CompactEvent says older turns were replaced by a summary.
type CompactEvent struct {
	// Before and After are the message counts.
	Before, After int
	// PromptTokens is the prompt size that triggered compaction.
	PromptTokens int
}

// NoticeEvent is a message for the user that is not part of the
// conversation (a hook's system message, a repeated-error signal).
type NoticeEvent struct{ Text string }

// ModeEvent says the session's permission mode changed during the run
// (EnterPlanMode, a plan approved through ExitPlanMode), after the calls
// of a model message; From is the mode last reported.
type ModeEvent struct {
	From, To tool.Mode
}

// TurnEnd closes a model turn.
type TurnEnd struct {
	Turn       int
	StopReason llm.StopReason
	// Usage is this turn's; CostUSD is this turn's cost (0 for unknown
	// models).
	Usage   llm.Usage
	CostUSD float64
}

// Result subtypes: why a run ended.
const (
	SubtypeSuccess         = "success"
	SubtypeMaxTurns        = "error_max_turns"
	SubtypeMaxBudget       = "error_max_budget_usd"
	SubtypeMaxTokens       = "error_max_budget_tokens"
	SubtypeInterrupted     = "interrupted"
	SubtypeToolLoop        = "error_repeated_tool_failure"
	SubtypeDuringExecution = "error_during_execution"
	SubtypeBlocked         = "blocked"
)

// ResultEvent ends every run (also a failed one: then IsError is set and
// the iterator's error, if any, follows it). Its JSON form (the transcript's
// result record) uses the names of the stream-json result.
type ResultEvent struct {
	Subtype   string    `json:"subtype"`
	IsError   bool      `json:"is_error"`
	Text      string    `json:"result"` // the model's last reply text, or the reason of an error
	SessionID string    `json:"session_id"`
	NumTurns  int       `json:"num_turns"`
	Usage     llm.Usage `json:"usage"`
	CostUSD   float64   `json:"total_cost_usd"`
	// Duration is in nanoseconds in JSON.
	Duration time.Duration `json:"duration_ns"`
	// StopReason is the model's last stop reason.
	StopReason llm.StopReason `json:"stop_reason,omitempty"`
	// Structured is the final answer of a run with an output schema
	// ([Options.OutputSchema], [PromptAs]), as JSON the schema accepts;
	// nil otherwise and when the run ended without a valid answer.
	Structured json.RawMessage `json:"structured_output,omitempty"`
}

func (*InitEvent) isEvent()       {}
func (*TextDelta) isEvent()       {}
func (*ThinkingDelta) isEvent()   {}
func (*ToolStatus) isEvent()      {}
func (*ToolResultEvent) isEvent() {}
func (*ModeEvent) isEvent()       {}
func (*MessageEvent) isEvent()    {}
func (*StreamEvent) isEvent()     {}
func (*RetryEvent) isEvent()      {}
func (*CompactEvent) isEvent()    {}
func (*NoticeEvent) isEvent()     {}
func (*TurnEnd) isEvent()         {}
func (*ResultEvent) isEvent()     {}
