package tool

import (
	"fmt"
	"iter"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// This file is the one home of "what a reference points to". The
// translation (schemadraft.go) only rewrites the syntax of older drafts;
// the compiled 2020-12 schema is then indexed once, here, the way the
// validator (google/jsonschema-go) resolves it — base URIs from "$id",
// anchors scoped to their schema resource, JSON pointers, dynamic anchors
// found through the dynamic scope. The same index refuses what must not
// be compiled (a reference leaving the document, a reference cycle that
// never descends into the input) and is what the executor's walks follow
// when they name violations, assert formats and coerce inputs.

// CompiledSchema is an input schema compiled for validation
// ([CompileInputSchema]) together with where each of its references
// points. It is immutable and safe for concurrent use; the schemas its
// methods take and return are those of [CompiledSchema.Schema]'s tree.
type CompiledSchema struct {
	rs  *jsonschema.Resolved
	idx *schemaIndex
}

// Resolved returns the validator's resolved schema.
func (c *CompiledSchema) Resolved() *jsonschema.Resolved { return c.rs }

// Schema returns the root of the compiled (2020-12) schema. It must not
// be modified.
func (c *CompiledSchema) Schema() *jsonschema.Schema { return c.rs.Schema() }

// Validate validates v with the validator ([jsonschema.Resolved.Validate]:
// "format" is an annotation there).
func (c *CompiledSchema) Validate(v any) error { return c.rs.Validate(v) }

// Ref returns the schema the "$ref" of s points to; nil when s has none.
func (c *CompiledSchema) Ref(s *jsonschema.Schema) *jsonschema.Schema {
	if s.Ref == "" {
		return nil
	}
	return c.idx.ref[s]
}

// DynamicRef returns the schema the "$dynamicRef" of s points to; nil when
// s has none. When the reference acts dynamically (its lexical target
// has a "$dynamicAnchor" of its name), the target is the schema with that
// dynamic anchor in the outermost schema resource of scope that has one,
// as 2020-12 says; scope is the dynamic scope built with
// [CompiledSchema.Enter] along the way from the root to s. Without a
// match (or a scope) it is the lexical target.
func (c *CompiledSchema) DynamicRef(s *jsonschema.Schema, scope []*jsonschema.Schema) *jsonschema.Schema {
	if s.DynamicRef == "" {
		return nil
	}
	d := c.idx.dynamic[s]
	if d.anchor == "" {
		return d.lexical
	}
	for _, res := range scope {
		if a, ok := c.idx.anchors[res][d.anchor]; ok && a.dynamic {
			return a.s
		}
	}
	return d.lexical
}

// Scoped reports whether the schema has a dynamic reference that needs a
// dynamic scope ([CompiledSchema.Enter]); without one, walks need not
// keep a scope.
func (c *CompiledSchema) Scoped() bool { return c.idx.resourceOf != nil }

// Enter returns the dynamic scope of an evaluation that arrives at s:
// scope with the schema resource s belongs to appended, unless it is
// already the innermost. Without dynamic references ([CompiledSchema.Scoped]
// false) scope is returned unchanged.
func (c *CompiledSchema) Enter(scope []*jsonschema.Schema, s *jsonschema.Schema) []*jsonschema.Schema {
	if c.idx.resourceOf == nil {
		return scope
	}
	res := c.idx.resourceOf[s]
	if res == nil || (len(scope) > 0 && scope[len(scope)-1] == res) {
		return scope
	}
	return append(scope, res)
}

// Subschemas iterates over the immediate subschemas of s, in every
// keyword that holds schemas: maps ($defs, properties, …) in key order,
// then lists (prefixItems, allOf, …), then single schemas (items, not, …).
func Subschemas(s *jsonschema.Schema) iter.Seq[*jsonschema.Schema] {
	return func(yield func(*jsonschema.Schema) bool) {
		eachSubschema(s, func(_, _ string, sub *jsonschema.Schema) bool { return yield(sub) })
	}
}

// eachSubschema calls f with every immediate subschema of s and where it
// sits: its keyword, and its key or index in a map or list keyword ("" for
// a keyword holding one schema). It stops when f returns false and
// reports whether it went through all.
func eachSubschema(s *jsonschema.Schema, f func(kw, key string, sub *jsonschema.Schema) bool) bool {
	for _, m := range [...]struct {
		kw string
		m  map[string]*jsonschema.Schema
	}{{"$defs", s.Defs}, {"definitions", s.Definitions}, {"dependencies", s.DependencySchemas}, {"properties", s.Properties},
		{"patternProperties", s.PatternProperties}, {"dependentSchemas", s.DependentSchemas}} {
		if len(m.m) == 0 {
			continue
		}
		for _, k := range slices.Sorted(maps.Keys(m.m)) {
			if sub := m.m[k]; sub != nil && !f(m.kw, k, sub) {
				return false
			}
		}
	}
	for _, l := range [...]struct {
		kw string
		l  []*jsonschema.Schema
	}{{"prefixItems", s.PrefixItems}, {"items", s.ItemsArray}, {"allOf", s.AllOf}, {"anyOf", s.AnyOf}, {"oneOf", s.OneOf}} {
		for i, sub := range l.l {
			if sub != nil && !f(l.kw, strconv.Itoa(i), sub) {
				return false
			}
		}
	}
	for _, one := range [...]struct {
		kw string
		s  *jsonschema.Schema
	}{{"items", s.Items}, {"additionalItems", s.AdditionalItems}, {"contains", s.Contains}, {"unevaluatedItems", s.UnevaluatedItems},
		{"additionalProperties", s.AdditionalProperties}, {"propertyNames", s.PropertyNames}, {"unevaluatedProperties", s.UnevaluatedProperties},
		{"not", s.Not}, {"if", s.If}, {"then", s.Then}, {"else", s.Else}, {"contentSchema", s.ContentSchema}} {
		if one.s != nil && !f(one.kw, "", one.s) {
			return false
		}
	}
	return true
}

// schemaIndex is where the references of a compiled schema point.
type schemaIndex struct {
	// ref maps each schema with a "$ref" to its target.
	ref map[*jsonschema.Schema]*jsonschema.Schema
	// dynamic maps each schema with a "$dynamicRef" to its targets.
	dynamic map[*jsonschema.Schema]dynamicRef
	// resourceOf (every schema's resource) and anchors (each resource's
	// anchors by name) are kept only when a dynamic reference acts
	// dynamically: only then does a walk need a dynamic scope.
	resourceOf map[*jsonschema.Schema]*jsonschema.Schema
	anchors    map[*jsonschema.Schema]map[string]anchor
}

// dynamicRef is where a "$dynamicRef" points: its lexical target, and the
// dynamic anchor to look for in the dynamic scope ("" when it acts like a
// "$ref").
type dynamicRef struct {
	lexical *jsonschema.Schema
	anchor  string
}

// anchor is a schema named by "$anchor" or "$dynamicAnchor" (dynamic).
type anchor struct {
	s       *jsonschema.Schema
	dynamic bool
}

// indexer builds a schemaIndex.
type indexer struct {
	root *jsonschema.Schema
	// uri is each resource's base URI, resources the resources by it
	// (fragment-free; "" is the root, as the validator also names it).
	uri        map[*jsonschema.Schema]*url.URL
	resources  map[string]*jsonschema.Schema
	resourceOf map[*jsonschema.Schema]*jsonschema.Schema
	anchors    map[*jsonschema.Schema]map[string]anchor
	// all is every schema in document order; byName the schemas with a
	// dynamic anchor, by name (for the cycle check).
	all    []*jsonschema.Schema
	byName map[string][]*jsonschema.Schema
}

// indexSchema resolves every reference of root, a compiled 2020-12 schema,
// and refuses a reference that does not resolve within the document and a
// reference cycle that never descends into the input.
func indexSchema(root *jsonschema.Schema) (*schemaIndex, error) {
	ix := &indexer{
		root:       root,
		uri:        map[*jsonschema.Schema]*url.URL{root: {}},
		resources:  map[string]*jsonschema.Schema{"": root},
		resourceOf: map[*jsonschema.Schema]*jsonschema.Schema{},
		anchors:    map[*jsonschema.Schema]map[string]anchor{},
	}
	if err := ix.visit(root, root); err != nil {
		return nil, err
	}
	idx := &schemaIndex{}
	scoped := false
	for _, s := range ix.all {
		if s.Ref != "" {
			t, _, err := ix.resolve(s, "$ref", s.Ref)
			if err != nil {
				return nil, err
			}
			if idx.ref == nil {
				idx.ref = map[*jsonschema.Schema]*jsonschema.Schema{}
			}
			idx.ref[s] = t
		}
		if s.DynamicRef != "" {
			t, name, err := ix.resolve(s, "$dynamicRef", s.DynamicRef)
			if err != nil {
				return nil, err
			}
			if idx.dynamic == nil {
				idx.dynamic = map[*jsonschema.Schema]dynamicRef{}
			}
			idx.dynamic[s] = dynamicRef{lexical: t, anchor: name}
			scoped = scoped || name != ""
		}
	}
	if err := ix.checkCycles(idx); err != nil {
		return nil, err
	}
	if scoped {
		idx.resourceOf, idx.anchors = ix.resourceOf, ix.anchors
	}
	return idx, nil
}

// visit records s, in the resource res: a new resource when s has an
// "$id" (resolved against the enclosing one's), its anchors.
func (ix *indexer) visit(s, res *jsonschema.Schema) error {
	if s.ID != "" {
		u, err := url.Parse(s.ID)
		if err != nil {
			return fmt.Errorf("$id %q: %v", s.ID, err)
		}
		abs := ix.uri[res].ResolveReference(u)
		abs.Fragment, abs.RawFragment = "", ""
		ix.uri[s] = abs
		ix.resources[abs.String()] = s
		res = s
	}
	ix.resourceOf[s] = res
	ix.all = append(ix.all, s)
	for _, a := range [...]anchor{{s, false}, {s, true}} {
		name := s.Anchor
		if a.dynamic {
			name = s.DynamicAnchor
		}
		if name == "" {
			continue
		}
		if ix.anchors[res] == nil {
			ix.anchors[res] = map[string]anchor{}
		}
		if _, dup := ix.anchors[res][name]; dup {
			return fmt.Errorf("anchor %q is defined twice in the same schema resource", name)
		}
		ix.anchors[res][name] = a
		if a.dynamic {
			if ix.byName == nil {
				ix.byName = map[string][]*jsonschema.Schema{}
			}
			ix.byName[name] = append(ix.byName[name], s)
		}
	}
	var err error
	eachSubschema(s, func(_, _ string, sub *jsonschema.Schema) bool {
		err = ix.visit(sub, res)
		return err == nil
	})
	return err
}

// resolve resolves the reference ref (keyword kw) of s as the validator
// does: against the base URI of s's resource, to a resource of the
// document, then to an anchor of that resource or by JSON pointer within
// it. dynamic is the anchor's name when it is a dynamic anchor.
func (ix *indexer) resolve(s *jsonschema.Schema, kw, ref string) (_ *jsonschema.Schema, dynamic string, _ error) {
	u, err := url.Parse(ref)
	if err != nil {
		return nil, "", fmt.Errorf("%s %q: %v", kw, ref, err)
	}
	target := ix.uri[ix.resourceOf[s]].ResolveReference(u)
	frag := target.Fragment
	target.Fragment, target.RawFragment = "", ""
	res := ix.resources[target.String()]
	if res == nil {
		return nil, "", fmt.Errorf("%s %q points outside the schema: Gantry never loads schemas a tool names (only references into the same document resolve: #/$defs/…, #/definitions/…, anchors)", kw, ref)
	}
	if frag != "" && frag[0] != '/' {
		a, ok := ix.anchors[res][frag]
		if !ok {
			return nil, "", fmt.Errorf("%s %q: no anchor %q in the schema", kw, ref, frag)
		}
		if a.dynamic {
			dynamic = frag
		}
		return a.s, dynamic, nil
	}
	t := pointerTarget(res, frag)
	if t == nil {
		return nil, "", fmt.Errorf("%s %q: the JSON pointer %q does not lead to a schema", kw, ref, frag)
	}
	return t, "", nil
}

// pointerTarget follows the JSON pointer ptr ("" or "/…", unescaped as a
// URI fragment already) from s; nil when it does not lead to a schema.
func pointerTarget(s *jsonschema.Schema, ptr string) *jsonschema.Schema {
	if ptr == "" {
		return s
	}
	toks := strings.Split(ptr[1:], "/")
	for i := 0; i < len(toks); i++ {
		kw := unescapeToken(toks[i])
		var next *jsonschema.Schema
		// in is the schema under the next token of a map or list keyword.
		in := func(m map[string]*jsonschema.Schema, l []*jsonschema.Schema) *jsonschema.Schema {
			if i+1 >= len(toks) {
				return nil
			}
			i++
			t := unescapeToken(toks[i])
			if m != nil {
				return m[t]
			}
			n, err := strconv.Atoi(t)
			if err != nil || n < 0 || n >= len(l) || (len(t) > 1 && t[0] == '0') {
				return nil
			}
			return l[n]
		}
		switch kw {
		case "$defs":
			next = in(s.Defs, nil)
		case "definitions":
			next = in(s.Definitions, nil)
		case "dependencies":
			next = in(s.DependencySchemas, nil)
		case "properties":
			next = in(s.Properties, nil)
		case "patternProperties":
			next = in(s.PatternProperties, nil)
		case "dependentSchemas":
			next = in(s.DependentSchemas, nil)
		case "prefixItems":
			next = in(nil, s.PrefixItems)
		case "allOf":
			next = in(nil, s.AllOf)
		case "anyOf":
			next = in(nil, s.AnyOf)
		case "oneOf":
			next = in(nil, s.OneOf)
		case "items":
			if next = s.Items; s.ItemsArray != nil {
				next = in(nil, s.ItemsArray)
			}
		case "additionalItems":
			next = s.AdditionalItems
		case "contains":
			next = s.Contains
		case "unevaluatedItems":
			next = s.UnevaluatedItems
		case "additionalProperties":
			next = s.AdditionalProperties
		case "propertyNames":
			next = s.PropertyNames
		case "unevaluatedProperties":
			next = s.UnevaluatedProperties
		case "not":
			next = s.Not
		case "if":
			next = s.If
		case "then":
			next = s.Then
		case "else":
			next = s.Else
		case "contentSchema":
			next = s.ContentSchema
		}
		if next == nil {
			return nil
		}
		s = next
	}
	return s
}

// unescapeToken decodes a JSON pointer token (~1 is "/", ~0 is "~").
func unescapeToken(t string) string {
	if !strings.Contains(t, "~") {
		return t
	}
	return strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
}
