package agent

import (
	"github.com/gantry-dev/gantry/hook"
	"github.com/gantry-dev/gantry/permission"
)

type (
	permissionRequest  = permission.Request
	permissionDecision = permission.Decision
)

type (
	hookInput  = hook.Input
	hookOutput = hook.Output
	hookRunner = hook.RunnerFunc
)
