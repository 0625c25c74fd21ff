package procenv

import (
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
// re-executes the program (/proc/self/exe, same arguments) once with those
// variables removed, handing their values over a pipe: /proc/<pid>/environ
// and `ps e` show the environment as it was at exec, so only a new exec
// takes the keys out of them — for every reader, root included. In the
// re-executed process (or when re-execution is not possible) it does what
// [Hide] does: move any credential left out of the environment and make
// the process non-dumpable. It returns the credentials.
//
// Start must run before any other goroutine does work that must not
// happen twice: on success the process image is replaced.
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
	if !secret || size > maxHandOver {
		return Hide()
	}
	err := reexec(keep, moved)
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
