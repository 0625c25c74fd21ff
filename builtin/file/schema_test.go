package file

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gantry-dev/gantry/tool"
)

// TestSchemas checks each tool's inferred input schema against the shapes
// of the reference agent's tools (docs/tools-file.md): property names, types, enums and the required set.
func TestSchemas(t *testing.T) {
	type prop struct {
		Type string
		Enum []string
	}
	tests := []struct {
		tool     tool.Tool
		props    map[string]prop
		required []string
	}{
		{NewRead(Options{}), map[string]prop{
			"file_path": {Type: "string"}, "offset": {Type: "number"}, "limit": {Type: "number"},
			"pages": {Type: "string"}, "allow_large": {Type: "boolean"},
		}, []string{"file_path"}},
		{NewWrite(Options{}), map[string]prop{
			"file_path": {Type: "string"}, "content": {Type: "string"},
		}, []string{"content", "file_path"}},
		{NewEdit(Options{}), map[string]prop{
			"file_path": {Type: "string"}, "old_string": {Type: "string"}, "new_string": {Type: "string"},
			"replace_all": {Type: "boolean"},
		}, []string{"file_path", "new_string", "old_string"}},
		{NewNotebookEdit(Options{}), map[string]prop{
			"notebook_path": {Type: "string"}, "cell_id": {Type: "string"}, "new_source": {Type: "string"},
			"cell_type": {Type: "string", Enum: []string{"code", "markdown"}},
			"edit_mode": {Type: "string", Enum: []string{"replace", "insert", "delete"}},
		}, []string{"new_source", "notebook_path"}},
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
			if s.Type != "object" {
				t.Errorf("type = %q", s.Type)
			}
			if d := cmp.Diff(tt.props, s.Properties); d != "" {
				t.Errorf("properties (-want +got):\n%s", d)
			}
			got := slices.Sorted(slices.Values(s.Required))
			if d := cmp.Diff(tt.required, got); d != "" {
				t.Errorf("required (-want +got):\n%s", d)
			}
		})
	}
}

func TestTraitsAndDescribe(t *testing.T) {
	tools := Tools(Options{})
	names := []string{"Read", "Write", "Edit", "NotebookEdit"}
	for i, tl := range tools {
		if tl.Spec().Name != names[i] {
			t.Fatalf("tool %d is %s, want %s", i, tl.Spec().Name, names[i])
		}
		tr := tool.TraitsOf(tl, json.RawMessage(`{"file_path":"x"}`))
		if i == 0 {
			if tr != tool.ReadOnlyTraits {
				t.Errorf("Read traits = %+v, want read-only", tr)
			}
		} else if tr != (tool.Traits{}) {
			t.Errorf("%s traits = %+v, want the fail-closed zero value", tl.Spec().Name, tr)
		}
	}
	cases := []struct {
		tool tool.Tool
		in   string
		want string
	}{
		{tools[0], `{"file_path":"src/main.go"}`, "Read src/main.go"},
		{tools[1], `{"file_path":"a.txt","content":""}`, "Write a.txt"},
		{tools[2], `{"file_path":"go.mod","old_string":"a","new_string":"b"}`, "Edit go.mod"},
		{tools[3], `{"notebook_path":"n.ipynb","new_source":""}`, "Edit notebook n.ipynb"},
		{tools[0], `{"file_path":"evil\u001b]0;x\u0007.go"}`, `Read evil\x1b]0;x\x07.go`},
	}
	for _, c := range cases {
		if got := tool.Describe(c.tool, json.RawMessage(c.in)); got != c.want {
			t.Errorf("Describe(%s) = %q, want %q", c.in, got, c.want)
		}
	}
}
