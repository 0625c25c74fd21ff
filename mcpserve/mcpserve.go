// Package mcpserve serves Gantry tools over MCP, so that any MCP client
// (another agent, an editor) can use them: over stdio ([ServeStdio]) or
// streamable HTTP ([Handler], [ListenAndServe]).
//
// Every call goes through an [executor.Executor] — input validation and
// coercion, the tool's own checks, PreToolUse/PostToolUse hooks, the
// permission decision of the executor's mode and rules, deadlines and the
// result budget — exactly as a model's call would. The executor decides
// what an "ask" means: give it the [Elicitation] channel (through
// permission.AskChannel, or a workspace's Interaction) to ask the calling
// client's user, or nothing to deny asks.
//
// Tool annotations are set from each tool's spec and traits
// (toolset.MCPTool). Like every MCP annotation they are hints for the
// client.
//
// While a call runs, its tool's progress reports ([tool.Env.ReportProgress])
// reach the client as notifications/progress when the client asked for
// them (a progressToken in the request's _meta), and the tool can use the
// client's own features — logging, sampling, elicitation — through the
// [Client] in its context ([ClientFrom]).
//
// Besides tools a server may offer resources, resource templates and
// prompts ([Options.Resources], [Options.ResourceTemplates],
// [Options.Prompts]), resource subscriptions ([Options.Subscriptions],
// [Server.ResourceUpdated]) and completion ([Options.Complete]).
package mcpserve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gantry-dev/gantry/executor"
	"github.com/gantry-dev/gantry/tool"
	"github.com/gantry-dev/gantry/toolset"
)

// Options configures [New]. The zero value is usable.
type Options struct {
	// Name and Version name the server to clients; defaults "gantry" and
	// "dev".
	Name, Version string
	// Instructions are sent to clients at initialization.
	Instructions string
	// Logger receives server events; nil discards them.
	Logger *slog.Logger

	// Resources and ResourceTemplates are served through resources/list,
	// resources/templates/list and resources/read; Prompts through
	// prompts/list and prompts/get. Every entry needs its handler;
	// duplicate URIs, templates or names are an error.
	Resources         []Resource
	ResourceTemplates []ResourceTemplate
	Prompts           []Prompt
	// Subscriptions lets clients subscribe to resources
	// (resources/subscribe, resources/unsubscribe) whose URI is one of
	// Resources or matches one of ResourceTemplates; notify them of a
	// change with [Server.ResourceUpdated].
	Subscriptions bool
	// Complete answers completion/complete (suggestions for a prompt's
	// argument or a resource template's variable). Nil means the server
	// does not offer completion.
	Complete func(context.Context, *mcp.CompleteRequest) (*mcp.CompleteResult, error)
	// EventStore, when set, makes the streams of the HTTP transport
	// resumable: a client that loses a stream (or is asked to reconnect,
	// see [Client.CloseStream]) reconnects with Last-Event-ID and receives
	// what it missed. For example mcp.NewMemoryEventStore(nil). Nil means
	// streams are not resumable.
	EventStore mcp.EventStore
}

// Server is an MCP server over a fixed set of Gantry tools.
type Server struct {
	mcp        *mcp.Server
	exec       *executor.Executor
	session    *executor.SharedEnv
	ids        atomic.Uint64
	names      []string
	eventStore mcp.EventStore
	subs       *subscriptions
}

// New returns a server offering tools, each call run by exec with session's
// environment (working directory, permission mode, services). exec must
// resolve the tools by their names (for example executor.New over an
// executor.NewMapResolver of the same tools, or over a toolset pool).
// Tools that are not enabled for the session's environment are left out.
// Duplicate names and invalid input schemas are an error, and so are
// invalid resources, templates and prompts in opts.
//
// Each call runs in a session of its own that starts from a snapshot of
// session's environment with the call's progress sink added; what the
// call's context modifier changes (working directory, mode, additional
// directories, ...) is carried back to session, field by field, so calls
// made later see it.
func New(tools []tool.Tool, exec *executor.Executor, session *executor.SharedEnv, opts *Options) (*Server, error) {
	if exec == nil || session == nil {
		return nil, errors.New("mcpserve: New needs an executor and a session")
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Name == "" {
		o.Name = "gantry"
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{exec: exec, session: session, eventStore: o.EventStore}
	sopts := &mcp.ServerOptions{Instructions: o.Instructions, Logger: o.Logger, CompletionHandler: o.Complete}
	if err := checkFeatures(&o); err != nil {
		return nil, err
	}
	if o.Subscriptions {
		subs, err := newSubscriptions(o.Resources, o.ResourceTemplates)
		if err != nil {
			return nil, err
		}
		s.subs = subs
		sopts.SubscribeHandler = subs.subscribe
		sopts.UnsubscribeHandler = subs.unsubscribe
	}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: o.Name, Version: o.Version}, sopts)
	addFeatures(s.mcp, &o)
	seen := map[string]bool{}
	env := session.Env()
	for _, t := range tools {
		spec := t.Spec()
		if seen[spec.Name] {
			return nil, fmt.Errorf("mcpserve: duplicate tool name %q", spec.Name)
		}
		seen[spec.Name] = true
		if !tool.IsEnabled(context.Background(), t, env) {
			continue
		}
		if err := tool.CheckSchema(spec.InputSchema); err != nil {
			return nil, fmt.Errorf("mcpserve: tool %q: %w", spec.Name, err)
		}
		if !spec.Rendered() { // a hand-written tool's structured description (a pool's tools are rendered)
			if err := tool.CheckDoc(spec); err != nil {
				return nil, fmt.Errorf("mcpserve: tool %q: %w", spec.Name, err)
			}
			spec = spec.Render()
		}
		mt := toolset.MCPTool(spec)
		if len(spec.OutputSchema) > 0 {
			var m map[string]any
			if json.Unmarshal(spec.OutputSchema, &m) != nil || m["type"] != "object" {
				mt.OutputSchema = nil // MCP output schemas must be objects
			}
		}
		s.mcp.AddTool(mt, s.handler(spec.Name, mt.OutputSchema != nil))
		s.names = append(s.names, spec.Name)
	}
	return s, nil
}

// MCP returns the underlying SDK server (to add prompts or resources).
func (s *Server) MCP() *mcp.Server { return s.mcp }

// Tools returns the names of the served tools.
func (s *Server) Tools() []string { return append([]string(nil), s.names...) }

func (s *Server) handler(name string, structured bool) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var input json.RawMessage
		if req.Params != nil {
			input = req.Params.Arguments
		}
		if len(input) == 0 || string(input) == "null" {
			input = json.RawMessage("{}")
		}
		id := "mcp_" + strconv.FormatUint(s.ids.Add(1), 10)
		out, err := s.run(ctx, req, executor.Call{ID: id, Name: name, Input: input})
		if err != nil {
			return nil, err
		}
		return ToMCPResult(out.Result, structured), nil
	}
}

// ToMCPResult converts a Gantry result to an MCP tool result. The model
// channel (Content) is sent; Display is for people and is not. Structured
// data is sent as structuredContent when withStructured is true (the tool
// declared an output schema).
func ToMCPResult(r *tool.Result, withStructured bool) *mcp.CallToolResult {
	out := &mcp.CallToolResult{IsError: r.IsError, Content: []mcp.Content{}}
	for _, c := range r.Content {
		out.Content = append(out.Content, toMCPContent(c))
	}
	if withStructured && r.Structured != nil && !r.IsError {
		out.StructuredContent = r.Structured
	}
	if len(r.Meta) > 0 {
		out.Meta = mcp.Meta(r.Meta) // an MCP-backed tool's _meta goes back out
	}
	return out
}

func toMCPContent(c tool.Content) mcp.Content {
	switch c.Type {
	case tool.TypeImage:
		return &mcp.ImageContent{Data: c.Data, MIMEType: c.MIMEType}
	case tool.TypeResourceLink:
		return &mcp.ResourceLink{URI: c.URI, Name: c.Name, Title: c.Title, Description: c.Description, MIMEType: c.MIMEType}
	case tool.TypeAudio:
		return &mcp.AudioContent{Data: c.Data, MIMEType: c.MIMEType}
	case tool.TypeResource:
		rc := &mcp.ResourceContents{URI: c.URI, MIMEType: c.MIMEType, Text: c.Text}
		if c.Data != nil {
			rc.Blob = c.Data
		}
		return &mcp.EmbeddedResource{Resource: rc}
	}
	return &mcp.TextContent{Text: c.Text}
}

// ServeStdio serves one client on the process's stdin and stdout until the
// client disconnects or ctx is cancelled.
func (s *Server) ServeStdio(ctx context.Context) error {
	return s.mcp.Run(ctx, &mcp.StdioTransport{})
}

// Handler returns the streamable HTTP handler of the server (one MCP
// session per client). It keeps the SDK's DNS-rebinding protection for
// loopback listeners, and uses [Options.EventStore] for resumable streams.
func (s *Server) Handler() http.Handler {
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp },
		&mcp.StreamableHTTPOptions{EventStore: s.eventStore})
}

// ErrNotLoopback is returned by [ListenAndServe] for an address that is not
// on a loopback interface when non-loopback addresses are not allowed.
var ErrNotLoopback = errors.New("mcpserve: refusing to listen on a non-loopback address")

// CheckLoopback reports whether addr (host:port) names only loopback
// interfaces: "localhost", 127.0.0.0/8 or ::1. An empty host (all
// interfaces) is not loopback.
func CheckLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("mcpserve: bad address %q: %w", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("%w: %q (pass the flag that allows it to expose Gantry's tools to the network)", ErrNotLoopback, addr)
}

// Listen opens a listener for [Server.ServeHTTP]: addr must be loopback
// unless allowRemote.
func Listen(addr string, allowRemote bool) (net.Listener, error) {
	if !allowRemote {
		if err := CheckLoopback(addr); err != nil {
			return nil, err
		}
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("mcpserve: %w", err)
	}
	return l, nil
}

// ServeHTTP serves streamable HTTP at path "/" and "/mcp" on l until ctx is
// cancelled, then shuts down: requests (including open SSE streams) see
// their context cancelled, connections still open after 5 s are closed, and
// the MCP sessions of the HTTP clients are closed.
func (s *Server) ServeHTTP(ctx context.Context, l net.Listener) error {
	h := s.Handler()
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	mux.Handle("/", h)
	base, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return base }}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(l) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	cancel() // ends long-lived streams
	sctx, stop := context.WithTimeout(context.Background(), 5*time.Second)
	defer stop()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
	}
	// The handler keeps the MCP sessions of clients that did not end them
	// (DELETE) alive; close them so that nothing outlives the server.
	// Sessions of the streamable transport are those with an id (stdio and
	// in-memory sessions have none).
	for ss := range s.mcp.Sessions() {
		if ss.ID() != "" {
			ss.Close()
		}
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
