package shell

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/gantry-dev/gantry/internal/outbuf"
	"github.com/gantry-dev/gantry/sandbox"
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
	// trackCwd makes the shell report `pwd -P` when it exits normally, on
	// a pipe (file descriptor [cwdFD] of the shell), read by [proc.cwd].
	trackCwd bool
	grace    time.Duration
	// wrap, if set, contains the command before it starts (the session's
	// sandbox); its release function runs once the shell has exited.
	wrap func(cmd *exec.Cmd) (release func(), err error)
	// reverted, if set, receives the protected paths the sandbox
	// reverted after the command (filled by wrap's release).
	reverted *[]sandbox.Reverted
	// supervise runs the command under a supervisor ([sandbox.Supervise])
	// so that every process it starts dies with it, also when this process
	// is killed. False only under bubblewrap, whose pid namespace and
	// --die-with-parent already hold.
	supervise bool
	// ledger, if set, records the running command so that a later process
	// can kill what it left if this one dies ([sandbox.ReapLedger]).
	ledger *sandbox.Ledger
}

// needsSupervisor reports whether a command run through sb (nil: outside
// any sandbox) needs a supervisor: everywhere but under bubblewrap.
func needsSupervisor(sb *sandbox.Sandbox) bool {
	return sb == nil || !sb.Contained() || sb.Status().Backend != sandbox.BackendBubblewrap
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
	// cwdR is the read end of the working-directory report (trackCwd).
	cwdR *os.File
	// sup is the command's supervisor (nil: none); supStatus and supOK
	// are the status it reported, set before waitDone is closed.
	sup       *sandbox.Supervision
	supStatus syscall.WaitStatus
	supOK     bool
	// unrecord removes the command's ledger record.
	unrecord func()
}

// cwdFD is the shell's file descriptor for the working-directory report:
// high, so that scripts' own descriptors (3–9, `exec 9>lock`) never meet it.
const cwdFD = 63

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
	var cwdW *os.File
	if spec.trackCwd && tracksCwd(spec.shell) {
		// The trap runs when the shell exits normally (also through
		// `exit`), not when it is killed: a killed command keeps the old
		// working directory. The report goes to a pipe, not a file: no
		// file in the writable area carries it, and what arrives is
		// checked (one line, the shell exited normally, inside the
		// session's roots) before the session moves.
		r, w, err := os.Pipe()
		if err != nil {
			buf.Close()
			return nil, fmt.Errorf("shell: pipe: %w", err)
		}
		p.cwdR, cwdW = r, w
		script = fmt.Sprintf("trap 'pwd -P >&%d 2>/dev/null' EXIT\n", cwdFD) + script
	}
	cmd := exec.Command(spec.shell, "--noprofile", "--norc", "-c", script)
	if cwdW != nil {
		cmd.ExtraFiles = make([]*os.File, cwdFD-2) // nil entries are closed in the child
		cmd.ExtraFiles[cwdFD-3] = cwdW
		defer cwdW.Close()
	}
	cmd.Dir = spec.dir
	cmd.Env = spec.env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p.release = func() {}
	if spec.wrap != nil {
		release, err := spec.wrap(cmd)
		if err != nil {
			buf.Close()
			p.closeCwd()
			return nil, fmt.Errorf("shell: sandbox: %w", err)
		}
		p.release = release
	}
	if spec.supervise {
		sup, err := sandbox.Supervise(cmd, sandbox.SuperviseOptions{Grace: spec.grace})
		if err != nil {
			buf.Close()
			p.closeCwd()
			p.release()
			return nil, fmt.Errorf("shell: supervisor: %w", err)
		}
		p.sup = sup
	}
	r, w, err := os.Pipe()
	if err != nil {
		buf.Close()
		p.closeCwd()
		p.sup.Started()
		p.sup.Kill()
		p.release()
		return nil, fmt.Errorf("shell: pipe: %w", err)
	}
	cmd.Stdout, cmd.Stderr = w, w // an *os.File: passed to the child as is, no copying goroutine
	err = cmd.Start()
	p.sup.Started()
	if err != nil {
		p.sup.Kill()
		r.Close()
		w.Close()
		buf.Close()
		p.closeCwd()
		p.release()
		return nil, fmt.Errorf("shell: start %s: %w", spec.shell, err)
	}
	w.Close()
	p.cmd, p.pgid, p.readEnd = cmd, cmd.Process.Pid, r
	p.unrecord = func() {}
	if spec.ledger != nil {
		// Best effort: a command that cannot be recorded still runs.
		p.unrecord, _ = spec.ledger.Record(p.pgid, p.pgid)
	}
	go func() {
		defer close(p.readDone)
		buf.ReadFrom(r) //nolint:errcheck // a closed read end ends the copy
	}()
	go func() {
		p.waitErr = cmd.Wait()
		p.supStatus, p.supOK = p.sup.Status()
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
	p.unrecord()
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

// terminate sends SIGTERM to the process group, and waits for the
// command to exit. After the grace period it has the supervisor kill every
// process of the command (and SIGKILLs the group, after another grace
// period if the supervisor does not end, or at once without one).
func (p *proc) terminate() {
	_ = syscall.Kill(-p.pgid, syscall.SIGTERM)
	t := time.NewTimer(p.grace)
	defer t.Stop()
	select {
	case <-p.waitDone:
		return
	case <-t.C:
	}
	if p.sup != nil {
		p.sup.Kill()
		t.Reset(p.grace)
		select {
		case <-p.waitDone:
			return
		case <-t.C:
		}
	}
	_ = syscall.Kill(-p.pgid, syscall.SIGKILL)
	<-p.waitDone
}

// exitStatus returns the exit code and, for a killed shell, the signal.
func (p *proc) exitStatus() (code int, signal string) {
	if p.supOK {
		if ws := p.supStatus; ws.Signaled() {
			return 128 + int(ws.Signal()), ws.Signal().String()
		} else if ws.Exited() {
			return ws.ExitStatus(), ""
		}
	}
	st := p.cmd.ProcessState
	if st == nil {
		return -1, ""
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal()), ws.Signal().String()
	}
	return st.ExitCode(), ""
}

// tracksCwd reports whether shell can write to descriptor [cwdFD] (bash,
// zsh and ksh can; POSIX sh only has 0–9).
func tracksCwd(shell string) bool {
	switch filepath.Base(shell) {
	case "bash", "zsh", "ksh", "mksh":
		return true
	}
	return false
}

// cwd returns the directory the shell reported when it exited, once it has
// been waited for: ok is false when there is no single, complete report
// (the shell was killed, the script replaced the trap, or something else
// wrote to the descriptor). It reads at most a short while: a process that
// escaped the group may still hold the pipe open.
func (p *proc) cwd() (dir string, ok bool) {
	if p.cwdR == nil {
		return "", false
	}
	defer p.closeCwd()
	_ = p.cwdR.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	data, _ := io.ReadAll(io.LimitReader(p.cwdR, 8<<10))
	line, rest, found := strings.Cut(string(data), "\n")
	if !found || rest != "" || line == "" {
		return "", false
	}
	return line, true
}

func (p *proc) closeCwd() {
	if p.cwdR != nil {
		p.cwdR.Close()
	}
}
