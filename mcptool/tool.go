package mcptool

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/gantry-dev/gantry/internal/textutil"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gantry-dev/gantry/tool"
	"github.com/gantry-dev/gantry/toolset"
)

// Prefix starts the name of every MCP tool: mcp__<server>__<tool>.
const Prefix = toolset.MCPPrefix

// MaxDescription bounds the description of an MCP tool in runes: a server
// cannot fill the model's context through a description.
const MaxDescription = 2048

// ToolName returns the Gantry name of a server's tool, the pool's
// [toolset.MCPName]: mcp__<server>__<tool> with every character outside
// [a-zA-Z0-9_-] replaced by '_', cut with a hash suffix past 64 characters.
// server must be a [ValidServerName].
func ToolName(server, remote string) string {
	name, err := toolset.MCPName(server, cmp.Or(remote, "_"))
	if err != nil {
		// Unreachable for a valid server name; keep a valid, distinct name.
		name, _ = toolset.MCPName("invalid", server+"__"+remote)
	}
	return name
}

// hashed returns name cut to leave room for a hash suffix of name, for two
// remote tools whose pool names collide.
func hashed(name string) string {
	sum := sha256.Sum256([]byte(name))
	return name[:min(len(name), 55)] + "_" + hex.EncodeToString(sum[:4])
}

// SplitName splits an MCP tool name into its server and tool parts. ok is
// false for a name that is not of the form mcp__<server>__<tool>.
func SplitName(name string) (server, toolName string, ok bool) {
	server, toolName, ok = toolset.SplitMCPName(name)
	return server, toolName, ok && toolName != ""
}

// Tool is a server's tool as a [tool.Tool].
//
// Its input schema is the server's, validated by the executor like any
// other. Its annotations are the server's (kept in [tool.Spec.Annotations])
// but, coming from an untrusted server, they never make a call read-only
// or non-destructive: the traits stay fail-closed, except that a
// readOnlyHint marks the tool concurrency-safe (unless
// [Options.SerialCalls]) — which only lets it run beside other
// concurrency-safe calls and is not something the permission layer trusts.
//
// A Tool of a disconnected server reports Enabled false, and a call fails
// with an error wrapping [ErrUnavailable].
type Tool struct {
	s      *server
	remote *mcp.Tool
	spec   tool.Spec
}

var (
	_ tool.Tool    = (*Tool)(nil)
	_ tool.Enabler = (*Tool)(nil)
)

// Spec implements [tool.Tool].
func (t *Tool) Spec() *tool.Spec { return &t.spec }

// Server returns the name of the tool's server.
func (t *Tool) Server() string { return t.s.name }

// Remote returns the tool as the server described it.
func (t *Tool) Remote() *mcp.Tool { return t.remote }

// Enabled implements [tool.Enabler]: true while the server is connected.
func (t *Tool) Enabled(context.Context, *tool.Env) bool { return t.s.connected() }

// DescribeCall implements [tool.Describer].
func (t *Tool) DescribeCall(json.RawMessage) string {
	return fmt.Sprintf("%s (MCP %s)", t.remote.Name, t.s.name)
}

// Call implements [tool.Tool]: tools/call on the server, bounded by the
// call timeout. Cancelling ctx cancels the request (the server receives
// notifications/cancelled). A result with isError is returned as an error
// result; a failure to get any result is returned as an error wrapping
// [ErrUnavailable], [ErrDisconnected] or [ErrTimeout].
func (t *Tool) Call(ctx context.Context, _ *tool.Env, input json.RawMessage) (*tool.Result, error) {
	s := t.s
	cs, err := s.live()
	if err != nil {
		return nil, err
	}
	if len(input) == 0 {
		input = json.RawMessage("{}")
	}
	cctx, cancel := context.WithTimeout(ctx, s.m.opts.CallTimeout)
	defer cancel()
	res, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: t.remote.Name, Arguments: input})
	if err != nil {
		return nil, s.callErr(ctx, cctx, cs, "tools/call "+t.remote.Name, err)
	}
	return ConvertResult(res), nil
}

// callErr turns the error of a request into one that says what happened.
func (s *server) callErr(parent, cctx context.Context, cs *mcp.ClientSession, what string, err error) error {
	switch {
	case parent.Err() != nil:
		return fmt.Errorf("MCP %s on %q cancelled: %w", what, s.name, context.Cause(parent))
	case errors.Is(cctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("%w: %s on %q got no answer within %s (the request was cancelled)", ErrTimeout, what, s.name, s.m.opts.CallTimeout)
	case isClosedErr(err) || errors.Is(err, io.ErrUnexpectedEOF) || s.sessionGone(cs):
		return fmt.Errorf("%w: %q went away during %s (%v); its tools are unavailable until it reconnects", ErrDisconnected, s.name, what, err)
	}
	return fmt.Errorf("MCP server %q: %s: %w", s.name, what, err)
}

// sessionGone reports whether cs is no longer the server's live session.
func (s *server) sessionGone(cs *mcp.ClientSession) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.session != cs
}

// wrapTools converts a server's tool list. A tool whose input schema
// cannot be compiled is left out, logged and returned among the rejected.
func (s *server) wrapTools(remote []*mcp.Tool) ([]tool.Tool, []RejectedTool) {
	out := make([]tool.Tool, 0, len(remote))
	var rejected []RejectedTool
	seen := map[string]bool{}
	for _, rt := range remote {
		if rt == nil || rt.Name == "" {
			continue
		}
		schema, err := inputSchema(rt.InputSchema)
		if err != nil {
			err = fmt.Errorf("MCP server %q: tool %q left out: %w", s.name, rt.Name, err)
			s.m.opts.Logger.Warn("mcp: tool left out", "server", s.name, "tool", rt.Name, "err", err)
			rejected = append(rejected, RejectedTool{Name: rt.Name, Err: err.Error()})
			continue
		}
		name := ToolName(s.name, rt.Name)
		if seen[name] {
			name = hashed(name + "\x00" + rt.Name)
		}
		seen[name] = true
		out = append(out, &Tool{s: s, remote: rt, spec: s.spec(name, rt, schema)})
	}
	return out, rejected
}

func (s *server) spec(name string, rt *mcp.Tool, schema json.RawMessage) tool.Spec {
	sp := tool.Spec{
		Name:        name,
		Description: textutil.Truncate(rt.Description, MaxDescription),
		InputSchema: schema,
		Timeout:     s.m.opts.CallTimeout,
	}
	if sp.Description == "" {
		sp.Description = fmt.Sprintf("Tool %s of MCP server %s.", rt.Name, s.name)
	}
	if rt.OutputSchema != nil {
		if b, err := json.Marshal(rt.OutputSchema); err == nil {
			sp.OutputSchema = b
		}
	}
	sp.Annotations.Title = rt.Title
	if a := rt.Annotations; a != nil {
		if a.Title != "" {
			sp.Annotations.Title = a.Title
		}
		sp.Annotations.ReadOnlyHint = a.ReadOnlyHint
		sp.Annotations.IdempotentHint = a.IdempotentHint
		sp.Annotations.DestructiveHint = a.DestructiveHint
		sp.Annotations.OpenWorldHint = a.OpenWorldHint
		// Ordering only: never ReadOnly or NonDestructive (fail closed).
		sp.Traits.ConcurrencySafe = a.ReadOnlyHint && !s.m.opts.SerialCalls
	}
	if sp.Annotations.Title != "" {
		sp.Defer.SearchHint = textutil.Truncate(sp.Annotations.Title, 80)
	}
	return sp
}

// inputSchema is a server tool's input schema as the executor validates
// it, or why it cannot be used ([tool.CheckSchema]: drafts 04 to
// 2020-12, references within the document only). A tool without a schema
// (which the protocol does not allow) takes any object; the server checks
// its own input.
func inputSchema(v any) (json.RawMessage, error) {
	if v == nil {
		return json.RawMessage(`{"type":"object"}`), nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if err := tool.CheckSchema(b); err != nil {
		return nil, err
	}
	return b, nil
}

// ConvertResult maps an MCP tool result to a Gantry result: text, images,
// audio, embedded resources and resource links map one to one (see
// [ConvertContent]); structured content
// is kept in [tool.Result.Structured] and, when the server sent no content
// blocks, also given to the model as JSON text; isError is kept, and _meta
// is kept in [tool.Result.Meta] (never shown to the model).
func ConvertResult(res *mcp.CallToolResult) *tool.Result {
	out := &tool.Result{IsError: res.IsError, Structured: res.StructuredContent}
	if len(res.Meta) > 0 {
		out.Meta = map[string]any(res.Meta) // the server's _meta travels with the result
	}
	for _, c := range res.Content {
		out.Content = append(out.Content, ConvertContent(c))
	}
	if len(out.Content) == 0 && res.StructuredContent != nil {
		if b, err := json.MarshalIndent(res.StructuredContent, "", "  "); err == nil {
			out.Content = append(out.Content, tool.Text(string(b)))
		}
	}
	if len(out.Content) == 0 {
		if out.IsError {
			out.Content = []tool.Content{tool.Text("The MCP tool failed without a message.")}
		} else {
			out.Content = []tool.Content{tool.Text("(no output)")}
		}
	}
	return out
}

// ConvertContent maps one MCP content block: text, image and audio to
// [tool.Text], [tool.Image] and [tool.Audio] (the LLM adapters send audio
// to the model as a note naming it, since no model API takes audio in a
// tool result; mcpserve passes it on as audio), resource links and
// embedded resources to [tool.ResourceLink], [tool.EmbeddedText] and
// [tool.EmbeddedBlob]. Anything else becomes a text note with its JSON.
func ConvertContent(c mcp.Content) tool.Content {
	switch c := c.(type) {
	case *mcp.TextContent:
		return tool.Text(c.Text)
	case *mcp.ImageContent:
		return tool.Image(c.Data, c.MIMEType)
	case *mcp.AudioContent:
		return tool.Audio(c.Data, c.MIMEType)
	case *mcp.ResourceLink:
		l := tool.ResourceLink(c.URI, c.Name, c.MIMEType)
		l.Title, l.Description = c.Title, c.Description
		return l
	case *mcp.EmbeddedResource:
		r := c.Resource
		if r == nil {
			return tool.Text("[empty embedded resource]")
		}
		if r.Blob != nil {
			return tool.EmbeddedBlob(r.URI, r.MIMEType, r.Blob)
		}
		return tool.EmbeddedText(r.URI, r.MIMEType, r.Text)
	}
	b, _ := json.Marshal(c)
	return tool.Text(fmt.Sprintf("[unsupported MCP content: %s]", textutil.Truncate(string(b), 200)))
}
