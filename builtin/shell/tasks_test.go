package shell

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/tool/tooltest"

	"github.com/gantry-dev/gantry/tool"
)

func TestBackgroundTask(t *testing.T) {
	tasks := NewJobs()
	defer tasks.Close()
	env := testEnv(t, tasks)
	bash, out, stop := NewBash(Options{}), NewTaskOutput(Options{}), NewTaskStop(Options{})

	// The task waits for a file before finishing, so reads are incremental
	// without relying on timing.
	gate := env.WorkDir + "/gate"
	r := tooltest.Call(t, bash, env, map[string]any{
		"command":           "echo one; echo two >&2; while [ ! -e gate ]; do sleep 0.01; done; echo three; exit 4",
		"run_in_background": true,
	})
	bo := structured[BashOutput](t, r)
	if r.IsError || bo.TaskID == "" || !strings.Contains(r.TextContent(), bo.TaskID) {
		t.Fatalf("start: %q", r.TextContent())
	}
	id := bo.TaskID

	// Wait (bounded) until the first two lines are written, then read them
	// without blocking.
	var got string
	for range 500 {
		r = tooltest.Call(t, out, env, map[string]any{"task_id": id, "block": false})
		to := structured[TaskOutputResult](t, r)
		// Each read returns the new output without its final newline, so
		// the two lines may come in one read or two.
		if got != "" && to.Output != "" {
			got += "\n"
		}
		got += to.Output
		if strings.Contains(got, "two") {
			if to.Task.Status != TaskRunning {
				t.Fatalf("status %s", to.Task.Status)
			}
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got != "one\ntwo" {
		t.Fatalf("first read %q", got)
	}
	// Blocking with a short timeout while it still runs.
	r = tooltest.Call(t, out, env, map[string]any{"task_id": id, "timeout": 100})
	if to := structured[TaskOutputResult](t, r); to.Output != "" || to.Task.Status != TaskRunning || !strings.Contains(r.TextContent(), "still running") {
		t.Fatalf("blocking read with timeout: %q", r.TextContent())
	}
	// Open the gate; a blocking read returns the rest once it ends.
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r = tooltest.Call(t, out, env, map[string]any{"task_id": id, "timeout": 10000})
	to := structured[TaskOutputResult](t, r)
	if to.Output != "three" || to.Task.Status != TaskFailed || to.Task.ExitCode == nil || *to.Task.ExitCode != 4 {
		t.Fatalf("final read %q %+v", r.TextContent(), to.Task)
	}
	// Nothing new afterwards.
	r = tooltest.Call(t, out, env, map[string]any{"task_id": id, "block": false})
	if !strings.Contains(r.TextContent(), "(no new output)") {
		t.Fatalf("read after end: %q", r.TextContent())
	}
	// The aliases' shapes: TaskStop on an ended task says so, with shell_id.
	r = tooltest.Call(t, stop, env, map[string]any{"shell_id": id})
	if r.IsError || !strings.Contains(r.TextContent(), "already ended") {
		t.Fatalf("stop ended task: %q", r.TextContent())
	}
	// Unknown ids are error results naming the known ones.
	r = tooltest.Call(t, out, env, map[string]any{"task_id": "nope", "block": false})
	if !r.IsError || !strings.Contains(r.TextContent(), id) {
		t.Fatalf("unknown id: %q", r.TextContent())
	}
	if list := tasks.List(); len(list) != 1 || list[0].ID != id || list[0].Command == "" {
		t.Fatalf("List = %+v", list)
	}
}

func TestTaskStopKillsTree(t *testing.T) {
	tasks := NewJobs()
	defer tasks.Close()
	env := testEnv(t, tasks)
	bash := NewBash(Options{Grace: 300 * time.Millisecond})
	r := tooltest.Call(t, bash, env, map[string]any{
		"command":           "echo $$; (trap '' TERM; sleep 100) & sleep 100 & wait",
		"run_in_background": true,
	})
	id := structured[BashOutput](t, r).TaskID
	pgid := readPgid(t, tasks, id)
	r = tooltest.Call(t, NewTaskStop(Options{}), env, map[string]any{"task_id": id})
	if r.IsError || !strings.Contains(r.TextContent(), "Stopped task "+id) || !strings.Contains(r.TextContent(), "killed") {
		t.Fatalf("stop: %q", r.TextContent())
	}
	waitGone(t, pgid)
	info, _ := tasks.Get(id)
	if info.Status != TaskKilled || info.EndedAt.IsZero() {
		t.Fatalf("info %+v", info)
	}
}

// readPgid reads the first output line of a task (its shell's pid, which is
// its process group), waiting for it to appear.
func readPgid(t *testing.T, tasks *Jobs, id string) int {
	t.Helper()
	var got string
	for range 500 {
		rd, err := tasks.Read(context.Background(), id, false, 0)
		if err != nil {
			t.Fatal(err)
		}
		got += string(rd.Head)
		if strings.Contains(got, "\n") {
			return firstInt(t, got)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no pid from task %s: %q", id, got)
	return 0
}

func TestTasksCloseKillsAll(t *testing.T) {
	tasks := NewJobs()
	env := testEnv(t, tasks)
	bash := NewBash(Options{Grace: 200 * time.Millisecond})
	var pgids []int
	for range 3 {
		r := tooltest.Call(t, bash, env, map[string]any{"command": "echo $$; sleep 100 & (sleep 100 &); wait", "run_in_background": true})
		pgids = append(pgids, readPgid(t, tasks, structured[BashOutput](t, r).TaskID))
	}
	if err := tasks.Close(); err != nil {
		t.Fatal(err)
	}
	for _, g := range pgids {
		waitGone(t, g)
	}
	for _, info := range tasks.List() {
		if info.Status != TaskKilled || info.Note != "session closed" {
			t.Errorf("task %+v", info)
		}
	}
	// No new tasks after Close.
	if _, err := tasks.start(procSpec{}, t.TempDir(), "x", ""); !errors.Is(err, ErrClosed) {
		t.Errorf("start after Close: %v", err)
	}
	tasks.Close() // idempotent
}

func TestBackgroundWithoutTasks(t *testing.T) {
	env := testEnv(t, nil)
	r := tooltest.Call(t, NewBash(Options{}), env, map[string]any{"command": "sleep 100", "run_in_background": true})
	if !r.IsError || !strings.Contains(r.TextContent(), "task manager") {
		t.Fatalf("%q", r.TextContent())
	}
	for _, tt := range []struct {
		tl interface {
			Call(context.Context, *tool.Env, json.RawMessage) (*tool.Result, error)
		}
		in map[string]any
	}{{NewTaskOutput(Options{}), map[string]any{"task_id": "x"}}, {NewTaskStop(Options{}), map[string]any{"task_id": "x"}}} {
		r := tooltest.Call(t, tt.tl.(tool.Tool), env, tt.in)
		if !r.IsError || !strings.Contains(r.TextContent(), "no background tasks") {
			t.Errorf("%T: %q", tt.tl, r.TextContent())
		}
	}
}

func TestBackgroundOutputLimit(t *testing.T) {
	tasks := NewJobs()
	defer tasks.Close()
	env := testEnv(t, tasks)
	bash := NewBash(Options{MaxOutputBytes: 1 << 20})
	r := tooltest.Call(t, bash, env, map[string]any{"command": "yes", "run_in_background": true})
	id := structured[BashOutput](t, r).TaskID
	r = tooltest.Call(t, NewTaskOutput(Options{}), env, map[string]any{"task_id": id, "timeout": 20000})
	to := structured[TaskOutputResult](t, r)
	if to.Task.Status != TaskKilled || to.Task.OutputBytes != 1<<20 || !to.Truncated || !strings.Contains(r.TextContent(), to.Task.OutputPath) {
		t.Fatalf("%+v truncated %v", to.Task, to.Truncated)
	}
	if n := len([]rune(to.Output)); n > DefaultInlineChars+500 {
		t.Fatalf("inline %d chars", n)
	}
}

// Go tasks share the manager with shell tasks: TaskOutput reads what they
// write, TaskStop cancels them, a returned error fails them and onDone
// reports the end.
func TestGoTasks(t *testing.T) {
	tasks := NewJobs()
	defer tasks.Close()
	env := testEnv(t, tasks)
	out, stop := NewTaskOutput(Options{}), NewTaskStop(Options{})
	ended := make(chan JobInfo, 3)
	onDone := func(i JobInfo) { ended <- i }

	ok, err := tasks.Go(env.ToolResultsDir, "agent", "summarise", func(ctx context.Context, w io.Writer) error {
		io.WriteString(w, "the summary\n")
		return nil
	}, onDone)
	if err != nil {
		t.Fatal(err)
	}
	r := tooltest.Call(t, out, env, map[string]any{"task_id": ok.ID})
	if !strings.Contains(r.TextContent(), "the summary") || !strings.Contains(r.TextContent(), "completed") {
		t.Fatalf("read: %q", r.TextContent())
	}
	if i := <-ended; i.ID != ok.ID || i.Status != TaskCompleted || i.Kind != "agent" {
		t.Fatalf("onDone %+v", i)
	}

	bad, _ := tasks.Go(env.ToolResultsDir, "agent", "fails", func(ctx context.Context, w io.Writer) error {
		return errors.New("model unavailable")
	}, onDone)
	if i := <-ended; i.ID != bad.ID || i.Status != TaskFailed || i.Note != "model unavailable" || i.ExitCode != nil {
		t.Fatalf("failed task %+v", i)
	}

	started := make(chan struct{})
	long, _ := tasks.Go(env.ToolResultsDir, "agent", "waits", func(ctx context.Context, w io.Writer) error {
		close(started)
		<-ctx.Done()
		return ctx.Err()
	}, onDone)
	<-started
	r = tooltest.Call(t, stop, env, map[string]any{"task_id": long.ID})
	if r.IsError || !strings.Contains(r.TextContent(), "killed") {
		t.Fatalf("stop: %q", r.TextContent())
	}
	if i := <-ended; i.Status != TaskKilled {
		t.Fatalf("stopped task %+v", i)
	}
	if l := tasks.List(); len(l) != 3 {
		t.Fatalf("list %+v", l)
	}
}

// TestJobsWatch checks that a watcher sees the final info of every ended
// command (completed, failed, stopped) and nothing once stopped.
func TestJobsWatch(t *testing.T) {
	tasks := NewJobs()
	defer tasks.Close()
	env := testEnv(t, tasks)
	bash := NewBash(Options{})
	got := make(chan JobInfo, 8)
	stopWatch := tasks.Watch(func(i JobInfo) { got <- i })
	start := func(cmd string) string {
		r := tooltest.Call(t, bash, env, map[string]any{"command": cmd, "run_in_background": true})
		return structured[BashOutput](t, r).TaskID
	}
	want := map[string]JobStatus{start("true"): TaskCompleted, start("exit 3"): TaskFailed}
	long := start("sleep 30")
	want[long] = TaskKilled
	if _, err := tasks.Stop(context.Background(), long); err != nil {
		t.Fatal(err)
	}
	for range want {
		i := <-got
		if want[i.ID] != i.Status || i.Kind != "shell" || i.OutputPath == "" || i.EndedAt.IsZero() {
			t.Errorf("watched %+v, want status %s", i, want[i.ID])
		}
		delete(want, i.ID)
	}
	stopWatch()
	ended := tasks.Ended()
	start("true")
	<-ended
	select {
	case i := <-got:
		t.Fatalf("watcher called after stop: %+v", i)
	default:
	}
}
