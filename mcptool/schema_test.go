package mcptool

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gantry-dev/gantry/executor"
	"github.com/gantry-dev/gantry/tool"
)

// legacySchemaServer publishes tools whose input schemas are written
// against older drafts, and two that Gantry cannot use. Every call that
// reaches it is recorded.
func legacySchemaServer(calls *[]string, mu *sync.Mutex) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "legacy", Version: "1"}, nil)
	record := func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		mu.Lock()
		*calls = append(*calls, req.Params.Name+" "+string(req.Params.Arguments))
		mu.Unlock()
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
	}
	for name, schema := range map[string]string{
		// draft-04: boolean exclusive bounds, "id" anchors, definitions.
		"range04": `{"$schema":"http://json-schema.org/draft-04/schema#","type":"object",
			"properties":{"n":{"type":"integer","minimum":0,"exclusiveMinimum":true,"maximum":10,"exclusiveMaximum":true},
				"unit":{"$ref":"#unit"}},
			"definitions":{"u":{"id":"#unit","enum":["m","s"]}},
			"required":["n"],"additionalProperties":false}`,
		// draft-07 as zod-to-json-schema writes it: a root $ref into definitions.
		"event07": `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","$ref":"#/definitions/Event",
			"definitions":{"Event":{"type":"object","properties":{"at":{"type":"string","format":"date-time"},
				"id":{"type":"string","format":"uuid"},"tags":{"type":"array","items":{"type":"string"}}},
				"required":["at"],"additionalProperties":false}}}`,
		"remote":  `{"type":"object","properties":{"x":{"$ref":"https://schemas.example.com/x.json"}}}`,
		"custom":  `{"$schema":"https://example.com/my-dialect","type":"object"}`,
		"badtype": `{"type":"object","properties":{"a":{"type":"strin"}}}`,
	} {
		s.AddTool(&mcp.Tool{Name: name, Description: "Legacy " + name + ".", InputSchema: json.RawMessage(schema)}, record)
	}
	return s
}

// TestLegacySchemas: tools of a real MCP server that publish draft-04 and
// draft-07 schemas are usable — their inputs are validated by their own
// draft's rules (and formats) before the server sees them — and tools
// whose schemas cannot be compiled are left out, with a status and a log
// line naming the tool and the reason.
func TestLegacySchemas(t *testing.T) {
	var (
		mu    sync.Mutex
		calls []string
		logs  strings.Builder
	)
	m := startManager(t, []string{"legacy"}, Options{Transport: inMemory(t, legacySchemaServer(&calls, &mu)), Logger: testLogger(&logs)})
	var names []string
	for _, tl := range m.Tools() {
		names = append(names, tl.Spec().Name)
	}
	if strings.Join(names, ",") != "mcp__legacy__event07,mcp__legacy__range04" {
		t.Fatalf("tools = %v", names)
	}
	st := m.Servers()[0]
	if st.Tools != 2 || len(st.Rejected) != 3 {
		t.Fatalf("status = %+v", st)
	}
	want := map[string]string{
		"remote":  `$ref "https://schemas.example.com/x.json" points outside the schema`,
		"custom":  `"https://example.com/my-dialect" is not a JSON Schema draft`,
		"badtype": `type "strin" is not a JSON Schema type`,
	}
	for _, r := range st.Rejected {
		if !strings.Contains(r.Err, want[r.Name]) || !strings.Contains(r.Err, `tool "`+r.Name+`"`) || !strings.Contains(r.Err, `server "legacy"`) {
			t.Errorf("rejected %s: %s", r.Name, r.Err)
		}
		if !strings.Contains(logs.String(), "tool="+r.Name) {
			t.Errorf("no log line for %s:\n%s", r.Name, logs.String())
		}
	}

	ctx := context.Background()
	cases := []struct {
		tool, in string
		errHas   []string // "": valid
	}{
		{"range04", `{"n":5,"unit":"m"}`, nil},
		{"range04", `{"n":9}`, nil},
		{"range04", `{"n":0}`, []string{"/n: must be > 0, got 0"}},
		{"range04", `{"n":10,"unit":"h"}`, []string{"/n: must be < 10, got 10", `/unit: value must be one of "m", "s"`}},
		{"event07", `{"at":"2024-05-01T13:45:00Z","id":"123e4567-e89b-12d3-a456-426614174000"}`, nil},
		{"event07", `{"at":"tomorrow","id":"42","extra":1}`, []string{"/at: not a valid date-time", "/id: not a valid uuid", "/extra: unknown property"}},
		{"event07", `{"tags":"x"}`, []string{"/at: required property is missing", "/tags: got string, want array"}},
	}
	for _, c := range cases {
		tl := findTool(t, m, "mcp__legacy__"+c.tool)
		in, err := executor.ValidateInput(ctx, tl, &tool.Env{}, json.RawMessage(c.in))
		if c.errHas == nil {
			if err != nil {
				t.Errorf("%s %s: %v", c.tool, c.in, err)
				continue
			}
			if _, err := tl.Call(ctx, nil, in); err != nil {
				t.Errorf("%s %s: call: %v", c.tool, c.in, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s %s: accepted", c.tool, c.in)
			continue
		}
		for _, h := range c.errHas {
			if !strings.Contains(err.Error(), h) {
				t.Errorf("%s %s: error lacks %q:\n%v", c.tool, c.in, h, err)
			}
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(calls) != 3 {
		t.Errorf("the server saw %d calls, want the 3 valid ones: %q", len(calls), calls)
	}
}

// testLogger logs to b as text, safe for concurrent use.
func testLogger(b *strings.Builder) *slog.Logger {
	var mu sync.Mutex
	return slog.New(slog.NewTextHandler(lockedWriter{b, &mu}, nil))
}

type lockedWriter struct {
	b  *strings.Builder
	mu *sync.Mutex
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}
