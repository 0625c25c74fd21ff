package toolset

import (
	"encoding/json"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gantry-dev/gantry/tool"
)

// FullDescription returns the text a provider format sends as a tool's
// description: [tool.Spec.Description], followed by a blank line and
// [tool.Spec.Prompt] when the tool has a usage prompt.
func FullDescription(spec *tool.Spec) string {
	d := strings.TrimSpace(spec.Description)
	if p := strings.TrimSpace(spec.Prompt); p != "" {
		if d == "" {
			return p
		}
		return d + "\n\n" + p
	}
	return d
}

// MCPTool converts one tool spec to an MCP tool definition (for serving
// Gantry's tools over MCP). The description is [FullDescription]; the input
// and output schemas are the spec's bytes. The annotations combine
// [tool.Spec.Annotations] with [tool.Spec.Traits]: read-only if either says
// so, not destructive if the annotation says so or the traits are
// non-destructive; the title, idempotent and open-world hints come from the
// annotations. Like in MCP, annotations are hints for clients, never a grant.
func MCPTool(spec *tool.Spec) *mcp.Tool {
	schema := spec.InputSchema
	if len(schema) == 0 {
		schema = tool.EmptyObjectSchema
	}
	t := &mcp.Tool{
		Name:        spec.Name,
		Title:       spec.Annotations.Title,
		Description: FullDescription(spec),
		InputSchema: json.RawMessage(schema),
	}
	if len(spec.OutputSchema) > 0 {
		t.OutputSchema = json.RawMessage(spec.OutputSchema)
	}
	a := &mcp.ToolAnnotations{
		Title:          spec.Annotations.Title,
		ReadOnlyHint:   spec.Annotations.ReadOnlyHint || spec.Traits.ReadOnly,
		IdempotentHint: spec.Annotations.IdempotentHint,
	}
	switch {
	case spec.Annotations.DestructiveHint != nil:
		a.DestructiveHint = boolPtr(*spec.Annotations.DestructiveHint)
	case spec.Traits.NonDestructive || a.ReadOnlyHint:
		a.DestructiveHint = boolPtr(false)
	}
	if spec.Annotations.OpenWorldHint != nil {
		a.OpenWorldHint = boolPtr(*spec.Annotations.OpenWorldHint)
	}
	t.Annotations = a
	return t
}

func boolPtr(b bool) *bool { return &b }
