//go:build unix

package serveapi

import (
	"errors"
	"syscall"
)

// Alive reports whether a process with that id exists on this host.
func Alive(pid int) bool { return !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) }
