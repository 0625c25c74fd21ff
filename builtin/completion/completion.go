// Package completion holds the two task-control tools of the text tool
// protocol's tradition, available in both protocols: attempt_completion
// (the model says the task is done and gives its result) and new_task
// (the model hands the remaining work to a fresh context with a summary).
//
// The tools only describe the request: their results carry a [Completed] or
// [Handoff] value in [tool.Result.Structured], and the agent loop acts on it
// after the batch's results are recorded (package agent: the run ends with
// the result, or the session ends and a new one goes on from the hand-off). A tool never
// reaches into the loop itself: the loop recognises the results'
// structured values by their methods ([Completed.CompletionText],
// [Handoff.HandoffContext]), not by this package's types. The workspace
// adds the tools to the pool when workspace.Options.CompletionTools is set.
package completion

import (
	"context"
	"errors"
	"strings"

	"github.com/gantry-dev/gantry/tool"
)

// Tool names, as the text-protocol seed and the models trained on it use
// them.
const (
	AttemptCompletionName = "attempt_completion"
	NewTaskName           = "new_task"
)

// AttemptInput is attempt_completion's input.
type AttemptInput struct {
	Result  string `json:"result" jsonschema:"the final result of the task, stated so that it needs no further input from the user"`
	Command string `json:"command,omitempty" jsonschema:"optional command the user can run to see the result (for example to open or run what was built); it is shown, never run"`
}

// NewTaskInput is new_task's input.
type NewTaskInput struct {
	Context string `json:"context" jsonschema:"everything the fresh context needs to go on: the goal, what is done, what is left, relevant files and decisions"`
}

// Completed is the Structured value of a successful attempt_completion.
// The agent loop ends the run with its [Completed.CompletionText] (the
// loop looks for the method, not this type).
type Completed struct {
	Result  string `json:"result"`
	Command string `json:"command,omitempty"`
}

// CompletionText is the run's result text: Result, and the command that
// shows it when there is one.
func (c Completed) CompletionText() string {
	if c.Command == "" {
		return c.Result
	}
	return c.Result + "\n\nTo see the result: " + c.Command
}

// Handoff is the Structured value of a successful new_task. The agent loop
// ends the session and goes on in a new one whose first user message is
// its [Handoff.HandoffContext].
type Handoff struct {
	Context string `json:"context"`
}

// HandoffContext is the first user message of the new session.
func (h Handoff) HandoffContext() string { return h.Context }

// Tools returns attempt_completion and new_task.
func Tools() []tool.Tool {
	return []tool.Tool{attemptCompletion(), newTask()}
}

// Add returns tools with attempt_completion and new_task appended, except
// a completion tool whose name (or an alias) one of tools already has: the
// caller's own attempt_completion replaces the built-in one, as any user
// tool replaces a built-in of its name. The loop acts only on the
// [Completed] and [Handoff] values these tools return, so a replacement
// that returns something else is an ordinary tool.
func Add(tools []tool.Tool) []tool.Tool {
	taken := map[string]bool{}
	for _, t := range tools {
		for _, n := range t.Spec().Names() {
			taken[n] = true
		}
	}
	out := tools[:len(tools):len(tools)]
	for _, t := range Tools() {
		if !taken[t.Spec().Name] {
			out = append(out, t)
		}
	}
	return out
}

// allowSelf: both tools change nothing but the run's own course.
func allowSelf[In any](why string) tool.Option {
	return tool.PermissionFunc(func(context.Context, *tool.Env, In) tool.PermissionResult {
		return tool.PermissionResult{Behavior: tool.Allow, Reason: why}
	})
}

var controlTraits = tool.Traits{NonDestructive: true, Planning: true}

func attemptCompletion() tool.Tool {
	return tool.Must(tool.New(AttemptCompletionName,
		"Finish the task: state the final result. Use it once the task is complete and verified; the run ends with this result.",
		func(_ context.Context, _ *tool.Env, in AttemptInput) (*tool.Result, error) {
			r := tool.TextResult("Task completed.")
			r.Structured = Completed{Result: strings.TrimSpace(in.Result), Command: strings.TrimSpace(in.Command)}
			return r, nil
		},
		tool.WithTraits(controlTraits),
		allowSelf[AttemptInput]("attempt_completion only ends the run"),
		tool.ValidateFunc(func(_ context.Context, _ *tool.Env, in AttemptInput) error {
			if strings.TrimSpace(in.Result) == "" {
				return errors.New("result is empty: state the final result of the task")
			}
			return nil
		}),
		tool.DescribeFunc(func(AttemptInput) string { return "Complete the task" }),
	))
}

func newTask() tool.Tool {
	return tool.Must(tool.New(NewTaskName,
		"Hand the remaining work to a new task with a fresh context: this session ends and a new one starts whose first message is the context you give (goal, progress, what is left, relevant files and decisions) — nothing else of this conversation carries over. Use it when the conversation has grown long or drifted.",
		func(_ context.Context, _ *tool.Env, in NewTaskInput) (*tool.Result, error) {
			r := tool.TextResult("A new context starts from the summary you gave.")
			r.Structured = Handoff{Context: strings.TrimSpace(in.Context)}
			return r, nil
		},
		tool.WithTraits(controlTraits),
		allowSelf[NewTaskInput]("new_task only hands the task to a new session"),
		tool.ValidateFunc(func(_ context.Context, _ *tool.Env, in NewTaskInput) error {
			if strings.TrimSpace(in.Context) == "" {
				return errors.New("context is empty: give the goal, what is done and what is left")
			}
			return nil
		}),
		tool.DescribeFunc(func(NewTaskInput) string { return "Start a new task context" }),
	))
}
