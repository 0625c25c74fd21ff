package tool

import (
	"fmt"
	"net/url"
	"reflect"
	"strconv"
	"strings"
)

// A schema whose references lead back to the same schema without
// descending into the input — {"$ref": "#"} at the root, two $defs
// referring to each other, an allOf holding a $ref to its parent — sends
// any validator into endless recursion: Go's stack overflows, which ends
// the process (it cannot be recovered). Such a schema from an MCP server
// would crash Gantry at the first call, so it is refused when compiled.
// A cycle through properties, items and the other keywords that apply to
// parts of the input is fine: the input's depth bounds it.

// nodeKey identifies a schema object of the decoded document.
func nodeKey(m map[string]any) uintptr { return reflect.ValueOf(m).Pointer() }

// schemaNode is what the cycle check knows of a schema object.
type schemaNode struct {
	m       map[string]any
	dialect dialect
	base    *url.URL
	// path is the node's JSON pointer in the document, for messages.
	path string
}

// inPlace lists the subschemas of m that apply to the same instance as m
// (besides references): the applicators that do not descend.
func inPlace(m map[string]any, d dialect) []any {
	if _, ref := m["$ref"]; ref && d >= draft07 {
		return nil // its siblings are ignored
	}
	var out []any
	for _, kw := range []string{"allOf", "anyOf", "oneOf"} {
		if l, ok := m[kw].([]any); ok && !droppedIn(d, kw) {
			out = append(out, l...)
		}
	}
	for _, kw := range []string{"not", "if", "then", "else"} {
		if v, ok := m[kw]; ok && !droppedIn(d, kw) {
			out = append(out, v)
		}
	}
	for _, kw := range []string{"dependentSchemas", "dependencies"} {
		if mm, ok := m[kw].(map[string]any); ok && !droppedIn(d, kw) {
			for _, v := range mm {
				out = append(out, v)
			}
		}
	}
	return out
}

// checkCycles refuses a document whose in-place applicators and
// references form a cycle. nodes are every schema object of the document
// (collected with their base URI), anchors the anchors by resource base
// and name, dynamic the schemas with a $dynamicAnchor or a 2019-09
// $recursiveAnchor, by name.
func (tr *translator) checkCycles() error {
	const (
		white = iota
		grey
		black
	)
	color := make(map[uintptr]int, len(tr.nodes))
	var visit func(n *schemaNode) error
	visit = func(n *schemaNode) error {
		k := nodeKey(n.m)
		switch color[k] {
		case grey:
			return fmt.Errorf("the schema at %q refers back to itself without descending into the input (through $ref, allOf, anyOf, oneOf, not, if/then/else or dependent schemas): validating it would never end", "#"+n.path)
		case black:
			return nil
		}
		color[k] = grey
		var next []*schemaNode
		for _, sub := range inPlace(n.m, n.dialect) {
			if m, ok := sub.(map[string]any); ok {
				if sn := tr.nodes[nodeKey(m)]; sn != nil {
					next = append(next, sn)
				}
			}
		}
		for _, kw := range []string{"$ref", "$dynamicRef", "$recursiveRef"} {
			ref, ok := n.m[kw].(string)
			if !ok || droppedIn(n.dialect, kw) {
				continue
			}
			next = append(next, tr.targets(n, kw, ref)...)
		}
		for _, sn := range next {
			if err := visit(sn); err != nil {
				return err
			}
		}
		color[k] = black
		return nil
	}
	for _, n := range tr.nodes {
		if err := visit(n); err != nil {
			return err
		}
	}
	return nil
}

// targets resolves a reference of n in the original document: by JSON
// pointer or anchor within a resource; a dynamic reference also reaches
// every schema with a dynamic anchor of its name (where dynamic scope may
// send it). Unresolvable references give nothing (they are reported by
// the translation and the compiler).
func (tr *translator) targets(n *schemaNode, kw, ref string) []*schemaNode {
	u, err := url.Parse(ref)
	if err != nil {
		return nil
	}
	target := n.base.ResolveReference(u)
	frag := target.Fragment
	target.Fragment, target.RawFragment = "", ""
	res, ok := tr.ids[target.String()]
	if !ok {
		return nil
	}
	var out []*schemaNode
	switch kw {
	case "$recursiveRef":
		out = append(out, tr.dynamic[recursiveAnchor]...)
	case "$dynamicRef":
		if frag != "" && frag[0] != '/' {
			out = append(out, tr.dynamic[frag]...)
		}
	}
	var v any = res.node
	if frag != "" && frag[0] != '/' {
		v = tr.anchors[target.String()+"#"+frag]
	} else if frag != "" {
		for _, t := range strings.Split(frag[1:], "/") {
			t = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
			switch x := v.(type) {
			case map[string]any:
				v = x[t]
			case []any:
				i, err := strconv.Atoi(t)
				if err != nil || i < 0 || i >= len(x) {
					return out
				}
				v = x[i]
			default:
				return out
			}
		}
	}
	if m, ok := v.(map[string]any); ok {
		if sn := tr.nodes[nodeKey(m)]; sn != nil {
			out = append(out, sn)
		}
	}
	return out
}
