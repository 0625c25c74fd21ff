package llmtest

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gantry-dev/gantry/tool"
	"github.com/gantry-dev/gantry/toolset"
)

// ToolPool returns a small pool with every feature the adapters' tool
// formats render: a usage prompt, an alias, enums, a nested object, a
// deferred tool (so ToolSearch is in the view), and an MCP tool with
// annotations. It is the input of the adapters' golden tests.
func ToolPool(tb testing.TB) *toolset.Pool {
	tb.Helper()
	noop := func(context.Context, *tool.Env, json.RawMessage) (*tool.Result, error) { return nil, nil }
	read := tool.Must(tool.NewRaw("Read", "Reads a file from the local filesystem.",
		json.RawMessage(`{"type":"object","properties":{"file_path":{"type":"string","description":"The absolute path to the file to read"},"offset":{"type":"number","description":"The line number to start reading from"},"limit":{"type":"number","description":"The number of lines to read"}},"required":["file_path"],"additionalProperties":false}`),
		noop, tool.ReadOnly(), tool.WithAliases("ReadFile"), tool.WithPrompt("Usage:\n- The file_path parameter must be an absolute path.")))
	cron := tool.Must(tool.NewRaw("CronCreate", "Schedules a prompt to run on a cron schedule.",
		json.RawMessage(`{"type":"object","properties":{"cron":{"type":"string","description":"5-field cron expression"},"prompt":{"type":"string","description":"The prompt to run"}},"required":["cron","prompt"],"additionalProperties":false}`),
		noop, tool.WithDefer(tool.Deferral{ShouldDefer: true})))
	type weatherInput struct {
		City  string   `json:"city" jsonschema:"The city, for example Paris"`
		Units string   `json:"units,omitempty" enum:"metric,imperial" jsonschema:"Unit system"`
		Tags  []string `json:"tags,omitempty" enum:"rain,wind" jsonschema:"Only these phenomena"`
		Where *struct {
			Lat float64 `json:"lat"`
			Lon float64 `json:"lon"`
		} `json:"where,omitempty" jsonschema:"Coordinates instead of a city"`
	}
	weather := tool.Must(tool.NewText("Weather", "Returns the weather forecast.", func(ctx context.Context, env *tool.Env, in weatherInput) (string, error) {
		return "sunny", nil
	}, tool.ReadOnly()))
	p, err := toolset.NewPool(context.Background(), toolset.Options{Tools: []tool.Tool{read, cron, weather}, Defer: true})
	if err != nil {
		tb.Fatal(err)
	}
	f := false
	issue := tool.Must(tool.NewRaw("create_issue", "Create an issue.",
		json.RawMessage(`{"type":"object","properties":{"title":{"type":"string","description":"Issue title"},"body":{"type":"string","description":"Issue body"}},"required":["title"]}`),
		noop, tool.WithAnnotations(tool.Annotations{Title: "Create issue", OpenWorldHint: &f})))
	if err := p.AddMCP("github", issue); err != nil {
		tb.Fatal(err)
	}
	return p
}

// Golden compares v, serialised as indented JSON with a final newline,
// with the file testdata/name; with update it rewrites the file instead.
func Golden(tb testing.TB, name string, v any, update bool) {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	var got bytes.Buffer
	if err := json.Indent(&got, b, "", "  "); err != nil {
		tb.Fatal(err)
	}
	got.WriteByte('\n')
	path := filepath.Join("testdata", name)
	if update {
		if err := os.WriteFile(path, got.Bytes(), 0o644); err != nil {
			tb.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("%v (run the test with -update)", err)
	}
	if diff := cmp.Diff(string(want), got.String()); diff != "" {
		tb.Fatalf("%s differs (-want +got; -update rewrites):\n%s", path, diff)
	}
}
