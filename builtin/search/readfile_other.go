//go:build !unix

package search

import (
	"os"
	"time"
)

// readFile reads the regular file at path into w's buffer. ok is false when
// the file is not regular, cannot be read, or is larger than max.
func readFile(w *worker, path string, max int64) (buf []byte, mtime time.Time, ok bool) {
	f, err := os.Open(path)
	if err != nil {
		return nil, time.Time{}, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > max {
		return nil, time.Time{}, false
	}
	buf, ok = readInto(w, f, fi.Size(), max)
	return buf, fi.ModTime(), ok
}
