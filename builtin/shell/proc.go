package shell

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/gantry-dev/gantry/internal/outbuf"
)

// errOutputLimit is the cancellation cause when a command's output reaches
// the hard cap.
var errOutputLimit = errors.New("output limit reached")

// procSpec is what starting one shell process needs.
type procSpec struct {
	shell   string
	command string
	dir     string
	env     []string
	out     outbuf.Options
	// cwdFile, if set, receives `pwd -P` when the shell exits normally.
	cwdFile string
	grace   time.Duration
	// wrap, if set, contains the command before it starts (the session's
	// sandbox); its release function runs once the shell has exited.
	wrap func(cmd *exec.Cmd) (release func(), err error)
}

// proc is one running shell process in its own process group.
type proc struct {
	cmd      *exec.Cmd
	pgid     int
	buf      *outbuf.Buffer
	readEnd  *os.File
	readDone chan struct{}
	waitDone chan struct{}
	waitErr  error
	grace    time.Duration
	// limit is closed when the output limit is reached.
	limit chan struct{}
	// release undoes spec.wrap (kills what the sandbox still holds).
	release func()
}

// startProc starts spec's command: `shell --noprofile --norc -c` in its own
// process group, stdin /dev/null, stdout and stderr on one pipe (so they
// interleave as written) read into a bounded buffer.
func startProc(spec procSpec) (*proc, error) {
	p := &proc{
		readDone: make(chan struct{}),
		waitDone: make(chan struct{}),
		grace:    spec.grace,
		limit:    make(chan struct{}),
	}
	outOpt := spec.out
	userOnLimit := outOpt.OnLimit
	outOpt.OnLimit = func() {
		close(p.limit)
		if userOnLimit != nil {
			userOnLimit()
		}
	}
	buf, err := outbuf.New(outOpt)
	if err != nil {
		return nil, err
	}
	p.buf = buf
	script := spec.command
	if spec.cwdFile != "" {
		// The trap runs when the shell exits normally (also through
		// `exit`), not when it is killed: a killed command keeps the old
		// working directory.
		script = "trap 'pwd -P >| " + shellQuote(spec.cwdFile) + " 2>/dev/null' EXIT\n" + script
	}
	cmd := exec.Command(spec.shell, "--noprofile", "--norc", "-c", script)
	cmd.Dir = spec.dir
	cmd.Env = spec.env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p.release = func() {}
	if spec.wrap != nil {
		release, err := spec.wrap(cmd)
		if err != nil {
			buf.Close()
			return nil, fmt.Errorf("shell: sandbox: %w", err)
		}
		p.release = release
	}
	r, w, err := os.Pipe()
	if err != nil {
		buf.Close()
		return nil, fmt.Errorf("shell: pipe: %w", err)
	}
	cmd.Stdout, cmd.Stderr = w, w // an *os.File: passed to the child as is, no copying goroutine
	if err := cmd.Start(); err != nil {
		r.Close()
		w.Close()
		buf.Close()
		p.release()
		return nil, fmt.Errorf("shell: start %s: %w", spec.shell, err)
	}
	w.Close()
	p.cmd, p.pgid, p.readEnd = cmd, cmd.Process.Pid, r
	go func() {
		defer close(p.readDone)
		buf.ReadFrom(r) //nolint:errcheck // a closed read end ends the copy
	}()
	go func() {
		p.waitErr = cmd.Wait()
		close(p.waitDone)
	}()
	return p, nil
}

// wait waits for the shell to exit, terminating the process group when ctx
// is done or the output limit is reached. After the shell exits every
// process left in its group is killed, so nothing it started outlives it;
// the output is then read to its end (bounded by the grace period, in case a
// process that left the group keeps the pipe open). It returns why the
// command was stopped early (ctx's cause or errOutputLimit), or nil.
func (p *proc) wait(ctx context.Context) (stopped error) {
	select {
	case <-p.waitDone:
	case <-ctx.Done():
		stopped = context.Cause(ctx)
		p.terminate()
	case <-p.limit:
		stopped = errOutputLimit
		p.terminate()
	}
	// Kill what is left of the group (children and grandchildren, also
	// those that ignore SIGTERM), and what the sandbox holds beyond it
	// (setsid, double fork). ESRCH: nothing left.
	_ = syscall.Kill(-p.pgid, syscall.SIGKILL)
	p.release()
	t := time.NewTimer(p.grace)
	select {
	case <-p.readDone:
	case <-t.C:
		// Something outside the group (setsid) holds the pipe open.
		p.readEnd.Close()
		<-p.readDone
	}
	t.Stop()
	p.readEnd.Close()
	if stopped == nil && p.buf.Snapshot().Limited {
		stopped = errOutputLimit
	}
	return stopped
}

// terminate sends SIGTERM to the process group, then SIGKILL after the
// grace period if the shell has not exited, and waits for it to exit.
func (p *proc) terminate() {
	_ = syscall.Kill(-p.pgid, syscall.SIGTERM)
	t := time.NewTimer(p.grace)
	defer t.Stop()
	select {
	case <-p.waitDone:
	case <-t.C:
		_ = syscall.Kill(-p.pgid, syscall.SIGKILL)
		<-p.waitDone
	}
}

// exitStatus returns the exit code and, for a killed shell, the signal.
func (p *proc) exitStatus() (code int, signal string) {
	st := p.cmd.ProcessState
	if st == nil {
		return -1, ""
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal()), ws.Signal().String()
	}
	return st.ExitCode(), ""
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
