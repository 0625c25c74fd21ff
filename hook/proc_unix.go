//go:build unix

package hook

import (
	"os/exec"
	"syscall"
)

// setProcessGroup runs the hook in its own process group and kills the
// whole group when the context ends, so children a hook started die with
// it.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
