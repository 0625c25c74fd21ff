package anthropic

import (
	"bytes"
	"encoding/json"
	"flag"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/llm/llmtest"
	"github.com/gantry-dev/gantry/tool"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func TestToolParamsGolden(t *testing.T) {
	p := llmtest.ToolPool(t)
	t.Run("toolsearch", func(t *testing.T) {
		llmtest.Golden(t, "tools.json", ToolParams(p, ToolOptions{CacheLast: true}), *update)
	})
	t.Run("native", func(t *testing.T) {
		llmtest.Golden(t, "tools_native.json", ToolParams(p, ToolOptions{CacheLast: true, NativeSearch: true}), *update)
	})
	t.Run("native_regex", func(t *testing.T) {
		b, err := json.Marshal(ToolParams(p, ToolOptions{NativeSearch: true, Regex: true}))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(b, []byte(`"type":"tool_search_tool_regex_20251119"`)) || bytes.Contains(b, []byte("cache_control")) {
			t.Fatalf("regex variant:\n%s", b)
		}
	})
}

func TestToolParamKeepsSchemaBytes(t *testing.T) {
	schema := `{"type":"object","$schema":"https://json-schema.org/draft/2020-12/schema","properties":{"z":{"type":"string"},"a":{"type":"number"}},"required":["z"],"additionalProperties":false,"description":"d"}`
	spec := &tool.Spec{Name: "T", Description: "Desc.", Prompt: "More.", InputSchema: json.RawMessage(schema)}
	for range 20 { // extra fields of the SDK are a map: make sure order never varies
		b, err := json.Marshal(ToolParam(spec))
		if err != nil {
			t.Fatal(err)
		}
		want := `{"input_schema":` + schema + `,"name":"T","description":"Desc.\n\nMore."}`
		if string(b) != want {
			t.Fatalf("got  %s\nwant %s", b, want)
		}
	}
	u := ToolParam(spec)
	if len(u.OfTool.InputSchema.Required) != 1 || u.OfTool.InputSchema.Properties == nil {
		t.Fatal("Properties and Required are not filled for inspection")
	}
	empty := ToolParam(&tool.Spec{Name: "E"})
	if b, _ := json.Marshal(empty); !strings.Contains(string(b), `"input_schema":{"type":"object","properties":{},"additionalProperties":false}`) || strings.Contains(string(b), "description") {
		t.Fatalf("empty spec: %s", b)
	}
}

// TestToolParamsDocGolden: structured descriptions and session-time
// prompts in the documented layout.
func TestToolParamsDocGolden(t *testing.T) {
	llmtest.Golden(t, "tools_doc.json", ToolParams(llmtest.DocPool(t), ToolOptions{}), *update)
}
