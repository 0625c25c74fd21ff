package llmtest

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
	GoldenText(tb, name, got.String(), update)
}

// GoldenText compares text with the file testdata/name; with update it
// rewrites the file instead.
func GoldenText(tb testing.TB, name, text string, update bool) {
	tb.Helper()
	path := filepath.Join("testdata", name)
	if update {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			tb.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("%v (run the test with -update)", err)
	}
	if diff := cmp.Diff(string(want), text); diff != "" {
		tb.Fatalf("%s differs (-want +got; -update rewrites):\n%s", path, diff)
	}
}

// DocPool returns a pool of tools with structured descriptions
// ([tool.Doc]), the input of the formats' golden tests of the documented
// layout: a typed tool whose Doc the constructor renders, and a custom
// tool with a Doc and a session-time prompt ([tool.SessionDescriber]) that
// the pool renders once, when it builds the tool.
func DocPool(tb testing.TB) *toolset.Pool {
	tb.Helper()
	type grepInput struct {
		Pattern string `json:"pattern" jsonschema:"The regular expression to search for"`
		Path    string `json:"path,omitempty" jsonschema:"The directory to search (default: the working directory)"`
	}
	grep := tool.Must(tool.NewText("Grep", "", func(ctx context.Context, env *tool.Env, in grepInput) (string, error) {
		return "", nil
	}, tool.ReadOnly(), tool.WithDoc(tool.Doc{
		DisplayName: "Search file contents",
		Short:       "Searches file contents with a regular expression.",
		Long:        "Searches every file under a directory and returns the matching lines with their file names and line numbers.",
		UsageNotes:  []string{"Use it instead of running grep or rg in Bash.", "The pattern uses RE2 syntax: escape literal braces."},
		Important:   []string{"Results are capped: narrow the path or the pattern when the output is cut."},
		Examples: []tool.Example{
			{Description: "Find the definitions of a function", Input: json.RawMessage(`{"pattern": "func Run\\(", "path": "agent"}`)},
			{Description: "Find TODO comments everywhere", Input: json.RawMessage(`{"pattern":"TODO"}`)},
		},
	})))
	p, err := toolset.NewPool(context.Background(), toolset.Options{Tools: []tool.Tool{grep, &QueryTool{Tables: []string{"orders(id, total)", "users(id, name)"}}}})
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// QueryTool is a custom tool (not built by package tool's constructors)
// with a structured description and a session-time prompt listing the
// tables of its database.
type QueryTool struct {
	Tables []string
	// Delay is how long DescribeSession takes (to test the deadline).
	Delay time.Duration
}

// Spec implements [tool.Tool]: the Doc is not rendered here (the pool
// renders it).
func (q *QueryTool) Spec() *tool.Spec {
	return &tool.Spec{
		Name:        "Query",
		Description: "Runs a read-only SQL query.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"sql":{"type":"string","description":"One SELECT statement"}},"required":["sql"],"additionalProperties":false}`),
		Traits:      tool.ReadOnlyTraits,
		Doc: &tool.Doc{
			DisplayName: "SQL query",
			UsageNotes:  []string{"Only SELECT statements run; anything else is an error."},
			Examples:    []tool.Example{{Description: "Count the orders", Input: json.RawMessage(`{"sql":"SELECT count(*) FROM orders"}`)}},
		},
	}
}

// Call implements [tool.Tool].
func (q *QueryTool) Call(context.Context, *tool.Env, json.RawMessage) (*tool.Result, error) {
	return tool.TextResult("0 rows"), nil
}

// DescribeSession implements [tool.SessionDescriber]: the prompt lists the
// tables.
func (q *QueryTool) DescribeSession(ctx context.Context, env *tool.Env) (tool.SessionSpec, error) {
	if q.Delay > 0 {
		select {
		case <-time.After(q.Delay):
		case <-ctx.Done():
			return tool.SessionSpec{}, ctx.Err()
		}
	}
	return tool.SessionSpec{Prompt: "Runs one query against the session's database. Tables: " + strings.Join(q.Tables, ", ") + "."}, nil
}
