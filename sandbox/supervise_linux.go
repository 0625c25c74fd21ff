//go:build linux

package sandbox

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

const superviseSupported = true

// supervisor is this process's state when it was started as a supervisor
// (see [Supervise]).
type supervisor struct {
	ctl   int
	grace time.Duration
	// mu orders starting the command against the parent's death: once
	// abandoned is set no command starts.
	mu        sync.Mutex
	abandoned bool
	termOnce  sync.Once
	// gone is closed when the parent died; term receives once the grace
	// period after a SIGTERM passed.
	gone    chan struct{}
	term    chan struct{}
	sigchld chan os.Signal
}

// activeSupervisor is set in a sandbox helper that was also asked to
// supervise (the supervision folded into the Landlock helper): the helper
// starts its command through [execCommand] and ends through [endHelper].
// It is set once, first thing in [Main], in that process only.
var activeSupervisor atomic.Pointer[supervisor]

// superviseMain runs the supervisor when this process was started as one;
// otherwise it returns at once. Alone, it runs the command and exits; folded
// into the sandbox helper it only prepares and returns.
func superviseMain() {
	v, ok := os.LookupEnv(superviseEnv)
	if !ok {
		return
	}
	os.Unsetenv(superviseEnv)
	spec, err := decodeSuperviseSpec(v)
	if err != nil {
		fmt.Fprintf(os.Stderr, "gantry supervisor: bad spec: %v\n", err)
		os.Exit(126)
	}
	sv, err := startSupervisor(spec)
	if err != nil {
		fmt.Fprintf(os.Stderr, "gantry supervisor: %v\n", err)
		os.Exit(126)
	}
	if len(spec.Args) == 0 {
		activeSupervisor.Store(sv)
		return
	}
	exit(sv.run(spec.Args, os.Environ()))
}

// exit ends the supervisor at once: syscall.Exit, not os.Exit, which in a
// race-enabled build (tests) would sleep a second first.
func exit(code int) { syscall.Exit(code) }

// startSupervisor makes this process a child subreaper and starts watching
// the control pipe (the parent's death) and termination signals.
func startSupervisor(spec *superviseSpec) (*supervisor, error) {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return nil, fmt.Errorf("subreaper: %w", err)
	}
	if _, err := unix.FcntlInt(uintptr(spec.Ctl), unix.F_SETFD, unix.FD_CLOEXEC); err != nil {
		return nil, fmt.Errorf("control pipe: %w", err)
	}
	sv := &supervisor{ctl: spec.Ctl, grace: time.Duration(spec.GraceMS) * time.Millisecond,
		gone: make(chan struct{}), term: make(chan struct{}, 1), sigchld: make(chan os.Signal, 1)}
	signal.Notify(sv.sigchld, syscall.SIGCHLD)
	go sv.watchParent()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	go func() {
		for range sig {
			// The command's process group got the signal too; if it
			// has not ended after the grace period, kill everything.
			sv.termOnce.Do(func() { time.AfterFunc(sv.grace, func() { sv.term <- struct{}{} }) })
		}
	}()
	return sv, nil
}

// watchParent waits until the parent's end of the control pipe is closed
// (the parent died, however, or asked for it), then kills every process
// of the command and exits.
func (sv *supervisor) watchParent() {
	fds := []unix.PollFd{{Fd: int32(sv.ctl)}}
	for {
		n, err := unix.Poll(fds, -1)
		if err == nil && n > 0 && fds[0].Revents&(unix.POLLERR|unix.POLLHUP|unix.POLLNVAL) != 0 {
			break
		}
		if err != nil && !errors.Is(err, unix.EINTR) {
			break
		}
	}
	sv.mu.Lock()
	sv.abandoned = true
	sv.mu.Unlock()
	// No command starts any more. The goroutine that started it kills
	// what it left (from its thread: under Landlock only that thread's
	// domain may signal the command); this one kills too, for the helper
	// that runs the command in another way (the proxy bridge), which
	// Landlock's signal scoping may refuse.
	close(sv.gone)
	for killChildren() > 0 {
		reapAvailable()
		time.Sleep(time.Millisecond)
	}
}

// run starts args as a child and supervises it: it returns (with the
// command's status sent to the parent) once the command and every process
// it started are gone. In the folded helper it runs on the thread the
// restrictions were applied to, so the command inherits them.
func (sv *supervisor) run(args, env []string) int {
	sv.mu.Lock()
	if sv.abandoned {
		exit(1)
	}
	pid, err := syscall.ForkExec(args[0], args, &syscall.ProcAttr{Env: env, Files: []uintptr{0, 1, 2}})
	sv.mu.Unlock()
	if err != nil {
		fmt.Fprintf(os.Stderr, "gantry supervisor: start %s: %v\n", args[0], err)
		sv.report(syscall.WaitStatus(127 << 8))
		return 127
	}
	// Everything below runs on this goroutine, which in the folded
	// helper is locked to the restricted thread: its kills are allowed
	// by Landlock's signal scoping.
	var status syscall.WaitStatus
	done, killing := false, false
	tick := time.NewTicker(50 * time.Millisecond) // in case a SIGCHLD is missed
	defer tick.Stop()
	for {
		// Reap whatever ended.
		left := true
		for {
			var ws syscall.WaitStatus
			got, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
			if errors.Is(err, syscall.EINTR) {
				continue
			}
			if err != nil {
				left = false // ECHILD: no process of the command is left
				break
			}
			if got <= 0 {
				break
			}
			if got == pid {
				status, done = ws, true
			}
		}
		if !left {
			break
		}
		if done || killing {
			killChildren()
		}
		select {
		case <-sv.sigchld:
		case <-tick.C:
		case <-sv.gone:
			killing = true
			sv.gone = nil
		case <-sv.term:
			killChildren()
		}
	}
	if killing && !done {
		exit(1)
	}
	sv.report(status)
	return 0
}

// finish ends a folded helper whose command ran as a child it has already
// waited for (the proxy bridge): it kills what is left, then reports code.
func (sv *supervisor) finish(code int) int {
	for {
		killChildren()
		var ws syscall.WaitStatus
		if _, err := syscall.Wait4(-1, &ws, 0, nil); err != nil && !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	sv.report(syscall.WaitStatus(code << 8))
	return 0
}

// report sends the command's wait status to the parent.
func (sv *supervisor) report(ws syscall.WaitStatus) {
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], uint32(ws))
	_, _ = unix.Write(sv.ctl, b[:])
}

// execCommand runs the sandbox helper's command: it replaces this process,
// or, when the helper also supervises, runs as its child until every
// process it started is gone (then this process exits).
func execCommand(args, env []string) error {
	if sv := activeSupervisor.Load(); sv != nil {
		exit(sv.run(args, env))
	}
	return syscall.Exec(args[0], args, env)
}

// endHelper is the exit status of a sandbox helper whose command ended
// with code: a supervising helper first kills what the command left.
func endHelper(code int) int {
	if sv := activeSupervisor.Load(); sv != nil {
		return sv.finish(code)
	}
	return code
}

// killChildren sends SIGKILL to every child of this process (zombies
// included, harmlessly) and returns how many there were.
func killChildren() int {
	kids := children()
	for _, k := range kids {
		_ = syscall.Kill(k, syscall.SIGKILL)
	}
	return len(kids)
}

// reapAvailable reaps the children that have ended, without waiting.
func reapAvailable() {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}

// children lists this process's children: from /proc/self/task/*/children,
// or, on kernels without it, by scanning /proc for processes whose parent
// is this one.
func children() []int {
	var out []int
	tasks, _ := os.ReadDir("/proc/self/task")
	found := false
	for _, t := range tasks {
		b, err := os.ReadFile("/proc/self/task/" + t.Name() + "/children")
		if err != nil {
			continue
		}
		found = true
		for _, f := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(f); err == nil {
				out = append(out, n)
			}
		}
	}
	if found {
		return out
	}
	self := os.Getpid()
	for _, st := range allProcs() {
		if st.ppid == self {
			out = append(out, st.pid)
		}
	}
	return out
}

// procStat is what /proc/PID/stat says of a process.
type procStat struct {
	pid, ppid, pgid int
	zombie          bool
	// start is the start time in clock ticks since boot: with the pid it
	// names one process (a pid can be reused, the pair cannot).
	start uint64
}

// readStat reads /proc/PID/stat.
func readStat(pid int) (procStat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, err
	}
	return parseStat(pid, string(b))
}

// parseStat parses a /proc/PID/stat line; the command name may hold any
// character, so the fields are counted from its last ')'.
func parseStat(pid int, s string) (procStat, error) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return procStat{}, errors.New("bad stat")
	}
	// state ppid pgrp session tty tpgid flags minflt cminflt majflt
	// cmajflt utime stime cutime cstime priority nice threads itreal start
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return procStat{}, errors.New("bad stat")
	}
	st := procStat{pid: pid, zombie: f[0] == "Z" || f[0] == "X"}
	var err1, err2, err3 error
	st.ppid, err1 = strconv.Atoi(f[1])
	st.pgid, err2 = strconv.Atoi(f[2])
	st.start, err3 = strconv.ParseUint(f[19], 10, 64)
	if err := errors.Join(err1, err2, err3); err != nil {
		return procStat{}, err
	}
	return st, nil
}

// allProcs reads the stat of every process.
func allProcs() []procStat {
	ents, _ := os.ReadDir("/proc")
	out := make([]procStat, 0, len(ents))
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, err := readStat(pid); err == nil {
			out = append(out, st)
		}
	}
	return out
}

// startTime returns a live process's start time (see [procStat]).
func startTime(pid int) (uint64, error) {
	st, err := readStat(pid)
	return st.start, err
}

// killRecorded kills what is left of a recorded command: the supervisor
// pid (if it is still the process that started at start) and every
// process below it, and every process of its process group pgid that
// started no earlier. It repeats until none is found, up to about a
// second, and returns how many processes it signalled.
func killRecorded(pid int, start uint64, pgid int) int {
	killed := 0
	for round := 0; round < 100; round++ {
		procs := allProcs()
		kids := map[int][]int{}
		byPid := map[int]procStat{}
		for _, st := range procs {
			if st.zombie {
				continue // dead already, waiting for its parent
			}
			kids[st.ppid] = append(kids[st.ppid], st.pid)
			byPid[st.pid] = st
		}
		var targets []int
		if st, ok := byPid[pid]; ok && st.start == start {
			stack := []int{pid}
			for len(stack) > 0 {
				p := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				targets = append(targets, p)
				stack = append(stack, kids[p]...)
			}
		}
		for _, st := range procs {
			if !st.zombie && pgid > 0 && st.pgid == pgid && st.start >= start && st.pid != pid {
				targets = append(targets, st.pid)
			}
		}
		if len(targets) == 0 {
			return killed
		}
		for _, t := range targets {
			if syscall.Kill(t, syscall.SIGKILL) == nil {
				killed++
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	return killed
}
