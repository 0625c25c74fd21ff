package grep

import (
	"errors"
	"io"
	"os"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ripgrepOutput reads ripgrep's standard output on Linux, waking as seldom
// as it can while ripgrep runs. ripgrep writes each file's lines with one
// write, hundreds in a search; a reader woken for each would take a core
// from ripgrep's threads as often. So:
//   - the pipe's read end is non-blocking and kept out of the runtime's
//     poller (whose edge-triggered epoll reports every write), read with
//     plain system calls;
//   - the pipe is enlarged to ripgrepPipeSize when the kernel allows it;
//   - after a read that was short (less than half of what was asked for),
//     the reader pauses for ripgrepPace, or until ripgrep exits, which it
//     learns from a pidfd in the poller: one wake-up per pace while ripgrep
//     runs, and one at its exit, after which it reads straight to the end;
//     a pause after which there was nothing to read doubles the next one,
//     up to ripgrepMaxPace (a files_with_matches search prints a few
//     buffers in all).
//
// Without a large pipe or a pidfd (old kernels) the read end is made
// blocking and every read waits for data, as a plain pipe would.
type ripgrepOutput struct {
	fd   int      // the pipe's read end
	exit *os.File // ripgrep's pidfd, in the poller; nil: not paced
	conn syscall.RawConn
	pace time.Duration // ripgrepPace; 0: the pipe could not be enlarged
	cur  time.Duration // the next pause: pace, doubled after empty reads
	wait bool          // the last read was short: pause first
	// nonblock: the read end is non-blocking (paced).
	nonblock bool
	ended    bool // ripgrep exited
}

// newRipgrepOutput makes the pipe; w is ripgrep's standard output (the
// caller closes it once ripgrep has started).
func newRipgrepOutput() (o *ripgrepOutput, w *os.File, err error) {
	var fds [2]int
	if err := syscall.Pipe2(fds[:], syscall.O_CLOEXEC); err != nil {
		return nil, nil, os.NewSyscallError("pipe2", err)
	}
	o = &ripgrepOutput{fd: fds[0]}
	if size, err := unix.FcntlInt(uintptr(fds[1]), unix.F_SETPIPE_SZ, ripgrepPipeSize); err == nil && size >= ripgrepPipeSize {
		o.pace = ripgrepPace
	}
	return o, os.NewFile(uintptr(fds[1]), "|1"), nil
}

// started is called once ripgrep runs as pid: it sets up the pacing, or
// falls back to blocking reads.
func (o *ripgrepOutput) started(pid int) {
	if o.pace > 0 {
		if fd, err := unix.PidfdOpen(pid, 0); err == nil {
			// Non-blocking, so that os.NewFile puts it in the poller.
			if syscall.SetNonblock(fd, true) == nil {
				f := os.NewFile(uintptr(fd), "pidfd")
				if f.SetReadDeadline(time.Time{}) == nil {
					if c, err := f.SyscallConn(); err == nil && syscall.SetNonblock(o.fd, true) == nil {
						o.exit, o.conn, o.nonblock = f, c, true
						return
					}
				}
				f.Close()
			} else {
				syscall.Close(fd)
			}
		}
	}
	o.blocking()
}

func (o *ripgrepOutput) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for {
		if o.wait && !o.ended {
			o.pause()
		}
		n, err := o.read(p)
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			if o.ended {
				// Someone else holds the write end open (ripgrep
				// starts no process; this is a safety net): wait
				// for data like a plain pipe.
				o.blocking()
			}
			o.wait = true
			o.cur = min(2*o.cur, ripgrepMaxPace)
			continue
		case err != nil:
			return 0, &os.PathError{Op: "read", Path: "ripgrep output", Err: err}
		case n == 0:
			return 0, io.EOF
		}
		o.wait = n < len(p)/2
		o.cur = o.pace
		return n, nil
	}
}

// read reads once. A non-blocking read is a raw system call: it cannot
// block, and a goroutine entering a system call wakes the runtime's
// monitor thread from its deep sleep (all processors idle, as while the
// reader pauses) and resets it to polling every 20 µs, on the core
// ripgrep's threads need.
func (o *ripgrepOutput) read(p []byte) (int, error) {
	if !o.nonblock {
		return syscall.Read(o.fd, p)
	}
	n, _, errno := syscall.RawSyscall(syscall.SYS_READ, uintptr(o.fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}

// pause waits for ripgrep's exit or ripgrepPace, whichever comes first.
func (o *ripgrepOutput) pause() {
	o.wait = false
	if o.exit == nil {
		return // blocking reads
	}
	if o.cur < o.pace {
		o.cur = o.pace
	}
	if o.exit.SetReadDeadline(time.Now().Add(o.cur)) != nil {
		o.unpaced()
		return
	}
	// The first call only starts the wait: the pidfd is then readable
	// once the poller says so (its only event is the exit), so no
	// system call is needed to check it.
	waited := false
	err := o.conn.Read(func(uintptr) bool {
		done := waited
		waited = true
		return done
	})
	switch {
	case err == nil:
		o.ended = true // the pidfd is readable: ripgrep exited
	case !errors.Is(err, os.ErrDeadlineExceeded):
		o.unpaced()
	}
}

// unpaced falls back to blocking reads.
func (o *ripgrepOutput) unpaced() {
	o.exit.Close()
	o.exit, o.conn = nil, nil
	o.blocking()
}

// blocking makes the read end blocking.
func (o *ripgrepOutput) blocking() {
	if syscall.SetNonblock(o.fd, false) == nil {
		o.nonblock = false
	}
}

// Close closes the read end and the pidfd.
func (o *ripgrepOutput) Close() error {
	if o.exit != nil {
		o.exit.Close()
		o.exit = nil
	}
	if o.fd < 0 {
		return nil
	}
	err := syscall.Close(o.fd)
	o.fd = -1
	return err
}

// capStat applies the size cap to the files ripgrep reports (ripgrep runs
// without --max-filesize): it stats them relative to an open descriptor of
// the directory ripgrep ran in, which spares the kernel the walk of the
// directory's own path for each file, asking only for size and
// modification time. On the local file systems completeReads knows (where
// a stat of a file ripgrep has just read is answered from memory) the stat
// is a raw system call: the reader runs right after a pause, when the
// runtime's monitor thread sleeps deeply, and a goroutine entering a
// system call would wake it to poll every 20 µs, on the core ripgrep's
// threads need.
type capStat struct {
	dirfd int // -1: stat absolute paths
	raw   bool
	limit int64
}

func newCapStat(dir string, limit int64) *capStat {
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return &capStat{dirfd: -1, limit: limit}
	}
	return &capStat{dirfd: fd, raw: completeReads(fd), limit: limit}
}

// within reports whether the file at rel (as ripgrep printed it, relative
// to its directory; abs is the same file's absolute path) is within the
// size cap, with its modification time. A file that cannot be stat'ed any
// more is kept.
func (s *capStat) within(rel, abs string) (time.Time, bool) {
	dirfd, name := s.dirfd, rel
	if dirfd < 0 {
		dirfd, name = unix.AT_FDCWD, abs
	}
	var st unix.Statx_t
	var err error
	for {
		if s.raw {
			err = rawStatx(dirfd, name, &st)
		} else {
			err = unix.Statx(dirfd, name, 0, unix.STATX_SIZE|unix.STATX_MTIME, &st)
		}
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return time.Time{}, true
	}
	if st.Mask&(unix.STATX_SIZE|unix.STATX_MTIME) != unix.STATX_SIZE|unix.STATX_MTIME {
		return statCap(abs, s.limit)
	}
	return time.Unix(st.Mtime.Sec, int64(st.Mtime.Nsec)), int64(st.Size) <= s.limit
}

// rawStatx is unix.Statx for size and modification time, following
// symbolic links, as a raw system call (see capStat).
func rawStatx(dirfd int, path string, st *unix.Statx_t) error {
	p, err := unix.BytePtrFromString(path)
	if err != nil {
		return err
	}
	_, _, e := syscall.RawSyscall6(unix.SYS_STATX, uintptr(dirfd), uintptr(unsafe.Pointer(p)), 0,
		uintptr(unix.STATX_SIZE|unix.STATX_MTIME), uintptr(unsafe.Pointer(st)), 0)
	if e != 0 {
		return e
	}
	return nil
}

func (s *capStat) close() {
	if s.dirfd >= 0 {
		unix.Close(s.dirfd)
		s.dirfd = -1
	}
}
