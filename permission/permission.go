// Package permission decides whether a tool call may run: permission modes,
// rules from settings scopes, path and shell policy, and the callback through
// which an embedding program (or a person) answers "ask".
//
// The executor calls a [Decider] for every call that passed validation and
// the PreToolUse hooks.
package permission

import (
	"context"
	"encoding/json"

	"github.com/gantry-dev/gantry/tool"
)

// Mode is a permission mode; see the constants in package tool
// (tool.ModeDefault, tool.ModeAcceptEdits, tool.ModePlan, tool.ModeDontAsk,
// tool.ModeBypassPermissions).
type Mode = tool.Mode

// Request is one call awaiting a permission decision.
type Request struct {
	// Tool is the resolved tool; Name is the name the model used (maybe an
	// alias).
	Tool tool.Tool
	Name string
	// Input is the validated input (after coercion and hook rewrites).
	Input json.RawMessage
	// Env is the call's environment (working directory, mode, session).
	Env *tool.Env
	// Traits are the call's traits ([tool.TraitsOf]).
	Traits tool.Traits
	// ToolCheck is the tool's own verdict ([tool.PermissionChecker]), or the
	// zero value if it has none.
	ToolCheck tool.PermissionResult
	// HookVerdict is the combined PreToolUse hooks' permission decision (or
	// Passthrough) and HookReason its reason. A hook's allow never overrides
	// a deny or ask rule.
	HookVerdict tool.Behavior
	HookReason  string
}

// Decision is the outcome for one call.
type Decision struct {
	// Behavior is Allow, Ask or Deny (never Passthrough in a final decision).
	Behavior tool.Behavior `json:"behavior"`
	// Reason explains the decision to the user, and to the model on deny.
	Reason string `json:"reason,omitempty"`
	// Rule is the rule that decided, as written ("Bash(git diff:*)"), if any.
	Rule string `json:"rule,omitempty"`
	// Source names what decided: a settings scope ("user", "project",
	// "local", "policy", "cli", "session"), or "mode", "tool", "hook",
	// "callback", "default".
	Source string `json:"source,omitempty"`
	// UpdatedInput, with Allow, replaces the call's input (it is validated
	// again).
	UpdatedInput json.RawMessage `json:"updated_input,omitempty"`
	// Checked, with Allow, maps the paths of the input that the decision
	// checked (as the input wrote them) to the files they resolved to then
	// (absolute, symbolic links resolved). The executor hands it to the
	// tool ([tool.Env.Checked]) so the file checked is the file used.
	Checked map[string]string `json:"checked,omitempty"`
	// Interrupt, with Deny, asks the agent loop to stop the run.
	Interrupt bool `json:"interrupt,omitempty"`
}

// Decider makes permission decisions. Implementations must be safe for
// concurrent use. An error is treated as "cannot decide": the executor
// denies the call (fail closed) and tells the model why.
type Decider interface {
	Decide(ctx context.Context, req *Request) (Decision, error)
}

// DeciderFunc adapts a function to [Decider].
type DeciderFunc func(ctx context.Context, req *Request) (Decision, error)

// Decide implements [Decider].
func (f DeciderFunc) Decide(ctx context.Context, req *Request) (Decision, error) {
	return f(ctx, req)
}

// CanUseTool is the callback through which an embedding program answers a
// decision that came out as Ask: allow (optionally with UpdatedInput), deny
// with a Reason the model reads, or deny with Interrupt to stop the run.
// suggested is the decision that asked.
type CanUseTool func(ctx context.Context, req *Request, suggested Decision) (Decision, error)
