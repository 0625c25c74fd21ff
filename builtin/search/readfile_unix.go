//go:build unix

package search

import (
	"syscall"
	"time"
)

// openFile is a file opened by readFile.
type openFile struct{ fd int }

// readFile opens the file ent (relative to its open directory, else by path) and reads it
// into w's buffer with plain system calls: os.Open would also register the
// descriptor with the runtime poller, and a path would make the kernel walk
// every component again, both measurable costs per file in a search. There
// is no fstat: the walk knows the entry is a regular file, and the size cap
// is enforced while reading (a file that fills the buffer is stat'ed once to
// size the next one; O_NONBLOCK keeps a FIFO swapped in meanwhile
// from blocking the open; its read then fails). ok is false when the file
// cannot be read or is larger than limit; otherwise the caller closes f.
func readFile(w *worker, ent fileEntry, limit int64) (f openFile, buf []byte, ok bool) {
	const flags = syscall.O_RDONLY | syscall.O_CLOEXEC | syscall.O_NOCTTY | syscall.O_NONBLOCK
	var (
		fd  int
		err error
	)
	for {
		if ent.dir.f != nil {
			fd, err = syscall.Openat(ent.dir.fd, ent.name, flags, 0)
		} else {
			fd, err = syscall.Open(ent.path(), flags, 0)
		}
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return openFile{}, nil, false
	}
	if cap(w.buf) < minBuffer {
		w.buf = make([]byte, minBuffer)
	}
	b := w.buf[:cap(w.buf)]
	n := 0
	for {
		m, err := syscall.Read(fd, b[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			syscall.Close(fd)
			return openFile{}, nil, false
		}
		if m == 0 {
			break
		}
		n += m
		if int64(n) > limit {
			syscall.Close(fd)
			return openFile{}, nil, false
		}
		if n == len(b) {
			// A large file: size the buffer once (the size may be
			// stale; reading goes on until EOF either way).
			size := 2 * int64(len(b))
			var st syscall.Stat_t
			if syscall.Fstat(fd, &st) == nil && st.Size >= int64(n) {
				size = max(size, min(st.Size, limit)+1)
			}
			nb := make([]byte, size)
			copy(nb, b[:n])
			b, w.buf = nb, nb
		}
	}
	return openFile{fd}, b[:n], true
}

// modTime returns the open file's modification time.
func (f openFile) modTime() time.Time {
	var st syscall.Stat_t
	if syscall.Fstat(f.fd, &st) != nil {
		return time.Time{}
	}
	return time.Unix(int64(st.Mtim.Sec), int64(st.Mtim.Nsec))
}

func (f openFile) close() { syscall.Close(f.fd) }
