package shell

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gantry-dev/gantry/tool"
)

// TaskOutputInput is the input of the TaskOutput tool.
type TaskOutputInput struct {
	TaskID string `json:"task_id" jsonschema:"The id of the background task."`
	Block  *bool  `json:"block,omitempty" jsonschema:"Wait until the task ends or the timeout passes (default true)."`
	// Timeout is in milliseconds.
	Timeout *float64 `json:"timeout,omitempty" jsonschema:"How long to wait when blocking, in milliseconds (default 30000, max 600000)."`
}

// TaskStopInput is the input of the TaskStop tool.
type TaskStopInput struct {
	TaskID  string `json:"task_id,omitempty" jsonschema:"The id of the background task to stop."`
	ShellID string `json:"shell_id,omitempty" jsonschema:"Deprecated: use task_id."`
}

// TaskOutputResult is the structured result of TaskOutput.
type TaskOutputResult struct {
	Task JobInfo `json:"task"`
	// Output is the new output since the previous read, as the model got it.
	Output string `json:"output"`
	// Truncated reports that Output was cut in the middle.
	Truncated bool `json:"truncated,omitempty"`
}

const taskOutputDescription = `Reads the new output of a background task (a Bash command run with run_in_background, or a background agent) since the previous read, with its status.

By default it waits until the task ends or the timeout (30000 ms by default, at most 600000 ms) passes; set block to false to return at once.`

const taskStopDescription = `Stops a background task: a Bash command run with run_in_background (its whole process tree is terminated) or a background agent (its run is cancelled).`

// NewTaskOutput returns the TaskOutput tool (aliases BashOutput, AgentOutput).
// It needs a [*Jobs] in the environment's services.
func NewTaskOutput(opts Options) tool.Tool {
	o := opts.withDefaults()
	wait := func(in TaskOutputInput) time.Duration {
		if in.Timeout == nil || *in.Timeout <= 0 {
			return DefaultOutputWait
		}
		return min(time.Duration(*in.Timeout*float64(time.Millisecond)), o.MaxTimeout)
	}
	return tool.Must(tool.New("TaskOutput", taskOutputDescription,
		func(ctx context.Context, env *tool.Env, in TaskOutputInput) (*tool.Result, error) {
			tasks, err := tool.Use[*Jobs](env)
			if err != nil {
				return tool.Errorf("no background tasks in this session: %v", err), nil
			}
			block := in.Block == nil || *in.Block
			rd, err := tasks.Read(ctx, in.TaskID, block, wait(in))
			if errors.Is(err, ErrNoTask) {
				return tool.Errorf("%v. Known tasks: %s", err, knownTasks(tasks)), nil
			}
			if err != nil {
				return nil, err
			}
			// A cut middle is in the task's own output file.
			out := render(rd.Head, rd.Tail, rd.Elided, rd.New, o.InlineChars, rd.Task.OutputPath, "", "")
			status := statusLine(rd.Task)
			if rd.WaitTimedOut {
				status += " (still running after the wait timeout)"
			}
			model, display := out.Model, out.Display
			if model == "" {
				model, display = "(no new output)", "(no new output)"
			}
			r := tool.TextResult(status + "\n\n" + model).WithDisplay(tool.Text(status + "\n\n" + display))
			r.Structured = TaskOutputResult{Task: rd.Task, Output: out.Model, Truncated: out.Truncated}
			return r, nil
		},
		tool.WithAliases("BashOutput", "AgentOutput"),
		tool.WithTraits(tool.ReadOnlyTraits), // reading a task's output changes nothing
		tool.TimeoutFunc(func(in TaskOutputInput) time.Duration { return wait(in) + 5*time.Second }),
		tool.WithMaxTimeout(o.MaxTimeout+5*time.Second),
		tool.WithMaxResultChars(o.InlineChars+2_000),
		tool.DescribeFunc(func(in TaskOutputInput) string { return "Read output of task " + sanitizeName(in.TaskID) }),
		tool.ValidateFunc(func(_ context.Context, _ *tool.Env, in TaskOutputInput) error {
			if in.TaskID == "" {
				return errors.New("task_id is required")
			}
			return nil
		}),
	))
}

// NewTaskStop returns the TaskStop tool (alias KillShell). It needs a
// [*Jobs] in the environment's services.
func NewTaskStop(opts Options) tool.Tool {
	_ = opts.withDefaults()
	id := func(in TaskStopInput) string {
		if in.TaskID != "" {
			return in.TaskID
		}
		return in.ShellID
	}
	return tool.Must(tool.New("TaskStop", taskStopDescription,
		func(ctx context.Context, env *tool.Env, in TaskStopInput) (*tool.Result, error) {
			tasks, err := tool.Use[*Jobs](env)
			if err != nil {
				return tool.Errorf("no background tasks in this session: %v", err), nil
			}
			wasRunning := false
			if info, err := tasks.Get(id(in)); err == nil {
				wasRunning = info.Status == TaskRunning
			}
			info, err := tasks.Stop(ctx, id(in))
			if errors.Is(err, ErrNoTask) {
				return tool.Errorf("%v. Known tasks: %s", err, knownTasks(tasks)), nil
			}
			if err != nil {
				return nil, err
			}
			msg := "Stopped task " + info.ID + ". " + statusLine(info)
			if !wasRunning {
				msg = "Task " + info.ID + " had already ended. " + statusLine(info)
			}
			r := tool.TextResult(msg)
			r.Structured = info
			return r, nil
		},
		tool.WithAliases("KillShell"),
		tool.DescribeFunc(func(in TaskStopInput) string { return "Stop task " + sanitizeName(id(in)) }),
		tool.ValidateFunc(func(_ context.Context, _ *tool.Env, in TaskStopInput) error {
			if id(in) == "" {
				return errors.New("task_id is required")
			}
			return nil
		}),
	))
}

// Tools returns Bash, TaskOutput and TaskStop.
func Tools(opts Options) []tool.Tool {
	return []tool.Tool{NewBash(opts), NewTaskOutput(opts), NewTaskStop(opts)}
}

func statusLine(info JobInfo) string {
	s := fmt.Sprintf("Task %s: %s", info.ID, info.Status)
	if info.ExitCode != nil {
		s += fmt.Sprintf(" (exit code %d)", *info.ExitCode)
	}
	if info.Note != "" {
		s += " — " + info.Note
	}
	return s
}

func knownTasks(ts *Jobs) string {
	var ids []string
	for _, t := range ts.List() {
		ids = append(ids, t.ID+" ("+string(t.Status)+")")
	}
	if len(ids) == 0 {
		return "none"
	}
	return strings.Join(ids, ", ")
}
