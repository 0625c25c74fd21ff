package durable

import (
	"cmp"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/gantry-dev/gantry/permission"
	"github.com/gantry-dev/gantry/settings"
	"github.com/gantry-dev/gantry/tool"
)

// The runtime state that travels with a run: what a worker's runtime
// learns during a call and another worker needs to behave the same — the
// allow rules the user granted for the session ("allow for this session",
// "always allow") and the file read-state (path and hash of what the
// model read or wrote, for Edit's must-read-first and staleness checks).
// The workflow keeps both and gives each tool call what concerns it; the
// worker checks the read-state against the file before using it. It is
// fail-closed: a rule that does not parse is not applied (the call asks
// again), a file whose hash differs is not marked read (the model is told
// to read it again).

// errNoUpdater is Apply's error on a runtime whose decider takes no rules.
var errNoUpdater = errors.New("durable: the permission decider takes no rules")

// Bounds of the carried state.
const (
	maxCarriedFiles  = 500
	maxCarriedGrants = 200
	// maxVerifySize is the largest file whose read-state is verified and
	// carried (Read's own hard limit for a whole file).
	maxVerifySize = 10 << 20
)

// fileStates is a runtime's file read-state: tool.FileStates whose entries
// are numbered, so that a call can report the entries it recorded.
type fileStates struct {
	mu    sync.Mutex
	seq   uint64
	m     map[string]fileEntry
	order []string
}

type fileEntry struct {
	st  tool.FileState
	seq uint64
}

var _ tool.FileStates = (*fileStates)(nil)

func newFileStates() *fileStates { return &fileStates{m: map[string]fileEntry{}} }

// Get implements tool.FileStates.
func (f *fileStates) Get(path string) (tool.FileState, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	e, ok := f.m[path]
	return e.st, ok
}

// Put implements tool.FileStates.
func (f *fileStates) Put(st tool.FileState) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.put(st)
}

func (f *fileStates) put(st tool.FileState) {
	if _, ok := f.m[st.Path]; !ok {
		f.order = append(f.order, st.Path)
	}
	f.seq++
	f.m[st.Path] = fileEntry{st: st, seq: f.seq}
	for len(f.m) > 2*maxCarriedFiles && len(f.order) > 0 {
		delete(f.m, f.order[0])
		f.order = f.order[1:]
	}
}

// Delete implements tool.FileStates.
func (f *fileStates) Delete(path string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.delete(path)
}

func (f *fileStates) delete(path string) {
	delete(f.m, path)
	if i := slices.Index(f.order, path); i >= 0 {
		f.order = slices.Delete(f.order, i, i+1)
	}
}

// mark is the sequence number now: since(mark) lists what was recorded
// after it.
func (f *fileStates) mark() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.seq
}

// since returns the entries recorded after mark that can travel (those
// with a hash), in the order they were recorded.
func (f *fileStates) since(mark uint64) []tool.FileState {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []fileEntry
	for _, e := range f.m {
		if e.seq > mark && e.st.Hash != "" {
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(a, b fileEntry) int { return cmp.Compare(a.seq, b.seq) })
	sts := make([]tool.FileState, len(out))
	for i, e := range out {
		sts[i] = e.st
	}
	return sts
}

// seed takes the read-state the run carries for this call. An entry is
// used only if the file on this worker has the recorded hash now; the
// runtime's own entry for the path is kept when it is newer, and dropped
// when the run knows better and the file does not match (the model must
// read the file again).
func (f *fileStates) seed(carried []tool.FileState) {
	for _, c := range carried {
		if c.Hash == "" || !filepath.IsAbs(c.Path) {
			continue
		}
		f.mu.Lock()
		cur, ok := f.m[c.Path]
		f.mu.Unlock()
		if ok && (cur.st.Hash == c.Hash || cur.st.At.After(c.At)) {
			continue
		}
		st, match := verifyFile(c)
		f.mu.Lock()
		switch {
		case match:
			f.put(st)
		case ok:
			f.delete(c.Path)
		}
		f.mu.Unlock()
	}
}

// verifyFile reports whether the file at st.Path has st.Hash now, and
// returns st with the file's current size and modification time.
func verifyFile(st tool.FileState) (tool.FileState, bool) {
	fi, err := os.Stat(st.Path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxVerifySize {
		return st, false
	}
	h, err := hashFile(st.Path)
	if err != nil || h != st.Hash {
		return st, false
	}
	st.Size, st.ModTime = fi.Size(), fi.ModTime()
	return st, true
}

// grants records the allow rules the user grants on a runtime (through
// "allow for this session" or "always allow") and applies the rules the
// run carries. It wraps the workspace's permission updater.
type grants struct {
	mu      sync.Mutex
	up      permission.Updater
	applied map[string]bool
}

var _ permission.Updater = (*grants)(nil)

// Suggest implements permission.Updater.
func (g *grants) Suggest(req *permission.Request) []string {
	if g.up == nil {
		return nil
	}
	return g.up.Suggest(req)
}

// WritableScopes implements permission.Updater.
func (g *grants) WritableScopes() []settings.Scope {
	if g.up == nil {
		return nil
	}
	return g.up.WritableScopes()
}

// Apply implements permission.Updater; the allow rules of an update that
// took effect are recorded.
func (g *grants) Apply(u permission.Update, paths map[settings.Scope]string) error {
	if g.up == nil {
		return errNoUpdater
	}
	if err := g.up.Apply(u, paths); err != nil {
		return err
	}
	if u.Kind == settings.Allow {
		g.mu.Lock()
		for _, r := range u.Rules {
			g.applied[r] = true
		}
		g.mu.Unlock()
	}
	return nil
}

// seed applies the carried rules this runtime does not have, each to the
// session only; a rule that does not apply is skipped (the call asks).
func (g *grants) seed(rules []string) {
	if g.up == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, r := range rules {
		if g.applied[r] {
			continue
		}
		if g.up.Apply(permission.Update{Destination: permission.ToSession, Kind: settings.Allow, Rules: []string{r}}, nil) == nil {
			g.applied[r] = true
		}
	}
}

// newSince returns the rules applied on this runtime that are not in
// known, sorted.
func (g *grants) newSince(known []string) []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []string
	for r := range g.applied {
		if !slices.Contains(known, r) {
			out = append(out, r)
		}
	}
	slices.Sort(out)
	return out
}

// Workflow side (deterministic: no map iteration, no I/O).

// carryFiles returns the carried read-state entries a call may need: those
// whose file's name appears as a string in the call's input. (Matching by
// name keeps the history small; an entry sent needlessly is harmless, one
// not sent means the model reads the file again.)
func carryFiles(files []tool.FileState, input json.RawMessage) []tool.FileState {
	if len(files) == 0 {
		return nil
	}
	var v any
	if json.Unmarshal(input, &v) != nil {
		return nil
	}
	names := map[string]bool{}
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			if x != "" && len(x) < 4096 {
				names[filepath.Base(x)] = true
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	var out []tool.FileState
	for _, f := range files {
		if names[filepath.Base(f.Path)] {
			out = append(out, f)
		}
	}
	return out
}

// mergeFiles records a call's read-state in the run's: an entry replaces
// the one for its path unless that one is newer; the oldest are dropped
// beyond maxCarriedFiles.
func mergeFiles(have, got []tool.FileState) []tool.FileState {
	for _, g := range got {
		i := slices.IndexFunc(have, func(h tool.FileState) bool { return h.Path == g.Path })
		switch {
		case i < 0:
			have = append(have, g)
		case !have[i].At.After(g.At):
			have[i] = g
		}
	}
	if len(have) > maxCarriedFiles {
		slices.SortStableFunc(have, func(a, b tool.FileState) int { return a.At.Compare(b.At) })
		have = slices.Clone(have[len(have)-maxCarriedFiles:])
	}
	return have
}

// mergeGrants adds a call's new rules to the run's, in order, without
// duplicates, at most maxCarriedGrants.
func mergeGrants(have, got []string) []string {
	for _, r := range got {
		if !slices.Contains(have, r) && len(have) < maxCarriedGrants {
			have = append(have, r)
		}
	}
	return have
}
