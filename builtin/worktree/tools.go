package worktree

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/gantry-dev/gantry/tool"
)

// EnterInput is the input of EnterWorktree.
type EnterInput struct {
	Name string `json:"name,omitempty" jsonschema:"A short name for a new worktree and its branch (default: session)."`
	Path string `json:"path,omitempty" jsonschema:"The path of an existing Gantry worktree to move into, instead of making a new one."`
}

// ExitInput is the input of ExitWorktree.
type ExitInput struct {
	Action         string `json:"action" enum:"keep,remove" jsonschema:"keep: leave the worktree and its branch for later; remove: delete the worktree (its branch is kept if it has commits)."`
	DiscardChanges bool   `json:"discard_changes,omitempty" jsonschema:"With remove: delete the worktree even though it has uncommitted changes, which are lost."`
}

const enterDescription = `Moves this session into a new git worktree: a separate checkout of the repository on its own branch (gantry/<name>-<id>, under .gantry/worktrees/), so changes can be made and tested without touching the main checkout. The working directory becomes the worktree's; ExitWorktree returns to the main checkout.

Use it when the user asks to work in a worktree or on an isolated branch. The worktree starts from HEAD: uncommitted changes of the main checkout are not in it.`

const exitDescription = `Leaves the git worktree the session entered with EnterWorktree and returns to the main checkout. action "keep" leaves the worktree and its branch for later; "remove" deletes the worktree — refused when it has uncommitted changes unless discard_changes is true (then they are lost). A branch with commits is kept either way.`

// Tools returns EnterWorktree and ExitWorktree.
func Tools() []tool.Tool { return []tool.Tool{NewEnter(), NewExit()} }

// NewEnter returns the EnterWorktree tool.
func NewEnter() tool.Tool {
	return tool.Must(tool.New("EnterWorktree", enterDescription,
		func(ctx context.Context, env *tool.Env, in EnterInput) (*tool.Result, error) {
			if w, ok := Find(env.WorkDir); ok {
				return tool.Errorf("this session is already in the worktree %s (branch %s); call ExitWorktree first", w.Path, w.Branch), nil
			}
			var w *Worktree
			if in.Path != "" {
				p := in.Path
				if !filepath.IsAbs(p) {
					p = filepath.Join(env.WorkDir, p)
				}
				found, ok := Find(filepath.Clean(p))
				if !ok {
					return tool.Errorf("%s is not a worktree made by Gantry (under %s/)", in.Path, Dir), nil
				}
				w = found
			} else {
				var err error
				if w, err = Create(ctx, env.WorkDir, cmpOr(in.Name, "session")); err != nil {
					if errors.Is(err, ErrNotRepository) {
						return tool.Errorf("the working directory is not inside a git repository: %v", err), nil
					}
					return tool.Errorf("%v", err), nil
				}
			}
			dir := w.Sub
			if dir == "" {
				dir = w.Path
			}
			r := tool.TextResult(fmt.Sprintf("The session now works in the worktree %s on branch %s (from %s). Its changes stay there until merged; call ExitWorktree to return to %s.",
				dir, w.Branch, short(w.Base), w.Root))
			r.ContextModifier = func(e *tool.Env) { e.WorkDir = dir }
			r.Structured = w
			return r, nil
		},
		tool.DescribeFunc(func(in EnterInput) string { return "Enter worktree " + cmpOr(in.Name, in.Path) }),
		tool.WithDefer(tool.Deferral{ShouldDefer: true, SearchHint: "work in an isolated git worktree on a new branch"}),
	))
}

// NewExit returns the ExitWorktree tool.
func NewExit() tool.Tool {
	return tool.Must(tool.New("ExitWorktree", exitDescription,
		func(ctx context.Context, env *tool.Env, in ExitInput) (*tool.Result, error) {
			w, ok := Find(env.WorkDir)
			if !ok {
				return tool.Errorf("this session is not in a Gantry worktree (working directory %s)", env.WorkDir), nil
			}
			back := w.Root
			if rel, err := filepath.Rel(w.Path, env.WorkDir); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
				if sub := filepath.Join(w.Root, rel); isDir(sub) {
					back = sub
				}
			}
			var msg string
			switch in.Action {
			case "keep":
				msg = fmt.Sprintf("Left the worktree %s; it stays, with its branch %s.", w.Path, w.Branch)
			case "remove":
				dirty, err := w.Dirty(ctx)
				if err != nil {
					return tool.Errorf("%v", err), nil
				}
				if dirty && !in.DiscardChanges {
					return tool.Errorf("the worktree %s has uncommitted changes: commit them, call ExitWorktree with action \"keep\", or with discard_changes true to lose them", w.Path), nil
				}
				commits, _ := w.Commits(ctx)
				if err := w.Remove(ctx, dirty); err != nil {
					return tool.Errorf("%v", err), nil
				}
				msg = fmt.Sprintf("Removed the worktree %s.", w.Path)
				if commits > 0 {
					msg += fmt.Sprintf(" Its branch %s (%d commit(s)) is kept.", w.Branch, commits)
				}
			default:
				return tool.Errorf("action must be \"keep\" or \"remove\""), nil
			}
			r := tool.TextResult(msg + " The working directory is " + back + " again.")
			r.ContextModifier = func(e *tool.Env) { e.WorkDir = back }
			return r, nil
		},
		tool.DescribeFunc(func(in ExitInput) string { return "Exit worktree (" + in.Action + ")" }),
		tool.WithDefer(tool.Deferral{ShouldDefer: true, SearchHint: "leave the git worktree, keep or remove it"}),
	))
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func short(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}
