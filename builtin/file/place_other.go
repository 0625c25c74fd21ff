//go:build !linux

package file

import (
	"os"
	"syscall"
)

const (
	oPath     = os.O_RDONLY | syscall.O_NONBLOCK
	oNonblock = syscall.O_NONBLOCK
)
