// Package lsp is a language-server client (JSON-RPC over stdio, the few
// protocol types Gantry needs) and the manager of a session's servers:
// started on demand, reused, configured from settings, their diagnostics
// kept for the edit tools. builtin/lsp is the LSP tool over it.
package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gantry-dev/gantry/settings"
	"github.com/gantry-dev/gantry/tool"
)

// Defaults of [Options].
const (
	DefaultRequestTimeout    = 30 * time.Second
	DefaultStartTimeout      = 60 * time.Second
	DefaultDiagnosticsWait   = 300 * time.Millisecond
	DefaultDiagnosticsSettle = 100 * time.Millisecond
	// MaxDiagnosticsWait bounds the settings' lspDiagnosticsWaitMs.
	MaxDiagnosticsWait     = 5 * time.Second
	DefaultShutdownTimeout = 3 * time.Second
	DefaultMaxRestarts     = 1
)

// ServerConfig describes one language server. The JSON form is the one of
// `.gantry/lsp.json` and of the settings' `lspServers` (the keys of Claude
// Code's `.lsp.json`):
//
//	{"rust": {"command": "rust-analyzer", "extensionToLanguage": {".rs": "rust"}}}
type ServerConfig struct {
	// Command is the server binary: a name looked up on PATH (and, failing
	// that, in the Go bin directories) or a path. Required.
	Command string `json:"command"`
	// Args are its arguments (gopls needs none; many servers want
	// "--stdio").
	Args []string `json:"args,omitempty"`
	// ExtensionToLanguage maps the file extensions the server covers
	// (".go", with the dot, lower case) to LSP language ids ("go").
	// Required: a server covers no file without it.
	ExtensionToLanguage map[string]string `json:"extensionToLanguage"`
	// Env are extra environment variables of the server process (added to
	// the allow-listed process environment of procenv.Build).
	Env map[string]string `json:"env,omitempty"`
	// InitializationOptions are sent in the initialize request.
	InitializationOptions json.RawMessage `json:"initializationOptions,omitempty"`
	// Settings answer the server's workspace/configuration requests (a
	// section "a.b" is looked up as nested keys).
	Settings json.RawMessage `json:"settings,omitempty"`
}

// Gopls is the built-in configuration of gopls, the Go language server.
// scripts/setup installs it with `go install golang.org/x/tools/gopls@v0.23.0`.
func Gopls() ServerConfig {
	return ServerConfig{
		Command:             "gopls",
		ExtensionToLanguage: map[string]string{".go": "go"},
		// Report the errors a change causes in other packages at once
		// rather than after gopls's default 1 s pause, so that they reach
		// the result of the Write or Edit that caused them.
		InitializationOptions: json.RawMessage(`{"diagnosticsDelay":"50ms"}`),
		// No telemetry child process, no counter files in the user's
		// config directory.
		Env: map[string]string{"GOTELEMETRY": "off"},
	}
}

// Options configure a [Manager]. The zero value is ready to use: gopls for
// Go files, servers from the project's configuration, the default
// timeouts, diagnostics after writes on.
type Options struct {
	// Servers are servers configured by the program, by name; they take
	// precedence over the built-in gopls but are overridden by the user's
	// and project's configuration of the same name.
	Servers map[string]ServerConfig
	// NoBuiltin leaves gopls out.
	NoBuiltin bool
	// NoProjectConfig ignores `.gantry/lsp.json` and the settings'
	// `lspServers` and `lspDiagnostics` (for programs that configure
	// everything themselves).
	NoProjectConfig bool
	// Root is the project root the servers are started in. Empty means the
	// working directory of the first call.
	Root string
	// Trusted overrides the trust store's answer for the project (see
	// package settings): servers configured by an untrusted project are not
	// started. Nil asks the trust store.
	Trusted *bool
	// NoDiagnostics turns off the diagnostics appended to Write and Edit
	// results (the settings' "lspDiagnostics": false does the same).
	NoDiagnostics bool
	// Prestart starts, in the background as the manager is created, the
	// servers covering files of the project (Root, scanned for their
	// extensions) so that they are warm by the first edit — for
	// interactive sessions; only in a trusted folder (or with
	// NoProjectConfig). False (the default) starts a server at the
	// first write of a file it covers, or the first LSP call: a run that
	// edits nothing never starts one.
	Prestart bool
	// RequestTimeout bounds one request (default 30 s); StartTimeout bounds
	// starting and initialising a server (default 60 s); ShutdownTimeout
	// bounds a server's orderly shutdown (default 3 s).
	RequestTimeout, StartTimeout, ShutdownTimeout time.Duration
	// DiagnosticsWait is the longest a Write or Edit result waits for a
	// running server's diagnostics of the change (zero: the settings'
	// lspDiagnosticsWaitMs, else 300 ms; negative: no wait). A result never
	// waits for a server to start; diagnostics that come later are given
	// to the model at its next turn (see [Manager.Remind]).
	DiagnosticsWait time.Duration
	// DiagnosticsSettle is how long the server must publish nothing, after
	// the written file's diagnostics arrived, for the errors it caused in
	// other files to count as complete (default 100 ms; within
	// DiagnosticsWait).
	DiagnosticsSettle time.Duration
	// MaxRestarts is how often a crashed server is restarted in a session
	// (default 1; negative means never).
	MaxRestarts int
	// Getenv and Environ read the environment (default os.Getenv and
	// os.Environ).
	Getenv  func(string) string
	Environ func() []string
}

func (o Options) withDefaults() Options {
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = DefaultRequestTimeout
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = DefaultStartTimeout
	}
	if o.DiagnosticsSettle <= 0 {
		o.DiagnosticsSettle = DefaultDiagnosticsSettle
	}
	if o.ShutdownTimeout <= 0 {
		o.ShutdownTimeout = DefaultShutdownTimeout
	}
	if o.MaxRestarts == 0 {
		o.MaxRestarts = DefaultMaxRestarts
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.Environ == nil {
		o.Environ = os.Environ
	}
	return o
}

// ErrNoServer is wrapped by the error for a file no configured server
// covers.
var ErrNoServer = errors.New("no language server configured")

// Manager runs the language servers of one session: one per configured
// server and workspace root, started on first use and shut down by
// [Manager.Close]. It is the session service the LSP tool uses
// (tool.Use[*lsp.Manager]) and, through [Manager.FileWritten], the
// observer of file writes that reports new diagnostics. It is safe for
// concurrent use.
type Manager struct {
	opts Options

	ctx    context.Context // background starts; cancelled by Close
	cancel context.CancelFunc
	bg     sync.WaitGroup

	pendMu  sync.Mutex
	pending map[watchKey]*watch

	mu        sync.Mutex
	root      string
	loaded    bool
	servers   map[string]ServerConfig // by name
	diagsOn   bool
	wait      time.Duration // DiagnosticsWait, or the settings', or the default
	cfgErr    error
	running   map[string]*slot // name + "\x00" + root
	starting  map[string]bool  // background starts under way, by running's key
	untrusted bool             // the project folder is not trusted (no prestart)
	closed    bool
}

type slot struct {
	mu       sync.Mutex // held while starting
	srv      *server
	restarts int
	lastErr  error
}

// NewManager returns a manager; no server starts until it is needed,
// unless [Options.Prestart] asks for the project's servers at once (in the
// background).
func NewManager(opts Options) *Manager {
	m := &Manager{opts: opts.withDefaults(), running: make(map[string]*slot), starting: map[string]bool{}, pending: map[watchKey]*watch{}}
	m.ctx, m.cancel = context.WithCancel(context.Background())
	if opts.Prestart && opts.Root != "" {
		m.bg.Add(1)
		go func() {
			defer m.bg.Done()
			m.prestart()
		}()
	}
	return m
}

// prestart starts the servers covering the extensions found in the
// project.
func (m *Manager) prestart() {
	root, servers, _, err := m.config(nil)
	if err != nil {
		return
	}
	m.mu.Lock()
	untrusted := m.untrusted
	m.mu.Unlock()
	if untrusted {
		// A server runs the repository's build tooling (gopls runs go
		// list): not before the person acts in a folder they have not
		// trusted.
		return
	}
	exts := map[string]bool{}
	for _, c := range servers {
		for e := range c.ExtensionToLanguage {
			exts[strings.ToLower(e)] = true
		}
	}
	for e := range servedExtensions(m.ctx, root, exts) {
		if name, cfg, ok := serverFor(servers, "x"+e); ok {
			m.startLate(name+"\x00"+root, name, cfg, root)
		}
	}
}

// warm returns the running server of key without waiting: nil when it is
// not running, or starting.
func (m *Manager) warm(key string) *server {
	m.mu.Lock()
	sl := m.running[key]
	m.mu.Unlock()
	if sl == nil || !sl.mu.TryLock() {
		return nil
	}
	defer sl.mu.Unlock()
	if sl.srv != nil && sl.srv.alive() {
		return sl.srv
	}
	return nil
}

// startLate starts the server of key in the background (once at a time)
// and then sends it the documents written while it started.
func (m *Manager) startLate(key, name string, cfg ServerConfig, root string) {
	m.mu.Lock()
	if m.closed || m.starting[key] {
		m.mu.Unlock()
		return
	}
	m.starting[key] = true
	m.bg.Add(1)
	m.mu.Unlock()
	go func() {
		defer m.bg.Done()
		srv, err := m.server(m.ctx, name, cfg, root)
		m.mu.Lock()
		delete(m.starting, key)
		m.mu.Unlock()
		m.adopt(key, srv, err)
	}()
}

// adopt sends the documents written while the server of key started (or
// drops them if it could not start).
func (m *Manager) adopt(key string, srv *server, err error) {
	m.pendMu.Lock()
	defer m.pendMu.Unlock()
	for wk, w := range m.pending {
		if wk.server != key || w.srv != nil {
			continue
		}
		if err != nil {
			delete(m.pending, wk)
			continue
		}
		w.srv, w.baseline, w.targets = srv, srv.errorKeys(), map[string]docTarget{}
		for _, p := range w.unsynced {
			syncTarget(srv, p, w.targets)
		}
		w.unsynced = nil
	}
}

// config loads the server configuration once, for the project root.
func (m *Manager) config(env *tool.Env) (string, map[string]ServerConfig, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return "", nil, false, errors.New("lsp: the session's language servers are shut down")
	}
	if m.loaded {
		return m.root, m.servers, m.diagsOn, m.cfgErr
	}
	m.loaded = true
	root := m.opts.Root
	if root == "" && env != nil {
		root = env.WorkDir
	}
	if root == "" {
		m.cfgErr = errors.New("lsp: no project root (the call has no working directory)")
		return "", nil, false, m.cfgErr
	}
	m.root = filepath.Clean(root)
	m.servers = map[string]ServerConfig{}
	if !m.opts.NoBuiltin {
		m.servers["gopls"] = Gopls()
	}
	maps.Copy(m.servers, m.opts.Servers)
	m.diagsOn = !m.opts.NoDiagnostics
	m.wait = m.opts.DiagnosticsWait
	if m.wait == 0 {
		m.wait = DefaultDiagnosticsWait
	}
	if !m.opts.NoProjectConfig {
		user, project, diags, wait, trusted, err := loadProjectConfig(m.root, m.opts)
		if err != nil {
			m.cfgErr = err
			return "", nil, false, err
		}
		maps.Copy(m.servers, user)
		maps.Copy(m.servers, project)
		if diags != nil && !*diags {
			m.diagsOn = false
		}
		m.untrusted = !trusted
		if wait != nil && m.opts.DiagnosticsWait == 0 {
			m.wait = min(*wait, MaxDiagnosticsWait)
		}
	}
	return m.root, m.servers, m.diagsOn, nil
}

// loadProjectConfig reads the settings' lspServers (user scope always,
// project and local scopes only when the folder is trusted: package
// settings drops them otherwise) and <root>/.gantry/lsp.json (trusted
// folders only: it names commands to run).
func loadProjectConfig(root string, opts Options) (user, project map[string]ServerConfig, diags *bool, wait *time.Duration, trusted bool, err error) {
	st, err := settings.Load(settings.Options{ProjectDir: root, Getenv: opts.Getenv, Trusted: opts.Trusted})
	if err != nil {
		return nil, nil, nil, nil, false, fmt.Errorf("lsp: %w", err)
	}
	user, project = map[string]ServerConfig{}, map[string]ServerConfig{}
	// Sources run from the strongest (policy, local) to the weakest
	// (user): apply them backwards so that stronger scopes win.
	for i := len(st.Sources) - 1; i >= 0; i-- {
		src := st.Sources[i]
		dst := project
		if src.Scope == settings.ScopeUser {
			dst = user
		}
		for name, raw := range src.File.LSPServers {
			var c ServerConfig
			if err := json.Unmarshal(raw, &c); err != nil {
				return nil, nil, nil, nil, false, fmt.Errorf("lsp: %s: lspServers.%s: %w", src.Path, name, err)
			}
			dst[name] = c
		}
	}
	if on, scope := st.LSPDiagnostics(); scope != "" {
		diags = &on
	}
	if d, scope := st.LSPDiagnosticsWait(); scope != "" {
		if d == 0 {
			d = -1 // 0 ms: no wait
		}
		wait = &d
	}
	if st.Trusted {
		p := filepath.Join(root, ".gantry", "lsp.json")
		b, err := os.ReadFile(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return nil, nil, nil, nil, false, fmt.Errorf("lsp: %w", err)
		default:
			var m map[string]ServerConfig
			if err := json.Unmarshal(b, &m); err != nil {
				return nil, nil, nil, nil, false, fmt.Errorf("lsp: %s: %w", p, err)
			}
			for name, c := range m {
				if _, set := project[name]; !set {
					project[name] = c
				}
			}
		}
	}
	return user, project, diags, wait, st.Trusted, nil
}

// serverFor returns the name and configuration of the server covering
// path (by extension; names in order, first wins).
func serverFor(servers map[string]ServerConfig, path string) (string, ServerConfig, bool) {
	ext := strings.ToLower(filepath.Ext(path))
	if ext == "" {
		return "", ServerConfig{}, false
	}
	for _, name := range slices.Sorted(maps.Keys(servers)) {
		c := servers[name]
		if _, ok := c.ExtensionToLanguage[ext]; ok {
			return name, c, true
		}
	}
	return "", ServerConfig{}, false
}

// noServerError explains how to configure a server for path.
func noServerError(path string) error {
	ext := filepath.Ext(path)
	if ext == "" {
		ext = ".ext"
	}
	return fmt.Errorf(`%w for %s. Configure one in .gantry/lsp.json (or "lspServers" in settings), e.g. {"name": {"command": "server-binary", "args": ["--stdio"], "extensionToLanguage": {"%s": "language-id"}}}; gopls is built in for Go`, ErrNoServer, filepath.Base(path), strings.ToLower(ext))
}

// rootFor returns the workspace root of an absolute path: the project root
// or an additional directory of the session that contains it (the deepest).
func rootFor(project string, env *tool.Env, path string) (string, bool) {
	roots := []string{project}
	if env != nil {
		roots = append(roots, env.AdditionalDirs...)
	}
	best := ""
	for _, r := range roots {
		if r == "" || !filepath.IsAbs(r) {
			continue
		}
		r = filepath.Clean(r)
		if within(r, path) && len(r) > len(best) {
			best = r
		}
	}
	return best, best != ""
}

func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// session is a started server for one file, with the file synchronised.
type session struct {
	srv  *server
	name string
	root string
	uri  string
}

// open returns the running server for path (starting or restarting it as
// needed) with the document synchronised from disk.
func (m *Manager) open(ctx context.Context, env *tool.Env, path string) (*session, error) {
	root, servers, _, err := m.config(env)
	if err != nil {
		return nil, err
	}
	name, cfg, ok := serverFor(servers, path)
	if !ok {
		return nil, noServerError(path)
	}
	wsRoot, ok := rootFor(root, env, path)
	if !ok {
		return nil, fmt.Errorf("lsp: %s is outside the project (%s) and the session's directories", path, root)
	}
	srv, err := m.server(ctx, name, cfg, wsRoot)
	if err != nil {
		return nil, err
	}
	uri, _, _, err := srv.syncDoc(path)
	if err != nil {
		return nil, fmt.Errorf("lsp: %w", err)
	}
	return &session{srv: srv, name: name, root: wsRoot, uri: uri}, nil
}

// server returns the running server name@root, starting it on first use
// and restarting it (up to MaxRestarts times) when it died.
func (m *Manager) server(ctx context.Context, name string, cfg ServerConfig, root string) (*server, error) {
	key := name + "\x00" + root
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, errors.New("lsp: the session's language servers are shut down")
	}
	sl := m.running[key]
	if sl == nil {
		sl = &slot{}
		m.running[key] = sl
	}
	m.mu.Unlock()

	sl.mu.Lock()
	defer sl.mu.Unlock()
	if sl.srv != nil && sl.srv.alive() {
		return sl.srv, nil
	}
	if sl.srv != nil {
		// It died: reap it, then restart within the budget.
		logs := sl.srv.logs.String()
		sl.srv.kill()
		sl.srv = nil
		if sl.restarts >= m.opts.MaxRestarts {
			msg := fmt.Sprintf("lsp: language server %q crashed and was restarted %d time(s) already; not restarting it again in this session", name, sl.restarts)
			if logs != "" {
				msg += "; its last output: " + lastLines(logs, 5)
			}
			return nil, errors.New(msg)
		}
		sl.restarts++
	} else if sl.lastErr != nil {
		return nil, sl.lastErr
	}
	srv, err := startServer(ctx, name, cfg, root, &m.opts)
	if err != nil {
		if errors.Is(err, ErrNotInstalled) {
			err = fmt.Errorf("lsp: %w (install it, or set its command in .gantry/lsp.json / settings lspServers)", err)
			if name == "gopls" {
				err = fmt.Errorf("%w; for Go: go install golang.org/x/tools/gopls@v0.23.0 (from a Gantry clone: scripts/setup --lsp)", err)
			}
			sl.lastErr = err // do not retry a missing binary on every call
		}
		return nil, err
	}
	m.mu.Lock()
	closed := m.closed
	m.mu.Unlock()
	if closed {
		srv.shutdown(m.opts.ShutdownTimeout)
		return nil, errors.New("lsp: the session's language servers are shut down")
	}
	sl.srv = srv
	return srv, nil
}

// call runs one request against the server of path, restarting the server
// and retrying once if it crashed during the request.
func (m *Manager) call(ctx context.Context, env *tool.Env, path, method string, params func(uri string) any, result any) (*session, error) {
	for attempt := 0; ; attempt++ {
		s, err := m.open(ctx, env, path)
		if err != nil {
			return nil, err
		}
		rctx, cancel := context.WithTimeout(ctx, m.opts.RequestTimeout)
		err = s.srv.conn.Call(rctx, method, params(s.uri), result)
		timedOut := rctx.Err() != nil && ctx.Err() == nil
		cancel()
		switch {
		case err == nil:
			return s, nil
		case errors.Is(err, ErrClosed) && attempt == 0:
			// Crashed: restart and retry once. A failed write can come
			// before the reader sees the end, so wait until the death is
			// visible to open (bounded: a server that closed its input but
			// keeps running is killed).
			m.awaitDeath(ctx, s.srv)
			continue
		case timedOut:
			return nil, fmt.Errorf("lsp: %s: no answer from %s within %v", method, s.name, m.opts.RequestTimeout)
		}
		var re *RPCError
		if errors.As(err, &re) {
			return nil, fmt.Errorf("lsp: %s answered %s with an error: %s", s.name, method, re.Message)
		}
		return nil, fmt.Errorf("lsp: %s: %w", s.name, err)
	}
}

// awaitDeath waits until srv is seen as dead by alive, killing it if that
// takes longer than the request timeout or ctx ends first.
func (m *Manager) awaitDeath(ctx context.Context, srv *server) {
	t := time.NewTimer(m.opts.RequestTimeout)
	defer t.Stop()
	select {
	case <-srv.conn.Done():
		return
	case <-srv.exit:
		return
	case <-t.C:
	case <-ctx.Done():
	}
	srv.kill()
}

// Close shuts every server down (shutdown + exit, then kill) and waits for
// the processes. Later calls fail with a clear error.
func (m *Manager) Close() error {
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
	m.cancel()
	m.bg.Wait() // background starts end (initialize is cancelled)
	m.pendMu.Lock()
	clear(m.pending)
	m.pendMu.Unlock()
	m.mu.Lock()
	slots := slices.Collect(maps.Values(m.running))
	m.running = map[string]*slot{}
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, sl := range slots {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sl.mu.Lock()
			defer sl.mu.Unlock()
			if sl.srv != nil {
				sl.srv.shutdown(m.opts.ShutdownTimeout)
				sl.srv = nil
			}
		}()
	}
	wg.Wait()
	return nil
}

// Running returns "name root pid" of each running server, sorted (for
// status displays and tests).
func (m *Manager) Running() []string {
	m.mu.Lock()
	slots := maps.Clone(m.running)
	m.mu.Unlock()
	var out []string
	for key, sl := range slots {
		sl.mu.Lock()
		if sl.srv != nil && sl.srv.alive() {
			name, root, _ := strings.Cut(key, "\x00")
			out = append(out, fmt.Sprintf("%s %s %d", name, root, sl.srv.cmd.Process.Pid))
		}
		sl.mu.Unlock()
	}
	slices.Sort(out)
	return out
}
