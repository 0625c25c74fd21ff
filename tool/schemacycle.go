package tool

import (
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// A schema whose references lead back to the same schema without
// descending into the input — {"$ref": "#"} at the root, two $defs
// referring to each other, an allOf holding a $ref to its parent — sends
// any validator into endless recursion: Go's stack overflows, which ends
// the process (it cannot be recovered). Such a schema from an MCP server
// would crash Gantry at the first call, so it is refused when compiled.
// A cycle through properties, items and the other keywords that apply to
// parts of the input is fine: the input's depth bounds it. The check runs
// on the compiled 2020-12 schema, along the references as the index
// (schemaref.go) resolved them: what it follows is what the validator
// follows.

// inPlace calls f with the subschemas of s that apply to the same
// instance as s (besides references): the applicators that do not
// descend.
func inPlace(s *jsonschema.Schema, f func(*jsonschema.Schema)) {
	for _, l := range [...][]*jsonschema.Schema{s.AllOf, s.AnyOf, s.OneOf} {
		for _, sub := range l {
			f(sub)
		}
	}
	for _, sub := range [...]*jsonschema.Schema{s.Not, s.If, s.Then, s.Else} {
		if sub != nil {
			f(sub)
		}
	}
	for _, m := range [...]map[string]*jsonschema.Schema{s.DependentSchemas, s.DependencySchemas} {
		for _, sub := range m {
			f(sub)
		}
	}
}

// checkCycles refuses a schema whose in-place applicators and references
// form a cycle. A "$dynamicRef" to an anchor name counts every schema
// with a dynamic anchor of that name as a target (where a dynamic scope
// may send it), besides its lexical target: conservative, since the
// scope is not known before validation.
func (ix *indexer) checkCycles(idx *schemaIndex) error {
	const (
		white = iota
		grey
		black
	)
	color := make(map[*jsonschema.Schema]int, len(ix.all))
	var visit func(s *jsonschema.Schema) error
	visit = func(s *jsonschema.Schema) error {
		switch color[s] {
		case grey:
			return fmt.Errorf("the schema at %q refers back to itself without descending into the input (through $ref, allOf, anyOf, oneOf, not, if/then/else or dependent schemas): validating it would never end", "#"+ix.pathOf(s))
		case black:
			return nil
		}
		color[s] = grey
		var next []*jsonschema.Schema
		inPlace(s, func(sub *jsonschema.Schema) { next = append(next, sub) })
		if t := idx.ref[s]; t != nil {
			next = append(next, t)
		}
		if d, ok := idx.dynamic[s]; ok {
			next = append(next, d.lexical)
			if _, frag, _ := strings.Cut(s.DynamicRef, "#"); frag != "" && frag[0] != '/' {
				next = append(next, ix.byName[frag]...)
			}
		}
		for _, sub := range next {
			if err := visit(sub); err != nil {
				return err
			}
		}
		color[s] = black
		return nil
	}
	for _, s := range ix.all {
		if err := visit(s); err != nil {
			return err
		}
	}
	return nil
}

// pathOf is the JSON pointer of s in the document, for messages.
func (ix *indexer) pathOf(target *jsonschema.Schema) string {
	var path []string
	var find func(s *jsonschema.Schema) bool
	find = func(s *jsonschema.Schema) bool {
		if s == target {
			return true
		}
		return !eachSubschema(s, func(kw, key string, sub *jsonschema.Schema) bool {
			n := len(path)
			path = append(path, kw)
			if key != "" {
				path = append(path, key)
			}
			if find(sub) {
				return false
			}
			path = path[:n]
			return true
		})
	}
	find(ix.root)
	var b strings.Builder
	for _, t := range path {
		b.WriteByte('/')
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1"))
	}
	return b.String()
}
