package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// Reverted is one protected path a sandboxed command created, changed,
// replaced or removed, and what the session's guard did about it. The
// host's end state is always "absent or as before the command" where
// Restored (or Change "created") says so; the command's version is kept in
// Quarantine, never deleted.
type Reverted struct {
	// Path is the protected path on the host.
	Path string `json:"path"`
	// Change is "created" (it did not exist before the command),
	// "changed" (its content, mode or entries), "replaced" (another file
	// or directory took its place) or "removed".
	Change string `json:"change"`
	// Quarantine is where the command's version was moved ("" when there
	// was none, e.g. the path was removed).
	Quarantine string `json:"quarantine,omitempty"`
	// Restored reports that the path is absent (Change "created") or back
	// as it was before the command.
	Restored bool `json:"restored"`
	// Err says why it could not be restored.
	Err string `json:"error,omitempty"`
}

// Notice is the note for the model (and the user) about reverted paths:
// "" when there are none.
func Notice(rs []Reverted) string {
	if len(rs) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("sandbox: this command changed protected paths (version control, tool and editor configuration, rc files), which sandboxed commands may not do; they were reverted:")
	for _, r := range rs {
		fmt.Fprintf(&b, "\n- %s: %s", r.Path, r.Change)
		switch {
		case r.Restored && r.Change == "created":
			b.WriteString(", removed again")
		case r.Restored:
			b.WriteString(", restored to its state before the command")
		default:
			b.WriteString(", NOT restored: " + r.Err)
		}
		if r.Quarantine != "" {
			b.WriteString("; the command's version is kept in " + r.Quarantine)
		}
	}
	b.WriteString("\nAsk the user to make such changes, or use the file tools (they ask for permission).")
	return b.String()
}

// Limits of what the guard copies to restore a protected path.
const (
	guardMaxFile    = 1 << 20  // bytes of one file
	guardMaxTotal   = 32 << 20 // bytes of every copy together
	guardMaxEntries = 4096     // entries of one protected tree
)

// guard keeps, for each sandboxed command of a session, the protected
// paths of its writable directories as they were when it began, and when
// it ends reverts what changed: a path that appeared is moved to the
// quarantine directory, one that changed or went away is put back (moved
// back when the original still exists elsewhere on the same file system,
// else rebuilt from the guard's copy). It is the one rule for both
// backends: under bubblewrap the existing protected paths are read-only
// mount points and only new names can appear; under Landlock, which cannot
// take rights back inside a writable directory, every change is reverted
// here.
//
// Each command compares with its own starting state, so changes made on
// the host between commands are kept; changes made by anyone (including
// the user's editor) while a command runs count as the command's. When a
// command's changes are reverted, the commands that began after it take
// the reverted state as their starting state (their snapshot may hold the
// change being undone).
type guard struct {
	mu         sync.Mutex
	seq        uint64                 // begin order of runs
	runs       map[*guardRun]struct{} // running commands
	last       map[string]*node       // latest state seen per path (to reuse copies)
	copied     int64                  // bytes of copies made since no command ran
	quarantine string                 // made on first use
	qparent    string                 // where it is made ("" = os.TempDir)
	qseq       int
}

// node is the state of one path: identity and metadata, and for a
// directory its entries; for a regular file a copy of its content (nil
// when too large: then it cannot be rebuilt).
type node struct {
	mode   fs.FileMode
	id     fileID
	size   int64
	link   string
	data   []byte
	kids   map[string]*node
	noCopy bool // a file whose content was not copied, or a tree cut short
}

// guardRun is one command's view: its protected paths, their state when
// it began, and handles on the existing git directories (to find them
// again if moved).
type guardRun struct {
	seq   uint64
	paths []protPath
	base  map[string]*node
	fds   map[string]*os.File
}

// begin records the protected paths of roots before a command.
func (g *guard) begin(roots []string) *guardRun {
	var paths []protPath
	for _, r := range roots {
		paths = append(paths, protectedIn(r)...)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.runs == nil {
		g.runs, g.last = map[*guardRun]struct{}{}, map[string]*node{}
	}
	if len(g.runs) == 0 {
		g.copied = 0 // counted again by the scans below
	}
	g.seq++
	run := &guardRun{seq: g.seq, paths: paths, base: map[string]*node{}, fds: map[string]*os.File{}}
	for _, pp := range paths {
		n := g.scan(pp, g.last[pp.path])
		run.base[pp.path], g.last[pp.path] = n, n
		if pp.gitDir && n != nil {
			if f, err := openPath(pp.path); err == nil {
				run.fds[pp.path] = f
			}
		}
	}
	g.runs[run] = struct{}{}
	return run
}

// end compares the protected paths with their state when the command
// began and reverts every difference.
func (g *guard) end(run *guardRun) []Reverted {
	g.mu.Lock()
	defer g.mu.Unlock()
	defer func() {
		for _, f := range run.fds {
			f.Close()
		}
	}()
	delete(g.runs, run)
	// Shallowest first: a moved .git put back settles what is inside.
	paths := slices.Clone(run.paths)
	slices.SortStableFunc(paths, func(a, b protPath) int {
		return strings.Count(a.path, "/") - strings.Count(b.path, "/")
	})
	var out []Reverted
	for _, pp := range paths {
		old := run.base[pp.path]
		cur := g.scan(pp, old)
		if same(old, cur) {
			continue
		}
		if pp.gitDir {
			out = g.revertGitDir(pp.path, old, cur, run.fds[pp.path], out)
		} else {
			out = g.revert(pp.path, old, cur, out)
		}
		now := g.scan(pp, old)
		g.last[pp.path] = now
		for r := range g.runs {
			if _, ok := r.base[pp.path]; ok && r.seq > run.seq {
				r.base[pp.path] = now
			}
		}
	}
	return out
}

// scan returns the state of pp (nil: absent), reusing old's copies of
// files that did not change.
func (g *guard) scan(pp protPath, old *node) *node {
	n := 0
	return g.scanPath(pp.path, old, !pp.gitDir, &n)
}

func (g *guard) scanPath(p string, old *node, deep bool, count *int) *node {
	fi, err := os.Lstat(p)
	if err != nil {
		return nil
	}
	*count++
	n := &node{mode: fi.Mode(), id: idOf(fi), size: fi.Size()}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		n.link, _ = os.Readlink(p)
	case fi.Mode().IsRegular():
		if old != nil && old.mode == n.mode && old.id == n.id && old.size == n.size && (old.data != nil || old.size == 0) {
			n.data = old.data
			g.copied += int64(len(old.data))
			break
		}
		if fi.Size() > guardMaxFile || g.copied+fi.Size() > guardMaxTotal {
			n.noCopy = true
			break
		}
		data, err := os.ReadFile(p)
		if err != nil || int64(len(data)) != fi.Size() {
			n.noCopy = true
			break
		}
		n.data = data
		g.copied += int64(len(data))
	case fi.IsDir() && deep:
		ents, err := os.ReadDir(p)
		if err != nil {
			n.noCopy = true
			break
		}
		n.kids = make(map[string]*node, len(ents))
		for _, e := range ents {
			if *count >= guardMaxEntries {
				n.noCopy = true
				break
			}
			var ok *node
			if old != nil {
				ok = old.kids[e.Name()]
			}
			if k := g.scanPath(filepath.Join(p, e.Name()), ok, true, count); k != nil {
				n.kids[e.Name()] = k
			}
		}
	}
	return n
}

// same reports whether two states are equal. Directories compare by
// type, mode and entries (their times change when entries come and go);
// everything else also by identity, size and change time, which no
// program can set back.
func same(a, b *node) bool {
	if a == nil || b == nil {
		return a == b
	}
	if a.mode != b.mode {
		return false
	}
	if a.mode.IsDir() {
		if a.kids == nil || b.kids == nil {
			return a.id.dev == b.id.dev && a.id.ino == b.id.ino
		}
		if len(a.kids) != len(b.kids) {
			return false
		}
		for k, v := range a.kids {
			if !same(v, b.kids[k]) {
				return false
			}
		}
		return true
	}
	return a.id == b.id && a.size == b.size && a.link == b.link
}

// revert puts p back to old (nil: absent) from cur, recursing into
// directories so that only what changed moves.
func (g *guard) revert(p string, old, cur *node, out []Reverted) []Reverted {
	switch {
	case old == nil:
		q, err := g.toQuarantine(p)
		return append(out, result(p, "created", q, err))
	case cur == nil:
		err := g.rebuild(p, old)
		return append(out, result(p, "removed", "", err))
	case old.mode.Type() != cur.mode.Type() || (!old.mode.IsDir() && !same(old, cur)):
		change := "changed"
		if old.id.ino != cur.id.ino || old.mode.Type() != cur.mode.Type() {
			change = "replaced"
		}
		if !rebuildable(old) {
			return append(out, Reverted{Path: p, Change: change, Err: "no copy of the original (too large or unreadable); the command's version is left in place"})
		}
		q, err := g.toQuarantine(p)
		if err == nil {
			err = g.rebuild(p, old)
		}
		return append(out, result(p, change, q, err))
	}
	// Both directories.
	if old.mode != cur.mode {
		err := os.Chmod(p, old.mode.Perm())
		out = append(out, result(p, "changed", "", err))
	}
	names := make([]string, 0, len(old.kids)+len(cur.kids))
	for k := range old.kids {
		names = append(names, k)
	}
	for k := range cur.kids {
		if _, ok := old.kids[k]; !ok {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	for _, k := range names {
		if !same(old.kids[k], cur.kids[k]) {
			out = g.revert(filepath.Join(p, k), old.kids[k], cur.kids[k], out)
		}
	}
	return out
}

// revertGitDir puts a moved, replaced or removed git directory back: it
// cannot be rebuilt, but a directory moved elsewhere on the same file
// system is found through the handle kept since the command began.
func (g *guard) revertGitDir(p string, old, cur *node, h *os.File, out []Reverted) []Reverted {
	change := "replaced"
	if cur == nil {
		change = "removed"
	}
	if old == nil {
		q, err := g.toQuarantine(p)
		return append(out, result(p, "created", q, err))
	}
	orig := ""
	if h != nil {
		if l, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", h.Fd())); err == nil && !strings.HasSuffix(l, " (deleted)") {
			if fi, err := os.Lstat(l); err == nil && idOf(fi).dev == old.id.dev && idOf(fi).ino == old.id.ino {
				orig = l
			}
		}
	}
	if orig == "" || orig == p {
		return append(out, Reverted{Path: p, Change: change, Err: "the original git directory is gone (deleted by the command) and cannot be rebuilt"})
	}
	q := ""
	if cur != nil {
		var err error
		if q, err = g.toQuarantine(p); err != nil {
			return append(out, result(p, change, "", err))
		}
	}
	err := os.Rename(orig, p)
	r := result(p, change, q, err)
	if err == nil {
		r.Change += " (the original was moved to " + orig + " and is moved back)"
	}
	return append(out, r)
}

func result(p, change, q string, err error) Reverted {
	r := Reverted{Path: p, Change: change, Quarantine: q, Restored: err == nil}
	if err != nil {
		r.Err = err.Error()
	}
	return r
}

// rebuildable reports whether n can be made again from the copy.
func rebuildable(n *node) bool {
	if n.noCopy {
		return false
	}
	if n.mode.IsRegular() {
		return n.data != nil || n.size == 0
	}
	for _, k := range n.kids {
		if !rebuildable(k) {
			return false
		}
	}
	return n.mode.IsDir() || n.mode&fs.ModeSymlink != 0
}

// rebuild makes p as n describes (p does not exist).
func (g *guard) rebuild(p string, n *node) error {
	if !rebuildable(n) {
		return errors.New("no copy of the original (too large or unreadable)")
	}
	switch {
	case n.mode&fs.ModeSymlink != 0:
		return os.Symlink(n.link, p)
	case n.mode.IsRegular():
		if err := os.WriteFile(p, n.data, n.mode.Perm()); err != nil {
			return err
		}
		return os.Chmod(p, n.mode.Perm())
	case n.mode.IsDir():
		if err := os.Mkdir(p, 0o700); err != nil {
			return err
		}
		var errs []error
		for k, c := range n.kids {
			errs = append(errs, g.rebuild(filepath.Join(p, k), c))
		}
		errs = append(errs, os.Chmod(p, n.mode.Perm()))
		return errors.Join(errs...)
	}
	return fmt.Errorf("cannot rebuild a %v", n.mode.Type())
}

// toQuarantine moves p (what the command left) into the quarantine
// directory and returns where it went.
func (g *guard) toQuarantine(p string) (string, error) {
	if g.quarantine == "" {
		d, err := os.MkdirTemp(g.qparent, "gantry-quarantine-*")
		if err != nil {
			return "", fmt.Errorf("quarantine: %w", err)
		}
		g.quarantine = d
	}
	g.qseq++
	dst := filepath.Join(g.quarantine, fmt.Sprintf("%d-%s", g.qseq, filepath.Base(p)))
	if err := os.Rename(p, dst); err == nil {
		return dst, nil
	} else if !errors.Is(err, errCrossDevice) {
		return "", fmt.Errorf("quarantine: %w", err)
	}
	if err := copyAny(p, dst); err != nil {
		return "", fmt.Errorf("quarantine: %w", err)
	}
	return dst, os.RemoveAll(p)
}

// copyAny copies a file, symbolic link or directory tree.
func copyAny(src, dst string) error {
	fi, err := os.Lstat(src)
	if err != nil {
		return err
	}
	switch {
	case fi.IsDir():
		return os.CopyFS(dst, os.DirFS(src))
	case fi.Mode()&fs.ModeSymlink != 0:
		l, err := os.Readlink(src)
		if err != nil {
			return err
		}
		return os.Symlink(l, dst)
	default:
		data, err := os.ReadFile(src)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, data, fi.Mode().Perm())
	}
}
