package anthropic

import (
	"encoding/json"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/packages/param"

	"github.com/gantry-dev/gantry/tool"
	"github.com/gantry-dev/gantry/toolset"
)

// ToolParam converts one tool spec to a Messages API custom tool: the
// description is [toolset.FullDescription] and the input schema is sent
// byte for byte as the spec holds it (the Properties and Required fields of
// the param are filled too, for callers that inspect them, but the
// serialised form is the spec's schema), so the request is byte-stable and
// the provider's prompt cache hits. A spec without a schema gets
// [tool.EmptyObjectSchema].
//
// The result never carries cache_control or defer_loading; [ToolParams]
// sets them when asked to.
func ToolParam(spec *tool.Spec) sdk.ToolUnionParam {
	schema := spec.InputSchema
	if len(schema) == 0 {
		schema = tool.EmptyObjectSchema
	}
	in := param.Override[sdk.ToolInputSchemaParam](json.RawMessage(schema))
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
	p := &sdk.ToolParam{
		Name:        spec.Name,
		InputSchema: in,
	}
	if d := toolset.FullDescription(spec); d != "" {
		p.Description = sdk.String(d)
	}
	return sdk.ToolUnionParam{OfTool: p}
}

// ToolOptions configure [ToolParams]. The zero value sends the pool's view
// ([toolset.Pool.Specs]) without cache breakpoints.
type ToolOptions struct {
	// CacheLast puts an ephemeral cache_control breakpoint on the last tool
	// (the last one sent in full), so the tools prefix is cached.
	CacheLast bool
	// NativeSearch uses the Messages API's own tool search instead of
	// Gantry's ToolSearch: every available tool is sent in full, deferred
	// ones with defer_loading: true, followed by the server tool search
	// tool (Gantry's ToolSearch is left out). The API then loads deferred
	// tools itself; a deferred tool the model calls still resolves through
	// [toolset.Pool.Lookup].
	NativeSearch bool
	// Regex selects the regex variant of the native tool search tool
	// (tool_search_tool_regex); the default is BM25 (tool_search_tool_bm25).
	Regex bool
}

// ToolParams converts a pool to Messages API tool params in pool order (see
// [ToolParam]); deferral decisions come from the pool.
func ToolParams(p *toolset.Pool, o ToolOptions) []sdk.ToolUnionParam {
	var out []sdk.ToolUnionParam
	last := -1
	if o.NativeSearch {
		list, search := p.Listing()
		for _, e := range list {
			u := ToolParam(e.Spec)
			if e.Deferred {
				u.OfTool.DeferLoading = sdk.Bool(true)
			} else {
				last = len(out)
			}
			out = append(out, u)
		}
		if search {
			if o.Regex {
				out = append(out, sdk.ToolUnionParam{OfToolSearchToolRegex20251119: &sdk.ToolSearchToolRegex20251119Param{
					Type: sdk.ToolSearchToolRegex20251119TypeToolSearchToolRegex20251119,
				}})
			} else {
				out = append(out, sdk.ToolUnionParam{OfToolSearchToolBm25_20251119: &sdk.ToolSearchToolBm25_20251119Param{
					Type: sdk.ToolSearchToolBm25_20251119TypeToolSearchToolBm25_20251119,
				}})
			}
			last = len(out) - 1
		}
	} else {
		for _, s := range p.Specs() {
			out = append(out, ToolParam(s))
		}
		last = len(out) - 1
	}
	if o.CacheLast && last >= 0 {
		cc := sdk.NewCacheControlEphemeralParam()
		switch u := out[last]; {
		case u.OfTool != nil:
			u.OfTool.CacheControl = cc
		case u.OfToolSearchToolBm25_20251119 != nil:
			u.OfToolSearchToolBm25_20251119.CacheControl = cc
		case u.OfToolSearchToolRegex20251119 != nil:
			u.OfToolSearchToolRegex20251119.CacheControl = cc
		}
	}
	return out
}
