// Package todo holds TodoWrite, the session's own checklist, and the
// reminder that brings a stale list back to the model's attention.
//
// The list lives in a [store.Todos] found among the environment's services,
// keyed by the session's id; each call replaces it whole. The result's
// Structured value is a [Result] (the list before and after), which a user
// interface shows (the CLI prints a progress line, stream-json an event).
package todo

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/gantry-dev/gantry/store"
	"github.com/gantry-dev/gantry/tool"
)

// Name is the tool's name.
const Name = "TodoWrite"

// Item is one todo of the input.
type Item struct {
	Content    string `json:"content" jsonschema:"What to do, imperative (\"Run the tests\")."`
	Status     string `json:"status" enum:"pending,in_progress,completed" jsonschema:"pending, in_progress (at most one at a time) or completed."`
	ActiveForm string `json:"activeForm" jsonschema:"Present-continuous form shown while it is in progress (\"Running the tests\")."`
}

// Input is the input of TodoWrite.
type Input struct {
	Todos []Item `json:"todos" jsonschema:"The whole updated list; it replaces the previous one."`
}

// Result is the structured result of TodoWrite.
type Result struct {
	OldTodos []store.Todo `json:"oldTodos"`
	NewTodos []store.Todo `json:"newTodos"`
}

const description = `Keeps your todo list for this session: a short checklist of the steps of the current work, shown to the user as you go. Send the whole list each time (it replaces the previous one). Use it for work of three or more steps or when the user gives several things to do; skip it for a single trivial step.

Rules: exactly one item in_progress while you work (mark it before starting, never more than one); mark an item completed as soon as it is done, not in batches; add items you discover; remove items that no longer matter. Each item has content ("Run the tests") and activeForm ("Running the tests").`

// Key returns the todo-list key of a call's session.
func Key(env *tool.Env) string {
	if env != nil && env.SessionID != "" {
		return env.SessionID
	}
	return "default"
}

// New returns the TodoWrite tool.
func New() tool.Tool {
	return tool.Must(tool.New(Name, description,
		func(ctx context.Context, env *tool.Env, in Input) (*tool.Result, error) {
			todos, err := tool.Use[store.Todos](env)
			if err != nil {
				return tool.Errorf("The todo list is not available in this session (%v).", err), nil
			}
			items := make([]store.Todo, len(in.Todos))
			for i, it := range in.Todos {
				items[i] = store.Todo{Content: strings.TrimSpace(it.Content), Status: store.TodoStatus(it.Status), ActiveForm: strings.TrimSpace(it.ActiveForm)}
			}
			if err := store.ValidateTodos(items); err != nil {
				return tool.ErrorResult(err), nil
			}
			key := Key(env)
			old, err := todos.GetTodos(ctx, key)
			if err != nil {
				return nil, err
			}
			if err := todos.SetTodos(ctx, key, items); err != nil {
				if errors.Is(err, store.ErrInvalid) {
					return tool.ErrorResult(err), nil
				}
				return nil, err
			}
			res := Result{OldTodos: nonNil(old.Items), NewTodos: nonNil(items)}
			r := tool.TextResult(modelText(items)).WithDisplay(tool.Text(Render(items)))
			r.Structured = res
			return r, nil
		},
		tool.WithTraits(tool.Traits{NonDestructive: true, Planning: true}), // only the session's todo list: runs in plan mode
		tool.PermissionFunc(func(context.Context, *tool.Env, Input) tool.PermissionResult {
			return tool.PermissionResult{Behavior: tool.Allow, Reason: "TodoWrite changes only the session's todo list"}
		}),
		tool.ValidateFunc(func(_ context.Context, _ *tool.Env, in Input) error {
			if len(in.Todos) > store.MaxTodos {
				return fmt.Errorf("%d todos; keep the list to at most %d items", len(in.Todos), store.MaxTodos)
			}
			return nil
		}),
		tool.DescribeFunc(func(in Input) string { return "Update todos" + progressSuffix(in) }),
	))
}

func nonNil(t []store.Todo) []store.Todo {
	if t == nil {
		return []store.Todo{}
	}
	return t
}

func progressSuffix(in Input) string {
	done := 0
	for _, t := range in.Todos {
		if t.Status == string(store.TodoCompleted) {
			done++
		}
	}
	return fmt.Sprintf(" (%d/%d done)", done, len(in.Todos))
}

func modelText(items []store.Todo) string {
	if len(items) == 0 {
		return "The todo list is now empty."
	}
	return "The todo list is updated. Keep it current as you work: one item in_progress, completed as soon as it is done.\n\n" + Render(items)
}

// Render shows a todo list as a checklist: [x] done, [>] in progress,
// [ ] pending.
func Render(items []store.Todo) string {
	if len(items) == 0 {
		return "(no todos)"
	}
	var b strings.Builder
	for i, t := range items {
		if i > 0 {
			b.WriteByte('\n')
		}
		switch t.Status {
		case store.TodoCompleted:
			b.WriteString("[x] " + t.Content)
		case store.TodoInProgress:
			b.WriteString("[>] " + t.ActiveForm)
		default:
			b.WriteString("[ ] " + t.Content)
		}
	}
	return b.String()
}

// Summary is a one-line view of a list for a progress line: "2/5 done ·
// Running the tests".
func Summary(items []store.Todo) string {
	done := 0
	current := ""
	for _, t := range items {
		switch t.Status {
		case store.TodoCompleted:
			done++
		case store.TodoInProgress:
			current = t.ActiveForm
		}
	}
	s := fmt.Sprintf("%d/%d done", done, len(items))
	if current != "" {
		s += " · " + current
	}
	return s
}

// DefaultStaleTurns is after how many model turns without a TodoWrite an
// unfinished list is reminded to the model.
const DefaultStaleTurns = 10

// Reminder reminds the model of its unfinished todo list when it has not
// been updated for a number of turns. Its Remind method is called by the
// agent before each model request. The zero value uses
// [DefaultStaleTurns]; it is safe for concurrent use.
type Reminder struct {
	// StaleTurns is the number of turns without an update after which the
	// list is reminded (0 = DefaultStaleTurns).
	StaleTurns int

	mu    sync.Mutex
	seen  map[string]string // key → UpdatedAt of the list last seen
	turns map[string]int    // key → turns since the last change or reminder
}

// Remind returns a reminder text for the session of env when its todo list
// is unfinished and unchanged for StaleTurns turns, else "". A session
// without a todo store (or whose store is not open yet) gets nothing.
func (r *Reminder) Remind(ctx context.Context, env *tool.Env) (string, func(), error) {
	todos, err := tool.Use[store.Todos](env)
	if err != nil {
		return "", nil, nil
	}
	if l, ok := todos.(interface{ Opened() bool }); ok && !l.Opened() {
		return "", nil, nil
	}
	key := Key(env)
	list, err := todos.GetTodos(ctx, key)
	if err != nil {
		return "", nil, err
	}
	stale := r.StaleTurns
	if stale <= 0 {
		stale = DefaultStaleTurns
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen == nil {
		r.seen, r.turns = map[string]string{}, map[string]int{}
	}
	stamp := list.UpdatedAt.String()
	if r.seen[key] != stamp {
		r.seen[key], r.turns[key] = stamp, 0
		return "", nil, nil
	}
	r.turns[key]++
	if r.turns[key] < stale || !unfinished(list.Items) {
		return "", nil, nil
	}
	r.turns[key] = 0
	return fmt.Sprintf("Gantry reminder: your todo list has not changed for %d turns. If the work moved on, update it with TodoWrite (mark finished items completed, the current one in_progress); if it is still right, carry on. Do not mention this reminder to the user.\n\n%s", stale, Render(list.Items)), nil, nil
}

func unfinished(items []store.Todo) bool {
	for _, t := range items {
		if t.Status != store.TodoCompleted {
			return true
		}
	}
	return false
}
