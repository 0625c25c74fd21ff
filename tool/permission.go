package tool

import "encoding/json"

// Behavior is a permission verdict.
type Behavior string

const (
	// Passthrough means "no opinion": the next layer decides. It is the zero
	// value.
	Passthrough Behavior = ""
	Allow       Behavior = "allow"
	Ask         Behavior = "ask"
	Deny        Behavior = "deny"
)

// Stricter returns the stricter of two verdicts: deny > ask > allow >
// passthrough.
func Stricter(a, b Behavior) Behavior {
	if rank(b) > rank(a) {
		return b
	}
	return a
}

func rank(b Behavior) int {
	switch b {
	case Deny:
		return 3
	case Ask:
		return 2
	case Allow:
		return 1
	}
	return 0
}

// PermissionResult is a tool's own permission verdict for one input.
type PermissionResult struct {
	Behavior Behavior `json:"behavior,omitempty"`
	// Reason is shown to the user when asking and to the model on deny.
	Reason string `json:"reason,omitempty"`
	// UpdatedInput, when set with Allow, replaces the input of the call.
	UpdatedInput json.RawMessage `json:"updated_input,omitempty"`
}

// Mode is a permission mode. The permission package gives the modes their
// meaning; the tool package only carries them (plan-mode tools change it).
type Mode string

const (
	ModeDefault           Mode = "default"
	ModeAcceptEdits       Mode = "acceptEdits"
	ModePlan              Mode = "plan"
	ModeDontAsk           Mode = "dontAsk"
	ModeBypassPermissions Mode = "bypassPermissions"
)

// Modes lists the permission modes in a stable order.
func Modes() []Mode {
	return []Mode{ModeDefault, ModeAcceptEdits, ModePlan, ModeDontAsk, ModeBypassPermissions}
}

// Wider reports whether m lets more run without asking than other does. The
// order, narrowest first: plan, dontAsk, default (also ""), acceptEdits,
// bypassPermissions. An invalid mode is wider than every valid one, so a
// check that refuses wider modes refuses it too. This is the one home of
// the rule that a child (subagent, trigger, scheduled run) never gets more
// than its parent.
func (m Mode) Wider(other Mode) bool { return m.rank() > other.rank() }

func (m Mode) rank() int {
	switch m {
	case ModePlan:
		return 0
	case ModeDontAsk:
		return 1
	case ModeDefault, "":
		return 2
	case ModeAcceptEdits:
		return 3
	case ModeBypassPermissions:
		return 4
	}
	return 5
}

// Valid reports whether m is one of [Modes] (the empty Mode is not valid; use
// ModeDefault).
func (m Mode) Valid() bool {
	for _, x := range Modes() {
		if m == x {
			return true
		}
	}
	return false
}
