package mcptool

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gantry-dev/gantry/internal/procenv"
	"github.com/gantry-dev/gantry/tool"
)

// Defaults of [Options].
const (
	DefaultConnectTimeout = 30 * time.Second
	DefaultCallTimeout    = 10 * time.Minute
	DefaultMaxReconnects  = 3
	DefaultReconnectDelay = time.Second
	maxReconnectDelay     = 30 * time.Second
	// DefaultProtocolVersion is the latest stable MCP protocol version.
	DefaultProtocolVersion = "2025-11-25"
)

// Errors wrapped by the errors of calls; callers branch with errors.Is.
var (
	// ErrUnavailable: the server is not connected (it failed to start,
	// crashed, or the manager is closed).
	ErrUnavailable = errors.New("MCP server unavailable")
	// ErrDisconnected: the server went away while the call was in flight.
	ErrDisconnected = errors.New("MCP server disconnected")
	// ErrTimeout: the server did not answer within the call timeout.
	ErrTimeout = errors.New("MCP call timed out")
)

// ElicitFunc answers a server's elicitation request (a question to the
// user). server names the asking server. A nil ElicitFunc declines every
// request (headless use).
type ElicitFunc func(ctx context.Context, server string, req *mcp.ElicitParams) (*mcp.ElicitResult, error)

// Options configures a [Manager]. The zero value is usable.
type Options struct {
	// ConnectTimeout bounds starting a server and its initialize handshake
	// plus the first tools/list. Zero means the MCP_TIMEOUT environment
	// variable (milliseconds) if set, else [DefaultConnectTimeout].
	ConnectTimeout time.Duration
	// CallTimeout bounds one tools/call or resources request. Zero means
	// MCP_TOOL_TIMEOUT (milliseconds) if set, else [DefaultCallTimeout].
	// A call past it is cancelled (the server receives
	// notifications/cancelled) and ends with an error wrapping [ErrTimeout].
	CallTimeout time.Duration
	// MaxReconnects bounds the consecutive reconnect attempts after a
	// server's connection is lost; after them the server stays failed. Zero
	// means [DefaultMaxReconnects]; negative means never reconnect.
	MaxReconnects int
	// ReconnectDelay is the wait before the first reconnect attempt; it
	// doubles with each attempt up to 30 s. Zero means
	// [DefaultReconnectDelay].
	ReconnectDelay time.Duration
	// SerialCalls turns off the one use Gantry makes of a server's
	// readOnlyHint: marking its tool concurrency-safe (see [Tool]).
	SerialCalls bool
	// Elicit answers elicitation requests; nil declines them.
	Elicit ElicitFunc
	// OnToolsChanged is called (from a background goroutine) after a
	// server's tool list changed: after tools/list_changed, a disconnect or
	// a reconnect. Use [Manager.Tools] to read the new list.
	OnToolsChanged func(server string)
	// Dir is the working directory of stdio servers; empty means the
	// current directory.
	Dir string
	// Stderr receives the standard error of stdio servers; nil discards it.
	Stderr io.Writer
	// Getenv reads MCP_TIMEOUT and MCP_TOOL_TIMEOUT; nil means os.Getenv.
	Getenv func(string) string
	// HTTPClient is the base client of HTTP and SSE servers (headers are
	// added on top); nil means http.DefaultClient's transport.
	HTTPClient *http.Client
	// ProtocolVersion is the MCP protocol version offered to servers; empty
	// means [DefaultProtocolVersion]. The SDK's newer draft versions start
	// with a server/discover probe that servers answering unknown methods
	// with an empty result mistake for success, so they are opt-in.
	ProtocolVersion string
	// Client names Gantry to servers; nil means "gantry".
	Client *mcp.Implementation
	// Transport, if set, replaces the transports built from the
	// configuration (tests use in-memory transports).
	Transport func(name string, sc ServerConfig) (mcp.Transport, error)
	// Hosted returns the transport of a server of type "sdk", hosted by
	// the program driving Gantry (package streamjson routes it over the
	// Agent SDK's control protocol). Nil means no program hosts servers:
	// such servers fail to connect.
	Hosted func(name string) (mcp.Transport, error)
	// Logger receives connection events; nil discards them.
	Logger *slog.Logger
	// Sandbox contains the stdio servers whose configuration asks for it
	// ("sandbox": true): it rewrites cmd for the session's OS sandbox and
	// returns what to call once the server has exited. Nil means the
	// session has no sandbox: such servers then fail to start.
	Sandbox func(cmd *exec.Cmd) (release func(), err error)
}

// State is the connection state of a server.
type State string

const (
	StatePending      State = "pending"      // not yet started
	StateConnected    State = "connected"    // tools available
	StateReconnecting State = "reconnecting" // connection lost, retrying
	StateFailed       State = "failed"       // could not connect; tools unavailable
	StateClosed       State = "closed"       // the manager is closed
)

// ServerStatus is a snapshot of one server.
type ServerStatus struct {
	Name   string `json:"name"`
	Type   string `json:"type"`
	Source string `json:"source,omitempty"`
	State  State  `json:"state"`
	// Tools is the number of tools the server offers (and Gantry can use).
	Tools int `json:"tools"`
	// Rejected lists the server's tools left out because Gantry cannot
	// use their input schema (see [RejectedTool]).
	Rejected []RejectedTool `json:"rejected_tools,omitempty"`
	// Err is the last connection error ("" when connected).
	Err string `json:"error,omitempty"`
	// Reconnects counts the reconnect attempts since the last good
	// connection.
	Reconnects int `json:"reconnects,omitempty"`
	// ServerName and ServerVersion are what the server reported.
	ServerName    string `json:"server_name,omitempty"`
	ServerVersion string `json:"server_version,omitempty"`
}

// RejectedTool is a server's tool left out of its tool list because its
// input schema cannot be compiled: an unknown "$schema", a reference to a
// schema outside the document (Gantry never fetches those), a keyword
// whose value is not what the specification allows, a top-level type that
// is not "object". A call of it could not be validated, and the model
// APIs may refuse the schema, so neither the model nor a caller sees it.
type RejectedTool struct {
	// Name is the tool's name on its server.
	Name string `json:"name"`
	// Err says why.
	Err string `json:"error"`
}

// Manager connects to a set of MCP servers and offers their tools as
// [tool.Tool]s and their resources as an mcpres.Resources service. A
// server that fails, crashes or hangs affects only its own tools. Methods
// are safe for concurrent use.
type Manager struct {
	opts    Options
	servers map[string]*server
	names   []string

	ctx    context.Context // cancelled by Close; bounds background work
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// NewManager returns a manager for the servers of cfg. It starts nothing;
// call [Manager.Start]. Bad options (an unparsable MCP_TIMEOUT) are an error.
func NewManager(cfg *ConfigFile, opts *Options) (*Manager, error) {
	m := &Manager{servers: map[string]*server{}}
	if opts != nil {
		m.opts = *opts
	}
	getenv := m.opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	var err error
	if m.opts.ConnectTimeout <= 0 {
		if m.opts.ConnectTimeout, err = envMillis(getenv, "MCP_TIMEOUT", DefaultConnectTimeout); err != nil {
			return nil, err
		}
	}
	if m.opts.CallTimeout <= 0 {
		if m.opts.CallTimeout, err = envMillis(getenv, "MCP_TOOL_TIMEOUT", DefaultCallTimeout); err != nil {
			return nil, err
		}
	}
	if m.opts.MaxReconnects == 0 {
		m.opts.MaxReconnects = DefaultMaxReconnects
	}
	if m.opts.ReconnectDelay <= 0 {
		m.opts.ReconnectDelay = DefaultReconnectDelay
	}
	if m.opts.ProtocolVersion == "" {
		m.opts.ProtocolVersion = DefaultProtocolVersion
	}
	if m.opts.Client == nil {
		m.opts.Client = &mcp.Implementation{Name: "gantry", Version: "dev"}
	}
	if m.opts.Logger == nil {
		m.opts.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg != nil {
		for _, name := range cfg.Names() {
			sc := cfg.Servers[name]
			if !ValidServerName(name) {
				return nil, fmt.Errorf("%w: server %q: invalid name", ErrConfig, name)
			}
			if err := sc.check(); err != nil {
				return nil, fmt.Errorf("%w: server %q: %w", ErrConfig, name, err)
			}
			m.servers[name] = &server{m: m, name: name, cfg: sc, state: StatePending}
		}
	}
	m.names = slices.Sorted(maps.Keys(m.servers))
	m.ctx, m.cancel = context.WithCancel(context.Background())
	return m, nil
}

func envMillis(getenv func(string) string, key string, def time.Duration) (time.Duration, error) {
	v := getenv(key)
	if v == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%w: %s=%q: want a positive number of milliseconds", ErrConfig, key, v)
	}
	return time.Duration(n) * time.Millisecond, nil
}

// Start connects to every server concurrently and waits until each is
// connected or has failed (each bounded by the connect timeout). The
// returned error joins the failures; the manager stays usable either way,
// with the failed servers' tools absent. ctx bounds the wait, not the
// connections' lifetime (that ends with [Manager.Close]).
func (m *Manager) Start(ctx context.Context) error {
	var wg sync.WaitGroup
	errs := make([]error, len(m.names))
	for i, name := range m.names {
		s := m.servers[name]
		wg.Go(func() {
			if err := s.connect(ctx); err != nil {
				errs[i] = fmt.Errorf("MCP server %q: %w", name, err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Close disconnects every server (stdio servers are stopped) and waits for
// background work to end. It is safe to call more than once.
func (m *Manager) Close() error {
	m.cancel()
	var errs []error
	for _, name := range m.names {
		if err := m.servers[name].close(); err != nil {
			errs = append(errs, fmt.Errorf("MCP server %q: %w", name, err))
		}
	}
	m.wg.Wait()
	return errors.Join(errs...)
}

// Servers returns the status of every server, sorted by name.
func (m *Manager) Servers() []ServerStatus {
	out := make([]ServerStatus, 0, len(m.names))
	for _, name := range m.names {
		out = append(out, m.servers[name].status())
	}
	return out
}

// Tools returns the tools of every server, sorted by server then tool
// name. A disconnected server's tools are included but report
// Enabled false and fail with an error wrapping [ErrUnavailable], so that a
// pool keeps a stable list while a server reconnects; a server that never
// connected contributes none.
func (m *Manager) Tools() []tool.Tool {
	var out []tool.Tool
	for _, name := range m.names {
		out = append(out, m.servers[name].toolList()...)
	}
	return out
}

// ServerTools returns the tools of one server (nil for an unknown server).
func (m *Manager) ServerTools(name string) []tool.Tool {
	s, ok := m.servers[name]
	if !ok {
		return nil
	}
	return s.toolList()
}

// Session returns the live client session of a server, for requests this
// package does not wrap (prompts, completion). It fails with
// [ErrUnavailable] when the server is not connected.
func (m *Manager) Session(name string) (*mcp.ClientSession, error) {
	s, ok := m.servers[name]
	if !ok {
		return nil, fmt.Errorf("%w: %q", errUnknownServer, name)
	}
	return s.live()
}

var errUnknownServer = errors.New("unknown MCP server")

// server is one configured server and its connection.
type server struct {
	m    *Manager
	name string
	cfg  ServerConfig

	mu         sync.Mutex
	state      State
	err        error
	session    *mcp.ClientSession
	gen        int // bumped by every new session
	tools      []tool.Tool
	rejected   []RejectedTool
	reconnects int
	info       *mcp.Implementation
	hasRes     bool
}

func (s *server) status() ServerStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := ServerStatus{Name: s.name, Type: s.cfg.Type, Source: s.cfg.Source, State: s.state,
		Tools: len(s.tools), Rejected: slices.Clone(s.rejected), Reconnects: s.reconnects}
	if s.err != nil {
		st.Err = s.err.Error()
	}
	if s.info != nil {
		st.ServerName, st.ServerVersion = s.info.Name, s.info.Version
	}
	return st
}

func (s *server) toolList() []tool.Tool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.tools)
}

// live returns the current session or an error wrapping ErrUnavailable.
func (s *server) live() (*mcp.ClientSession, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == StateConnected && s.session != nil {
		return s.session, nil
	}
	return nil, s.unavailableLocked()
}

func (s *server) unavailableLocked() error {
	why := string(s.state)
	if s.err != nil {
		why += ": " + s.err.Error()
	}
	return fmt.Errorf("%w: %q is %s", ErrUnavailable, s.name, why)
}

func (s *server) connected() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state == StateConnected
}

// transport builds the transport of one connection attempt.
func (s *server) transport() (mcp.Transport, error) {
	m := s.m
	if m.opts.Transport != nil {
		return m.opts.Transport(s.name, s.cfg)
	}
	switch s.cfg.Type {
	case TypeStdio:
		cmd := exec.Command(s.cfg.Command, s.cfg.Args...)
		cmd.Dir = m.opts.Dir
		// The allowed basics of Gantry's environment, never a credential,
		// plus the server's configured env.
		cmd.Env = procenv.Build(os.Environ(), procenv.Options{Explicit: s.cfg.Env})
		cmd.Stderr = m.opts.Stderr
		t := &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}
		if !s.cfg.Sandbox {
			return t, nil
		}
		if m.opts.Sandbox == nil {
			return nil, errors.New(`the server asks for the sandbox ("sandbox": true) but the session has none (sandbox.enabled is off)`)
		}
		release, err := m.opts.Sandbox(cmd)
		if err != nil {
			return nil, fmt.Errorf("sandbox: %w", err)
		}
		return &releaseTransport{Transport: t, release: release}, nil
	case TypeHTTP:
		return &mcp.StreamableClientTransport{Endpoint: s.cfg.URL, HTTPClient: s.httpClient(), MaxRetries: 2}, nil
	case TypeSSE:
		return &mcp.SSEClientTransport{Endpoint: s.cfg.URL, HTTPClient: s.httpClient()}, nil
	case TypeSDK:
		if m.opts.Hosted == nil {
			return nil, errors.New("an sdk server needs the program that hosts it (an Agent SDK session)")
		}
		return m.opts.Hosted(s.name)
	}
	return nil, fmt.Errorf("unknown transport type %q", s.cfg.Type)
}

func (s *server) httpClient() *http.Client {
	base := http.DefaultTransport
	c := &http.Client{}
	if s.m.opts.HTTPClient != nil {
		*c = *s.m.opts.HTTPClient
		if c.Transport != nil {
			base = c.Transport
		}
	}
	if len(s.cfg.Headers) > 0 {
		c.Transport = headerTransport{base: base, headers: s.cfg.Headers}
	} else {
		c.Transport = base
	}
	return c
}

type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.headers {
		r.Header.Set(k, v)
	}
	return t.base.RoundTrip(r)
}

// connect makes one connection attempt: start, initialize, list tools.
func (s *server) connect(ctx context.Context) error {
	m := s.m
	if m.ctx.Err() != nil {
		return fmt.Errorf("%w: manager closed", ErrUnavailable)
	}
	err := s.dial(ctx)
	s.mu.Lock()
	if err != nil {
		if s.state != StateClosed {
			s.err = err
			if s.state == StatePending {
				s.state = StateFailed
			}
		}
		s.mu.Unlock()
		return err
	}
	s.mu.Unlock()
	return nil
}

func (s *server) dial(ctx context.Context) error {
	m := s.m
	t, err := s.transport()
	if err != nil {
		return err
	}
	var self *mcp.ClientSession // set once connected; guards list_changed
	var selfMu sync.Mutex
	client := mcp.NewClient(m.opts.Client, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{},
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			if m.opts.Elicit == nil {
				return &mcp.ElicitResult{Action: "decline"}, nil
			}
			return m.opts.Elicit(ctx, s.name, req.Params)
		},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			selfMu.Lock()
			cs := self
			selfMu.Unlock()
			if cs != nil {
				s.refreshAsync(cs)
			}
		},
		Logger: m.opts.Logger,
	})
	cctx, cancel := context.WithTimeout(ctx, m.opts.ConnectTimeout)
	defer cancel()
	stop := context.AfterFunc(m.ctx, cancel) // Close aborts a pending connect
	defer stop()
	cs, err := client.Connect(cctx, t, &mcp.ClientSessionOptions{ProtocolVersion: m.opts.ProtocolVersion})
	if err != nil {
		return connectErr(cctx, m.opts.ConnectTimeout, err)
	}
	tools, rejected, err := s.listTools(cctx, cs)
	if err != nil {
		cs.Close()
		return connectErr(cctx, m.opts.ConnectTimeout, fmt.Errorf("tools/list: %w", err))
	}
	init := cs.InitializeResult()
	s.mu.Lock()
	if s.state == StateClosed || m.ctx.Err() != nil {
		s.mu.Unlock()
		cs.Close()
		return fmt.Errorf("%w: manager closed", ErrUnavailable)
	}
	s.gen++
	gen := s.gen
	s.session, s.tools, s.rejected, s.state, s.err, s.reconnects = cs, tools, rejected, StateConnected, nil, 0
	if init != nil {
		s.info = init.ServerInfo
		s.hasRes = init.Capabilities != nil && init.Capabilities.Resources != nil
	}
	s.mu.Unlock()
	selfMu.Lock()
	self = cs
	selfMu.Unlock()
	m.opts.Logger.Info("mcp: connected", "server", s.name, "tools", len(tools))
	m.wg.Go(func() { s.watch(cs, gen) })
	return nil
}

func connectErr(ctx context.Context, d time.Duration, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("%w: no answer within the connect timeout %s: %w", ErrTimeout, d, err)
	}
	return err
}

// listTools lists a session's tools (all pages) and wraps them; the tools
// whose input schema Gantry cannot use are returned apart.
func (s *server) listTools(ctx context.Context, cs *mcp.ClientSession) ([]tool.Tool, []RejectedTool, error) {
	var remote []*mcp.Tool
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, nil, err
		}
		remote = append(remote, t)
		if len(remote) > maxTools {
			return nil, nil, fmt.Errorf("more than %d tools", maxTools)
		}
	}
	tools, rejected := s.wrapTools(remote)
	return tools, rejected, nil
}

const maxTools = 10_000

// watch waits for a session to end and, unless it was closed on purpose,
// marks the server unavailable and reconnects with bounded backoff.
func (s *server) watch(cs *mcp.ClientSession, gen int) {
	m := s.m
	werr := cs.Wait()
	cs.Close() // releases the session's remaining goroutines
	s.mu.Lock()
	if s.gen != gen || s.state == StateClosed || m.ctx.Err() != nil {
		s.mu.Unlock()
		return
	}
	s.session = nil
	s.state = StateReconnecting
	s.err = fmt.Errorf("connection lost: %v", orEOF(werr))
	s.mu.Unlock()
	m.opts.Logger.Warn("mcp: connection lost", "server", s.name, "err", werr)
	s.changed()

	delay := m.opts.ReconnectDelay
	for attempt := 1; attempt <= m.opts.MaxReconnects; attempt++ {
		s.mu.Lock()
		s.reconnects = attempt
		s.mu.Unlock()
		t := time.NewTimer(delay)
		select {
		case <-m.ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		if err := s.connect(m.ctx); err == nil {
			s.changed()
			return
		}
		delay = min(2*delay, maxReconnectDelay)
	}
	s.mu.Lock()
	if s.state == StateReconnecting {
		s.state = StateFailed
	}
	s.mu.Unlock()
	s.changed()
}

func orEOF(err error) error {
	if err == nil {
		return io.EOF
	}
	return err
}

func (s *server) changed() {
	if f := s.m.opts.OnToolsChanged; f != nil && s.m.ctx.Err() == nil {
		f(s.name)
	}
}

// refreshAsync re-lists the tools after notifications/tools/list_changed.
// It runs apart from the notification handler, which must not block the
// connection.
func (s *server) refreshAsync(cs *mcp.ClientSession) {
	m := s.m
	if m.ctx.Err() != nil {
		return
	}
	m.wg.Go(func() {
		ctx, cancel := context.WithTimeout(m.ctx, m.opts.ConnectTimeout)
		defer cancel()
		tools, rejected, err := s.listTools(ctx, cs)
		if err != nil {
			m.opts.Logger.Warn("mcp: refresh tools", "server", s.name, "err", err)
			return
		}
		s.mu.Lock()
		if s.session != cs {
			s.mu.Unlock()
			return
		}
		s.tools, s.rejected = tools, rejected
		s.mu.Unlock()
		s.changed()
	})
}

func (s *server) close() error {
	s.mu.Lock()
	cs := s.session
	s.session, s.state = nil, StateClosed
	s.gen++
	s.mu.Unlock()
	if cs == nil {
		return nil
	}
	if err := cs.Close(); err != nil && !isClosedErr(err) {
		return err
	}
	return nil
}

func isClosedErr(err error) bool {
	return errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, io.EOF) || errors.Is(err, os.ErrClosed)
}

// releaseTransport calls release once the connection it made is closed
// (the sandbox kills what the server left and frees what it set up), or
// when connecting fails.
type releaseTransport struct {
	mcp.Transport
	release func()
}

func (t *releaseTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		t.release()
		return nil, err
	}
	return &releaseConn{Connection: c, release: sync.OnceFunc(t.release)}, nil
}

type releaseConn struct {
	mcp.Connection
	release func()
}

func (c *releaseConn) Close() error {
	err := c.Connection.Close()
	c.release()
	return err
}
