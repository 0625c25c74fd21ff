// Package worktree runs work in git worktrees: [Create] makes a fresh
// worktree of a repository on a new branch under .gantry/worktrees/, for a
// subagent with isolation "worktree" or for the session itself
// (EnterWorktree); [Worktree.Finish] removes it when nothing changed and
// keeps it otherwise. The EnterWorktree and ExitWorktree tools move a
// session into a worktree and back.
//
// It drives the git command, not a Go reimplementation: worktrees are a
// feature of the repository's own git (its hooks, config, filters, sparse
// checkouts and LFS must apply exactly as the user's git applies them),
// git is on every machine with a repository, and go-git does not implement
// `git worktree`.
package worktree

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/gantry-dev/gantry/internal/procenv"
)

// Dir is where worktrees are made, relative to the repository's top level.
const Dir = ".gantry/worktrees"

// BranchPrefix starts the name of every worktree branch.
const BranchPrefix = "gantry/"

// Worktree is a git worktree made by [Create].
type Worktree struct {
	// Path is the worktree's top level; Root the main repository's.
	Path, Root string
	// Branch is the worktree's branch; Base the commit it started from.
	Branch, Base string
	// Sub is the working directory inside the worktree that matches the
	// directory Create was given (Path itself at the top level).
	Sub string
}

// ErrNotRepository is returned by [Create] outside a git repository.
var ErrNotRepository = errors.New("not inside a git repository")

func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	// git runs the repository's hooks (post-checkout…): the allow-listed
	// environment, never a credential.
	cmd.Env = procenv.Build(os.Environ(), procenv.Options{Set: []string{"GIT_TERMINAL_PROMPT=0", "LC_ALL=C"}})
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(errb.String())
		if msg == "" {
			msg = err.Error()
		}
		return "", fmt.Errorf("git %s: %s", args[0], msg)
	}
	return strings.TrimSpace(out.String()), nil
}

var unsafeName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^a-zA-Z0-9._-]+`) }) // compiled on first use, not at init

// sanitize makes a worktree and branch name from free text.
func sanitize(name string) string {
	name = strings.Trim(unsafeName().ReplaceAllString(name, "-"), "-.")
	if len(name) > 40 {
		name = name[:40]
	}
	if name == "" {
		name = "wt"
	}
	return name
}

// Create makes a new worktree of the repository holding dir, at
// <top level>/.gantry/worktrees/<name>-<random> on a new branch
// gantry/<name>-<random> from HEAD. The worktrees directory ignores itself
// (a .gitignore of "*"), so the main checkout's status stays clean.
func Create(ctx context.Context, dir, name string) (*Worktree, error) {
	root, err := git(ctx, dir, "rev-parse", "--show-toplevel")
	if err != nil {
		return nil, fmt.Errorf("%w: %s", ErrNotRepository, dir)
	}
	root, _ = filepath.EvalSymlinks(root)
	realDir, _ := filepath.EvalSymlinks(dir)
	base, err := git(ctx, root, "rev-parse", "HEAD")
	if err != nil {
		return nil, fmt.Errorf("worktree: the repository has no commit yet: %w", err)
	}
	var b [3]byte
	rand.Read(b[:])
	id := sanitize(name) + "-" + hex.EncodeToString(b[:])
	wdir := filepath.Join(root, Dir)
	if err := os.MkdirAll(wdir, 0o755); err != nil {
		return nil, fmt.Errorf("worktree: %w", err)
	}
	ignore := filepath.Join(wdir, ".gitignore")
	if _, err := os.Stat(ignore); errors.Is(err, os.ErrNotExist) {
		os.WriteFile(ignore, []byte("*\n"), 0o644)
	}
	w := &Worktree{Path: filepath.Join(wdir, id), Root: root, Branch: BranchPrefix + id, Base: base}
	if _, err := git(ctx, root, "worktree", "add", "-q", "-b", w.Branch, w.Path, base); err != nil {
		return nil, fmt.Errorf("worktree: %w", err)
	}
	w.Sub = w.Path
	if rel, err := filepath.Rel(root, realDir); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
		if fi, err := os.Stat(filepath.Join(w.Path, rel)); err == nil && fi.IsDir() {
			w.Sub = filepath.Join(w.Path, rel)
		}
	}
	meta, _ := json.Marshal(w)
	os.WriteFile(metaPath(w.Path), meta, 0o644)
	return w, nil
}

func metaPath(path string) string {
	return filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".json")
}

// Find returns the worktree made by [Create] that holds dir, if any.
func Find(dir string) (*Worktree, bool) {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if filepath.Base(filepath.Dir(d)) == "worktrees" && filepath.Base(filepath.Dir(filepath.Dir(d))) == ".gantry" {
			b, err := os.ReadFile(metaPath(d))
			if err != nil {
				return nil, false
			}
			var w Worktree
			// The record must describe this very directory of its own
			// repository's worktrees directory.
			if json.Unmarshal(b, &w) != nil || w.Path != d || filepath.Join(w.Root, Dir, filepath.Base(d)) != d {
				return nil, false
			}
			return &w, true
		}
		if p := filepath.Dir(d); p == d {
			return nil, false
		}
	}
}

// Dirty reports whether the worktree has uncommitted changes (tracked or
// untracked files).
func (w *Worktree) Dirty(ctx context.Context) (bool, error) {
	out, err := git(ctx, w.Path, "status", "--porcelain")
	return out != "", err
}

// Commits returns how many commits the branch has beyond Base.
func (w *Worktree) Commits(ctx context.Context) (int, error) {
	out, err := git(ctx, w.Path, "rev-list", "--count", w.Base+"..HEAD")
	if err != nil {
		return 0, err
	}
	var n int
	fmt.Sscanf(out, "%d", &n)
	return n, nil
}

// Changed reports whether the worktree has uncommitted changes or commits
// beyond Base.
func (w *Worktree) Changed(ctx context.Context) (bool, error) {
	if dirty, err := w.Dirty(ctx); err != nil || dirty {
		return true, err
	}
	n, err := w.Commits(ctx)
	return n > 0, err
}

// Remove removes the worktree and, when it has no commits beyond Base, its
// branch. Uncommitted changes are refused unless force.
func (w *Worktree) Remove(ctx context.Context, force bool) error {
	args := []string{"worktree", "remove"}
	if force {
		args = append(args, "--force")
	}
	if _, err := git(ctx, w.Root, append(args, w.Path)...); err != nil {
		return fmt.Errorf("worktree: %w", err)
	}
	os.Remove(metaPath(w.Path))
	if n, err := git(ctx, w.Root, "rev-list", "--count", w.Base+".."+w.Branch); err == nil && n == "0" {
		git(ctx, w.Root, "branch", "-q", "-D", w.Branch)
	}
	return nil
}

// Finish removes the worktree when nothing changed in it and keeps it
// otherwise; kept reports which.
func (w *Worktree) Finish(ctx context.Context) (kept bool, err error) {
	changed, err := w.Changed(ctx)
	if err != nil || changed {
		return true, err
	}
	return false, w.Remove(ctx, false)
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
