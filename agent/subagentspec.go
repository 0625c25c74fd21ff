package agent

import (
	"fmt"
	"strings"

	"github.com/gantry-dev/gantry/subagent"
	"github.com/gantry-dev/gantry/tool"
	"github.com/gantry-dev/gantry/toolset"
)

// SubagentTools returns the names of the tools of a parent's pool p that a
// subagent of type def may use: those matching def.Tools (all when empty),
// minus def.DisallowedTools, minus ToolSearch, minus Agent unless canNest.
// Runtimes other than the in-process loop (durable runs) narrow a child's
// pool with it, as the in-process loop does.
func SubagentTools(p *toolset.Pool, def subagent.Definition, canNest bool) []string {
	return childTools(p, def, canNest)
}

// SubagentMode returns the permission mode of a subagent whose type asks
// for def under a parent in mode parent: def when it is not wider than the
// parent's, else the parent's.
func SubagentMode(def, parent tool.Mode) tool.Mode { return childMode(def, parent) }

// SubagentModel returns the model of a subagent: the call's model, else
// its type's; "inherit" (or none) is the parent's, subagent.ModelFast the
// small model (the parent's when there is none).
func SubagentModel(call, def, parent, small string) string {
	model := call
	if model == "" || model == "inherit" {
		model = def
	}
	switch model {
	case "", "inherit":
		return parent
	case subagent.ModelFast:
		return cmpOr(small, parent)
	}
	return model
}

// TaskNotification is the note a parent gets (at its next turn) when a
// background agent ends: its description, type, task id, final status
// (completed, failed, killed) and final reply.
func TaskNotification(description, agentType, taskID, status, text string) string {
	return fmt.Sprintf("<task-notification>\nBackground agent %q (%s, task %s) %s.\n%s\n</task-notification>",
		description, agentType, taskID, status, strings.TrimSpace(text))
}
