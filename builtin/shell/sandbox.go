package shell

import (
	"context"

	"github.com/gantry-dev/gantry/sandbox"
	"github.com/gantry-dev/gantry/tool"
)

// sandboxOf returns the session's sandbox ([sandbox.Sandbox] in
// env.Services) when the command is to go through it — contained, or in
// the fallback that has to say once that it is not — and nil when the
// command runs outside it (no sandbox in the session, an excluded command,
// or dangerouslyDisableSandbox honoured: such runs are logged).
func sandboxOf(ctx context.Context, env *tool.Env, in BashInput) *sandbox.Sandbox {
	sb, err := tool.Use[*sandbox.Sandbox](env)
	if err != nil || sb == nil {
		return nil
	}
	if !sb.Contained() {
		if sb.Unavailable() {
			return sb // Wrap changes nothing but says so once
		}
		return nil
	}
	if sb.Runs(in.Command, in.DangerouslyDisableSandbox) {
		return sb
	}
	why := "excluded by sandbox.excludedCommands"
	if in.DangerouslyDisableSandbox && sb.AllowUnsandboxed() {
		why = "dangerouslyDisableSandbox (approved by the permission layer)"
	}
	sb.LogUnsandboxed(ctx, in.Command, why)
	return nil
}
