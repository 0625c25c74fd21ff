package agent

import "github.com/gantry-dev/gantry/permission"

type (
	permissionRequest  = permission.Request
	permissionDecision = permission.Decision
)
