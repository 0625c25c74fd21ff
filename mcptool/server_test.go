package mcptool

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/gantry-dev/gantry/sandbox"
)

// The test binary doubles as a stdio MCP server (a real process the tests
// can kill): with GANTRY_MCPTOOL_SERVER=1 it serves newTestServer on
// stdin/stdout instead of running tests.
func TestMain(m *testing.M) {
	sandbox.Main() // the test binary is the sandbox helper (first: it may then run as the server)
	if os.Getenv("GANTRY_MCPTOOL_SERVER") == "1" {
		s := newTestServer(os.Getenv("GANTRY_MCPTOOL_MARK"))
		if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, "test server:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

type echoIn struct {
	Text string `json:"text"`
}

func ptr[T any](v T) *T { return &v }

// newTestServer returns an MCP server with tools covering each result kind.
// mark, if set, is a file the "block" tool writes to when it starts and
// when its context is cancelled.
func newTestServer(mark string) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "testsrv", Version: "1.2.3"}, nil)
	note := func(msg string) {
		if mark != "" {
			f, err := os.OpenFile(mark, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
			if err == nil {
				fmt.Fprintln(f, msg)
				f.Close()
			}
		}
	}
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes text.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, Title: "Echo"}},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo: " + in.Text}}}, nil, nil
		})
	s.AddTool(&mcp.Tool{Name: "fail", Description: "Always fails.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "it broke"}}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "mixed", Description: "Every content kind.", InputSchema: json.RawMessage(`{"type":"object"}`),
		Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(false)}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: "hello"},
				&mcp.ImageContent{Data: []byte{0x89, 'P', 'N', 'G'}, MIMEType: "image/png"},
				&mcp.AudioContent{Data: []byte{1, 2, 3}, MIMEType: "audio/wav"},
				&mcp.ResourceLink{URI: "file:///x.txt", Name: "x", Title: "X file", MIMEType: "text/plain"},
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "mem://a", MIMEType: "text/plain", Text: "embedded"}},
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "mem://b", MIMEType: "application/octet-stream", Blob: []byte{0, 1}}},
			}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "structured", Description: "Structured only.", InputSchema: json.RawMessage(`{"type":"object"}`),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{StructuredContent: map[string]any{"n": 42}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "block", Description: "Blocks until cancelled.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			note("started")
			select {
			case <-ctx.Done():
				note("cancelled")
				return nil, ctx.Err()
			case <-time.After(time.Minute):
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "late"}}}, nil
			}
		})
	s.AddTool(&mcp.Tool{Name: "ask", Description: "Elicits a name.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "Your name?",
				RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`)})
			if err != nil {
				return nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%s %v", res.Action, res.Content["name"])}}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "weird.name/with spaces", Description: "Odd name.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "weird ok " + req.Params.Name}}}, nil
		})
	s.AddResource(&mcp.Resource{URI: "mem://readme", Name: "readme", MIMEType: "text/plain", Description: "A readme."},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "read me"}}}, nil
		})
	s.AddResource(&mcp.Resource{URI: "mem://logo", Name: "logo", MIMEType: "image/png"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "image/png", Blob: []byte{0x89, 'P'}}}}, nil
		})
	return s
}
