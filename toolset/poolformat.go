package toolset

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gantry-dev/gantry/tool"
)

// Listed is one available tool of [Pool.Listing] with the pool's deferral
// decision for it.
type Listed struct {
	// Spec is the tool's spec.
	Spec *tool.Spec
	// Deferred reports that deferral holds the tool back: Gantry's
	// ToolSearch loads it, or a provider's own tool search does.
	Deferred bool
}

// Listing returns every available tool in pool order (restriction applied,
// Gantry's ToolSearch left out) with its deferral decision, and whether any
// tool is deferred (then a tool search must be offered). It is the input of
// provider formats that send deferred tools themselves, such as the
// Anthropic adapter's native tool search; [Pool.Specs] is the view with
// Gantry's own ToolSearch.
func (p *Pool) Listing() (tools []Listed, search bool) {
	list, search := p.snapshot()
	tools = make([]Listed, len(list))
	for i, e := range list {
		tools[i] = Listed{Spec: e.spec, Deferred: e.deferred}
	}
	return tools, search
}

// MCP converts every available tool of the pool, in order, to MCP tool
// definitions (see [MCPTool]), for serving the pool over MCP. Deferral does
// not apply (an MCP client decides what its model sees), so ToolSearch is
// left out and deferred tools are included.
func (p *Pool) MCP() []*mcp.Tool {
	var out []*mcp.Tool
	for _, t := range p.All() {
		if t.Spec().Name == ToolSearchName {
			if _, ok := t.(*searchTool); ok {
				continue
			}
		}
		out = append(out, MCPTool(t.Spec()))
	}
	return out
}

// Markdown renders the pool's view as a markdown "available tools" section
// (see [Markdown]).
func (p *Pool) Markdown() string { return Markdown(p.Specs()) }

// Markdown renders tool specs as a markdown "available tools" section for
// models without native tool calling: per tool a heading with the name, the
// full description, and the parameters with their type, whether they are
// required, their allowed values and descriptions (nested object properties
// and array items indented). Parameters are listed in schema order.
func Markdown(specs []*tool.Spec) string {
	var b strings.Builder
	b.WriteString("# Available tools\n")
	for _, s := range specs {
		fmt.Fprintf(&b, "\n## %s\n\n", s.Name)
		if d := FullDescription(s); d != "" {
			b.WriteString(d)
			b.WriteString("\n\n")
		}
		var sch schemaNode
		if err := json.Unmarshal(s.InputSchema, &sch); err != nil || len(sch.Properties.keys) == 0 {
			b.WriteString("Parameters: none.\n")
			continue
		}
		b.WriteString("Parameters:\n")
		writeProps(&b, &sch, 0)
	}
	return b.String()
}

func writeProps(b *strings.Builder, s *schemaNode, depth int) {
	required := make(map[string]bool, len(s.Required))
	for _, r := range s.Required {
		required[r] = true
	}
	indent := strings.Repeat("  ", depth)
	for _, k := range s.Properties.keys {
		p := s.Properties.m[k]
		req := "optional"
		if required[k] {
			req = "required"
		}
		fmt.Fprintf(b, "%s- `%s` (%s, %s", indent, k, p.typeName(), req)
		if vals := p.enumText(); vals != "" {
			fmt.Fprintf(b, ", one of: %s", vals)
		}
		b.WriteString(")")
		if d := strings.TrimSpace(p.Description); d != "" {
			b.WriteString(": ")
			b.WriteString(strings.ReplaceAll(d, "\n", " "))
		}
		b.WriteString("\n")
		switch {
		case len(p.Properties.keys) > 0:
			writeProps(b, p, depth+1)
		case p.Items != nil && len(p.Items.Properties.keys) > 0:
			writeProps(b, p.Items, depth+1)
		}
	}
}

// schemaNode is the part of a JSON Schema the markdown rendering reads, with
// properties in document order.
type schemaNode struct {
	Type        json.RawMessage   `json:"type"`
	Description string            `json:"description"`
	Enum        []json.RawMessage `json:"enum"`
	Const       json.RawMessage   `json:"const"`
	Items       *schemaNode       `json:"items"`
	Required    []string          `json:"required"`
	Properties  orderedProps      `json:"properties"`
	AnyOf       []*schemaNode     `json:"anyOf"`
}

func (s *schemaNode) typeName() string {
	var one string
	var many []string
	switch {
	case json.Unmarshal(s.Type, &one) == nil && one != "":
	case json.Unmarshal(s.Type, &many) == nil && len(many) > 0:
		one = strings.Join(many, " or ")
	case len(s.AnyOf) > 0:
		var alts []string
		for _, a := range s.AnyOf {
			alts = append(alts, a.typeName())
		}
		return strings.Join(alts, " or ")
	case len(s.Properties.keys) > 0:
		one = "object"
	default:
		return "any"
	}
	if one == "array" && s.Items != nil {
		return "array of " + s.Items.typeName()
	}
	return one
}

func (s *schemaNode) enumText() string {
	vals := s.Enum
	if len(vals) == 0 && len(s.Const) > 0 {
		vals = []json.RawMessage{s.Const}
	}
	if len(vals) == 0 && s.Items != nil {
		vals = s.Items.Enum
	}
	parts := make([]string, len(vals))
	for i, v := range vals {
		parts[i] = string(v)
	}
	return strings.Join(parts, ", ")
}

// orderedProps is a JSON object of schemas that remembers its key order.
type orderedProps struct {
	keys []string
	m    map[string]*schemaNode
}

func (o *orderedProps) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return fmt.Errorf("properties: want an object")
	}
	o.m = make(map[string]*schemaNode)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		k, _ := tok.(string)
		var n schemaNode
		if err := dec.Decode(&n); err != nil {
			return err
		}
		if _, dup := o.m[k]; !dup {
			o.keys = append(o.keys, k)
		}
		o.m[k] = &n
	}
	_, err = dec.Token()
	return err
}
