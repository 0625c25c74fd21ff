package openai

import (
	"encoding/json"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/gantry-dev/gantry/tool"
	"github.com/gantry-dev/gantry/toolset"
)

// ToolParam converts one tool spec to a Chat Completions function tool: the
// description is [toolset.FullDescription] and the parameters are the spec's
// input schema. Top-level schema keys serialise in sorted order (the SDK's
// parameters are a map); nested values keep the spec's bytes, so the output
// is deterministic. Strict mode is not set: Gantry's inferred schemas mark
// optional properties as not required, which strict mode does not allow.
func ToolParam(spec *tool.Spec) sdk.ChatCompletionToolUnionParam {
	fd := shared.FunctionDefinitionParam{
		Name:       spec.Name,
		Parameters: schemaMap(spec.InputSchema),
	}
	if d := toolset.FullDescription(spec); d != "" {
		fd.Description = sdk.String(d)
	}
	return sdk.ChatCompletionFunctionTool(fd)
}

// ToolParams converts a pool's view ([toolset.Pool.Specs]) to Chat
// Completions function tools in pool order (see [ToolParam]).
func ToolParams(p *toolset.Pool) []sdk.ChatCompletionToolUnionParam {
	specs := p.Specs()
	out := make([]sdk.ChatCompletionToolUnionParam, len(specs))
	for i, s := range specs {
		out[i] = ToolParam(s)
	}
	return out
}

// schemaMap splits a JSON object schema into its top-level keys, keeping each
// value's bytes; an unusable schema becomes an empty object schema.
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
