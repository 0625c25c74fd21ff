package streamjson

import (
	"context"
	"encoding/json"

	"github.com/gantry-dev/gantry/agent"
	"github.com/gantry-dev/gantry/interaction"
	"github.com/gantry-dev/gantry/tool"
	"github.com/gantry-dev/gantry/transcript"
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

// NotificationMessage is the system/notification message a session writes
// when the model calls PushNotification ([interaction.NotificationRequest]):
// nothing answers it; the client shows or forwards it.
type NotificationMessage struct {
	Type            string `json:"type"`    // "system"
	Subtype         string `json:"subtype"` // "notification"
	Title           string `json:"title,omitempty"`
	Message         string `json:"message"`
	ToolUseID       string `json:"tool_use_id,omitempty"`
	Agent           string `json:"agent,omitempty"`
	ParentToolUseID string `json:"parent_tool_use_id,omitempty"`
	UUID            string `json:"uuid"`
	SessionID       string `json:"session_id"`
}

// NotifyStream returns a channel that writes notifications to conn as
// [NotificationMessage]s (answered at once, delivered "stream") and passes
// every other request to ch (nil: nobody). A session started with
// Options.PermissionPrompt (the SDK's canUseTool) has it.
func NotifyStream(conn *Conn, ch interaction.Channel) interaction.Channel {
	return interaction.ChannelFunc(func(ctx context.Context, req interaction.Request) (interaction.Answer, error) {
		n, ok := req.(*interaction.NotificationRequest)
		if !ok {
			if ch == nil {
				return interaction.Nobody.Ask(ctx, req)
			}
			return ch.Ask(ctx, req)
		}
		err := conn.Write(NotificationMessage{Type: "system", Subtype: "notification", Title: n.Title, Message: n.Message,
			ToolUseID: n.ToolUseID, Agent: n.Agent, ParentToolUseID: n.ParentToolUseID, UUID: transcript.NewUUID(), SessionID: n.SessionID})
		if err != nil {
			return nil, err
		}
		return &interaction.NotificationAnswer{Delivered: []string{"stream"}}, nil
	})
}
