package streamjson

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCPTransport is the MCP client transport to an SDK-hosted MCP server
// (createSdkMcpServer; type "sdk" in the SDK's mcpServers): each JSON-RPC
// message to the server travels as an mcp_message control request, and
// the server's reply to a request comes back in the control response
// (mcp_response). Notifications are sent without waiting.
type MCPTransport struct {
	Conn   *Conn
	Server string
}

// Connect implements [mcp.Transport].
func (t *MCPTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	cctx, cancel := context.WithCancel(context.Background())
	return &mcpConn{t: t, ctx: cctx, cancel: cancel, in: make(chan jsonrpc.Message, 16)}, nil
}

type mcpConn struct {
	t      *MCPTransport
	ctx    context.Context // ends with Close
	cancel context.CancelFunc
	in     chan jsonrpc.Message
	wg     sync.WaitGroup
	once   sync.Once
}

type mcpMessage struct {
	Subtype    string          `json:"subtype"`
	ServerName string          `json:"server_name"`
	Message    json.RawMessage `json:"message"`
}

func (c *mcpConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case m := <-c.in:
		return m, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.ctx.Done():
		return nil, mcp.ErrConnectionClosed
	}
}

func (c *mcpConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if c.ctx.Err() != nil {
		return mcp.ErrConnectionClosed
	}
	raw, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	req := mcpMessage{Subtype: "mcp_message", ServerName: c.t.Server, Message: raw}
	_, isCall := msg.(*jsonrpc.Request)
	if r, ok := msg.(*jsonrpc.Request); ok && !r.ID.IsValid() {
		isCall = false // a notification
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		resp, err := c.t.Conn.Request(c.ctx, req)
		if !isCall {
			return
		}
		var reply jsonrpc.Message
		if err == nil {
			var body struct {
				MCPResponse json.RawMessage `json:"mcp_response"`
			}
			if err = json.Unmarshal(resp, &body); err == nil {
				reply, err = jsonrpc.DecodeMessage(body.MCPResponse)
			}
		}
		if err != nil {
			// The SDK could not deliver it: answer the call with an error
			// so that the client does not wait forever.
			id := msg.(*jsonrpc.Request).ID
			reply = &jsonrpc.Response{ID: id, Error: fmt.Errorf("SDK MCP server %s: %w", c.t.Server, err)}
		}
		select {
		case c.in <- reply:
		case <-c.ctx.Done():
		}
	}()
	return nil
}

func (c *mcpConn) Close() error {
	c.once.Do(func() {
		c.cancel()
		c.wg.Wait()
	})
	return nil
}

func (c *mcpConn) SessionID() string { return "" }
