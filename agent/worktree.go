package agent

import (
	"context"

	"github.com/gantry-dev/gantry/workspace"
)

// worktree is the git worktree of an isolated subagent.
type worktree struct {
	Path   string // the child's working directory inside it
	Top    string // the worktree's top level
	Branch string
	finish func(context.Context) (kept bool, err error)
}

// createWorktree creates it through the workspace (which owns the tools'
// engines; the loop imports no tool package).
func createWorktree(ctx context.Context, ws *workspace.Workspace, dir, name string) (*worktree, error) {
	w, err := ws.CreateWorktree(ctx, dir, name)
	if err != nil {
		return nil, err
	}
	// finish removes the worktree when the child changed nothing, and
	// keeps it otherwise.
	return &worktree{Path: w.Sub, Top: w.Path, Branch: w.Branch, finish: w.Finish}, nil
}
