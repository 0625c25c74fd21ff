package openai

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
	llmtest.Golden(t, "tools.json", ToolParams(llmtest.ToolPool(t)), *update)
}

func TestToolParamDeterministic(t *testing.T) {
	spec := &tool.Spec{Name: "T", Description: "D", InputSchema: json.RawMessage(`{"type":"object","properties":{"z":{"type":"string"},"a":{"type":"number"}},"required":["z"],"additionalProperties":false}`)}
	first, _ := json.Marshal(ToolParam(spec))
	for range 20 {
		b, err := json.Marshal(ToolParam(spec))
		if err != nil || !bytes.Equal(b, first) {
			t.Fatalf("ToolParam not deterministic: %s vs %s (%v)", b, first, err)
		}
	}
	want := `{"function":{"name":"T","description":"D","parameters":{"additionalProperties":false,"properties":{"z":{"type":"string"},"a":{"type":"number"}},"required":["z"],"type":"object"}},"type":"function"}`
	if string(first) != want {
		t.Fatalf("got  %s\nwant %s", first, want)
	}
	bad, _ := json.Marshal(ToolParam(&tool.Spec{Name: "B", InputSchema: json.RawMessage(`[]`)}))
	if !strings.Contains(string(bad), `"parameters":{"properties":{},"type":"object"}`) {
		t.Fatalf("unusable schema: %s", bad)
	}
}

// TestToolParamsDocGolden: structured descriptions and session-time
// prompts in the documented layout.
func TestToolParamsDocGolden(t *testing.T) {
	llmtest.Golden(t, "tools_doc.json", ToolParams(llmtest.DocPool(t)), *update)
}
