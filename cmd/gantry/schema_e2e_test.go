package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gantry-dev/gantry/llm/llmtest"
)

// TestLegacySchemaToolsEndToEnd: a `gantry -p` run against an MCP server
// whose tools publish draft-04 and draft-07 input schemas. The model's
// invalid calls (a draft-04 exclusive bound, a bad date-time) come back
// naming the field and never reach the server; the valid ones do; the
// server's tool with a schema naming a remote $ref is not offered to the
// model, and `gantry mcp list` says why.
func TestLegacySchemaToolsEndToEnd(t *testing.T) {
	var (
		mu    sync.Mutex
		calls []string
	)
	srv := mcp.NewServer(&mcp.Implementation{Name: "legacy", Version: "1"}, nil)
	record := func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		mu.Lock()
		calls = append(calls, req.Params.Name+" "+string(req.Params.Arguments))
		mu.Unlock()
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "recorded"}}}, nil
	}
	for name, schema := range map[string]string{
		"measure": `{"$schema":"http://json-schema.org/draft-04/schema#","type":"object","properties":{"n":{"type":"number","minimum":0,"exclusiveMinimum":true}},"required":["n"]}`,
		"event":   `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","$ref":"#/definitions/E","definitions":{"E":{"type":"object","properties":{"at":{"type":"string","format":"date-time"}},"required":["at"]}}}`,
		"remote":  `{"type":"object","properties":{"x":{"$ref":"https://schemas.example.com/x.json"}}}`,
	} {
		srv.AddTool(&mcp.Tool{Name: name, Description: "Legacy " + name + ".", InputSchema: json.RawMessage(schema)}, record)
	}
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	defer hs.Close()
	dir := t.TempDir()
	cfg := filepath.Join(t.TempDir(), "mcp.json")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, `{"mcpServers":{"legacy":{"type":"http","url":%q}}}`, hs.URL), 0o600); err != nil {
		t.Fatal(err)
	}

	model := llmtest.NewServer(t)
	model.Script(
		llmtest.ToolReply(llmtest.ToolCall{ID: "bound", Name: "mcp__legacy__measure", Input: `{"n":0}`}),
		llmtest.ToolReply(llmtest.ToolCall{ID: "ok1", Name: "mcp__legacy__measure", Input: `{"n":0.5}`}),
		llmtest.ToolReply(llmtest.ToolCall{ID: "date", Name: "mcp__legacy__event", Input: `{"at":"next tuesday"}`}),
		llmtest.ToolReply(llmtest.ToolCall{ID: "ok2", Name: "mcp__legacy__event", Input: `{"at":"2024-05-01T13:45:00Z"}`}),
		llmtest.TextReply("done"),
	)
	a, out, errb := testApp(t)
	base := a.getenv
	a.getenv = func(k string) string {
		switch k {
		case "ANTHROPIC_BASE_URL":
			return model.URL()
		case "ANTHROPIC_API_KEY":
			return "test-key"
		}
		return base(k)
	}
	code := run(context.Background(), a, []string{"-p", "go", "--cwd", dir, "--mcp-config", cfg, "--no-session-persistence",
		"--allowedTools", "mcp__legacy__measure,mcp__legacy__event", "--output-format", "json"})
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errb)
	}
	reqs := model.Requests()
	names := reqs[0].ToolNames()
	if !slices.Contains(names, "mcp__legacy__measure") || !slices.Contains(names, "mcp__legacy__event") || slices.Contains(names, "mcp__legacy__remote") {
		t.Errorf("tools offered: %v", names)
	}
	results := map[string]string{}
	for _, r := range reqs {
		for _, blk := range r.ToolResults() {
			b, _ := json.Marshal(blk)
			results[blk.ToolUseID] = string(b)
		}
	}
	for id, want := range map[string]string{
		"bound": "/n: must be \\u003e 0, got 0",
		"ok1":   "recorded",
		"date":  "/at: not a valid date-time",
		"ok2":   "recorded",
	} {
		if !strings.Contains(results[id], want) {
			t.Errorf("result %s lacks %q: %s", id, want, results[id])
		}
	}
	mu.Lock()
	got := slices.Clone(calls)
	mu.Unlock()
	if len(got) != 2 || !strings.HasPrefix(got[0], `measure {"n":0.5}`) || !strings.HasPrefix(got[1], `event {"at":"2024-05-01T13:45:00Z"}`) {
		t.Errorf("the server saw %q, want only the two valid calls", got)
	}

	a, out, _ = testApp(t)
	if code := run(context.Background(), a, []string{"mcp", "list", "--cwd", dir, "--policy", "-", "--mcp-config", cfg, "--json"}); code != 0 {
		t.Fatalf("mcp list: exit %d", code)
	}
	var st []struct {
		Tools    int `json:"tools"`
		Rejected []struct {
			Name  string `json:"name"`
			Error string `json:"error"`
		} `json:"rejected_tools"`
	}
	if err := json.Unmarshal([]byte(out.String()), &st); err != nil || len(st) != 1 || st[0].Tools != 2 || len(st[0].Rejected) != 1 ||
		st[0].Rejected[0].Name != "remote" || !strings.Contains(st[0].Rejected[0].Error, `$ref "https://schemas.example.com/x.json" points outside the schema`) {
		t.Fatalf("mcp list: %v %s", err, out.String())
	}
}
