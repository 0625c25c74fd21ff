package mcpserve

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gantry-dev/gantry/executor"
	"github.com/gantry-dev/gantry/tool"
)

// ErrUnsupported is wrapped by the [Client] methods when the client did not
// declare the capability the method needs (sampling, elicitation) or the
// transport cannot do it.
var ErrUnsupported = errors.New("mcpserve: the client does not support this")

// Client is the MCP client that made a tool call: a tool reaches the
// client's own features through it. Get it from the call's context with
// [ClientFrom]. It is valid while the call runs; its methods are safe for
// concurrent use.
type Client struct {
	ss        *mcp.ServerSession
	extra     *mcp.RequestExtra
	token     any  // the request's progress token; nil if none
	resumable bool // the server has an event store
	mrtr      bool // the request's protocol has no server-to-client requests mid-call

	mu       sync.Mutex
	done     bool
	sent     int     // progress notifications sent
	last     float64 // last progress value sent
	progress func(ctx context.Context, p *mcp.ProgressNotificationParams) error
}

type clientKey struct{}

// ClientFrom returns the MCP client of the tool call whose context is ctx
// (the context the executor gives the tool), or false outside a call
// served by mcpserve.
func ClientFrom(ctx context.Context) (*Client, bool) {
	c, ok := ctx.Value(clientKey{}).(*Client)
	return c, ok && c != nil
}

// Session returns the SDK's session with the client (for what Client does
// not wrap).
func (c *Client) Session() *mcp.ServerSession { return c.ss }

// Log sends a log message (notifications/message) to the client. The
// client's logging/setLevel filters it: nothing is sent before the client
// sets a level, nor below that level. Pass the tool's context so that, over
// HTTP, the message travels on the call's stream.
func (c *Client) Log(ctx context.Context, level mcp.LoggingLevel, logger string, data any) error {
	if err := c.ss.Log(ctx, &mcp.LoggingMessageParams{Level: level, Logger: logger, Data: data}); err != nil {
		return fmt.Errorf("mcpserve: log: %w", err)
	}
	return nil
}

// errMRTR explains why sampling and elicitation fail on protocol
// 2026-07-28 and later.
var errMRTR = fmt.Errorf("%w on protocol 2026-07-28 or later: the server would have to answer with input requests and be called again (multi round-trip, SEP-2322), which a tool run by the executor cannot do", ErrUnsupported)

// CreateMessage asks the client's model for a message (sampling). It fails
// with [ErrUnsupported] when the client did not declare the sampling
// capability, and for requests on protocol 2026-07-28 or later (which
// replaced requests to the client during a call with multi round-trip
// requests).
func (c *Client) CreateMessage(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	if c.mrtr {
		return nil, fmt.Errorf("mcpserve: sampling: %w", errMRTR)
	}
	if ip := c.ss.InitializeParams(); ip == nil || ip.Capabilities == nil || ip.Capabilities.Sampling == nil {
		return nil, fmt.Errorf("%w: sampling", ErrUnsupported)
	}
	res, err := c.ss.CreateMessage(ctx, p) //nolint:staticcheck // deprecated only from protocol 2026-07-28
	if err != nil {
		return nil, fmt.Errorf("mcpserve: sampling: %w", err)
	}
	return res, nil
}

// Elicit asks the client's user for input (elicitation). It fails with
// [ErrUnsupported] when the client did not declare the elicitation
// capability, and on protocol 2026-07-28 or later (see
// [Client.CreateMessage]). An accepted answer has been validated against
// p.RequestedSchema.
func (c *Client) Elicit(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	if c.mrtr {
		return nil, fmt.Errorf("mcpserve: elicitation: %w", errMRTR)
	}
	if ip := c.ss.InitializeParams(); ip == nil || ip.Capabilities == nil || ip.Capabilities.Elicitation == nil {
		return nil, fmt.Errorf("%w: elicitation", ErrUnsupported)
	}
	res, err := c.ss.Elicit(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("mcpserve: elicitation: %w", err)
	}
	return res, nil
}

// CloseStream ends the HTTP stream the call's response would travel on and
// asks the client to reconnect after retryAfter (SEP-1699); the call goes
// on, and its messages reach the client when it reconnects with
// Last-Event-ID. A tool that runs long may use it so that no connection
// stays open (and idle) for its whole run.
//
// The stream is closed only when the client can resume it: over the
// streamable HTTP transport, with an [Options.EventStore], and for a
// request made with a protocol version that has resumable streams
// (2025-11-25 up to, not including, 2026-07-28: earlier versions get no
// event ids, later ones removed resumption). It reports whether the stream
// was closed.
func (c *Client) CloseStream(retryAfter time.Duration) bool {
	if c.extra == nil || c.extra.CloseSSEStream == nil || !c.resumable {
		return false
	}
	// Protocol versions are dates, so they compare as strings.
	if v := c.extra.Header.Get("Mcp-Protocol-Version"); v < "2025-11-25" || v >= "2026-07-28" {
		return false
	}
	c.extra.CloseSSEStream(mcp.CloseSSEStreamArgs{RetryAfter: retryAfter})
	return true
}

// ProgressAmount may be implemented by the Data of a [tool.Progress] to
// give the client numbers: how far the call is and, if known (> 0), the
// total. Without it the n-th report of a call is sent as progress n.
type ProgressAmount interface {
	ProgressAmount() (progress, total float64)
}

// report forwards one progress report as notifications/progress when the
// client sent a progress token. Progress values must increase (MCP), so a
// report whose amount does not exceed the previous one is dropped.
func (c *Client) report(ctx context.Context, p tool.Progress) {
	if c.token == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock() // notifications leave in the order of the reports
	if c.done {
		return
	}
	n := &mcp.ProgressNotificationParams{ProgressToken: c.token, Message: p.Message}
	if a, ok := p.Data.(ProgressAmount); ok {
		n.Progress, n.Total = a.ProgressAmount()
		if n.Total < 0 {
			n.Total = 0
		}
		if c.sent > 0 && n.Progress <= c.last {
			return
		}
	} else {
		n.Progress = c.last + 1
	}
	if err := c.progress(ctx, n); err != nil {
		return // the client went away; the call's context ends too
	}
	c.sent++
	c.last = n.Progress
}

// finish stops progress forwarding: a call the executor abandoned may go on
// reporting after its response was sent.
func (c *Client) finish() {
	c.mu.Lock()
	c.done = true
	c.mu.Unlock()
}

// run runs one call in a session of its own (see [New]) with the call's
// [Client] in its context.
func (s *Server) run(ctx context.Context, req *mcp.CallToolRequest, call executor.Call) (*executor.Outcome, error) {
	c := &Client{ss: req.Session, extra: req.Extra, resumable: s.eventStore != nil}
	if req.Params != nil {
		c.token = req.Params.GetProgressToken()
		// Requests of protocol 2026-07-28 and later carry their version.
		v, _ := req.Params.GetMeta()[mcp.MetaKeyProtocolVersion].(string)
		c.mrtr = v >= "2026-07-28"
	}
	c.progress = req.Session.NotifyProgress
	ctx = context.WithValue(ctx, clientKey{}, c)

	before := s.session.Env()
	env := before.Clone()
	if next := before.Progress; next != nil || c.token != nil {
		env.Progress = func(p tool.Progress) {
			c.report(ctx, p)
			if next != nil {
				next(p)
			}
		}
	}
	sess := executor.NewSharedEnv(env)
	out, err := s.exec.RunOne(ctx, sess, call)
	c.finish()
	after := sess.Env()
	s.session.Update(func(e *tool.Env) { mergeEnv(e, before, after) })
	return out, err
}

// mergeEnv applies to dst the fields that differ between before and after:
// the changes one call made to its copy of the session's environment. The
// call's own fields (ToolUseID, Progress) are never carried.
func mergeEnv(dst, before, after *tool.Env) {
	if after.WorkDir != before.WorkDir {
		dst.WorkDir = after.WorkDir
	}
	if after.SessionID != before.SessionID {
		dst.SessionID = after.SessionID
	}
	if after.Mode != before.Mode {
		dst.Mode = after.Mode
	}
	if after.ToolResultsDir != before.ToolResultsDir {
		dst.ToolResultsDir = after.ToolResultsDir
	}
	if !slices.Equal(after.AdditionalDirs, before.AdditionalDirs) {
		dst.AdditionalDirs = slices.Clone(after.AdditionalDirs)
	}
	if after.Services != before.Services {
		dst.Services = after.Services
	}
	if !sameValue(after.Files, before.Files) {
		dst.Files = after.Files
	}
}

// sameValue compares two interface values without panicking on dynamic
// types that are not comparable (those count as unchanged: a modifier that
// replaces them with an equal-looking value cannot be told apart).
func sameValue(a, b tool.FileStates) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	ta, tb := reflect.TypeOf(a), reflect.TypeOf(b)
	if ta != tb {
		return false
	}
	if !ta.Comparable() {
		return true
	}
	return a == b
}
