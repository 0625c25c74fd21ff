package llm_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/tool"
)

func TestToolEncodings(t *testing.T) {
	var c llm.ToolEncodings
	var calls atomic.Int32
	enc := func(s *tool.Spec) ([]byte, error) {
		calls.Add(1)
		return []byte(s.Name + ":" + s.Description), nil
	}
	spec := func(desc string) *tool.Spec {
		return &tool.Spec{Name: "Read", Description: desc, InputSchema: json.RawMessage(`{"type":"object"}`)}
	}
	steps := []struct {
		spec    *tool.Spec
		variant uint8
		want    string
		calls   int32
	}{
		{spec("reads"), 0, "Read:reads", 1},
		{spec("reads"), 0, "Read:reads", 1}, // a new value, same content: hit
		{spec("reads"), 1, "Read:reads", 2}, // another variant
		{spec("reads files"), 0, "Read:reads files", 3},
		{&tool.Spec{Name: "Read", Description: "reads", InputSchema: json.RawMessage(`{"type":"object","properties":{}}`)}, 0, "Read:reads", 4},
		{&tool.Spec{Name: "Read", Description: "reads", Prompt: "p", InputSchema: json.RawMessage(`{"type":"object"}`)}, 0, "Read:reads", 5},
		{&tool.Spec{Name: "Read", Description: "reads", InputSchema: json.RawMessage(`{"type":"object"}`), Doc: &tool.Doc{Long: "l", UsageNotes: []string{"a"}}}, 0, "Read:reads", 6},
		{&tool.Spec{Name: "Read", Description: "reads", InputSchema: json.RawMessage(`{"type":"object"}`), Doc: &tool.Doc{Long: "l", UsageNotes: []string{"a"}}}, 0, "Read:reads", 6},
		{&tool.Spec{Name: "Read", Description: "reads", InputSchema: json.RawMessage(`{"type":"object"}`), Doc: &tool.Doc{Long: "l", UsageNotes: []string{"b"}}}, 0, "Read:reads", 7},
	}
	for i, s := range steps {
		got, err := c.Get(s.spec, s.variant, enc)
		if err != nil || string(got) != s.want || calls.Load() != s.calls {
			t.Fatalf("step %d: %q, %v, %d encodes; want %q, %d", i, got, err, calls.Load(), s.want, s.calls)
		}
	}
	if c.Len() != 7 {
		t.Errorf("Len = %d, want 7", c.Len())
	}
}

// TestToolEncodingsKeyCoversSpec guards the cache key: every field of
// tool.Spec is either part of the key or known not to reach a provider's
// tool definition. A new field that an adapter sends must join the key in
// ToolEncodings.Get (and this list), or changed content would be served
// from the cache.
func TestToolEncodingsKeyCoversSpec(t *testing.T) {
	keyed := []string{"Name", "Description", "Prompt", "InputSchema", "Doc"}
	notSent := []string{"Aliases", "OutputSchema", "Annotations", "Traits", "Defer", "MaxResultChars", "Timeout", "MaxTimeout", "Interrupt", "CancelSiblingsOnError"}
	for f := range reflect.TypeFor[tool.Spec]().Fields() {
		if !slices.Contains(keyed, f.Name) && !slices.Contains(notSent, f.Name) {
			t.Errorf("tool.Spec.%s is new: add it to the key of llm.ToolEncodings if an adapter sends it, else to notSent here", f.Name)
		}
	}
	// Doc is keyed field by field (hashDoc, docEqual, cloneDoc).
	docKeyed := []string{"DisplayName", "Short", "Long", "UsageNotes", "Examples", "Important"}
	for f := range reflect.TypeFor[tool.Doc]().Fields() {
		if !slices.Contains(docKeyed, f.Name) {
			t.Errorf("tool.Doc.%s is new: add it to hashDoc, docEqual and cloneDoc in llm/encoded.go", f.Name)
		}
	}
	if n := reflect.TypeFor[tool.Example]().NumField(); n != 2 {
		t.Errorf("tool.Example has %d fields: key the new ones in hashDoc, docEqual and cloneDoc", n)
	}
}
