package sandbox

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// superviseEnv carries a [superviseSpec] to the supervisor (see [Main]).
// It is removed from the environment before the command runs.
const superviseEnv = "_GANTRY_SUPERVISE"

// superviseSpec is what the supervisor needs besides its command.
type superviseSpec struct {
	// Ctl is the supervisor's end of the control pipe (a file descriptor
	// number): the write end of a pipe whose read end only the parent
	// holds. When the parent dies (or closes it) the supervisor kills
	// every process the command started and exits; when the command ends
	// the supervisor writes its wait status there.
	Ctl int `json:"ctl"`
	// GraceMS is how long the supervisor waits, after a SIGTERM, for the
	// command to end before it kills everything.
	GraceMS int64 `json:"grace_ms"`
	// Args is the command (Args[0] an absolute path); empty when the
	// supervisor is folded into the sandbox helper, whose spec has it.
	Args []string `json:"args,omitempty"`
}

// SuperviseOptions configure [Supervise]. The zero value is ready to use.
type SuperviseOptions struct {
	// Helper is the program re-executed as the supervisor (the Gantry
	// binary, which calls [Main]); empty means os.Executable.
	Helper string
	// Grace is how long the supervisor lets the command end after a
	// SIGTERM before it kills every process the command started (default
	// 2 s).
	Grace time.Duration
}

// Supervision is the supervisor of one command (see [Supervise]). Its
// methods are safe to call on nil (an unsupervised command).
type Supervision struct {
	read      *os.File // parent's end: held open while the parent lives
	write     *os.File // the supervisor's end, closed in the parent by Started
	closeRead sync.Once
	closeW    sync.Once
}

// Supervise makes cmd, before it is started, run under a supervisor: this
// program re-executed ([Main]) as a child subreaper — every process the
// command starts, also with setsid or a double fork, stays its descendant —
// that starts the command as its child, and kills every descendant
// (repeating until none is left) when the command ends, when asked to
// ([Supervision.Kill]), when the grace period after a SIGTERM passes, and
// when its parent dies, even by SIGKILL: the parent holds the read end of
// a pipe the supervisor watches, which the kernel closes however the
// parent ends. It costs one re-execution of the program per command.
//
// cmd may already be wrapped by the Landlock backend, whose helper is this
// program too: the supervision is then folded into that helper (no second
// re-execution). A command wrapped by bubblewrap needs no supervisor (its
// pid namespace and --die-with-parent hold) and must not be given one.
//
// cmd keeps its Dir, Env, standard streams and SysProcAttr (give it its
// own process group: the supervisor leads it and the command joins it).
// Call [Supervision.Started] once cmd.Start returned, and
// [Supervision.Status] once cmd.Wait returned. Supervise returns nil (and
// cmd unchanged) when the supervisor cannot run: not on Linux, or a
// program that does not call [Main].
func Supervise(cmd *exec.Cmd, o SuperviseOptions) (*Supervision, error) {
	if !superviseSupported {
		return nil, nil
	}
	if o.Grace <= 0 {
		o.Grace = 2 * time.Second
	}
	folded := slices.ContainsFunc(cmd.Env, func(kv string) bool { return strings.HasPrefix(kv, helperEnv+"=") })
	var helper, prog string
	if !folded {
		var err error
		if helper, err = helperPath(o.Helper); err != nil {
			return nil, nil
		}
		if prog, err = programPath(cmd); err != nil {
			return nil, err
		}
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	spec := &superviseSpec{Ctl: 3 + len(cmd.ExtraFiles), GraceMS: o.Grace.Milliseconds()}
	cmd.ExtraFiles = append(cmd.ExtraFiles, w)
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	env = slices.Clone(env)
	if !folded {
		spec.Args = append([]string{prog}, cmd.Args[1:]...)
		cmd.Path, cmd.Args, cmd.Err = helper, []string{helper}, nil
	}
	b, _ := json.Marshal(spec)
	cmd.Env = append(env, superviseEnv+"="+base64.RawURLEncoding.EncodeToString(b))
	return &Supervision{read: r, write: w}, nil
}

// Started closes the parent's copy of the supervisor's end of the control
// pipe; call it once cmd.Start returned (whether it succeeded or not).
func (s *Supervision) Started() {
	if s != nil {
		s.closeW.Do(func() { s.write.Close() })
	}
}

// Kill asks the supervisor to kill every process of the command at once
// and exit; the command's status is then unknown. It is safe to call
// concurrently with [Supervision.Status], and more than once.
func (s *Supervision) Kill() {
	if s != nil {
		s.closeRead.Do(func() { s.read.Close() })
	}
}

// Status returns the command's wait status as the supervisor reported it
// when it exited; ok is false when it reported none (it was killed, or
// [Supervision.Kill] was called). Call it once cmd.Wait returned; it
// releases the control pipe.
func (s *Supervision) Status() (ws syscall.WaitStatus, ok bool) {
	if s == nil {
		return 0, false
	}
	defer s.Kill()
	var b [4]byte
	n, _ := s.read.Read(b[:])
	if n != len(b) {
		return 0, false
	}
	return syscall.WaitStatus(binary.LittleEndian.Uint32(b[:])), true
}

func decodeSuperviseSpec(v string) (*superviseSpec, error) {
	b, err := base64.RawURLEncoding.DecodeString(v)
	if err != nil {
		return nil, err
	}
	var s superviseSpec
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, err
	}
	if s.Ctl < 3 {
		return nil, errors.New("bad control descriptor")
	}
	return &s, nil
}
