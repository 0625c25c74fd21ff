package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// pruneGrace protects what another process may be recording right now:
// manifests and objects younger than this are never collected.
const pruneGrace = time.Hour

// PruneOptions configure [Store.Prune].
type PruneOptions struct {
	// SessionGone reports whether a session ended for good (its
	// transcript was deleted): its checkpoints go whatever their age. Nil
	// means age alone decides.
	SessionGone func(id string) bool
}

// PruneReport says what [Store.Prune] removed.
type PruneReport struct {
	Checkpoints int `json:"checkpoints"`
	Manifests   int `json:"manifests"`
	Objects     int `json:"objects"`
}

// Prune removes checkpoints older than Options.Retention and those of
// ended sessions, then the manifests and objects no remaining checkpoint
// (or the tip) uses. The manifest of the tip always stays.
func (s *Store) Prune(ctx context.Context, o PruneOptions) (*PruneReport, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rep := &PruneReport{}
	infos, _ := s.List("")
	cutoff := s.now().Add(-s.opts.Retention)
	keep := map[string]bool{}
	dropped := map[string]bool{} // records in journals that go
	for _, in := range infos {
		gone := o.SessionGone != nil && in.Session != "" && o.SessionGone(in.Session)
		if in.Created.Before(cutoff) || gone {
			if err := os.Remove(filepath.Join(s.root, "refs", in.ID+".json")); err == nil {
				rep.Checkpoints++
			} else if !dropped[in.ID] {
				dropped[in.ID] = true
				rep.Checkpoints++
			}
			continue
		}
		if in.Manifest != "" {
			keep[in.Manifest] = true
		}
	}
	if s.tipLater {
		keep[s.tipHash] = true
	}
	if b, err := os.ReadFile(filepath.Join(s.root, "tip")); err == nil {
		h, _, _ := strings.Cut(strings.TrimSpace(string(b)), " ")
		keep[h] = true
	}
	objects := map[string]bool{}
	// Journals: one another process may still be writing (young) stays
	// whole; every other one (this Store's own included) is unpacked —
	// what is kept written loose, the rest dropped — and removed.
	type packed struct {
		path string
		recs []jrec
	}
	var unpack []packed
	if err := s.eachJournal(func(p string, recs []jrec) {
		if fi, err := os.Stat(p); err == nil && s.now().Sub(fi.ModTime()) < pruneGrace && p != s.ownJournal() {
			for _, r := range recs {
				if r.typ == 'm' {
					keep[r.key] = true
				}
			}
			return
		}
		unpack = append(unpack, packed{p, recs})
	}); err != nil {
		return rep, err
	}
	for h := range keep {
		if _, err := os.Stat(s.manifestPath(h)); err == nil {
			continue // loose: below
		}
		m, err := s.getManifest(h)
		if err != nil {
			continue // a deferred checkpoint's, or never stored
		}
		for i := range m.entries {
			if m.entries[i].Type == TypeFile {
				objects[m.entries[i].Hash] = true
			}
		}
	}
	ents, err := os.ReadDir(filepath.Join(s.root, "manifests"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return rep, fmt.Errorf("checkpoint: %w", err)
	}
	for _, e := range ents {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		h := e.Name()
		if !keep[h] {
			if s.young(e) {
				keep[h] = true // maybe being recorded: keep its objects too
			} else {
				if os.Remove(s.manifestPath(h)) == nil {
					rep.Manifests++
				}
				continue
			}
		}
		m, err := s.getManifest(h)
		if err != nil {
			return rep, fmt.Errorf("checkpoint: prune: %w", err)
		}
		for i := range m.entries {
			if m.entries[i].Type == TypeFile {
				objects[m.entries[i].Hash] = true
			}
		}
	}
	for _, u := range unpack {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		for _, r := range u.recs {
			var p string
			switch {
			case r.typ == 'r' && !dropped[r.key]:
				p = filepath.Join(s.root, "refs", r.key+".json")
			case r.typ == 'm' && keep[r.key] && isHash(r.key):
				p = s.manifestPath(r.key)
			case r.typ == 'o' && objects[r.key] && isHash(r.key):
				p = s.objectPath(r.key)
			case r.typ == 'm':
				rep.Manifests++
				continue
			case r.typ == 'o':
				rep.Objects++
				continue
			default:
				continue
			}
			if _, err := os.Lstat(p); err == nil {
				continue
			}
			b, err := jbody(r.jloc)
			if err == nil {
				err = os.MkdirAll(filepath.Dir(p), 0o700)
			}
			if err == nil {
				err = writeAtomic(p, b)
			}
			if err != nil {
				return rep, fmt.Errorf("checkpoint: prune: %w", err)
			}
		}
		if u.path == s.ownJournal() {
			s.endJournal() // the next record starts a new journal
		}
		if err := os.Remove(u.path); err != nil {
			return rep, fmt.Errorf("checkpoint: prune: %w", err)
		}
	}
	s.j.mu.Lock()
	s.j.other, s.j.read = nil, false
	s.j.mu.Unlock()
	err = filepath.WalkDir(filepath.Join(s.root, "objects"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		h := filepath.Base(filepath.Dir(p)) + d.Name()
		if !objects[h] && !s.young(d) && os.Remove(p) == nil {
			rep.Objects++
		}
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return rep, fmt.Errorf("checkpoint: %w", err)
	}
	return rep, nil
}

func (s *Store) young(d fs.DirEntry) bool {
	fi, err := d.Info()
	return err == nil && s.now().Sub(fi.ModTime()) < pruneGrace
}

// PruneIfDue runs [Store.Prune] when the last prune of the store is older
// than every (a marker file records it), so that a program may call it at
// each start cheaply. It reports whether it pruned.
func (s *Store) PruneIfDue(ctx context.Context, every time.Duration, o PruneOptions) (bool, error) {
	marker := filepath.Join(s.root, "last-prune")
	if _, err := os.Stat(s.root); errors.Is(err, fs.ErrNotExist) {
		return false, nil // nothing recorded: nothing to prune
	}
	if fi, err := os.Stat(marker); err == nil && s.now().Sub(fi.ModTime()) < every {
		return false, nil
	}
	if err := writeAtomic(marker, []byte(s.now().UTC().Format(time.RFC3339)+"\n")); err != nil {
		return false, err
	}
	_, err := s.Prune(ctx, o)
	return err == nil, err
}
