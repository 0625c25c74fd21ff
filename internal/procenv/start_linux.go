package procenv

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// secretsFDVar names the descriptor through which a re-executed process
// receives the credentials.
const secretsFDVar = "GANTRY_SECRETS_FD"

// maxHandOver bounds what goes through the pipe: a pipe holds 64 KB before
// a writer blocks, and nobody reads before the exec.
const maxHandOver = 60 << 10

// Start is the first call of a program whose tools run other processes. On
// Linux, when the environment holds Gantry's own credentials ([Own]), it
// takes their values out of what /proc/<pid>/environ and `ps e` show —
// for every reader, root included —, then does what [Hide] does: moves the
// credentials out of the environment children inherit and makes the
// process non-dumpable. It returns the credentials.
//
// /proc/<pid>/environ shows the bytes of the process's initial environment
// block (on its stack), not the environment Go keeps (the runtime copies
// it at start; os.Unsetenv changes only the copy). Start overwrites the
// credential values in that block with NUL bytes, through /proc/self/mem,
// and checks /proc/self/environ afterwards: microseconds, no second start
// of the program. Only if that is impossible (no /proc, a kernel without
// env_start in /proc/self/stat) does it fall back to re-executing the
// program (/proc/self/exe, same arguments) once without the variables,
// handing their values over a pipe; then Start must run before any other
// goroutine does work that must not happen twice, since on success the
// process image is replaced.
func Start() (*Secrets, error) {
	if fd := os.Getenv(secretsFDVar); fd != "" {
		os.Unsetenv(secretsFDVar)
		got, rerr := receive(fd)
		s, err := Hide()
		for k, v := range got {
			s.m[k] = v
		}
		return s, errors.Join(rerr, err)
	}
	var keep, moved []string
	size, secret := 0, false
	for _, e := range os.Environ() {
		name, val, _ := strings.Cut(e, "=")
		if matchAny(name, Own) {
			moved = append(moved, e)
			size += len(e) + 1
			secret = secret || val != ""
		} else {
			keep = append(keep, e)
		}
	}
	if !secret {
		return Hide()
	}
	serr := scrubEnviron()
	if serr == nil || size > maxHandOver {
		s, err := Hide()
		return s, errors.Join(serr, err)
	}
	err := errors.Join(serr, reexec(keep, moved))
	// Still here: the exec failed. Keep going with the weaker protection.
	s, herr := Hide()
	return s, errors.Join(fmt.Errorf("procenv: re-executing without the credentials failed (%w); they stay readable in /proc/%d/environ to privileged processes", err, os.Getpid()), herr)
}

func reexec(keep, moved []string) error {
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer r.Close()
	_, err = io.WriteString(w, strings.Join(moved, "\x00"))
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	fd := int(r.Fd())
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, 0); err != nil { // survive the exec
		return err
	}
	env := append(keep, secretsFDVar+"="+strconv.Itoa(fd))
	return syscall.Exec("/proc/self/exe", os.Args, env)
}

// receive reads the credentials handed over by the process before the
// exec and closes the descriptor.
func receive(fdText string) (map[string]string, error) {
	fd, err := strconv.Atoi(fdText)
	if err != nil || fd < 3 {
		return nil, fmt.Errorf("procenv: bad %s %q", secretsFDVar, fdText)
	}
	unix.CloseOnExec(fd)
	f := os.NewFile(uintptr(fd), "gantry-secrets")
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxHandOver+1))
	if err != nil {
		return nil, fmt.Errorf("procenv: read the credentials: %w", err)
	}
	out := map[string]string{}
	for _, e := range strings.Split(string(b), "\x00") {
		if name, val, ok := strings.Cut(e, "="); ok && matchAny(name, Own) {
			out[name] = val
		}
	}
	return out, nil
}

// scrubEnviron overwrites the values of the [Own] variables in the
// process's initial environment block with NUL bytes and checks that
// /proc/self/environ no longer shows any of them.
func scrubEnviron() error {
	start, end, err := environBounds()
	if err != nil {
		return err
	}
	mem, err := os.OpenFile("/proc/self/mem", os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("procenv: %w", err)
	}
	defer mem.Close()
	block := make([]byte, end-start)
	if _, err := mem.ReadAt(block, start); err != nil {
		return fmt.Errorf("procenv: read the environment block: %w", err)
	}
	changed := false
	for off := 0; off < len(block); {
		n := bytes.IndexByte(block[off:], 0)
		if n < 0 {
			n = len(block) - off
		}
		entry := block[off : off+n]
		if eq := bytes.IndexByte(entry, '='); eq > 0 && matchAny(string(entry[:eq]), Own) {
			clear(entry[eq+1:])
			changed = true
		}
		off += n + 1
	}
	if changed {
		if _, err := mem.WriteAt(block, start); err != nil {
			return fmt.Errorf("procenv: rewrite the environment block: %w", err)
		}
	}
	shown, err := os.ReadFile("/proc/self/environ")
	if err != nil {
		return fmt.Errorf("procenv: %w", err)
	}
	for _, e := range bytes.Split(shown, []byte{0}) {
		if name, val, ok := bytes.Cut(e, []byte("=")); ok && len(bytes.Trim(val, "\x00")) > 0 && matchAny(string(name), Own) {
			return fmt.Errorf("procenv: %s is still in /proc/self/environ after rewriting it", name)
		}
	}
	return nil
}

// environBounds returns env_start and env_end of /proc/self/stat (fields
// 50 and 51, Linux 3.5 and later).
func environBounds() (int64, int64, error) {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0, 0, fmt.Errorf("procenv: %w", err)
	}
	// The command name (field 2) may hold spaces and parentheses: fields
	// are counted after its last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, errors.New("procenv: unreadable /proc/self/stat")
	}
	f := strings.Fields(string(b[i+1:])) // f[0] is field 3
	if len(f) < 49 {
		return 0, 0, errors.New("procenv: /proc/self/stat has no env_start (kernel older than 3.5)")
	}
	start, err1 := strconv.ParseInt(f[47], 10, 64)
	end, err2 := strconv.ParseInt(f[48], 10, 64)
	if err1 != nil || err2 != nil || start <= 0 || end <= start || end-start > 64<<20 {
		return 0, 0, fmt.Errorf("procenv: bad environment bounds %q %q in /proc/self/stat", f[47], f[48])
	}
	return start, end, nil
}
