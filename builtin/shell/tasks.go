package shell

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"
	"unicode/utf8"
)

// JobStatus is the state of a background task.
type JobStatus string

const (
	TaskRunning   JobStatus = "running"
	TaskCompleted JobStatus = "completed" // exited with status 0
	TaskFailed    JobStatus = "failed"    // exited with another status
	TaskKilled    JobStatus = "killed"    // stopped by TaskStop, Close or the output limit
)

// ErrNoTask is wrapped by errors for an unknown task id.
var ErrNoTask = errors.New("no such task")

// ErrClosed is returned when starting a task after [Jobs.Close].
var ErrClosed = errors.New("shell: task manager closed")

// errStopped is the cancellation cause of a stopped task.
var errStopped = errors.New("stopped")

// JobInfo describes a background task.
type JobInfo struct {
	ID string `json:"id"`
	// Kind is "shell" for a Bash command, or the kind given to [Tasks.Go]
	// ("agent" for a background subagent).
	Kind        string    `json:"kind"`
	Command     string    `json:"command"`
	Description string    `json:"description,omitempty"`
	Status      JobStatus `json:"status"`
	// ExitCode is set once a shell task ended (128+n when killed by signal
	// n); a Go task has none.
	ExitCode *int `json:"exit_code,omitempty"`
	// Note says why a task was killed ("stopped", "output limit reached",
	// "session closed") or why a Go task failed.
	Note       string    `json:"note,omitempty"`
	StartedAt  time.Time `json:"started_at"`
	EndedAt    time.Time `json:"ended_at,omitzero"`
	OutputPath string    `json:"output_path"`
	// OutputBytes is the output's size so far.
	OutputBytes int64 `json:"output_bytes"`
}

// Jobs tracks the background commands of one session (Bash with
// run_in_background). The session owner creates it with [NewJobs], puts it
// in the environment's services with tool.Provide[*shell.Jobs], and calls
// [Jobs.Close] when the session ends: every task still running is then
// killed (its whole process group) and reaped. Output files stay on disk.
// A Jobs is safe for concurrent use.
type Jobs struct {
	mu     sync.Mutex
	tasks  map[string]*task
	order  []string
	closed bool
	wg     sync.WaitGroup

	endMu sync.Mutex
	ended chan struct{} // closed when the next task ends; nil until asked for
	// watchers are called with the final info of every task that ends, by
	// registration number (guarded by endMu).
	watchers map[int]func(JobInfo)
	nextW    int
}

type task struct {
	owner  *Jobs
	mu     sync.Mutex // guards info and readOff
	info   JobInfo
	out    interface{ Len() int64 }
	ctx    context.Context // cancelled to stop the task
	cancel context.CancelCauseFunc
	done   chan struct{}
	onDone func(JobInfo)
	// readOff is where the next TaskOutput read starts.
	readOff int64
	// readMu serialises reads so that two readers never get the same bytes.
	readMu sync.Mutex
}

// NewJobs returns an empty manager of background commands.
func NewJobs() *Jobs { return &Jobs{tasks: make(map[string]*task)} }

func newTaskID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return "b" + hex.EncodeToString(b[:])
}

// start runs spec in the background with its output in a new file in dir.
func (ts *Jobs) start(spec procSpec, dir, command, description string) (JobInfo, error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.closed {
		return JobInfo{}, ErrClosed
	}
	id, path, err := ts.reserve(dir)
	if err != nil {
		return JobInfo{}, err
	}
	spec.out.Path = path
	p, err := startProc(spec)
	if err != nil {
		return JobInfo{}, err
	}
	t := ts.add(id, "shell", command, description, spec.out.Path, p.buf)
	go func() {
		defer ts.wg.Done()
		defer close(t.done)
		stopped := p.wait(t.ctx)
		p.buf.Close()
		code, _ := p.exitStatus()
		var failure error
		if code != 0 {
			failure = fmt.Errorf("exit code %d", code)
		}
		t.end(stopped, failure, &code)
	}()
	return t.snapshot(), nil
}

// reserve picks a new task id and the path of its output file in dir
// (created if needed). Callers hold ts.mu.
func (ts *Jobs) reserve(dir string) (id, path string, err error) {
	id = newTaskID()
	for ts.tasks[id] != nil {
		id = newTaskID()
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", "", fmt.Errorf("task output directory: %w", err)
	}
	return id, filepath.Join(dir, "task-"+id+".txt"), nil
}

// add registers a running task. Callers hold ts.mu; the caller's goroutine
// must call t.end and close t.done, then ts.wg.Done.
func (ts *Jobs) add(id, kind, command, description, outPath string, out interface{ Len() int64 }) *task {
	ctx, cancel := context.WithCancelCause(context.Background())
	t := &task{
		info: JobInfo{
			ID: id, Kind: kind, Command: command, Description: description, Status: TaskRunning,
			StartedAt: time.Now(), OutputPath: outPath,
		},
		owner: ts, out: out, ctx: ctx, cancel: cancel, done: make(chan struct{}),
	}
	ts.tasks[id] = t
	ts.order = append(ts.order, id)
	ts.wg.Add(1)
	return t
}

// end records how a task ended: stopped (TaskStop, Close, output limit),
// failed, or completed.
func (t *task) end(stopped, failure error, code *int) {
	t.cancel(nil)
	t.mu.Lock()
	t.info.ExitCode = code
	t.info.EndedAt = time.Now()
	switch {
	case stopped != nil:
		t.info.Status = TaskKilled
		t.info.Note = stopped.Error()
	case failure != nil:
		t.info.Status = TaskFailed
		if code == nil {
			t.info.Note = failure.Error()
		}
	default:
		t.info.Status = TaskCompleted
	}
	info := t.info
	onDone := t.onDone
	t.mu.Unlock()
	if onDone != nil {
		onDone(info)
	}
	if t.owner != nil {
		t.owner.notify(info)
		t.owner.signalEnded()
	}
}

// Watch calls f with the final info of every task that ends after the
// call (shell commands and [Jobs.Go] tasks alike; [JobInfo.Kind] tells them
// apart), from the ending task's goroutine, after its onDone. f must not
// block for long, must not call Watch or a stop function, and must be
// safe for concurrent use: tasks end
// concurrently. The returned function stops the calls; once it returned,
// f is no longer called. A stream-json front end uses it to announce
// background commands' ends.
func (ts *Jobs) Watch(f func(JobInfo)) (stop func()) {
	ts.endMu.Lock()
	defer ts.endMu.Unlock()
	if ts.watchers == nil {
		ts.watchers = map[int]func(JobInfo){}
	}
	n := ts.nextW
	ts.nextW++
	ts.watchers[n] = f
	return func() {
		ts.endMu.Lock()
		defer ts.endMu.Unlock()
		delete(ts.watchers, n)
	}
}

// notify calls the watchers with info. endMu is held during the calls so
// that a stopped watcher is never called afterwards.
func (ts *Jobs) notify(info JobInfo) {
	ts.endMu.Lock()
	defer ts.endMu.Unlock()
	for _, f := range ts.watchers {
		f(info)
	}
}

// Ended returns a channel that is closed when the next task ends (after
// the call; a task that already ended does not count) — its status is
// final and its onDone has run by then. Each call after that returns a new
// channel. Sleep uses it to wake when background work finishes.
func (ts *Jobs) Ended() <-chan struct{} {
	ts.endMu.Lock()
	defer ts.endMu.Unlock()
	if ts.ended == nil {
		ts.ended = make(chan struct{})
	}
	return ts.ended
}

func (ts *Jobs) signalEnded() {
	ts.endMu.Lock()
	defer ts.endMu.Unlock()
	if ts.ended != nil {
		close(ts.ended)
		ts.ended = nil
	}
}

// Go runs fn as a background task of the given kind ("agent" for a
// subagent), tracked like a shell task: TaskOutput reads what fn writes to
// out (a file in dir), TaskStop and Close cancel fn's context and wait for
// it to return. fn's error makes the task failed (its text is the note); a
// return after cancellation makes it killed. onDone, if not nil, is called
// with the final info once the task ended (from the task's goroutine).
func (ts *Jobs) Go(dir, kind, description string, fn func(ctx context.Context, out io.Writer) error, onDone func(JobInfo)) (JobInfo, error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.closed {
		return JobInfo{}, ErrClosed
	}
	id, path, err := ts.reserve(dir)
	if err != nil {
		return JobInfo{}, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return JobInfo{}, fmt.Errorf("task output: %w", err)
	}
	w := &countingWriter{f: f}
	t := ts.add(id, kind, description, description, path, w)
	t.onDone = onDone
	go func() {
		defer ts.wg.Done()
		defer close(t.done)
		err := runGuarded(t.ctx, w, fn)
		f.Close()
		var stopped error
		if t.ctx.Err() != nil {
			stopped = context.Cause(t.ctx)
		}
		t.end(stopped, err, nil)
	}()
	return t.snapshot(), nil
}

// runGuarded runs fn, turning a panic into an error.
func runGuarded(ctx context.Context, w io.Writer, fn func(context.Context, io.Writer) error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return fn(ctx, w)
}

// countingWriter is the output file of a Go task, safe for concurrent
// writes, with its size.
type countingWriter struct {
	mu sync.Mutex
	f  *os.File
	n  int64
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.f.Write(p)
	w.n += int64(n)
	return n, err
}

func (w *countingWriter) Len() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n
}

func (t *task) snapshot() JobInfo {
	t.mu.Lock()
	defer t.mu.Unlock()
	info := t.info
	info.OutputBytes = t.out.Len()
	return info
}

func (ts *Jobs) get(id string) (*task, error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	t := ts.tasks[id]
	if t == nil {
		return nil, fmt.Errorf("%w: %q", ErrNoTask, id)
	}
	return t, nil
}

// Get returns a task's description.
func (ts *Jobs) Get(id string) (JobInfo, error) {
	t, err := ts.get(id)
	if err != nil {
		return JobInfo{}, err
	}
	return t.snapshot(), nil
}

// List returns every task of the session, oldest first.
func (ts *Jobs) List() []JobInfo {
	ts.mu.Lock()
	ids := append([]string(nil), ts.order...)
	ts.mu.Unlock()
	out := make([]JobInfo, 0, len(ids))
	for _, id := range ids {
		if t, err := ts.get(id); err == nil {
			out = append(out, t.snapshot())
		}
	}
	return out
}

// Stop kills a running task's process group (SIGTERM, then SIGKILL after
// the grace period) and waits until it is reaped. Stopping a task that has
// already ended is not an error; the returned info says how it ended.
func (ts *Jobs) Stop(ctx context.Context, id string) (JobInfo, error) {
	t, err := ts.get(id)
	if err != nil {
		return JobInfo{}, err
	}
	t.cancel(errStopped)
	select {
	case <-t.done:
	case <-ctx.Done():
		return t.snapshot(), context.Cause(ctx)
	}
	return t.snapshot(), nil
}

// Close kills every running task, waits until all are reaped, and refuses
// new tasks. It is idempotent and always returns nil.
func (ts *Jobs) Close() error {
	ts.mu.Lock()
	ts.closed = true
	var all []*task
	for _, t := range ts.tasks {
		all = append(all, t)
	}
	ts.mu.Unlock()
	for _, t := range all {
		t.cancel(errors.New("session closed"))
	}
	ts.wg.Wait()
	return nil
}

// JobRead is the result of reading a task's new output.
type JobRead struct {
	Task JobInfo
	// Head and Tail are the new bytes since the previous read (contiguous
	// when Elided is zero).
	Head, Tail []byte
	Elided     int64
	// New is the number of new bytes.
	New int64
	// WaitTimedOut reports that a blocking read ended because its timeout
	// passed while the task still ran.
	WaitTimedOut bool
}

// maxReadBytes bounds what one read keeps in memory from each end of the
// new output.
const maxReadBytes = 128 << 10

// Read returns the output a task wrote since the previous Read. With block
// it first waits until the task ends, wait passes, or ctx is done.
func (ts *Jobs) Read(ctx context.Context, id string, block bool, wait time.Duration) (JobRead, error) {
	t, err := ts.get(id)
	if err != nil {
		return JobRead{}, err
	}
	var rd JobRead
	if block {
		timer := time.NewTimer(wait)
		select {
		case <-t.done:
		case <-timer.C:
			rd.WaitTimedOut = true
		case <-ctx.Done():
			timer.Stop()
			return JobRead{}, context.Cause(ctx)
		}
		timer.Stop()
	}
	t.readMu.Lock()
	defer t.readMu.Unlock()
	rd.Task = t.snapshot()
	ended := rd.Task.Status != TaskRunning
	f, err := os.Open(rd.Task.OutputPath)
	if err != nil {
		return rd, fmt.Errorf("task output: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return rd, fmt.Errorf("task output: %w", err)
	}
	size := fi.Size()
	t.mu.Lock()
	off := t.readOff
	t.mu.Unlock()
	n := size - off
	if n <= 0 {
		return rd, nil
	}
	if n <= 2*maxReadBytes {
		rd.Head = make([]byte, n)
		if _, err := f.ReadAt(rd.Head, off); err != nil && err != io.EOF {
			return rd, fmt.Errorf("task output: %w", err)
		}
		if !ended {
			// Leave an incomplete last rune for the next read.
			k := len(rd.Head)
			for i := 1; i <= 3 && i <= k; i++ {
				if utf8.RuneStart(rd.Head[k-i]) {
					if !utf8.FullRune(rd.Head[k-i:]) {
						rd.Head = rd.Head[:k-i]
					}
					break
				}
			}
		}
		size = off + int64(len(rd.Head))
	} else {
		rd.Head = make([]byte, maxReadBytes)
		rd.Tail = make([]byte, maxReadBytes)
		if _, err := f.ReadAt(rd.Head, off); err != nil && err != io.EOF {
			return rd, fmt.Errorf("task output: %w", err)
		}
		if _, err := f.ReadAt(rd.Tail, size-maxReadBytes); err != nil && err != io.EOF {
			return rd, fmt.Errorf("task output: %w", err)
		}
		rd.Elided = n - 2*maxReadBytes
	}
	rd.New = size - off
	t.mu.Lock()
	t.readOff = size
	t.mu.Unlock()
	return rd, nil
}
