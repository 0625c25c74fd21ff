package toolset

import (
	"encoding/json"
	"strings"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/packages/param"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

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

// AnthropicTool converts one tool spec to an Anthropic Messages API custom
// tool: the description is [FullDescription] and the input schema is sent
// byte for byte as the spec holds it (the Properties and Required fields of
// the param are filled too, for callers that inspect them, but the
// serialised form is the spec's schema), so the request is byte-stable and
// the provider's prompt cache hits.
//
// The result never carries cache_control or defer_loading; the pool-level
// [Pool.Anthropic] sets them when asked to.
func AnthropicTool(spec *tool.Spec) anthropic.ToolUnionParam {
	schema := spec.InputSchema
	if len(schema) == 0 {
		schema = tool.EmptyObjectSchema
	}
	in := param.Override[anthropic.ToolInputSchemaParam](json.RawMessage(schema))
	var top struct {
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
	}
	if err := json.Unmarshal(schema, &top); err == nil {
		if len(top.Properties) > 0 {
			in.Properties = top.Properties
		}
		in.Required = top.Required
	}
	p := &anthropic.ToolParam{
		Name:        spec.Name,
		InputSchema: in,
	}
	if d := FullDescription(spec); d != "" {
		p.Description = anthropic.String(d)
	}
	return anthropic.ToolUnionParam{OfTool: p}
}

// OpenAITool converts one tool spec to a Chat Completions function tool: the
// description is [FullDescription] and the parameters are the spec's input
// schema. Top-level schema keys serialise in sorted order (the SDK's
// parameters are a map); nested values keep the spec's bytes, so the output
// is deterministic. Strict mode is not set: Gantry's inferred schemas mark
// optional properties as not required, which strict mode does not allow.
func OpenAITool(spec *tool.Spec) openai.ChatCompletionToolUnionParam {
	return openai.ChatCompletionFunctionTool(openAIFunction(spec))
}

func openAIFunction(spec *tool.Spec) shared.FunctionDefinitionParam {
	fd := shared.FunctionDefinitionParam{
		Name:       spec.Name,
		Parameters: schemaMap(spec.InputSchema),
	}
	if d := FullDescription(spec); d != "" {
		fd.Description = openai.String(d)
	}
	return fd
}

// schemaMap splits a JSON object schema into its top-level keys, keeping each
// value's bytes.
func schemaMap(schema json.RawMessage) map[string]any {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(schema, &raw); err != nil || raw == nil {
		return map[string]any{"type": "object", "properties": map[string]any{}}
	}
	m := make(map[string]any, len(raw))
	for k, v := range raw {
		m[k] = v
	}
	return m
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
