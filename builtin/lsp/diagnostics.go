package lsp

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gantry-dev/gantry/tool"
)

// maxDiagnostics bounds the errors appended to one write's result.
const maxDiagnostics = 20

// FileWritten tells the language server covering path that the file
// changed and returns its new errors as text to append to the Write or
// Edit result ("" when there are none, diagnostics are off, or no server
// covers the file). It starts the server if needed and waits at most
// [Options.DiagnosticsWait] for the server's verdict. Errors the server
// already reported before the change are not repeated; errors in other
// files that the change caused (a broken caller) are included.
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
	srv, err := m.server(ctx, name, cfg, wsRoot)
	if err != nil {
		return ""
	}
	before := srv.errorKeys()
	uri := pathToURI(path)
	since := srv.diagSeq(uri)
	uri, version, _, err := srv.syncDoc(path)
	if err != nil {
		return ""
	}
	start := time.Now()
	if _, fresh := srv.waitDiagnostics(ctx, uri, version, since, m.opts.DiagnosticsWait); fresh {
		// Diagnostics of dependent files follow the edited file's: take
		// what arrives until the server is quiet for a moment.
		srv.settle(ctx, m.opts.DiagnosticsSettle, m.opts.DiagnosticsWait-time.Since(start))
	}
	f := newFormatter(m, env)
	var lines []locLine
	var msgs []string
	for u, list := range srv.allDiagnostics() {
		old := before[u]
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
		return ""
	}
	slices.SortFunc(lines, func(a, b locLine) int {
		// The written file first, then the others by path.
		return cmp.Or(boolRank(a.path != path, b.path != path), cmp.Compare(a.path, b.path), cmp.Compare(a.line, b.line), cmp.Compare(a.col, b.col))
	})
	for i, l := range lines {
		if i == maxDiagnostics {
			msgs = append(msgs, fmt.Sprintf("… %d more", len(lines)-maxDiagnostics))
			break
		}
		msgs = append(msgs, fmt.Sprintf("%s:%d:%d: %s", f.rel(l.path), l.line, l.col, l.prefix))
	}
	return fmt.Sprintf("The language server (%s) reports %s after this change:\n%s", name, plural(len(lines), "new error"), strings.Join(msgs, "\n"))
}

// settle waits until no diagnostics were published for quiet, or at most
// limit.
func (s *server) settle(ctx context.Context, quiet, limit time.Duration) {
	if limit <= 0 {
		return
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
			return
		case <-deadline.C:
			q.Stop()
			return
		case <-ctx.Done():
			q.Stop()
			return
		case <-s.exit:
			q.Stop()
			return
		}
	}
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
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

func diagKey(d diagnostic) string { return d.Source + "\x00" + d.Message }

// errorKeys counts the current error diagnostics of every document.
func (s *server) errorKeys() map[string]map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]map[string]int{}
	for u, st := range s.diags {
		for _, d := range st.list {
			if d.Severity == 1 {
				if out[u] == nil {
					out[u] = map[string]int{}
				}
				out[u][diagKey(d)]++
			}
		}
	}
	return out
}

func (s *server) allDiagnostics() map[string][]diagnostic {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string][]diagnostic, len(s.diags))
	for u, st := range s.diags {
		out[u] = st.list
	}
	return out
}
