package search

import (
	"errors"
	"io"
	"os"
	"syscall"
	"time"

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
//     runs, and one at its exit, after which it reads straight to the end.
//
// Without a large pipe or a pidfd (old kernels) the read end is made
// blocking and every read waits for data, as a plain pipe would.
type ripgrepOutput struct {
	fd    int      // the pipe's read end
	exit  *os.File // ripgrep's pidfd, in the poller; nil: not paced
	conn  syscall.RawConn
	pace  time.Duration // ripgrepPace; 0: the pipe could not be enlarged
	wait  bool          // the last read was short: pause first
	ended bool          // ripgrep exited
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
						o.exit, o.conn = f, c
						return
					}
				}
				f.Close()
			} else {
				syscall.Close(fd)
			}
		}
	}
	syscall.SetNonblock(o.fd, false)
}

func (o *ripgrepOutput) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for {
		if o.wait && !o.ended {
			o.pause()
		}
		n, err := syscall.Read(o.fd, p)
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			if o.ended {
				// Someone else holds the write end open (ripgrep
				// starts no process; this is a safety net): wait
				// for data like a plain pipe.
				syscall.SetNonblock(o.fd, false)
			}
			o.wait = true
			continue
		case err != nil:
			return 0, &os.PathError{Op: "read", Path: "ripgrep output", Err: err}
		case n == 0:
			return 0, io.EOF
		}
		o.wait = n < len(p)/2
		return n, nil
	}
}

// pause waits for ripgrep's exit or ripgrepPace, whichever comes first.
func (o *ripgrepOutput) pause() {
	o.wait = false
	if o.exit == nil {
		return // blocking reads
	}
	if o.exit.SetReadDeadline(time.Now().Add(o.pace)) != nil {
		o.unpaced()
		return
	}
	var perr error
	err := o.conn.Read(func(fd uintptr) bool {
		pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		for {
			n, err := unix.Poll(pfd, 0)
			if err == unix.EINTR {
				continue
			}
			perr = err
			return err != nil || n > 0
		}
	})
	switch {
	case perr != nil:
		o.unpaced()
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
	syscall.SetNonblock(o.fd, false)
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
// modification time.
type capStat struct {
	dirfd int // -1: stat absolute paths
	limit int64
}

func newCapStat(dir string, limit int64) *capStat {
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		fd = -1
	}
	return &capStat{dirfd: fd, limit: limit}
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
		if err = unix.Statx(dirfd, name, 0, unix.STATX_SIZE|unix.STATX_MTIME, &st); err != unix.EINTR {
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

func (s *capStat) close() {
	if s.dirfd >= 0 {
		unix.Close(s.dirfd)
		s.dirfd = -1
	}
}
