package streamjson

import (
	"encoding/json"

	"github.com/gantry-dev/gantry/agent"
	"github.com/gantry-dev/gantry/tool"
)

// ToolProgressMessage is the SDK's tool_progress message, written with
// [WriterOptions.ToolProgress] for each status event of a tool call: while the
// model still writes its input (WAIT, with the input repaired into JSON so
// far), while it runs (DOING, with its latest progress line) and when it
// ends (SUCCESS or ERROR). The SDK's fields come first; the gantry_
// fields are Gantry's.
type ToolProgressMessage struct {
	Type               string  `json:"type"` // "tool_progress"
	ToolUseID          string  `json:"tool_use_id"`
	ToolName           string  `json:"tool_name"`
	ParentToolUseID    *string `json:"parent_tool_use_id"`
	ElapsedTimeSeconds float64 `json:"elapsed_time_seconds"`
	UUID               string  `json:"uuid"`
	SessionID          string  `json:"session_id"`
	// Status is the call's phase: WAIT, DOING, SUCCESS or ERROR.
	Status      tool.Phase      `json:"gantry_status"`
	Input       json.RawMessage `json:"gantry_input,omitempty"`
	Description string          `json:"gantry_description,omitempty"`
	Progress    string          `json:"gantry_progress,omitempty"`
}

// toolProgress writes the tool_progress message of s (parent is the Agent
// call a subagent's call belongs to, or nil).
func (w *Writer) toolProgress(s tool.Status, parent *string) {
	if !w.opts.ToolProgress || s.ToolUseID == "" {
		return
	}
	m := ToolProgressMessage{Type: "tool_progress", ToolUseID: s.ToolUseID, ToolName: s.Name, ParentToolUseID: parent,
		UUID: w.opts.NewUUID(), SessionID: w.session, Status: s.Phase, Description: s.Description}
	if s.Phase == tool.PhaseWait {
		m.Input = s.Input
	}
	switch {
	case s.Duration > 0:
		m.ElapsedTimeSeconds = s.Duration.Seconds()
	case !s.Start.IsZero():
		m.ElapsedTimeSeconds = w.opts.Now().Sub(s.Start).Seconds()
	}
	if s.Progress != nil {
		m.Progress = s.Progress.Message
	}
	w.send(m)
}

// subagentStatus reports whether ev is a subagent's tool status, and it.
func subagentStatus(ev agent.Event) (tool.Status, bool) {
	if st, ok := ev.(*agent.ToolStatus); ok {
		return st.Status, true
	}
	return tool.Status{}, false
}
