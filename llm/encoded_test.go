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
	}
	for i, s := range steps {
		got, err := c.Get(s.spec, s.variant, enc)
		if err != nil || string(got) != s.want || calls.Load() != s.calls {
			t.Fatalf("step %d: %q, %v, %d encodes; want %q, %d", i, got, err, calls.Load(), s.want, s.calls)
		}
	}
	if c.Len() != 5 {
		t.Errorf("Len = %d, want 5", c.Len())
	}
}

// TestToolEncodingsKeyCoversSpec guards the cache key: every field of
// tool.Spec is either part of the key or known not to reach a provider's
// tool definition. A new field that an adapter sends must join the key in
// ToolEncodings.Get (and this list), or changed content would be served
// from the cache.
func TestToolEncodingsKeyCoversSpec(t *testing.T) {
	keyed := []string{"Name", "Description", "Prompt", "InputSchema"}
	notSent := []string{"Aliases", "OutputSchema", "Annotations", "Traits", "Defer", "MaxResultChars", "Timeout", "MaxTimeout", "Interrupt", "CancelSiblingsOnError"}
	for f := range reflect.TypeFor[tool.Spec]().Fields() {
		if !slices.Contains(keyed, f.Name) && !slices.Contains(notSent, f.Name) {
			t.Errorf("tool.Spec.%s is new: add it to the key of llm.ToolEncodings if an adapter sends it, else to notSent here", f.Name)
		}
	}
}
