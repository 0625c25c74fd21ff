//go:build linux

package sandbox

import (
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// fileID identifies a file and its last change: device, inode, and the
// change and modification times (the change time cannot be set back by a
// program).
type fileID struct {
	dev, ino     uint64
	ctime, mtime int64
}

func idOf(fi fs.FileInfo) fileID {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{mtime: fi.ModTime().UnixNano()}
	}
	return fileID{dev: uint64(st.Dev), ino: st.Ino, ctime: st.Ctim.Nano(), mtime: st.Mtim.Nano()}
}

// openPath opens a handle on p itself (O_PATH, no symlink followed) that
// follows it when it is renamed.
func openPath(p string) (*os.File, error) {
	fd, err := unix.Open(p, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), p), nil
}

var errCrossDevice error = syscall.EXDEV
