//go:build !unix

package hook

import "os/exec"

// setProcessGroup: without process groups only the hook's own process is
// killed on timeout.
func setProcessGroup(cmd *exec.Cmd) {}
