package mcptool

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestResultMetaCarried: a server's _meta on a tool result reaches the
// Gantry result (tool.Result.Meta) through a real client session, and is
// not in what the model reads.
func TestResultMetaCarried(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "metasrv", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "stamp", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			r := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "stamped"}}}
			r.Meta = mcp.Meta{"example.com/trace": "t-1", "cost": 2.5}
			return r, nil
		})
	m := startManager(t, []string{"m"}, Options{Transport: inMemory(t, srv)})
	r, err := findTool(t, m, "mcp__m__stamp").Call(context.Background(), nil, json.RawMessage(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if r.Meta["example.com/trace"] != "t-1" || r.Meta["cost"] != 2.5 {
		t.Fatalf("meta %v", r.Meta)
	}
	if r.TextContent() != "stamped" {
		t.Fatalf("content %q", r.TextContent())
	}
	if ConvertResult(&mcp.CallToolResult{}).Meta != nil {
		t.Error("meta invented")
	}
}
