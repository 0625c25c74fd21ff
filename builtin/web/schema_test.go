package web

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gantry-dev/gantry/tool"
)

// TestSchemas checks the input schemas against the reference agent's shapes (docs/tools-web.md): property
// names, types and the required set.
func TestSchemas(t *testing.T) {
	type prop struct {
		Type  string            `json:"type"`
		Items map[string]string `json:"items,omitempty"`
	}
	tools := Tools(Options{Search: searchFunc(func(context.Context, SearchQuery) ([]SearchResult, error) { return nil, nil })})
	tests := []struct {
		tool     tool.Tool
		props    map[string]prop
		required []string
	}{
		{tools[0], map[string]prop{"url": {Type: "string"}, "prompt": {Type: "string"}, "offset": {Type: "number"}}, []string{"prompt", "url"}},
		{tools[1], map[string]prop{
			"query":           {Type: "string"},
			"allowed_domains": {Type: "array", Items: map[string]string{"type": "string"}},
			"blocked_domains": {Type: "array", Items: map[string]string{"type": "string"}},
		}, []string{"query"}},
	}
	for _, tt := range tests {
		t.Run(tt.tool.Spec().Name, func(t *testing.T) {
			var s struct {
				Type       string          `json:"type"`
				Properties map[string]prop `json:"properties"`
				Required   []string        `json:"required"`
			}
			if err := json.Unmarshal(tt.tool.Spec().InputSchema, &s); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.props, s.Properties); d != "" {
				t.Errorf("properties (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tt.required, slices.Sorted(slices.Values(s.Required))); d != "" {
				t.Errorf("required (-want +got):\n%s", d)
			}
			tr := tt.tool.Spec().Traits
			if !tr.ReadOnly || !tr.ConcurrencySafe {
				t.Errorf("traits = %+v, want read-only and concurrency-safe", tr)
			}
		})
	}
	if got := Tools(Options{}); len(got) != 1 || got[0].Spec().Name != "WebFetch" {
		t.Fatalf("without a backend: %v, want WebFetch alone", got)
	}
}

// searchFunc adapts a function to SearchBackend.
type searchFunc func(context.Context, SearchQuery) ([]SearchResult, error)

func (f searchFunc) Name() string { return "func" }

func (f searchFunc) Search(ctx context.Context, q SearchQuery) ([]SearchResult, error) {
	return f(ctx, q)
}
