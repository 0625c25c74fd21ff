//go:build !linux

package sandbox

import (
	"errors"
	"io/fs"
	"os"
)

// fileID identifies a file's last change (modification time only here).
type fileID struct {
	dev, ino     uint64
	ctime, mtime int64
}

func idOf(fi fs.FileInfo) fileID { return fileID{mtime: fi.ModTime().UnixNano()} }

func openPath(string) (*os.File, error) { return nil, errNotLinux }

var errCrossDevice = errors.New("cross-device link")
