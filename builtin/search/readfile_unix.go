//go:build unix

package search

import (
	"syscall"
	"time"
)

// readFile reads the regular file at path into w's buffer with plain
// system calls (os.Open would also register the descriptor with the
// runtime poller, a measurable cost per file in a search). ok is false when
// the file is not regular, cannot be read, or is larger than max.
func readFile(w *worker, path string, max int64) (buf []byte, mtime time.Time, ok bool) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NOCTTY, 0)
	for err == syscall.EINTR {
		fd, err = syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NOCTTY, 0)
	}
	if err != nil {
		return nil, time.Time{}, false
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if syscall.Fstat(fd, &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG || st.Size > max {
		return nil, time.Time{}, false
	}
	mtime = time.Unix(int64(st.Mtim.Sec), int64(st.Mtim.Nsec))
	need := int(st.Size) + 1
	if cap(w.buf) < need {
		w.buf = make([]byte, need+need/8+512)
	}
	b := w.buf[:cap(w.buf)]
	n := 0
	for {
		m, err := syscall.Read(fd, b[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, time.Time{}, false
		}
		if m == 0 {
			break
		}
		n += m
		if n == len(b) {
			if int64(n) > max {
				return nil, time.Time{}, false
			}
			nb := make([]byte, 2*len(b))
			copy(nb, b)
			b, w.buf = nb, nb
		}
	}
	return b[:n], mtime, true
}
