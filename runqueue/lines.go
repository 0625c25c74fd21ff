package runqueue

import (
	"encoding/json"
	"fmt"

	"github.com/gantry-dev/gantry/interaction"
)

// ControlRequest is the event line that announces a pending ask, in the
// shape of stream-json's control requests: Subtype "can_use_tool" for a
// permission ask (with the tool, its input and the suggested rules at the
// top, as clients of the control protocol expect them), "ask" for the other
// kinds. Ask is the full request (the JSON of the interaction package's
// request type of that kind).
type ControlRequest struct {
	Type      string          `json:"type"` // "control_request"
	RequestID string          `json:"request_id"`
	Request   ControlAskField `json:"request"`
}

// ControlAskField is the "request" object of a [ControlRequest].
type ControlAskField struct {
	Subtype        string           `json:"subtype"`
	Kind           interaction.Kind `json:"kind"`
	ToolName       string           `json:"tool_name,omitempty"`
	Input          json.RawMessage  `json:"input,omitempty"`
	ToolUseID      string           `json:"tool_use_id,omitempty"`
	Suggestions    []string         `json:"permission_suggestions,omitempty"`
	DecisionReason string           `json:"decision_reason,omitempty"`
	Ask            any              `json:"ask"`
}

// AskLine is the control_request line announcing a.
func AskLine(a Ask) ControlRequest {
	f := ControlAskField{Subtype: "ask", Kind: a.Kind, Ask: a.Request}
	if p, ok := a.Request.(*interaction.PermissionRequest); ok {
		f.Subtype = "can_use_tool"
		f.ToolName, f.Input, f.ToolUseID = p.ToolName, p.Input, p.ToolUseID
		f.Suggestions, f.DecisionReason = p.Suggestions, p.Reason
	}
	return ControlRequest{Type: "control_request", RequestID: a.ID, Request: f}
}

// AskResolved is the event line that says a pending ask ended: Outcome is
// "answered", "timeout" (denied for want of an answer), "cancelled" (the run
// stopped waiting) or "error".
type AskResolved struct {
	Type      string `json:"type"`    // "system"
	Subtype   string `json:"subtype"` // "ask_resolved"
	RequestID string `json:"request_id"`
	Outcome   string `json:"outcome"`
}

// AskResolvedLine is the line that ends the ask id.
func AskResolvedLine(id, outcome string) AskResolved {
	return AskResolved{Type: "system", Subtype: "ask_resolved", RequestID: id, Outcome: outcome}
}

// CheckAnswer checks the fields of an answer that have a closed set of
// values, so that a bad answer is refused to whoever sent it rather than
// failing the run that waits for it.
func CheckAnswer(a interaction.Answer) error {
	switch v := a.(type) {
	case *interaction.PermissionAnswer:
		switch v.Choice {
		case interaction.AllowOnce, interaction.AllowSession, interaction.AllowAlways, interaction.Deny:
		default:
			return fmt.Errorf("%w: unknown permission choice %q (want allow_once, allow_session, allow_always or deny)", ErrInvalid, v.Choice)
		}
		if len(v.UpdatedInput) > 0 && !json.Valid(v.UpdatedInput) {
			return fmt.Errorf("%w: updated_input is not JSON", ErrInvalid)
		}
	case *interaction.PlanAnswer:
		if v.Mode != "" && !v.Mode.Valid() {
			return fmt.Errorf("%w: unknown mode %q", ErrInvalid, v.Mode)
		}
	case *interaction.ElicitationAnswer:
		switch v.Action {
		case interaction.ElicitAccept, interaction.ElicitDecline, interaction.ElicitCancel:
		default:
			return fmt.Errorf("%w: unknown elicitation action %q", ErrInvalid, v.Action)
		}
	}
	return nil
}

// Notification is the event line of a notification a run sent to the
// person (the PushNotification tool): nothing waits for an answer. A
// console lists it among what needs the person; a follower of the run's
// events may forward it (a webhook, a chat message).
type Notification struct {
	Type    string `json:"type"`    // "system"
	Subtype string `json:"subtype"` // "notification"
	interaction.NotificationRequest
}

// NotificationLine is the line of r.
func NotificationLine(r *interaction.NotificationRequest) Notification {
	return Notification{Type: "system", Subtype: "notification", NotificationRequest: *r}
}
