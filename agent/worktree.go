package agent

import (
	"context"

	wt "github.com/gantry-dev/gantry/builtin/worktree"
)

// worktree is the git worktree of an isolated subagent.
type worktree struct {
	*wt.Worktree
	Path string // the child's working directory inside it
}

func createWorktree(ctx context.Context, dir, name string) (*worktree, error) {
	w, err := wt.Create(ctx, dir, name)
	if err != nil {
		return nil, err
	}
	return &worktree{Worktree: w, Path: w.Sub}, nil
}

// finish removes the worktree when the child changed nothing, and keeps it
// otherwise.
func (w *worktree) finish(ctx context.Context) (kept bool, err error) { return w.Worktree.Finish(ctx) }
