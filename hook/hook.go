// Package hook runs user hooks at points of an agent's life (before and after
// tool calls, on prompts, at stop, …): Go callbacks and shell commands
// configured in settings, with Claude Code's JSON shapes.
//
// The executor calls a [Runner] for PreToolUse, PostToolUse and
// PostToolUseFailure; the agent loop for the other events.
package hook

import (
	"context"
	"encoding/json"

	"github.com/gantry-dev/gantry/tool"
)

// Event names a hook point.
type Event string

const (
	PreToolUse         Event = "PreToolUse"
	PostToolUse        Event = "PostToolUse"
	PostToolUseFailure Event = "PostToolUseFailure"
	PermissionRequest  Event = "PermissionRequest"
	UserPromptSubmit   Event = "UserPromptSubmit"
	Stop               Event = "Stop"
	SubagentStart      Event = "SubagentStart"
	SubagentStop       Event = "SubagentStop"
	SessionStart       Event = "SessionStart"
	SessionEnd         Event = "SessionEnd"
	PreCompact         Event = "PreCompact"
	Notification       Event = "Notification"
	// Elicitation fires when an MCP server asks the person for input,
	// before they are asked: a hook may answer it (Output.Elicitation)
	// and the person is not asked. Matchers match the server's name.
	Elicitation Event = "Elicitation"
	// ElicitationResult fires with the answer (the person's or a hook's)
	// before it goes back to the server: a hook may replace it.
	ElicitationResult Event = "ElicitationResult"
)

// Input is what a hook receives (as JSON on stdin for command hooks). Which
// fields are set depends on the event.
type Input struct {
	Event          Event           `json:"hook_event_name"`
	SessionID      string          `json:"session_id"`
	TranscriptPath string          `json:"transcript_path,omitempty"`
	CWD            string          `json:"cwd"`
	PermissionMode tool.Mode       `json:"permission_mode,omitempty"`
	ToolName       string          `json:"tool_name,omitempty"`
	ToolInput      json.RawMessage `json:"tool_input,omitempty"`
	ToolUseID      string          `json:"tool_use_id,omitempty"`
	// ToolResponse is the result (PostToolUse) as JSON.
	ToolResponse json.RawMessage `json:"tool_response,omitempty"`
	// Error is the failure text (PostToolUseFailure).
	Error string `json:"error,omitempty"`
	// Prompt is the user's prompt (UserPromptSubmit).
	Prompt string `json:"prompt,omitempty"`
	// StopHookActive is true when a Stop hook already continued the run once.
	StopHookActive bool `json:"stop_hook_active,omitempty"`
	// Trigger is "manual" or "auto" (PreCompact); Source is "startup",
	// "resume", … (SessionStart); Reason is why a session ended (SessionEnd).
	Trigger            string `json:"trigger,omitempty"`
	CustomInstructions string `json:"custom_instructions,omitempty"`
	Source             string `json:"source,omitempty"`
	Reason             string `json:"reason,omitempty"`
	// Message is a notification's text (Notification).
	Message string `json:"message,omitempty"`
	// AgentID, AgentType and AgentTranscriptPath name the subagent
	// (SubagentStart, SubagentStop); SessionID and TranscriptPath are then
	// the parent's.
	AgentID             string `json:"agent_id,omitempty"`
	AgentType           string `json:"agent_type,omitempty"`
	AgentTranscriptPath string `json:"agent_transcript_path,omitempty"`
	// MCPServerName, RequestedSchema and URL describe an MCP elicitation
	// (Elicitation, ElicitationResult; Message holds the server's
	// message); Action and Content are its answer (ElicitationResult).
	MCPServerName   string          `json:"mcp_server_name,omitempty"`
	RequestedSchema json.RawMessage `json:"requested_schema,omitempty"`
	URL             string          `json:"url,omitempty"`
	Action          string          `json:"action,omitempty"`
	Content         map[string]any  `json:"content,omitempty"`
}

// ElicitationAnswer is a hook's answer to an MCP elicitation: Action is
// "accept", "decline" or "cancel"; Content is the form's values with
// accept.
type ElicitationAnswer struct {
	Action  string         `json:"action"`
	Content map[string]any `json:"content,omitempty"`
}

// Output is the combined outcome of the hooks that ran for one Input. The zero
// value means "no objection, nothing to add".
type Output struct {
	// Block stops what the event is about: a PreToolUse call is not run, a
	// UserPromptSubmit prompt is dropped, a Stop is turned into "continue".
	// Reason is sent to the model (or shown to the user).
	Block  bool   `json:"block,omitempty"`
	Reason string `json:"reason,omitempty"`
	// Decision is a permission verdict (PreToolUse, PermissionRequest):
	// Allow, Ask or Deny; Passthrough for none.
	Decision tool.Behavior `json:"decision,omitempty"`
	// UpdatedInput replaces the tool input (PreToolUse; validated again).
	UpdatedInput json.RawMessage `json:"updated_input,omitempty"`
	// AdditionalContext is added to what the model reads.
	AdditionalContext string `json:"additional_context,omitempty"`
	// ReplaceResult replaces the tool's result (PostToolUse,
	// PostToolUseFailure).
	ReplaceResult *tool.Result `json:"replace_result,omitempty"`
	// Continue false stops the whole run with StopReason.
	Continue   *bool  `json:"continue,omitempty"`
	StopReason string `json:"stop_reason,omitempty"`
	// SuppressOutput hides the hook's output from the transcript shown to
	// people; SystemMessage is a warning shown to the user.
	SuppressOutput bool   `json:"suppress_output,omitempty"`
	SystemMessage  string `json:"system_message,omitempty"`
	// Elicitation answers an MCP elicitation (Elicitation: instead of
	// asking the person; ElicitationResult: replacing the answer). Of
	// several hooks the most refusing answer wins (cancel, then decline,
	// then the first accept); a Block is a decline.
	Elicitation *ElicitationAnswer `json:"elicitation,omitempty"`
}

// Runner runs every hook configured for in.Event (matched on in.ToolName
// where the event has a tool) and combines their outputs. A nil *Output means
// no hook ran. Implementations must be safe for concurrent use.
//
// An error means the hooks could not give a verdict (a hook crashed, timed
// out or could not start); for PreToolUse the executor then blocks the call
// (fail closed).
type Runner interface {
	Run(ctx context.Context, in *Input) (*Output, error)
}

// EventFilter is implemented by a [Runner] that knows which events it runs
// hooks for. The executor builds an event's input only when the runner may
// run a hook for it: a PostToolUse input carries the whole tool result as
// JSON, which is not worth encoding for no hook.
type EventFilter interface {
	// Handles reports whether the runner may run a hook for ev.
	Handles(ev Event) bool
}

// Handles reports whether r may run a hook for ev: false for a nil r and
// for an [EventFilter] that says so, true otherwise.
func Handles(r Runner, ev Event) bool {
	if r == nil {
		return false
	}
	if f, ok := r.(EventFilter); ok {
		return f.Handles(ev)
	}
	return true
}

// RunnerFunc adapts a function to [Runner].
type RunnerFunc func(ctx context.Context, in *Input) (*Output, error)

// Run implements [Runner].
func (f RunnerFunc) Run(ctx context.Context, in *Input) (*Output, error) { return f(ctx, in) }
