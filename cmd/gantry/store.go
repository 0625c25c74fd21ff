package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gantry-dev/gantry/agent"

	"github.com/gantry-dev/gantry/builtin/file"
	"github.com/gantry-dev/gantry/builtin/task"
	"github.com/gantry-dev/gantry/builtin/todo"
	"github.com/gantry-dev/gantry/store"
	"github.com/gantry-dev/gantry/transcript"
)

// storePath is the CLI's database: $GANTRY_HOME/gantry.db.
func storePath(a *app) (string, error) {
	home, err := transcript.DefaultHome(a.getenv)
	if err != nil {
		return "", err
	}
	return filepath.Join(home, store.DefaultFile), nil
}

// openStoreIfExists opens the CLI's database for reading; a database that
// does not exist yet gives nil (nothing was ever stored).
func openStoreIfExists(ctx context.Context, a *app) (*store.SQLite, error) {
	path, err := storePath(a)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return store.OpenSQLite(ctx, path, store.SQLiteOptions{})
}

// lookFlags select the session whose tasks or todos to show.
type lookFlags struct {
	cwd     string
	session string
	json    bool
}

func (f *lookFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.cwd, "cwd", "", "working directory whose latest session to show (default: the current directory)")
	cmd.Flags().StringVar(&f.session, "session", "", "session id (default: the latest session of the working directory)")
	cmd.Flags().BoolVar(&f.json, "json", false, "print JSON")
}

// sessionID resolves the session to show.
func (f *lookFlags) sessionID(a *app) (string, error) {
	if f.session != "" {
		return f.session, nil
	}
	sf := safetyFlags{cwd: f.cwd}
	dir, err := sf.workDir()
	if err != nil {
		return "", &exitError{code: 2, err: err}
	}
	home, err := transcript.DefaultHome(a.getenv)
	if err != nil {
		return "", err
	}
	id, err := transcript.NewStore(home).Latest(dir)
	if errors.Is(err, transcript.ErrNotFound) {
		return "", &exitError{code: 1, err: fmt.Errorf("no session in %s yet", dir)}
	}
	if err != nil {
		return "", &exitError{code: 1, err: fmt.Errorf("the latest session in %s: %w", dir, err)}
	}
	return id, nil
}

func newTasksCmd(a *app) *cobra.Command {
	f := &lookFlags{}
	var list string
	cmd := &cobra.Command{
		Use:   "tasks [list | show ID]",
		Short: "Show the task list of the current directory's latest session (or of a team)",
		Long: `Show the shared task list kept in $GANTRY_HOME/gantry.db: by default the list
of the latest session in the working directory; --session names another
session, --list a list by name (a team shares its lead session's list).`,
		Args: cobra.MaximumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			action := "list"
			if len(args) > 0 {
				action = args[0]
			}
			switch {
			case action == "list" && len(args) <= 1, action == "show" && len(args) == 2:
			default:
				return &exitError{code: 2, err: errors.New("usage: gantry tasks [list | show ID]")}
			}
			name := list
			if name == "" {
				id, err := f.sessionID(a)
				if err != nil {
					return err
				}
				name = id
			}
			st, err := openStoreIfExists(cmd.Context(), a)
			if err != nil {
				return &exitError{code: 1, err: err}
			}
			var ts store.Tasks = new(store.Memory) // nothing stored yet: an empty list
			if st != nil {
				defer st.Close()
				ts = st
			}
			if action == "show" {
				t, err := ts.GetTask(cmd.Context(), name, strings.TrimPrefix(args[1], "#"))
				if err != nil {
					return &exitError{code: 1, err: err}
				}
				if f.json {
					return printJSON(a, t)
				}
				fmt.Fprintln(a.stdout, file.EscapeDisplay(task.Render(t)))
				return nil
			}
			all, err := ts.ListTasks(cmd.Context(), name)
			if err != nil {
				return &exitError{code: 1, err: err}
			}
			if f.json {
				res := task.ListResult{Tasks: all, Claimable: task.Claimable(all)}
				if res.Tasks == nil {
					res.Tasks = []store.Task{}
				}
				if res.Claimable == nil {
					res.Claimable = []string{}
				}
				return printJSON(a, res)
			}
			fmt.Fprintf(a.stdout, "Task list %s\n%s\n", file.EscapeDisplay(name), file.EscapeDisplay(task.RenderList(all)))
			return nil
		},
	}
	f.add(cmd)
	cmd.Flags().StringVar(&list, "list", "", "task list name (default: the session's)")
	return cmd
}

func newTodosCmd(a *app) *cobra.Command {
	f := &lookFlags{}
	cmd := &cobra.Command{
		Use:   "todos",
		Short: "Show the todo list of the current directory's latest session",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := f.sessionID(a)
			if err != nil {
				return err
			}
			st, err := openStoreIfExists(cmd.Context(), a)
			if err != nil {
				return &exitError{code: 1, err: err}
			}
			var l store.TodoList
			if st != nil {
				defer st.Close()
				if l, err = st.GetTodos(cmd.Context(), id); err != nil {
					return &exitError{code: 1, err: err}
				}
			}
			if f.json {
				if l.Items == nil {
					l.Items = []store.Todo{}
				}
				return printJSON(a, l)
			}
			fmt.Fprintf(a.stdout, "Todos of session %s\n%s\n", id, file.EscapeDisplay(todo.Render(l.Items)))
			return nil
		},
	}
	f.add(cmd)
	return cmd
}

func printJSON(a *app, v any) error {
	enc := json.NewEncoder(a.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// todosLine is the stream-json line that shows the todo list after each
// successful TodoWrite.
type todosLine struct {
	Type      string       `json:"type"`
	Subtype   string       `json:"subtype"`
	SessionID string       `json:"session_id,omitempty"`
	ToolUseID string       `json:"tool_use_id"`
	Todos     []store.Todo `json:"todos"`
}

// todos shows a TodoWrite's new list: a progress line on a terminal, a
// system/todos line in stream-json.
func (p *printer) todos(e *agent.ToolResultEvent) {
	o := e.Outcome
	if o == nil || o.Name != todo.Name || o.Result == nil || o.Result.IsError {
		return
	}
	res, ok := o.Result.Structured.(todo.Result)
	if !ok {
		return
	}
	if p.progress != nil {
		p.progress.line(file.EscapeDisplay("☰ todos " + oneLine(todo.Summary(res.NewTodos), 120)))
	}
	if p.enc != nil {
		p.line(todosLine{Type: "system", Subtype: "todos", SessionID: p.session, ToolUseID: o.ID, Todos: res.NewTodos})
	}
}
