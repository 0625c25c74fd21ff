// Package subagent is the contract between the Agent tool and the agent
// loop that runs subagents: the agent types ([Definition]), what the tool
// asks ([Request]) and gets back ([Outcome], [Started]), and the [Runner]
// the loop puts in the tools' services. The tool (builtin/agenttool) and
// the loop (package agent) both import it; neither imports the other.
package subagent

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/gantry-dev/gantry/plugins"
	"strings"

	"github.com/gantry-dev/gantry/tool"
)

// ToolName is the Agent tool's name (the name a pool lists it by).
const ToolName = "Agent"

// GeneralPurpose is the name of the built-in agent type a request without
// a type runs as.
const GeneralPurpose = "general-purpose"

// ModelFast as a Definition.Model names the runner's fast model (for
// example agent.Options.SmallModel), or the parent's model when there is
// none. The built-in Explore type uses it.
const ModelFast = "fast"

// Definition is one type of subagent: what the Agent tool's subagent_type
// names. The zero value of every field but Name means "inherit".
type Definition struct {
	// Name is the type's name (subagent_type): 1-64 of [a-zA-Z0-9_-].
	Name string `json:"name"`
	// Description says when to use the type; the Agent tool's description
	// lists it for the model.
	Description string `json:"description"`
	// Tools are the tools the child may use (tool names or the patterns of
	// toolset.Options.Allow, "mcp__server" for a server's tools); empty
	// means every tool of the parent except Agent (unless nesting is
	// allowed). The child can never use a tool the parent cannot.
	Tools []string `json:"tools,omitempty"`
	// DisallowedTools are removed from Tools.
	DisallowedTools []string `json:"disallowedTools,omitempty"`
	// Model is the child's model ("" or "inherit" = the parent's).
	Model string `json:"model,omitempty"`
	// PermissionMode is the child's mode ("" = the parent's). A mode wider
	// than the parent's is not applied: the child keeps the parent's.
	PermissionMode tool.Mode `json:"permissionMode,omitempty"`
	// MaxTurns bounds the child's turns (0 = the runner's default).
	MaxTurns int `json:"maxTurns,omitempty"`
	// OutputSchema, if set, is a JSON Schema of the child's final answer:
	// the child ends by calling StructuredOutput with input it accepts,
	// and the parent receives that JSON as the Agent tool's result (see
	// agent.Options.OutputSchema).
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	// Prompt is the child's system prompt (the body of a definition file).
	Prompt string `json:"prompt"`
	// Source says where the definition comes from: "built-in", "user",
	// "project", "cli" or "sdk"; Path is its file, if any.
	Source string `json:"source,omitempty"`
	Path   string `json:"path,omitempty"`
}

// ValidName reports whether name is a valid agent type name: 1-64 of
// [a-zA-Z0-9_-] ([tool.ValidName]), optionally namespaced by a plugin as
// "plugin:name" ([plugins.ValidName] for the plugin part).
func ValidName(name string) bool {
	if ns, rest, ok := strings.Cut(name, ":"); ok {
		return plugins.ValidName(ns) && tool.ValidName(rest)
	}
	return tool.ValidName(name)
}

// Validate reports the first problem of d: a bad name, an empty prompt, an
// unknown permission mode, a negative MaxTurns.
func (d *Definition) Validate() error {
	switch {
	case !ValidName(d.Name):
		return fmt.Errorf("agent name %q: want 1-64 of [a-zA-Z0-9_-], optionally after a plugin's name and ':'", d.Name)
	case strings.TrimSpace(d.Description) == "":
		return fmt.Errorf("agent %s: description is required", d.Name)
	case strings.TrimSpace(d.Prompt) == "":
		return fmt.Errorf("agent %s: the system prompt (body) is empty", d.Name)
	case d.PermissionMode != "" && !d.PermissionMode.Valid():
		return fmt.Errorf("agent %s: unknown permissionMode %q", d.Name, d.PermissionMode)
	case d.MaxTurns < 0:
		return fmt.Errorf("agent %s: maxTurns %d is negative", d.Name, d.MaxTurns)
	case len(d.OutputSchema) > 0 && !isJSONObject(d.OutputSchema):
		return fmt.Errorf("agent %s: outputSchema is not a JSON Schema object", d.Name)
	}
	return nil
}

// Request is what the tool asks a [Runner] to run.
type Request struct {
	// Definition is the agent type, looked up in the catalog.
	Definition Definition
	// Description, Prompt, Model, Name and Isolation are the call's.
	Description string
	Prompt      string
	Model       string
	Name        string
	Isolation   string
	// ToolUseID is the Agent call's id (the parent_tool_use_id of the
	// child's messages).
	ToolUseID string
	// Resume, if set, is the agent id of an earlier subagent of the same
	// session: its transcript is reopened, Prompt is appended to its
	// conversation and it runs as the type it was started as (Definition
	// then only narrows its mode and turns). A runner without transcripts,
	// an unknown id, another session's subagent or one still running is
	// an error.
	Resume string
}

// Outcome is the result of a subagent run.
type Outcome struct {
	AgentID   string `json:"agent_id"`
	AgentType string `json:"agent_type"`
	// Text is the child's final reply (or why it stopped, when IsError).
	Text    string `json:"text"`
	IsError bool   `json:"is_error,omitempty"`
	// Structured is the child's final answer when its type declares an
	// output schema (Definition.OutputSchema); it is then the tool
	// result's text, as JSON.
	Structured json.RawMessage `json:"structured_output,omitempty"`
	// Subtype is how the child's run ended (success, error_max_turns, …).
	Subtype string  `json:"subtype"`
	Turns   int     `json:"num_turns"`
	Tokens  int     `json:"total_tokens"`
	CostUSD float64 `json:"total_cost_usd"`
	// TranscriptPath is the child's transcript ("" without a store).
	TranscriptPath string `json:"transcript_path,omitempty"`
	// Worktree describes the worktree of an isolated child.
	Worktree *Worktree `json:"worktree,omitempty"`
}

// Worktree is the git worktree an isolated child ran in.
type Worktree struct {
	Path   string `json:"path"`
	Branch string `json:"branch"`
	// Kept is true when the child left changes (the worktree stays);
	// false when it was removed.
	Kept bool `json:"kept"`
}

// Started describes a background subagent.
type Started struct {
	TaskID     string `json:"task_id"`
	AgentID    string `json:"agent_id"`
	OutputPath string `json:"output_path"`
}

// Runner runs subagents. The agent loop provides one per agent in the
// tools' services (tool.Provide[subagent.Runner]); it builds the child on
// the parent's permission engine and hooks with a narrowed pool.
type Runner interface {
	// RunAgent runs a child to its end (or until ctx is cancelled) and
	// returns its outcome. An error is a failure to run at all (the tool
	// turns it into an error result).
	RunAgent(ctx context.Context, env *tool.Env, req Request) (*Outcome, error)
	// StartAgent starts a child as a background task and returns at once.
	StartAgent(ctx context.Context, env *tool.Env, req Request) (*Started, error)
}

// isJSONObject reports whether raw is one JSON object.
func isJSONObject(raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(raw, &m) == nil && m != nil
}

// Lead is an agent that can lead a team: the agent loop provides its root
// agent as one in the tools' services (tool.Provide[subagent.Lead]) when
// it may start subagents. A team runner starts the members through it.
type Lead interface {
	// SessionID is the lead's session id (a member's services inherit
	// the lead, so a runner compares it with the calling session's).
	SessionID() string
	// StartMember starts a long-lived background subagent of the lead.
	StartMember(ctx context.Context, m Member) (MemberHandle, error)
	// Wake makes the lead's run look again at what it waits for (a
	// member's state changed).
	Wake()
}

// Member describes a long-lived background subagent: a team member.
type Member struct {
	// Type is the agent type ("" = GeneralPurpose); Prompt its first
	// task; Description a few words for people and task lists; Name its
	// name.
	Type, Prompt, Description, Name string
	// Services, if set, adds to the member's own services before it
	// starts (a store.Scope naming its team).
	Services func(*tool.Services)
	// Idle keeps the member alive: after each run it blocks until the
	// member has more work (nil: run again with WakePrompt; an error or
	// cancellation ends the member). Nil means the member ends after its
	// first run.
	Idle func(ctx context.Context) error
	// WakePrompt is the prompt of a run after Idle returned ("" = a
	// generic one).
	WakePrompt string
	// OnState, if set, is told the member's state: "running" at the start
	// of each run (res nil), "idle" before Idle is called, and its end
	// ("completed", "failed" or "killed") with how its last run ended.
	OnState func(state string, res *RunResult)
}

// RunResult is how one run of a member ended.
type RunResult struct {
	// Subtype is the run's result subtype (success, error_max_turns, …).
	Subtype string
	IsError bool
	// Text is the run's final reply (or why it stopped, when IsError).
	Text string
}

// MemberHandle is a running member.
type MemberHandle interface {
	// TaskID is the member's background job.
	TaskID() string
	// Done is closed once the member ended.
	Done() <-chan struct{}
	// Stop stops the member and waits until it ended or ctx is done.
	Stop(ctx context.Context) error
}

// Teams is what a lead's loop needs of the team runner in its services
// (tool.Provide[subagent.Teams]; the workspace provides one).
type Teams interface {
	// Wait runs when the lead's model ends its turn. While members of the
	// teams the lead of env leads are working it blocks; it returns true
	// as soon as mail for the lead is waiting (the next turn delivers it),
	// false once every member is idle and nothing is waiting, when env is
	// not a lead's, or when ctx ends. Each signal on wake (the loop's own
	// events) calls onWake, and the wait goes on.
	Wait(ctx context.Context, env *tool.Env, wake <-chan struct{}, onWake func()) bool
	// StopAll stops the members of every team the lead leads and waits
	// for them (the lead is closing).
	StopAll(ctx context.Context, lead string)
}
