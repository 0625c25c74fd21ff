// Command conformanceclient is the MCP client the official conformance
// suite launches for its client scenarios: it connects to the URL given as
// its last argument with an mcptool.Manager (streamable HTTP), lists the
// tools and calls the one the scenario ($MCP_CONFORMANCE_SCENARIO) is
// about. Elicitation requests are accepted with the schema's defaults.
//
//	conformance client --command "go run ./mcptool/internal/conformanceclient" --scenario initialize
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gantry-dev/gantry/mcptool"
	"github.com/gantry-dev/gantry/tool"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "conformanceclient:", err)
		os.Exit(1)
	}
}

// calls lists, per scenario, the remote tool to call and its input.
var calls = map[string]struct{ tool, input string }{
	"tools_call":                          {"add_numbers", `{"a":5,"b":3}`},
	"elicitation-sep1034-client-defaults": {"test_client_elicitation_defaults", `{}`},
	"sse-retry":                           {"test_reconnection", `{}`},
}

func run() error {
	if len(os.Args) < 2 {
		return fmt.Errorf("usage: conformanceclient URL")
	}
	url := os.Args[len(os.Args)-1]
	scenario := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	cfg := &mcptool.ConfigFile{Servers: map[string]mcptool.ServerConfig{"conf": {Type: mcptool.TypeHTTP, URL: url}}}
	m, err := mcptool.NewManager(cfg, &mcptool.Options{
		MaxReconnects: -1,
		Client:        &mcp.Implementation{Name: "gantry-conformance-client", Version: "1.0.0"},
		Elicit:        acceptDefaults,
	})
	if err != nil {
		return err
	}
	defer m.Close()
	if err := m.Start(ctx); err != nil {
		return err
	}
	c, ok := calls[scenario]
	if !ok {
		return nil // initialize and other handshake-only scenarios
	}
	name := mcptool.ToolName("conf", c.tool)
	for _, t := range m.Tools() {
		if t.Spec().Name != name {
			continue
		}
		r, err := t.Call(ctx, &tool.Env{}, json.RawMessage(c.input))
		if err != nil {
			return err
		}
		fmt.Println(r.TextContent())
		return nil
	}
	return fmt.Errorf("tool %s not offered", c.tool)
}

// acceptDefaults accepts an elicitation with the default of every property
// of the requested schema that has one.
func acceptDefaults(_ context.Context, _ string, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	var schema struct {
		Properties map[string]struct {
			Default any `json:"default"`
		} `json:"properties"`
	}
	b, err := json.Marshal(p.RequestedSchema)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &schema); err != nil {
		return nil, err
	}
	content := map[string]any{}
	for k, v := range schema.Properties {
		if v.Default != nil {
			content[k] = v.Default
		}
	}
	return &mcp.ElicitResult{Action: "accept", Content: content}, nil
}
