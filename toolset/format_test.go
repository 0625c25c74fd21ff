package toolset

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gantry-dev/gantry/tool"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

type weatherInput struct {
	City  string   `json:"city" jsonschema:"The city, for example Paris"`
	Units string   `json:"units,omitempty" enum:"metric,imperial" jsonschema:"Unit system"`
	Days  int      `json:"days,omitempty" jsonschema:"Forecast days"`
	Tags  []string `json:"tags,omitempty" enum:"rain,wind" jsonschema:"Only these phenomena"`
	Where *struct {
		Lat float64 `json:"lat"`
		Lon float64 `json:"lon"`
	} `json:"where,omitempty" jsonschema:"Coordinates instead of a city"`
}

// goldenPool is a small pool with every feature the formats render: a
// prompt, aliases, enums, nested objects, a deferred tool, an MCP tool
// with annotations, a user tool.
func goldenPool(t testing.TB) *Pool {
	t.Helper()
	r := NewRegistry()
	for _, n := range []string{"Read", "Bash", "TodoWrite", "CronCreate", "CronList", "TaskOutput"} {
		i := slicesIndex(n)
		r.MustRegister(Entry{Name: n, Aliases: fixtureTools[i].aliases, Factory: func(context.Context, *tool.Env) (tool.Tool, error) { return fixtureTools[i].build(), nil }})
	}
	weather := tool.Must(tool.NewText("Weather", "Returns the weather forecast.", func(ctx context.Context, env *tool.Env, in weatherInput) (string, error) {
		return "sunny", nil
	}, tool.ReadOnly()))
	p := newPool(t, Options{Registry: r, Tools: []tool.Tool{weather}, Defer: true})
	f := false
	issue := tool.Must(tool.NewRaw("create_issue", "Create an issue.", schemaOf(req("title", "string", "Issue title"), opt("body", "string", "Issue body")),
		func(context.Context, *tool.Env, json.RawMessage) (*tool.Result, error) { return nil, nil },
		tool.WithAnnotations(tool.Annotations{Title: "Create issue", IdempotentHint: false, OpenWorldHint: &f})))
	if err := p.AddMCP("github", issue); err != nil {
		t.Fatal(err)
	}
	return p
}

func slicesIndex(name string) int {
	for i, f := range fixtureTools {
		if f.name == name {
			return i
		}
	}
	panic(name)
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./toolset -run TestGolden -update)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Fatalf("%s differs (-want +got; -update rewrites):\n%s", path, diff)
	}
}

func indentJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		t.Fatal(err)
	}
	out.WriteByte('\n')
	return out.Bytes()
}

func TestGolden(t *testing.T) {
	p := goldenPool(t)
	t.Run("mcp", func(t *testing.T) { golden(t, "mcp.json", indentJSON(t, p.MCP())) })
	t.Run("markdown", func(t *testing.T) { golden(t, "markdown.md", []byte(p.Markdown())) })
}

func TestMCPToolAnnotations(t *testing.T) {
	tr, f := true, false
	tests := []struct {
		name                string
		spec                tool.Spec
		readOnly            bool
		destructive, openWd *bool
	}{
		{"fail-closed default", tool.Spec{}, false, nil, nil},
		{"read-only traits", tool.Spec{Traits: tool.ReadOnlyTraits}, true, &f, nil},
		{"non-destructive traits", tool.Spec{Traits: tool.Traits{NonDestructive: true}}, false, &f, nil},
		{"annotation wins", tool.Spec{Traits: tool.Traits{NonDestructive: true}, Annotations: tool.Annotations{DestructiveHint: &tr, OpenWorldHint: &f}}, false, &tr, &f},
		{"read-only annotation", tool.Spec{Annotations: tool.Annotations{ReadOnlyHint: true}}, true, &f, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.spec.Name, tt.spec.InputSchema = "T", tool.EmptyObjectSchema
			m := MCPTool(&tt.spec)
			a := m.Annotations
			if a.ReadOnlyHint != tt.readOnly || !cmp.Equal(a.DestructiveHint, tt.destructive) || !cmp.Equal(a.OpenWorldHint, tt.openWd) {
				t.Fatalf("annotations = %+v", a)
			}
		})
	}
	m := MCPTool(&tool.Spec{Name: "T", OutputSchema: json.RawMessage(`{"type":"object"}`)})
	if string(m.InputSchema.(json.RawMessage)) != string(tool.EmptyObjectSchema) || m.OutputSchema == nil {
		t.Fatal("schemas")
	}
}

func TestMarkdownEdgeCases(t *testing.T) {
	specs := []*tool.Spec{
		{Name: "NoInput", Description: "Nothing.", InputSchema: tool.EmptyObjectSchema},
		{Name: "Odd", InputSchema: json.RawMessage(`{"type":"object","properties":{"x":{"type":["string","number"]},"y":{"anyOf":[{"type":"string"},{"type":"null"}]},"z":{},"k":{"const":"fixed"}}}`)},
		{Name: "Broken", InputSchema: json.RawMessage(`not json`)},
	}
	got := Markdown(specs)
	for _, want := range []string{"## NoInput\n\nNothing.\n\nParameters: none.\n", "- `x` (string or number, optional)", "- `y` (string or null, optional)", "- `z` (any, optional)", "- `k` (any, optional, one of: \"fixed\")", "## Broken\n\nParameters: none.\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("markdown misses %q:\n%s", want, got)
		}
	}
}

func TestFullDescription(t *testing.T) {
	tests := []struct{ d, p, want string }{
		{"D", "", "D"}, {"D ", " P", "D\n\nP"}, {"", "P", "P"}, {"", "", ""},
	}
	for _, tt := range tests {
		if got := FullDescription(&tool.Spec{Description: tt.d, Prompt: tt.p}); got != tt.want {
			t.Errorf("FullDescription(%q, %q) = %q", tt.d, tt.p, got)
		}
	}
}
