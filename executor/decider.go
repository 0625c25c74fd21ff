package executor

import (
	"context"

	"github.com/gantry-dev/gantry/permission"
	"github.com/gantry-dev/gantry/tool"
)

// DefaultDecider returns the interim permission decider used when no
// [WithDecider] option is given (the permission package's rules replace it):
//
//   - a deny from the tool's own check or from a PreToolUse hook denies, in
//     every mode;
//   - bypassPermissions allows everything else;
//   - plan denies every call that is not read-only;
//   - a hook's or the tool's ask asks; a hook's allow allows;
//   - a read-only call is allowed; a tool's allow allows;
//   - anything else asks (dontAsk turns that ask into a deny).
//
// An Ask is then answered by the [permission.CanUseTool] callback, or denied
// when there is none (see [WithCanUseTool]).
func DefaultDecider() permission.Decider {
	return permission.DeciderFunc(defaultDecide)
}

func defaultDecide(_ context.Context, req *permission.Request) (permission.Decision, error) {
	mode := tool.ModeDefault
	if req.Env != nil && req.Env.Mode != "" {
		mode = req.Env.Mode
	}
	tc := req.ToolCheck
	switch {
	case tc.Behavior == tool.Deny:
		return permission.Decision{Behavior: tool.Deny, Reason: firstNonEmpty(tc.Reason, "the tool refused this input"), Source: "tool"}, nil
	case req.HookVerdict == tool.Deny:
		return permission.Decision{Behavior: tool.Deny, Reason: firstNonEmpty(req.HookReason, "a PreToolUse hook denied the call"), Source: "hook"}, nil
	case mode == tool.ModeBypassPermissions:
		return permission.Decision{Behavior: tool.Allow, Source: "mode", UpdatedInput: allowInput(tc)}, nil
	case mode == tool.ModePlan && !req.Traits.ReadOnly:
		return permission.Decision{Behavior: tool.Deny, Source: "mode",
			Reason: "plan mode allows only read-only tools; finish the plan and ask the user to leave plan mode before making changes"}, nil
	}
	var d permission.Decision
	switch {
	case tc.Behavior == tool.Ask:
		d = permission.Decision{Behavior: tool.Ask, Reason: tc.Reason, Source: "tool"}
	case req.HookVerdict == tool.Ask:
		d = permission.Decision{Behavior: tool.Ask, Reason: req.HookReason, Source: "hook"}
	case req.HookVerdict == tool.Allow:
		return permission.Decision{Behavior: tool.Allow, Reason: req.HookReason, Source: "hook", UpdatedInput: allowInput(tc)}, nil
	case req.Traits.ReadOnly || tc.Behavior == tool.Allow:
		return permission.Decision{Behavior: tool.Allow, Source: "default", UpdatedInput: allowInput(tc)}, nil
	default:
		d = permission.Decision{Behavior: tool.Ask, Reason: req.Name + " changes things outside this conversation and needs approval", Source: "default"}
	}
	if mode == tool.ModeDontAsk {
		d.Behavior = tool.Deny
		d.Source = "mode"
		d.Reason = firstNonEmpty(d.Reason, "this call needs approval") + "; the session does not ask for approval (dontAsk mode)"
	}
	return d, nil
}

func allowInput(tc tool.PermissionResult) []byte {
	if tc.Behavior == tool.Allow {
		return tc.UpdatedInput
	}
	return nil
}
