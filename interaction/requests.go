package interaction

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/gantry-dev/gantry/settings"
	"github.com/gantry-dev/gantry/tool"
)

// Who says which agent a request comes from.
type Who struct {
	// SessionID is the asking agent's session.
	SessionID string `json:"session_id,omitempty"`
	// Agent is "" for the main agent, else the subagent's name or type.
	Agent string `json:"agent,omitempty"`
	// ParentToolUseID is the id of the Agent call that started a subagent
	// ("" for the main agent).
	ParentToolUseID string `json:"parent_tool_use_id,omitempty"`
}

// PermissionRequest asks whether a tool call that needs approval may run.
type PermissionRequest struct {
	Who
	// ToolName is the tool as the model called it; ToolUseID the call's id.
	ToolName  string `json:"tool_name"`
	ToolUseID string `json:"tool_use_id,omitempty"`
	// Input is the call's validated input.
	Input json.RawMessage `json:"input"`
	// Description is a one-line description of the call ("Run go test
	// ./..."), for people.
	Description string `json:"description,omitempty"`
	// Reason says why the call needs approval; Rule is the rule that asked,
	// if any.
	Reason string `json:"reason,omitempty"`
	Rule   string `json:"rule,omitempty"`
	// Mode and WorkDir are the session's.
	Mode    tool.Mode `json:"mode,omitempty"`
	WorkDir string    `json:"work_dir,omitempty"`
	// Suggestions are the allow rules that [AllowSession] and
	// [AllowAlways] add unless the answer names others ("Bash(npm run *)").
	// Empty means those choices cannot be offered (nothing safe to
	// suggest).
	Suggestions []string `json:"suggestions,omitempty"`
	// Scopes are the settings files an [AllowAlways] rule may be written
	// to, the default first. Empty means "always" cannot be offered (no
	// settings files in this session).
	Scopes []settings.Scope `json:"scopes,omitempty"`
}

// Kind implements [Request].
func (*PermissionRequest) Kind() Kind { return KindPermission }

// Choice is a person's answer to a [PermissionRequest].
type Choice string

// The choices.
const (
	// AllowOnce runs this call.
	AllowOnce Choice = "allow_once"
	// AllowSession runs this call and adds the rules to the session (they
	// are forgotten when it ends).
	AllowSession Choice = "allow_session"
	// AllowAlways runs this call and writes the rules to a settings file.
	AllowAlways Choice = "allow_always"
	// Deny refuses the call; the message goes to the model.
	Deny Choice = "deny"
)

// PermissionAnswer answers a [PermissionRequest].
type PermissionAnswer struct {
	Choice Choice `json:"choice"`
	// Rules are the allow rules of AllowSession and AllowAlways; empty
	// means the request's Suggestions.
	Rules []string `json:"rules,omitempty"`
	// Scope is where AllowAlways writes ("" = the request's first scope,
	// normally the project's local settings).
	Scope settings.Scope `json:"scope,omitempty"`
	// UpdatedInput, with an allow, replaces the call's input (validated
	// again).
	UpdatedInput json.RawMessage `json:"updated_input,omitempty"`
	// Message, with Deny, tells the model why (and what to do instead).
	Message string `json:"message,omitempty"`
	// Interrupt, with Deny, stops the run.
	Interrupt bool `json:"interrupt,omitempty"`
}

// Kind implements [Answer].
func (*PermissionAnswer) Kind() Kind { return KindPermission }

// Allowed reports whether the answer lets the call run.
func (a *PermissionAnswer) Allowed() bool {
	return a.Choice == AllowOnce || a.Choice == AllowSession || a.Choice == AllowAlways
}

func (a *PermissionAnswer) validate() error {
	switch a.Choice {
	case AllowOnce, AllowSession, AllowAlways, Deny:
	default:
		return fmt.Errorf("interaction: unknown permission choice %q", a.Choice)
	}
	switch a.Scope {
	case "", settings.ScopeUser, settings.ScopeProject, settings.ScopeLocal:
	default:
		return fmt.Errorf("interaction: rules cannot be written to scope %q", a.Scope)
	}
	if len(a.UpdatedInput) > 0 && !json.Valid(a.UpdatedInput) {
		return fmt.Errorf("interaction: updated input is not JSON")
	}
	return nil
}

// Question is one question of AskUserQuestion (the tool's input shape).
type Question struct {
	// Question is the full question; answers are keyed by it.
	Question string `json:"question" jsonschema:"The complete question, ending with a question mark."`
	// Header is a short label (a chip or tab title).
	Header string `json:"header" jsonschema:"A very short label for the question (a few words)."`
	// Options are the 2–4 choices; a person may also give a free answer
	// ("other").
	Options []Option `json:"options" jsonschema:"2-4 distinct choices; the user can always answer in their own words instead."`
	// MultiSelect allows choosing several options.
	MultiSelect bool `json:"multiSelect" jsonschema:"True if several options may be chosen together."`
}

// Option is one choice of a [Question].
type Option struct {
	Label       string `json:"label" jsonschema:"The choice as shown to the user (1-5 words)."`
	Description string `json:"description" jsonschema:"What choosing this option means."`
	// Preview is optional content to show when the option is focused (code,
	// a mock-up).
	Preview string `json:"preview,omitempty" jsonschema:"Optional content shown while the option is focused (a code snippet, a mock-up)."`
}

// QuestionRequest asks a person the model's questions.
type QuestionRequest struct {
	Who
	ToolUseID string     `json:"tool_use_id,omitempty"`
	Questions []Question `json:"questions"`
}

// Kind implements [Request].
func (*QuestionRequest) Kind() Kind { return KindQuestion }

func (r *QuestionRequest) has(q string) bool {
	return slices.ContainsFunc(r.Questions, func(x Question) bool { return x.Question == q })
}

// QuestionAnswer answers a [QuestionRequest]: Answers maps each question's
// text to the chosen option's label, the labels of a multi-select joined
// with ", " ([JoinLabels]), or a free answer. A question left out was not
// answered.
type QuestionAnswer struct {
	Answers map[string]string `json:"answers"`
}

// Kind implements [Answer].
func (*QuestionAnswer) Kind() Kind { return KindQuestion }

// JoinLabels is how the labels of a multi-select answer are joined.
func JoinLabels(labels []string) string { return strings.Join(labels, ", ") }

// PlanRequest asks a person to approve a plan (ExitPlanMode).
type PlanRequest struct {
	Who
	ToolUseID string `json:"tool_use_id,omitempty"`
	// Plan is the plan, in Markdown.
	Plan string `json:"plan"`
	// PlanFile is where the plan is saved ("" if it could not be).
	PlanFile string `json:"plan_file,omitempty"`
	// ReturnMode is the mode the session returns to if the plan is
	// approved without choosing one.
	ReturnMode tool.Mode `json:"return_mode"`
}

// Kind implements [Request].
func (*PlanRequest) Kind() Kind { return KindPlan }

// PlanAnswer answers a [PlanRequest].
type PlanAnswer struct {
	// Approved leaves plan mode.
	Approved bool `json:"approved"`
	// Mode, with Approved, is the mode to continue in ("" = the request's
	// ReturnMode; acceptEdits to let the edits run without asking).
	Mode tool.Mode `json:"mode,omitempty"`
	// Feedback, when not approved, tells the model what to change; the
	// session stays in plan mode.
	Feedback string `json:"feedback,omitempty"`
}

// Kind implements [Answer].
func (*PlanAnswer) Kind() Kind { return KindPlan }

// ElicitationRequest is an MCP server's request for information from the
// user (MCP elicitation, form or URL mode).
type ElicitationRequest struct {
	Who
	// Server is the MCP server asking.
	Server string `json:"server"`
	// Message is the server's message.
	Message string `json:"message"`
	// Schema is the requested form (a flat JSON Schema object) in form
	// mode.
	Schema json.RawMessage `json:"schema,omitempty"`
	// URL is the page to open in URL mode.
	URL string `json:"url,omitempty"`
}

// Kind implements [Request].
func (*ElicitationRequest) Kind() Kind { return KindElicitation }

// The elicitation actions (MCP's).
const (
	ElicitAccept  = "accept"
	ElicitDecline = "decline"
	ElicitCancel  = "cancel"
)

// ElicitationAnswer answers an [ElicitationRequest].
type ElicitationAnswer struct {
	// Action is ElicitAccept, ElicitDecline or ElicitCancel.
	Action string `json:"action"`
	// Content is the form's values with ElicitAccept in form mode.
	Content map[string]any `json:"content,omitempty"`
}

// Kind implements [Answer].
func (*ElicitationAnswer) Kind() Kind { return KindElicitation }

// TrustRequest asks whether to trust a folder: its settings' allow rules,
// hooks, environment and MCP servers take effect only in trusted folders.
// With Servers it asks instead whether to approve and start the MCP
// servers of a trusted folder's .mcp.json that are new or changed since the
// user approved them.
type TrustRequest struct {
	// Dir is the folder.
	Dir string `json:"dir"`
	// Ignored lists, per settings file, what trust would turn on.
	Ignored map[string][]string `json:"ignored,omitempty"`
	// Servers describe the MCP servers awaiting approval, one line each
	// ("fs (changed): srv --root ." — what runs or is reached, never
	// secrets).
	Servers []string `json:"servers,omitempty"`
	// Changed reports that the folder was trusted before and its project
	// configuration changed since (a settings file was added, edited or
	// removed outside Gantry — possibly by a command of a session).
	Changed bool `json:"changed,omitempty"`
}

// Kind implements [Request].
func (*TrustRequest) Kind() Kind { return KindTrust }

// TrustAnswer answers a [TrustRequest].
type TrustAnswer struct {
	Trust bool `json:"trust"`
}

// Kind implements [Answer].
func (*TrustAnswer) Kind() Kind { return KindTrust }
