package lsp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/gantry-dev/gantry/internal/procenv"
)

// server is one running language server process for one workspace root.
type server struct {
	name string
	cfg  ServerConfig
	root string
	opts *Options

	cmd  *exec.Cmd
	conn *conn
	caps json.RawMessage // the server's capabilities
	exit chan struct{}   // closed when the process has been reaped
	logs *tailBuffer     // the end of the server's stderr

	mu      sync.Mutex
	docs    map[string]*openDoc // uri → state
	diags   map[string]*diagState
	diagsCh chan struct{} // closed and replaced on every publishDiagnostics
	lastPub time.Time     // the last publishDiagnostics
}

type openDoc struct {
	version int
	hash    [32]byte
}

type diagState struct {
	version int // the document version they were computed for (-1 unknown)
	seq     int // bumps on every publish
	list    []diagnostic
}

// tailBuffer keeps the last bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
	max int
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = append([]byte(nil), t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.buf))
}

// scrubbedEnv is the environment of a language server: the allow-listed
// variables of base, never a credential (see procenv.Build), plus the
// server's own settings.
func scrubbedEnv(base []string, extra map[string]string) []string {
	return procenv.Build(base, procenv.Options{Explicit: extra})
}

// start launches the server and runs the initialize handshake.
func startServer(ctx context.Context, name string, cfg ServerConfig, root string, opts *Options) (*server, error) {
	bin, err := resolveCommand(cfg.Command, opts.Getenv)
	if err != nil {
		return nil, fmt.Errorf("language server %q: %w", name, err)
	}
	s := &server{
		name: name, cfg: cfg, root: root, opts: opts,
		exit:    make(chan struct{}),
		logs:    &tailBuffer{max: 4096},
		docs:    make(map[string]*openDoc),
		diags:   make(map[string]*diagState),
		diagsCh: make(chan struct{}),
	}
	cmd := exec.Command(bin, cfg.Args...)
	cmd.Dir = root
	cmd.Env = scrubbedEnv(opts.Environ(), cfg.Env)
	cmd.Stderr = s.logs
	setProcessGroup(cmd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("language server %q: %w", name, err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("language server %q: %w", name, err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("language server %q: start %s: %w", name, bin, err)
	}
	s.cmd = cmd
	s.conn = newConn(stdout, stdin, s.handle)
	go func() {
		_ = cmd.Wait()
		close(s.exit)
	}()

	ictx, cancel := context.WithTimeout(ctx, opts.StartTimeout)
	defer cancel()
	if err := s.initialize(ictx); err != nil {
		s.kill()
		if logs := s.logs.String(); logs != "" {
			err = fmt.Errorf("%w; server stderr: %s", err, lastLines(logs, 5))
		}
		return nil, fmt.Errorf("language server %q: %w", name, err)
	}
	return s, nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

func (s *server) initialize(ctx context.Context) error {
	rootURI := pathToURI(s.root)
	params := map[string]any{
		"processId":  os.Getpid(),
		"clientInfo": map[string]string{"name": "gantry"},
		"rootUri":    rootURI,
		"rootPath":   s.root,
		"workspaceFolders": []map[string]string{
			{"uri": rootURI, "name": filepath.Base(s.root)},
		},
		"capabilities": clientCapabilities,
	}
	if len(s.cfg.InitializationOptions) > 0 {
		params["initializationOptions"] = s.cfg.InitializationOptions
	}
	var res struct {
		Capabilities json.RawMessage `json:"capabilities"`
	}
	if err := s.conn.Call(ctx, "initialize", params, &res); err != nil {
		return err
	}
	s.caps = res.Capabilities
	return s.conn.Notify("initialized", struct{}{})
}

// clientCapabilities declares what this client understands.
var clientCapabilities = map[string]any{
	"general": map[string]any{"positionEncodings": []string{"utf-16"}},
	"workspace": map[string]any{
		"configuration":    true,
		"workspaceFolders": true,
		"symbol":           map[string]any{"dynamicRegistration": false},
	},
	"textDocument": map[string]any{
		"synchronization":    map[string]any{"didSave": true},
		"hover":              map[string]any{"contentFormat": []string{"plaintext", "markdown"}},
		"definition":         map[string]any{"linkSupport": true},
		"implementation":     map[string]any{"linkSupport": true},
		"references":         map[string]any{},
		"documentSymbol":     map[string]any{"hierarchicalDocumentSymbolSupport": true},
		"callHierarchy":      map[string]any{},
		"publishDiagnostics": map[string]any{"versionSupport": true},
	},
	"window": map[string]any{"workDoneProgress": false},
}

// handle answers the server's requests and records its diagnostics.
func (s *server) handle(method string, params json.RawMessage, isRequest bool) (any, error) {
	switch method {
	case "textDocument/publishDiagnostics":
		var p publishDiagnosticsParams
		if json.Unmarshal(params, &p) == nil {
			s.mu.Lock()
			d := s.diags[p.URI]
			if d == nil {
				d = &diagState{}
				s.diags[p.URI] = d
			}
			d.seq++
			d.version = -1
			if p.Version != nil {
				d.version = *p.Version
			}
			d.list = p.Diagnostics
			s.lastPub = time.Now()
			close(s.diagsCh)
			s.diagsCh = make(chan struct{})
			s.mu.Unlock()
		}
		return nil, nil
	case "workspace/configuration":
		var p struct {
			Items []struct {
				Section string `json:"section"`
			} `json:"items"`
		}
		_ = json.Unmarshal(params, &p)
		out := make([]json.RawMessage, len(p.Items))
		for i, it := range p.Items {
			out[i] = s.section(it.Section)
		}
		return out, nil
	case "window/workDoneProgress/create", "client/registerCapability", "client/unregisterCapability":
		return nil, nil
	case "workspace/workspaceFolders":
		return []map[string]string{{"uri": pathToURI(s.root), "name": filepath.Base(s.root)}}, nil
	case "window/showMessageRequest":
		return nil, nil
	}
	if isRequest {
		return nil, &RPCError{Code: codeMethodNotFound, Message: "method not supported by gantry: " + method}
	}
	return nil, nil
}

// section returns the configured settings section (dotted path into
// ServerConfig.Settings), or null.
func (s *server) section(name string) json.RawMessage {
	if len(s.cfg.Settings) == 0 {
		return json.RawMessage("null")
	}
	cur := s.cfg.Settings
	if name == "" {
		return cur
	}
	for _, part := range strings.Split(name, ".") {
		var m map[string]json.RawMessage
		if json.Unmarshal(cur, &m) != nil {
			return json.RawMessage("null")
		}
		next, ok := m[part]
		if !ok {
			return json.RawMessage("null")
		}
		cur = next
	}
	return cur
}

// alive reports whether the process and connection are up.
func (s *server) alive() bool {
	select {
	case <-s.exit:
		return false
	case <-s.conn.Done():
		return false
	default:
		return true
	}
}

// maxDocBytes bounds a document sent to a server.
const maxDocBytes = 8 << 20

// syncDoc opens path on the server, or sends its new content if it changed
// on disk since it was last sent. It returns the document's URI and the
// version now on the server, and whether content was sent.
func (s *server) syncDoc(path string) (uri string, version int, changed bool, err error) {
	uri = pathToURI(path)
	f, err := os.Open(path)
	if err != nil {
		return uri, 0, false, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxDocBytes+1))
	if err != nil {
		return uri, 0, false, err
	}
	if len(b) > maxDocBytes {
		return uri, 0, false, fmt.Errorf("%s is over %d MiB; not sent to the language server", path, maxDocBytes>>20)
	}
	if bytes.IndexByte(b, 0) >= 0 {
		return uri, 0, false, fmt.Errorf("%s is a binary file", path)
	}
	h := sha256.Sum256(b)
	s.mu.Lock()
	d := s.docs[uri]
	if d != nil && d.hash == h {
		v := d.version
		s.mu.Unlock()
		return uri, v, false, nil
	}
	if d == nil {
		d = &openDoc{version: 1, hash: h}
		s.docs[uri] = d
		s.mu.Unlock()
		err = s.conn.Notify("textDocument/didOpen", map[string]any{
			"textDocument": map[string]any{"uri": uri, "languageId": s.languageOf(path), "version": 1, "text": string(b)},
		})
		return uri, 1, true, err
	}
	d.version++
	d.hash = h
	v := d.version
	s.mu.Unlock()
	err = s.conn.Notify("textDocument/didChange", map[string]any{
		"textDocument":   map[string]any{"uri": uri, "version": v},
		"contentChanges": []map[string]string{{"text": string(b)}},
	})
	if err == nil {
		_ = s.conn.Notify("textDocument/didSave", map[string]any{"textDocument": map[string]any{"uri": uri}})
		// Other files may depend on this one: tell the server it changed on
		// disk as well (gopls re-type-checks dependent packages).
		_ = s.conn.Notify("workspace/didChangeWatchedFiles", map[string]any{
			"changes": []map[string]any{{"uri": uri, "type": 2}},
		})
	}
	return uri, v, true, err
}

func (s *server) languageOf(path string) string {
	ext := strings.ToLower(filepath.Ext(path))
	if id := s.cfg.ExtensionToLanguage[ext]; id != "" {
		return id
	}
	return strings.TrimPrefix(ext, ".")
}

func (s *server) diagSeq(uri string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st := s.diags[uri]; st != nil {
		return st.seq
	}
	return 0
}

// shutdown asks the server to exit, then kills it if it does not.
func (s *server) shutdown(timeout time.Duration) {
	if s.alive() {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		if s.conn.Call(ctx, "shutdown", nil, nil) == nil {
			_ = s.conn.Notify("exit", nil)
		}
		cancel()
		_ = s.conn.Close()
		select {
		case <-s.exit:
		case <-time.After(timeout):
		}
	}
	s.kill()
}

// kill ends the process (group) and waits for it to be reaped.
func (s *server) kill() {
	select {
	case <-s.exit:
	default:
		killProcess(s.cmd)
		<-s.exit
	}
	_ = s.conn.Close()
	<-s.conn.Done()
}

// resolveCommand finds a server binary: an absolute or relative path as
// given, a name on PATH, or — for names not on PATH — the Go install
// directories ($GOBIN, $GOPATH/bin, ~/go/bin), where `go install` puts
// gopls.
func resolveCommand(name string, getenv func(string) string) (string, error) {
	if name == "" {
		return "", errors.New("no command configured")
	}
	if strings.ContainsRune(name, filepath.Separator) {
		return name, nil
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	var dirs []string
	if d := getenv("GOBIN"); d != "" {
		dirs = append(dirs, d)
	}
	for _, gp := range filepath.SplitList(getenv("GOPATH")) {
		if gp != "" {
			dirs = append(dirs, filepath.Join(gp, "bin"))
		}
	}
	if h := getenv("HOME"); h != "" {
		dirs = append(dirs, filepath.Join(h, "go", "bin"))
	}
	for _, d := range dirs {
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: %q is not on PATH nor in the Go bin directories", ErrNotInstalled, name)
}

// ErrNotInstalled is wrapped when a configured server's binary cannot be
// found.
var ErrNotInstalled = errors.New("language server not installed")
