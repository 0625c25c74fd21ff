package file

import "golang.org/x/sys/unix"

const (
	oPath     = unix.O_PATH
	oNonblock = unix.O_NONBLOCK
)
