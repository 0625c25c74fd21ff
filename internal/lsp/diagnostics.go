package lsp

import (
	"cmp"
	"context"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gantry-dev/gantry/internal/textutil"

	"github.com/gantry-dev/gantry/tool"
)

// maxDiagnostics bounds the errors appended to one write's result.
const maxDiagnostics = 20

// lateLimit is how long diagnostics of a write are waited for before they
// are given up (a server that never answers for a file, or a session whose
// model never takes another turn).
const lateLimit = 2 * time.Minute

// freshQuietLimit is how long after a write's diagnostics arrived they are
// delivered even if the server keeps publishing (a server that never goes
// quiet).
const freshQuietLimit = 2 * time.Second

// watchKey names the pending diagnostics of one session on one server.
type watchKey struct {
	session string
	server  string // name + "\x00" + root, as in Manager.running
}

// watch is a set of written documents whose diagnostics have not been
// reported yet: the server was still starting or slower than
// DiagnosticsWait. Remind reports them once they are complete.
type watch struct {
	name     string
	srv      *server                   // nil while the server starts
	unsynced []string                  // paths written before the server was up
	baseline map[string]map[string]int // errors before the first unreported change
	targets  map[string]docTarget      // uri → the version whose diagnostics are awaited
	created  time.Time                 // the first unreported write
	fresh    time.Time                 // when all targets were first seen fresh
}

type docTarget struct {
	version int // the version sent
	since   int // the diagnostics sequence before it (servers without versions)
}

func sessionOf(env *tool.Env) string {
	if env == nil {
		return ""
	}
	return env.SessionID
}

// FileWritten tells the language server covering path that the file
// changed and returns its new errors as text to append to the Write or
// Edit result ("" when there are none, diagnostics are off, no server
// covers the file, or they are not there yet). It never waits for a server
// to start: a server that is not running is started in the background and
// the diagnostics of the change are delivered at the model's next turn by
// [Manager.Remind]. A running server is given at most
// [Options.DiagnosticsWait] (300 ms by default); what it reports later goes
// the same way. Errors the server already reported before the change are
// not repeated; errors in other files that the change caused (a broken
// caller) are included.
//
// It implements builtin/file's WriteObserver.
func (m *Manager) FileWritten(ctx context.Context, env *tool.Env, path string) string {
	root, servers, on, err := m.config(env)
	if err != nil || !on {
		return ""
	}
	name, cfg, ok := serverFor(servers, path)
	if !ok {
		return ""
	}
	wsRoot, ok := rootFor(root, env, path)
	if !ok {
		return ""
	}
	key := name + "\x00" + wsRoot
	wk := watchKey{session: sessionOf(env), server: key}
	srv := m.warm(key)
	if srv == nil {
		m.pendMu.Lock()
		w := m.pending[wk]
		if w == nil || w.srv != nil {
			// None yet, or one of a server that has died since.
			w = &watch{name: name, created: time.Now()}
			m.pending[wk] = w
		}
		if !slices.Contains(w.unsynced, path) {
			w.unsynced = append(w.unsynced, path)
		}
		m.pendMu.Unlock()
		m.startLate(key, name, cfg, wsRoot)
		return ""
	}
	return m.check(ctx, env, wk, srv, name, path)
}

// check sends path to the warm server srv and waits briefly for the
// diagnostics of every unreported change of the session.
func (m *Manager) check(ctx context.Context, env *tool.Env, wk watchKey, srv *server, name, path string) string {
	now := time.Now()
	m.pendMu.Lock()
	w := m.pending[wk]
	delete(m.pending, wk)
	if w != nil && w.srv != nil && w.srv != srv {
		w = nil // a server that has died since
	}
	var baseline map[string]map[string]int
	targets := map[string]docTarget{}
	created := now
	switch {
	case w == nil:
		baseline = srv.errorKeys()
	case w.srv == nil:
		// Written while the server started; nothing was sent yet.
		baseline = srv.errorKeys()
		created = w.created
		for _, p := range w.unsynced {
			if p != path {
				syncTarget(srv, p, targets)
			}
		}
	default:
		baseline, targets, created = w.baseline, w.targets, w.created
	}
	syncTarget(srv, path, targets)
	m.pendMu.Unlock()

	fresh, settled := false, false
	m.mu.Lock()
	wait := m.wait
	m.mu.Unlock()
	if wait > 0 {
		start := time.Now()
		fresh = srv.waitFresh(ctx, targets, wait)
		if fresh {
			// Diagnostics of dependent files follow the edited file's:
			// take what arrives until the server is quiet for a moment.
			settled = srv.settle(ctx, m.opts.DiagnosticsSettle, wait-time.Since(start))
		}
	}
	text, keys := "", baseline
	if fresh {
		text, keys = m.report(env, srv, name, baseline, path, "after this change")
	}
	if !settled {
		// The rest arrives later: Remind delivers it at the next turn.
		m.pendMu.Lock()
		if m.pending[wk] == nil {
			nw := &watch{name: name, srv: srv, baseline: maxKeys(baseline, keys), targets: targets, created: created}
			if fresh {
				nw.fresh = time.Now()
			}
			m.pending[wk] = nw
		}
		m.pendMu.Unlock()
	}
	return text
}

// syncTarget sends path's content and records the version awaited.
func syncTarget(srv *server, path string, targets map[string]docTarget) {
	uri := pathToURI(path)
	since := srv.diagSeq(uri)
	uri, version, _, err := srv.syncDoc(path)
	if err != nil {
		return
	}
	targets[uri] = docTarget{version: version, since: since}
}

// Remind returns, for the model's next turn, the new errors of the
// session's writes whose diagnostics were not complete when the Write or
// Edit result was returned, once the server has reported them and is
// quiet for [Options.DiagnosticsSettle]. The ack marks them delivered. It
// implements [tool.Reminder]: the agent asks the session's Reminder
// service for it before every model request. Diagnostics a
// server has not produced within two minutes of the write are given up.
func (m *Manager) Remind(_ context.Context, env *tool.Env) (string, func(), error) {
	sid := sessionOf(env)
	m.mu.Lock()
	closed := m.closed
	m.mu.Unlock()
	m.pendMu.Lock()
	defer m.pendMu.Unlock()
	if len(m.pending) == 0 {
		return "", nil, nil
	}
	if closed {
		clear(m.pending)
		return "", nil, nil
	}
	keys := slices.SortedFunc(maps.Keys(m.pending), func(a, b watchKey) int {
		return cmp.Or(cmp.Compare(a.session, b.session), cmp.Compare(a.server, b.server))
	})
	var texts []string
	delivered := map[watchKey]*watch{}
	for _, wk := range keys {
		w := m.pending[wk]
		if wk.session != sid {
			continue
		}
		if time.Since(w.created) > lateLimit || w.srv != nil && !w.srv.alive() {
			delete(m.pending, wk)
			continue
		}
		if w.srv == nil || !w.srv.isFresh(w.targets) {
			continue
		}
		if w.fresh.IsZero() {
			w.fresh = time.Now()
		}
		if !w.srv.quietFor(m.opts.DiagnosticsSettle) && time.Since(w.fresh) < freshQuietLimit {
			continue
		}
		text, _ := m.report(env, w.srv, w.name, w.baseline, "", "after your recent changes (reported late: the server was not done when the Write/Edit result was returned)")
		if text == "" {
			delete(m.pending, wk)
			continue
		}
		texts = append(texts, text)
		delivered[wk] = w
	}
	if len(texts) == 0 {
		return "", nil, nil
	}
	return strings.Join(texts, "\n\n"), func() {
		m.pendMu.Lock()
		defer m.pendMu.Unlock()
		for wk, w := range delivered {
			if m.pending[wk] == w {
				delete(m.pending, wk)
			}
		}
	}, nil
}

// report formats the server's current errors that are not in baseline
// (the written file first) and returns them with the error counts they
// were computed from.
func (m *Manager) report(env *tool.Env, srv *server, name string, baseline map[string]map[string]int, path, when string) (string, map[string]map[string]int) {
	all, keys := srv.snapshot()
	f := newFormatter(m, env)
	var lines []locLine
	for u, list := range all {
		old := maps.Clone(baseline[u])
		for _, d := range list {
			if d.Severity != 1 {
				continue
			}
			k := diagKey(d)
			if old[k] > 0 {
				old[k]--
				continue
			}
			p, err := uriToPath(u)
			if err != nil {
				continue
			}
			line, col := f.fromLSP(p, d.Range.Start)
			lines = append(lines, locLine{path: p, line: line, col: col, prefix: oneLine(d.Message)})
		}
	}
	if len(lines) == 0 {
		return "", keys
	}
	slices.SortFunc(lines, func(a, b locLine) int {
		// The written file first, then the others by path.
		return cmp.Or(boolRank(a.path != path, b.path != path), cmp.Compare(a.path, b.path), cmp.Compare(a.line, b.line), cmp.Compare(a.col, b.col))
	})
	var msgs []string
	for i, l := range lines {
		if i == maxDiagnostics {
			msgs = append(msgs, fmt.Sprintf("… %d more", len(lines)-maxDiagnostics))
			break
		}
		msgs = append(msgs, fmt.Sprintf("%s:%d:%d: %s", f.rel(l.path), l.line, l.col, l.prefix))
	}
	return fmt.Sprintf("The language server (%s) reports %s %s:\n%s", name, plural(len(lines), "new error"), when, strings.Join(msgs, "\n")), keys
}

// maxKeys is the larger count of every error of a and b.
func maxKeys(a, b map[string]map[string]int) map[string]map[string]int {
	out := map[string]map[string]int{}
	for _, src := range []map[string]map[string]int{a, b} {
		for u, ks := range src {
			if out[u] == nil {
				out[u] = map[string]int{}
			}
			for k, n := range ks {
				out[u][k] = max(out[u][k], n)
			}
		}
	}
	return out
}

// settle waits until no diagnostics were published for quiet, or at most
// limit; it reports whether the server went quiet.
func (s *server) settle(ctx context.Context, quiet, limit time.Duration) bool {
	if limit <= 0 {
		return false
	}
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		ch := s.diagsCh
		s.mu.Unlock()
		q := time.NewTimer(quiet)
		select {
		case <-ch:
			q.Stop()
		case <-q.C:
			return true
		case <-deadline.C:
			q.Stop()
			return false
		case <-ctx.Done():
			q.Stop()
			return false
		case <-s.exit:
			q.Stop()
			return false
		}
	}
}

// waitFresh waits at most d until the diagnostics of every target are
// fresh.
func (s *server) waitFresh(ctx context.Context, targets map[string]docTarget, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		s.mu.Lock()
		ch := s.diagsCh
		s.mu.Unlock()
		if s.isFresh(targets) {
			return true
		}
		select {
		case <-ch:
		case <-timer.C:
			return false
		case <-ctx.Done():
			return false
		case <-s.exit:
			return false
		}
	}
}

// isFresh reports whether the server has published diagnostics for every
// target's version (or later; for servers that do not report versions, any
// publish newer than the target's sequence).
func (s *server) isFresh(targets map[string]docTarget) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for uri, t := range targets {
		st := s.diags[uri]
		if st == nil || !(st.version >= t.version || st.version < 0 && st.seq > t.since) {
			return false
		}
	}
	return true
}

// quietFor reports whether nothing was published for d.
func (s *server) quietFor(d time.Duration) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return time.Since(s.lastPub) >= d
}

func boolRank(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}

func oneLine(s string) string {
	return textutil.OneLine(s, 300)
}

func diagKey(d diagnostic) string { return d.Source + "\x00" + d.Message }

// errorKeys counts the current error diagnostics of every document.
func (s *server) errorKeys() map[string]map[string]int {
	_, keys := s.snapshot()
	return keys
}

// snapshot returns every document's diagnostics and the counts of their
// errors, taken together.
func (s *server) snapshot() (map[string][]diagnostic, map[string]map[string]int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	all := make(map[string][]diagnostic, len(s.diags))
	keys := map[string]map[string]int{}
	for u, st := range s.diags {
		all[u] = st.list
		for _, d := range st.list {
			if d.Severity == 1 {
				if keys[u] == nil {
					keys[u] = map[string]int{}
				}
				keys[u][diagKey(d)]++
			}
		}
	}
	return all, keys
}

// servedExtensions walks root (at most maxScan entries, skipping hidden
// directories, vendor and node_modules) and returns which of exts occur.
func servedExtensions(ctx context.Context, root string, exts map[string]bool) map[string]bool {
	const maxScan = 5000
	found := map[string]bool{}
	n := 0
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || ctx.Err() != nil {
			return filepath.SkipDir
		}
		if n++; n > maxScan || len(found) == len(exts) {
			return filepath.SkipAll
		}
		if d.IsDir() {
			if p != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "vendor" || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if e := strings.ToLower(filepath.Ext(d.Name())); exts[e] {
			found[e] = true
		}
		return nil
	})
	return found
}
