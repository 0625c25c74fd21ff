package tool

import (
	"encoding/json"
	"time"
)

// Phase is where a call is in its life: WAIT → DOING → SUCCESS | ERROR.
type Phase string

const (
	// PhaseWait: the model is still streaming the call's input; Input holds
	// the best-effort repaired prefix.
	PhaseWait Phase = "WAIT"
	// PhaseDoing: the call runs (after validation, hooks and permission).
	PhaseDoing Phase = "DOING"
	// PhaseSuccess: the call ended with a result that is not an error.
	PhaseSuccess Phase = "SUCCESS"
	// PhaseError: the call ended with an error result (invalid input,
	// denied, failed, timed out, cancelled).
	PhaseError Phase = "ERROR"
)

// Done reports whether p is a final phase.
func (p Phase) Done() bool { return p == PhaseSuccess || p == PhaseError }

// Status is the merged state of one call so far. Each status event carries a
// full Status, so a UI can render any event without remembering the earlier
// ones.
type Status struct {
	ToolUseID string `json:"tool_use_id"`
	Name      string `json:"name"`
	Phase     Phase  `json:"phase"`
	// Input is the call's input as far as known: a repaired prefix in WAIT,
	// the validated (possibly coerced or rewritten) input after.
	Input json.RawMessage `json:"input,omitempty"`
	// Description is the tool's one-line description of the call, once the
	// input is complete.
	Description string `json:"description,omitempty"`
	// Progress is the latest progress report while DOING.
	Progress *Progress `json:"progress,omitempty"`
	// Result is set in the final phase.
	Result *Result `json:"result,omitempty"`
	// Start is when the call entered DOING; End when it reached a final
	// phase; Duration is End-Start.
	Start    time.Time     `json:"start,omitzero"`
	End      time.Time     `json:"end,omitzero"`
	Duration time.Duration `json:"duration,omitempty"`
}

// StatusFunc receives status events. It is called synchronously from the
// goroutine running the call; it must not block for long.
type StatusFunc func(Status)
