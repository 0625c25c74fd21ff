//go:build !linux

package grep

import (
	"io"
	"os"
	"time"
)

// readDirectory reads the directory at path. Outside Linux the directory is not
// kept open (fd is -1) and files are opened by path.
func readDirectory(_ *worker, path string, _ bool) (fd int, ents []dirEntry, complete bool, err error) {
	des, err := os.ReadDir(path)
	if err != nil && len(des) == 0 {
		return -1, nil, false, err
	}
	ents = make([]dirEntry, len(des))
	for i, d := range des {
		ents[i] = dirEntry{name: d.Name(), typ: d.Type()}
	}
	return -1, ents, false, nil
}

func closeDir(int) {}

// openFile is a file opened by readFile.
type openFile struct{ f *os.File }

// readFile reads the regular file ent into w's buffer. ok is false when the
// file is not regular, cannot be read, or is larger than limit; otherwise
// the caller closes f. Outside Linux the file is always read whole (more
// is false).
func readFile(w *worker, ent fileEntry, limit int64, _ bool) (_ openFile, _ []byte, more, ok bool) {
	f, err := os.Open(ent.path())
	if err != nil {
		return openFile{}, nil, false, false
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > limit {
		f.Close()
		return openFile{}, nil, false, false
	}
	buf, ok := readInto(w, f, fi.Size(), limit)
	if !ok {
		f.Close()
		return openFile{}, nil, false, false
	}
	return openFile{f}, buf, false, true
}

// readMore fills b from the file: more is false at the end of the file.
// ok is false when a read failed.
func (f openFile) readMore(b []byte) (n int, more, ok bool) {
	n, err := io.ReadFull(f.f, b)
	switch err {
	case nil:
		return n, true, true
	case io.EOF, io.ErrUnexpectedEOF:
		return n, false, true
	}
	return n, false, false
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

// readInto reads the whole file into w's buffer. ok is false when the file
// cannot be read or grew past max.
func readInto(w *worker, f *os.File, size, max int64) ([]byte, bool) {
	need := int(size) + 1
	if cap(w.buf) < need {
		w.buf = make([]byte, need+need/8+512)
	}
	buf := w.buf[:cap(w.buf)]
	n := 0
	for {
		m, err := f.Read(buf[n:])
		n += m
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, false
		}
		if n == len(buf) {
			if int64(n) > max {
				return nil, false
			}
			nb := make([]byte, 2*len(buf))
			copy(nb, buf)
			buf = nb
			w.buf = nb
		}
	}
	return buf[:n], true
}
