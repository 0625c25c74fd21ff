package streamjson

import (
	"encoding/json"

	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/tool"
)

// The message types Gantry writes, in the SDK's shapes. Every message has
// uuid and session_id. Field order follows the SDK's declarations, so
// that output reads like the reference agent's.

// SystemInit is the system/init message that opens every turn.
type SystemInit struct {
	Type              string      `json:"type"`    // "system"
	Subtype           string      `json:"subtype"` // "init"
	CWD               string      `json:"cwd"`
	SessionID         string      `json:"session_id"`
	Tools             []string    `json:"tools"`
	MCPServers        []MCPServer `json:"mcp_servers"`
	Model             string      `json:"model"`
	PermissionMode    tool.Mode   `json:"permissionMode"`
	SlashCommands     []string    `json:"slash_commands"`
	APIKeySource      string      `json:"apiKeySource"`
	ClaudeCodeVersion string      `json:"claude_code_version"`
	OutputStyle       string      `json:"output_style"`
	Agents            []string    `json:"agents"`
	Skills            []string    `json:"skills"`
	Plugins           []Plugin    `json:"plugins"`
	UUID              string      `json:"uuid"`
	// GantryVersion is Gantry's own version (claude_code_version carries
	// it too, since the SDK reads that field).
	GantryVersion string `json:"gantry_version"`
}

// MCPServer is an MCP server's entry in system/init and mcp_status.
type MCPServer struct {
	Name   string `json:"name"`
	Status string `json:"status"`
}

// Plugin is a plugin's entry in system/init (Gantry loads none).
type Plugin struct {
	Name string `json:"name"`
	Path string `json:"path"`
}

// APIMessage is an assistant message in the Messages API's shape.
type APIMessage struct {
	ID           string     `json:"id"`
	Type         string     `json:"type"` // "message"
	Role         string     `json:"role"` // "assistant"
	Model        string     `json:"model"`
	Content      []Block    `json:"content"`
	StopReason   *string    `json:"stop_reason"`
	StopSequence *string    `json:"stop_sequence"`
	Usage        UsageShape `json:"usage"`
}

// UsageShape is token usage in the Messages API's shape, with every count
// present.
type UsageShape struct {
	InputTokens              int          `json:"input_tokens"`
	CacheCreationInputTokens int          `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int          `json:"cache_read_input_tokens"`
	OutputTokens             int          `json:"output_tokens"`
	ServerToolUse            *ServerTools `json:"server_tool_use,omitempty"`
	ServiceTier              string       `json:"service_tier,omitempty"`
}

// ServerTools counts server-side tool uses in a result's usage.
type ServerTools struct {
	WebSearchRequests int `json:"web_search_requests"`
	WebFetchRequests  int `json:"web_fetch_requests"`
}

func usageShape(u llm.Usage) UsageShape {
	return UsageShape{InputTokens: u.InputTokens, CacheCreationInputTokens: u.CacheCreationInputTokens,
		CacheReadInputTokens: u.CacheReadInputTokens, OutputTokens: u.OutputTokens}
}

// Assistant is an assistant message: one content block of a model reply
// (a reply of several blocks is several messages sharing message.id, as
// the reference agent streams them).
type Assistant struct {
	Type            string     `json:"type"` // "assistant"
	Message         APIMessage `json:"message"`
	ParentToolUseID *string    `json:"parent_tool_use_id"`
	UUID            string     `json:"uuid"`
	SessionID       string     `json:"session_id"`
}

// UserParam is a user message in the Messages API's shape.
type UserParam struct {
	Role    string  `json:"role"` // "user"
	Content []Block `json:"content"`
}

// User is a user message: a tool result (one per message, with the
// tool's own result in ToolUseResult) or text Gantry adds to the
// conversation.
type User struct {
	Type            string    `json:"type"` // "user"
	Message         UserParam `json:"message"`
	ParentToolUseID *string   `json:"parent_tool_use_id"`
	// ToolUseResult is the tool's structured result (the text of the
	// result when the tool has none).
	ToolUseResult any    `json:"tool_use_result,omitempty"`
	UUID          string `json:"uuid"`
	SessionID     string `json:"session_id"`
	// IsReplay marks the prompt written back with ReplayUser (the SDK's
	// SDKUserMessageReplay).
	IsReplay bool `json:"isReplay,omitempty"`
}

// StreamEventMessage is a stream_event message: one raw event of the
// model's stream (--include-partial-messages).
type StreamEventMessage struct {
	Type            string  `json:"type"` // "stream_event"
	Event           any     `json:"event"`
	ParentToolUseID *string `json:"parent_tool_use_id"`
	UUID            string  `json:"uuid"`
	SessionID       string  `json:"session_id"`
}

// ModelUsage is a model's entry in a result's modelUsage.
type ModelUsage struct {
	InputTokens              int     `json:"inputTokens"`
	OutputTokens             int     `json:"outputTokens"`
	CacheReadInputTokens     int     `json:"cacheReadInputTokens"`
	CacheCreationInputTokens int     `json:"cacheCreationInputTokens"`
	WebSearchRequests        int     `json:"webSearchRequests"`
	CostUSD                  float64 `json:"costUSD"`
	ContextWindow            int     `json:"contextWindow"`
	MaxOutputTokens          int     `json:"maxOutputTokens"`
}

// PermissionDenial is a call the permission layer or the user denied.
type PermissionDenial struct {
	ToolName  string          `json:"tool_name"`
	ToolUseID string          `json:"tool_use_id"`
	ToolInput json.RawMessage `json:"tool_input"`
}

// The result subtypes of the SDK.
const (
	ResultSuccess              = "success"
	ResultErrorMaxTurns        = "error_max_turns"
	ResultErrorMaxBudgetUSD    = "error_max_budget_usd"
	ResultErrorDuringExecution = "error_during_execution"
	// ResultErrorMaxStructuredOutputRetries: the model never gave an
	// answer matching the output schema.
	ResultErrorMaxStructuredOutputRetries = "error_max_structured_output_retries"
)

// Result ends every turn. A success carries Result; an error carries
// Errors. GantrySubtype is Gantry's precise reason when it differs from
// Subtype (an interrupt, a blocked prompt, a token budget, a repeated
// tool failure all map to error_during_execution).
type Result struct {
	Type              string                `json:"type"` // "result"
	Subtype           string                `json:"subtype"`
	IsError           bool                  `json:"is_error"`
	DurationMS        int64                 `json:"duration_ms"`
	DurationAPIMS     int64                 `json:"duration_api_ms"`
	NumTurns          int                   `json:"num_turns"`
	Result            *string               `json:"result,omitempty"`
	StopReason        *string               `json:"stop_reason"`
	SessionID         string                `json:"session_id"`
	TotalCostUSD      float64               `json:"total_cost_usd"`
	Usage             UsageShape            `json:"usage"`
	ModelUsage        map[string]ModelUsage `json:"modelUsage"`
	PermissionDenials []PermissionDenial    `json:"permission_denials"`
	// StructuredOutput is the answer of a run with an output schema.
	StructuredOutput json.RawMessage `json:"structured_output,omitempty"`
	Errors           []string        `json:"errors,omitempty"`
	TerminalReason   string          `json:"terminal_reason,omitempty"`
	UUID             string          `json:"uuid"`
	GantrySubtype    string          `json:"gantry_subtype,omitempty"`
}

// Informational is a system/informational message: a notice for the user
// that is not part of the conversation (a hook's message, a repeated-error
// signal, a repaired transcript).
type Informational struct {
	Type      string `json:"type"`    // "system"
	Subtype   string `json:"subtype"` // "informational"
	Content   string `json:"content"`
	Level     string `json:"level"`
	UUID      string `json:"uuid"`
	SessionID string `json:"session_id"`
}

// CompactBoundary says older turns were replaced by a summary.
type CompactBoundary struct {
	Type            string          `json:"type"`    // "system"
	Subtype         string          `json:"subtype"` // "compact_boundary"
	CompactMetadata CompactMetadata `json:"compact_metadata"`
	UUID            string          `json:"uuid"`
	SessionID       string          `json:"session_id"`
}

// CompactMetadata is a compact boundary's detail.
type CompactMetadata struct {
	Trigger   string `json:"trigger"`
	PreTokens int    `json:"pre_tokens"`
}

// APIRetry says a model request is sent again.
type APIRetry struct {
	Type         string `json:"type"`    // "system"
	Subtype      string `json:"subtype"` // "api_retry"
	Attempt      int    `json:"attempt"`
	MaxRetries   int    `json:"max_retries"`
	RetryDelayMS int    `json:"retry_delay_ms"`
	ErrorStatus  *int   `json:"error_status"`
	Error        string `json:"error"`
	UUID         string `json:"uuid"`
	SessionID    string `json:"session_id"`
	// GantryError is the error's text.
	GantryError string `json:"gantry_error,omitempty"`
}

// Status is a system/status message; Gantry sends it when the
// permission mode changes.
type Status struct {
	Type           string    `json:"type"`    // "system"
	Subtype        string    `json:"subtype"` // "status"
	Status         *string   `json:"status"`
	PermissionMode tool.Mode `json:"permissionMode,omitempty"`
	// CompactResult ("success", "failed") and CompactError end a
	// "compacting" status.
	CompactResult string `json:"compact_result,omitempty"`
	CompactError  string `json:"compact_error,omitempty"`
	UUID          string `json:"uuid"`
	SessionID     string `json:"session_id"`
}

// PermissionDenied is the system message written when a tool call was
// denied (a rule, the mode, the program's canUseTool, a person) or blocked
// by a PreToolUse hook: the SDK's SDKPermissionDeniedMessage.
type PermissionDenied struct {
	Type      string `json:"type"`    // "system"
	Subtype   string `json:"subtype"` // "permission_denied"
	ToolName  string `json:"tool_name"`
	ToolUseID string `json:"tool_use_id"`
	// AgentID names the subagent whose call it was ("" = the main agent).
	AgentID string `json:"agent_id,omitempty"`
	// DecisionReasonType is what decided: "rule", "mode", "hook", the
	// permission layer's source otherwise.
	DecisionReasonType string `json:"decision_reason_type,omitempty"`
	DecisionReason     string `json:"decision_reason,omitempty"`
	// Message is the text the model got in the tool result.
	Message   string `json:"message"`
	UUID      string `json:"uuid"`
	SessionID string `json:"session_id"`
}

// TaskUsage is a task's usage in task_* messages.
type TaskUsage struct {
	TotalTokens int   `json:"total_tokens"`
	ToolUses    int   `json:"tool_uses"`
	DurationMS  int64 `json:"duration_ms"`
}

// TaskStarted says a subagent started (SDKTaskStartedMessage).
type TaskStarted struct {
	Type           string `json:"type"`    // "system"
	Subtype        string `json:"subtype"` // "task_started"
	TaskID         string `json:"task_id"`
	ToolUseID      string `json:"tool_use_id,omitempty"`
	Description    string `json:"description"`
	SubagentType   string `json:"subagent_type,omitempty"`
	IsBackgrounded bool   `json:"is_backgrounded"`
	TaskType       string `json:"task_type"` // "local_agent"
	Prompt         string `json:"prompt,omitempty"`
	UUID           string `json:"uuid"`
	SessionID      string `json:"session_id"`
}

// TaskNotification says a task ended (SDKTaskNotificationMessage).
type TaskNotification struct {
	Type       string     `json:"type"`    // "system"
	Subtype    string     `json:"subtype"` // "task_notification"
	TaskID     string     `json:"task_id"`
	ToolUseID  string     `json:"tool_use_id,omitempty"`
	Status     string     `json:"status"` // completed, failed, stopped
	OutputFile string     `json:"output_file"`
	Summary    string     `json:"summary"`
	Usage      *TaskUsage `json:"usage,omitempty"`
	UUID       string     `json:"uuid"`
	SessionID  string     `json:"session_id"`
}
