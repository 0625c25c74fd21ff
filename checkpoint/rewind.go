package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// RewindOptions configure [Store.Rewind].
type RewindOptions struct {
	// Force overwrites paths changed by someone else since the tip.
	Force bool
	// DryRun computes and checks the rewind (conflicts included) without
	// changing the project or recording anything.
	DryRun bool
	// Session labels the checkpoint recorded before the rewind.
	Session string
	// CountLines, if set, counts the lines a rewind adds and removes in a
	// file turning from to to (a line diff); the Report's Insertions and
	// Deletions are its sums over the files the rewind writes or removes.
	// Nil counts nothing. Files over 8 MiB are not counted.
	CountLines func(from, to []byte) (added, removed int)
}

// Report says what a rewind did (or, with DryRun, would do).
type Report struct {
	// Checkpoint is the checkpoint restored.
	Checkpoint string `json:"checkpoint"`
	// Before is the checkpoint holding the state just before the rewind
	// ("" for a dry run): rewind to it to undo the rewind.
	Before string `json:"before,omitempty"`
	// Restored are the paths written back (files and links created or
	// replaced, directories created); Removed the paths deleted;
	// ModeChanged the paths whose permissions were restored alone.
	Restored    []string `json:"restored,omitempty"`
	Removed     []string `json:"removed,omitempty"`
	ModeChanged []string `json:"mode_changed,omitempty"`
	// Overwritten are paths someone else had changed since the tip that
	// Force overwrote.
	Overwritten []string `json:"overwritten,omitempty"`
	// NotCovered are the paths the checkpoint does not hold; they were
	// left as they are.
	NotCovered []NotCovered `json:"not_covered,omitempty"`
	DryRun     bool         `json:"dry_run,omitempty"`
	// Insertions and Deletions are the lines the rewind adds and removes
	// in regular files (with RewindOptions.CountLines).
	Insertions int `json:"insertions,omitempty"`
	Deletions  int `json:"deletions,omitempty"`
}

// Changed reports whether the rewind changed (or would change) anything.
func (r *Report) Changed() bool {
	return len(r.Restored)+len(r.Removed)+len(r.ModeChanged) > 0
}

// plan is what a rewind does, computed before anything is written.
type plan struct {
	remove    []*Entry // current entries to delete, deepest first
	mkdir     []*Entry // directories to create, shallowest first
	write     []*Entry // files and links to write
	chmod     []*Entry // entries whose mode alone differs
	conflicts []string
}

// Rewind restores the project to checkpoint id. It first records the
// current state (the Before checkpoint, also the new stat cache), then
// plans the changes, refuses with a [*ConflictError] when a path to change
// differs from the tip (unless Force), and verifies every object it will
// write — a missing or corrupt one is an error wrapping [ErrCorrupt] and
// nothing is written. Paths the checkpoint does not cover, and paths not
// covered now, are left alone.
func (s *Store) Rewind(ctx context.Context, id string, o RewindOptions) (*Report, error) {
	info, err := s.Get(id)
	if err != nil {
		return nil, err
	}
	var target *manifest
	if !info.Deferred {
		if target, err = s.getManifest(info.Manifest); err != nil {
			return nil, err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tipLater && s.last != nil {
		// A tip Create left for later: written now, as the rewind
		// changes s.last.
		if err := s.writeTip(s.tipHash, s.last.taken); err != nil {
			return nil, err
		}
	}
	tip, tipHash, err := s.loadTip()
	if err != nil {
		return nil, fmt.Errorf("checkpoint: the last recorded state: %w", err)
	}
	targetHash := info.Manifest
	if info.Deferred {
		if targetHash, err = s.resolveDeferred(info, tip, tipHash); err != nil {
			return nil, err
		}
		if targetHash != "" {
			if target, err = s.getManifest(targetHash); err != nil {
				return nil, err
			}
		}
	}
	cache := s.last
	if cache == nil {
		cache = tip
	}
	cur, err := s.scan(ctx, cache)
	if err != nil {
		return nil, err
	}
	if target == nil {
		// A deferred checkpoint nothing was recorded after: nothing the
		// agent did changed the project since; its state is the present.
		target = cur
	}
	if tip == nil {
		tip = target
	}
	rep := &Report{Checkpoint: id, NotCovered: target.notCovered, DryRun: o.DryRun}
	pl := planRewind(target, cur, tip)
	if len(pl.conflicts) > 0 && !o.Force {
		return nil, &ConflictError{Paths: pl.conflicts}
	}
	rep.Overwritten = pl.conflicts
	// Verify before writing anything.
	for _, e := range pl.write {
		if e.Type == TypeFile {
			if err := s.verifyObject(e.Hash, e.Size); err != nil {
				return nil, fmt.Errorf("checkpoint %s: %w", id, err)
			}
		}
	}
	for _, e := range pl.remove {
		rep.Removed = append(rep.Removed, e.Path)
	}
	for _, e := range pl.mkdir {
		rep.Restored = append(rep.Restored, e.Path)
	}
	for _, e := range pl.write {
		rep.Restored = append(rep.Restored, e.Path)
	}
	for _, e := range pl.chmod {
		rep.ModeChanged = append(rep.ModeChanged, e.Path)
	}
	slices.Sort(rep.Restored)
	if o.CountLines != nil {
		s.countLines(pl, rep, o.CountLines)
	}
	if o.DryRun {
		return rep, nil
	}
	// The state before the rewind is a checkpoint of its own.
	if err := s.ensureLocked(); err != nil {
		return nil, err
	}
	hash, err := s.putManifest(cur)
	if err != nil {
		return nil, err
	}
	if err := s.takePendingLocked(cur, hash); err != nil {
		return nil, err
	}
	before := &Info{
		ID: randomID(), Session: o.Session, Kind: KindRewind, Created: s.now().UTC(),
		Label: "before rewinding to " + id, Manifest: hash, Files: len(cur.entries), NotCoveredCount: len(cur.notCovered),
	}
	before.NotCovered = cur.notCovered[:min(len(cur.notCovered), maxListed)]
	if err := s.writeRef(before); err != nil {
		return nil, err
	}
	rep.Before = before.ID
	s.last = cur
	if err := s.apply(pl); err != nil {
		return rep, fmt.Errorf("checkpoint: rewind to %s stopped part-way (rewind to %s to return to the state before): %w", id, before.ID, err)
	}
	// The project now holds the target's tree: it is the tip.
	if targetHash == "" {
		targetHash = hash
	}
	if err := s.writeTip(targetHash, s.now()); err != nil {
		return rep, err
	}
	s.last = nil // restored files have new stats: hash them next time
	return rep, nil
}

// resolveDeferred returns the tree of a deferred checkpoint: that of the
// first recording made at or after it — a checkpoint of any session, or
// the tip — or "" when there is none (its state is the present one).
func (s *Store) resolveDeferred(info *Info, tip *manifest, tipHash string) (string, error) {
	infos, err := s.List("")
	if err != nil && len(infos) == 0 {
		return "", err
	}
	best, bestAt := "", time.Time{}
	for _, in := range infos {
		if in.Deferred || in.Created.Before(info.Created) {
			continue
		}
		if best == "" || in.Created.Before(bestAt) {
			best, bestAt = in.Manifest, in.Created
		}
	}
	if tip != nil && !tip.taken.Before(info.Created) && (best == "" || tip.taken.Before(bestAt)) {
		best = tipHash
	}
	return best, nil
}

// planRewind compares the target tree with the current one; tip tells
// which differences someone else made.
func planRewind(target, cur, tip *manifest) *plan {
	pl := &plan{}
	conflict := func(p string) {
		t := tip.lookup(p)
		c := cur.lookup(p)
		if t == nil && c == nil {
			return
		}
		if !t.same(c) || !cur.covered(p) {
			pl.conflicts = append(pl.conflicts, p)
		}
	}
	// What exists now and is not in the target (covered by it) goes.
	for i := range cur.entries {
		c := &cur.entries[i]
		t := target.lookup(c.Path)
		if t != nil && (t.Type == c.Type || (t.Type != TypeDir && c.Type != TypeDir)) {
			continue // same type: compared below; file <-> link: replaced by the write
		}
		if !target.covered(c.Path) {
			continue
		}
		pl.remove = append(pl.remove, c)
		conflict(c.Path)
	}
	// Deepest first, so directories are empty when their turn comes.
	slices.SortStableFunc(pl.remove, func(a, b *Entry) int {
		return strings.Count(b.Path, "/") - strings.Count(a.Path, "/")
	})
	for i := range target.entries {
		t := &target.entries[i]
		c := cur.lookup(t.Path)
		switch {
		case t.same(c):
			continue
		case !cur.covered(t.Path) && c == nil:
			// Not covered now (ignored, too large): restore only with
			// force, since nothing tells whose change it is.
			pl.conflicts = append(pl.conflicts, t.Path)
		case c != nil && c.Type == t.Type && c.Hash == t.Hash && c.Target == t.Target:
			pl.chmod = append(pl.chmod, t)
			conflict(t.Path)
			continue
		}
		if t.Type == TypeDir {
			pl.mkdir = append(pl.mkdir, t)
		} else {
			pl.write = append(pl.write, t)
		}
		conflict(t.Path)
	}
	slices.SortStableFunc(pl.mkdir, func(a, b *Entry) int {
		return strings.Count(a.Path, "/") - strings.Count(b.Path, "/")
	})
	slices.Sort(pl.conflicts)
	pl.conflicts = slices.Compact(pl.conflicts)
	return pl
}

// apply carries out a verified plan inside the project through an
// os.Root: nothing outside the project is reachable, links are written as
// links and removed as links.
func (s *Store) apply(pl *plan) error {
	root, err := os.OpenRoot(s.dir)
	if err != nil {
		return err
	}
	defer root.Close()
	for _, e := range pl.remove {
		p := fromSlash(e.Path)
		if e.Type == TypeDir {
			// A directory that still holds what the target does not
			// cover (ignored files) stays.
			if err := root.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) && !isNotEmpty(err) {
				return err
			}
			continue
		}
		if err := root.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	for _, e := range pl.mkdir {
		p := fromSlash(e.Path)
		if fi, err := root.Lstat(p); err == nil && !fi.IsDir() {
			if err := root.Remove(p); err != nil {
				return err
			}
		}
		if err := root.Mkdir(p, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
	}
	for _, e := range pl.write {
		if err := s.writeEntry(root, e); err != nil {
			return err
		}
	}
	// Modes last, deepest first: a read-only directory is filled first.
	modes := slices.Concat(pl.mkdir, pl.chmod)
	slices.SortStableFunc(modes, func(a, b *Entry) int {
		return strings.Count(b.Path, "/") - strings.Count(a.Path, "/")
	})
	for _, e := range modes {
		if e.Type == TypeSymlink {
			continue // a link's own mode is not settable on Linux
		}
		if err := root.Chmod(fromSlash(e.Path), e.Mode); err != nil {
			return err
		}
	}
	return nil
}

// writeEntry writes a file (temporary sibling, then rename) or a link.
func (s *Store) writeEntry(root *os.Root, e *Entry) error {
	p := fromSlash(e.Path)
	if fi, err := root.Lstat(p); err == nil && fi.IsDir() {
		// A directory where the target has a file or link: it held only
		// what was removed above, unless it holds uncovered paths.
		if err := root.Remove(p); err != nil {
			return fmt.Errorf("replace directory %s: %w", e.Path, err)
		}
	}
	if e.Type == TypeSymlink {
		if err := root.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return root.Symlink(e.Target, p)
	}
	src, err := s.openObject(e.Hash)
	if err != nil {
		return err
	}
	defer src.Close()
	dir, base := path.Split(e.Path)
	tmp := fromSlash(dir + "." + base + ".gantry-rewind-" + randomID()[:8] + ".tmp")
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, werr := io.Copy(f, src)
	merr := f.Chmod(e.Mode)
	cerr := f.Close()
	if err := errors.Join(werr, merr, cerr); err != nil {
		root.Remove(tmp)
		return err
	}
	if err := root.Rename(tmp, p); err != nil {
		root.Remove(tmp)
		return err
	}
	return nil
}

func fromSlash(p string) string { return strings.ReplaceAll(p, "/", string(os.PathSeparator)) }

func isNotEmpty(err error) bool {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return strings.Contains(pe.Err.Error(), "not empty") || strings.Contains(pe.Err.Error(), "exists")
	}
	return false
}

// maxCounted bounds the files whose lines a rewind counts.
const maxCounted = 8 << 20

// countLines sums the lines pl adds and removes in regular files: a file
// written from its current content (none when it is not a regular file
// now) to the checkpoint's, a removed file's whole content.
func (s *Store) countLines(pl *plan, rep *Report, count func(from, to []byte) (int, int)) {
	current := func(rel string) []byte {
		p := filepath.Join(s.dir, filepath.FromSlash(rel))
		fi, err := os.Lstat(p)
		if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxCounted {
			return nil
		}
		b, _ := os.ReadFile(p)
		return b
	}
	for _, e := range pl.write {
		if e.Type != TypeFile || e.Size > maxCounted {
			continue
		}
		rc, err := s.openObject(e.Hash)
		if err != nil {
			continue
		}
		to, err := io.ReadAll(io.LimitReader(rc, maxCounted+1))
		rc.Close()
		if err != nil {
			continue
		}
		add, del := count(current(e.Path), to)
		rep.Insertions += add
		rep.Deletions += del
	}
	for _, e := range pl.remove {
		if e.Type != TypeFile {
			continue
		}
		_, del := count(current(e.Path), nil)
		rep.Deletions += del
	}
}
