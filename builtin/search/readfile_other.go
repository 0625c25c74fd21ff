//go:build !unix

package search

import (
	"os"
	"time"
)

// openFile is a file opened by readFile.
type openFile struct{ f *os.File }

// readFile reads the regular file ent into w's buffer. ok is false when the file is not regular,
// cannot be read, or is larger than max; otherwise the caller closes f.
func readFile(w *worker, ent fileEntry, max int64) (openFile, []byte, bool) {
	f, err := os.Open(ent.path())
	if err != nil {
		return openFile{}, nil, false
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > max {
		f.Close()
		return openFile{}, nil, false
	}
	buf, ok := readInto(w, f, fi.Size(), max)
	if !ok {
		f.Close()
		return openFile{}, nil, false
	}
	return openFile{f}, buf, true
}

// modTime returns the open file's modification time.
func (f openFile) modTime() time.Time {
	fi, err := f.f.Stat()
	if err != nil {
		return time.Time{}
	}
	return fi.ModTime()
}

func (f openFile) close() { f.f.Close() }
