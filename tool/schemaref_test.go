package tool

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// TestSchemaIndexRefs: each reference of the compiled schema points where
// the validator resolves it — JSON pointers (escaped tokens included),
// anchors, embedded resources by their $id resolved against the enclosing
// one, older drafts' forms after the translation — and the validator
// agrees (a value of the target's type is valid, another is not).
func TestSchemaIndexRefs(t *testing.T) {
	tests := []struct {
		name, schema string
		want         string // the type of properties.p's $ref target
	}{
		{"root", `{"type":"object","properties":{"p":{"$ref":"#"}}}`, "object"},
		{"$defs", `{"type":"object","$defs":{"s":{"type":"string"}},"properties":{"p":{"$ref":"#/$defs/s"}}}`, "string"},
		{"escaped tokens", `{"type":"object","$defs":{"a/b":{"type":"string"},"t~":{"type":"integer"}},"properties":{"p":{"$ref":"#/$defs/t~0"},"q":{"$ref":"#/$defs/a~1b"}}}`, "integer"},
		{"percent-encoded token", `{"type":"object","$defs":{"a b":{"type":"boolean"}},"properties":{"p":{"$ref":"#/$defs/a%20b"}}}`, "boolean"},
		{"through items and allOf", `{"type":"object","properties":{"q":{"type":"array","items":{"allOf":[{"type":"null"}]}},"p":{"$ref":"#/properties/q/items/allOf/0"}}}`, "null"},
		{"prefixItems", `{"type":"object","properties":{"q":{"prefixItems":[{"type":"string"},{"type":"number"}]},"p":{"$ref":"#/properties/q/prefixItems/1"}}}`, "number"},
		{"anchor", `{"type":"object","$defs":{"x":{"$anchor":"int","type":"integer"}},"properties":{"p":{"$ref":"#int"}}}`, "integer"},
		{"draft-07 fragment $id", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","definitions":{"x":{"$id":"#n","type":"number"}},"properties":{"p":{"$ref":"#n"}}}`, "number"},
		{"draft-07 items array", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"q":{"items":[{"type":"string"},{"type":"boolean"}]},"p":{"$ref":"#/properties/q/items/1"}}}`, "boolean"},
		{"embedded resource", `{"$id":"http://example.com/r.json","type":"object","$defs":{"i":{"$id":"item.json","type":"string"}},"properties":{"p":{"$ref":"item.json"}}}`, "string"},
		{"pointer into an embedded resource", `{"$id":"http://example.com/r.json","type":"object","$defs":{"i":{"$id":"dir/t.json","$defs":{"n":{"type":"null"}}}},"properties":{"p":{"$ref":"dir/t.json#/$defs/n"}}}`, "null"},
		{"anchor of an embedded resource", `{"$id":"http://example.com/r.json","type":"object","$defs":{"i":{"$id":"t.json","$defs":{"n":{"$anchor":"a","type":"integer"}}},"j":{"$anchor":"a","type":"string"}},"properties":{"p":{"$ref":"t.json#a"}}}`, "integer"},
		{"same name, other resource", `{"$id":"http://example.com/r.json","type":"object","$defs":{"i":{"$id":"t.json","$defs":{"n":{"$anchor":"a","type":"integer"}}},"j":{"$anchor":"a","type":"string"}},"properties":{"p":{"$ref":"#a"}}}`, "string"},
		{"relative to the enclosing resource", `{"$id":"http://example.com/a/r.json","type":"object","$defs":{"i":{"$id":"http://example.com/b/","$defs":{"x":{"$id":"x.json","type":"boolean"}},"properties":{"p":{"$ref":"x.json"}}}},"properties":{"p":{"$ref":"http://example.com/b/#/properties/p"}}}`, "boolean"},
		{"root by its $id", `{"$id":"http://example.com/r.json","type":"object","properties":{"p":{"$ref":"http://example.com/r.json"}}}`, "object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs, err := CompileSchemaIndex(json.RawMessage(tt.schema))
			if err != nil {
				t.Fatal(err)
			}
			p := cs.Schema().Properties["p"]
			target := cs.Ref(p)
			for target != nil && target.Type == "" && target.Ref != "" {
				target = cs.Ref(target)
			}
			if target == nil || target.Type != tt.want {
				t.Fatalf("$ref %q points to %+v, want a schema of type %s", p.Ref, target, tt.want)
			}
			if cs.Ref(cs.Schema()) != nil {
				t.Errorf("Ref of a schema without $ref = non-nil")
			}
			good, bad := sampleOf(tt.want), sampleOf("other than "+tt.want)
			if err := cs.Validate(map[string]any{"p": good}); err != nil {
				t.Errorf("the validator refuses %v where the index points to a %s: %v", good, tt.want, err)
			}
			if err := cs.Validate(map[string]any{"p": bad}); err == nil {
				t.Errorf("the validator accepts %v where the index points to a %s", bad, tt.want)
			}
		})
	}
}

// sampleOf returns a value of a JSON type, or for "other than T" one of
// another type.
func sampleOf(typ string) any {
	if rest, ok := strings.CutPrefix(typ, "other than "); ok {
		if rest == "string" {
			return 1.0
		}
		return "x"
	}
	switch typ {
	case "object":
		return map[string]any{}
	case "string":
		return "s"
	case "integer", "number":
		return 1.0
	case "boolean":
		return true
	case "null":
		return nil
	}
	return nil
}

// TestSchemaIndexDynamicRef: a $dynamicRef that acts dynamically goes to
// the dynamic anchor of the outermost resource of the scope that has
// one; without a scope, or one that has none, to its lexical target; one
// whose target has no dynamic anchor acts like $ref.
func TestSchemaIndexDynamicRef(t *testing.T) {
	const schema = `{"$id":"http://example.com/root","type":"object","$dynamicAnchor":"node",
		"$defs":{"tree":{"$id":"tree","$dynamicAnchor":"node","type":"array","items":{"$dynamicRef":"#node"}},
			"plain":{"$id":"plain","$anchor":"leaf","type":"string","properties":{"x":{"$dynamicRef":"#leaf"}}}},
		"properties":{"t":{"$ref":"tree"}}}`
	cs, err := CompileSchemaIndex(json.RawMessage(schema))
	if err != nil {
		t.Fatal(err)
	}
	if !cs.Scoped() {
		t.Fatal("Scoped = false for a schema with a dynamic reference")
	}
	root := cs.Schema()
	tree := root.Defs["tree"]
	items := tree.Items
	if got := cs.DynamicRef(items, nil); got != tree {
		t.Errorf("without a scope: %v, want the lexical target", got)
	}
	var scope []*jsonschema.Schema
	scope = cs.Enter(scope, root)
	scope = cs.Enter(scope, root.Properties["t"])
	if len(scope) != 1 {
		t.Fatalf("scope %d resources after the root and a subschema of it, want 1", len(scope))
	}
	scope = cs.Enter(scope, tree)
	scope = cs.Enter(scope, items)
	if len(scope) != 2 {
		t.Fatalf("scope %d resources, want 2", len(scope))
	}
	if got := cs.DynamicRef(items, scope); got != root {
		t.Errorf("from the root: %v, want the root (outermost dynamic anchor)", got)
	}
	if got := cs.DynamicRef(items, scope[1:]); got != tree {
		t.Errorf("from the tree: %v, want the tree", got)
	}
	plain := root.Defs["plain"]
	if got := cs.DynamicRef(plain.Properties["x"], scope); got != plain {
		t.Errorf("to a static anchor: %v, want the lexical target", got)
	}
	if cs.DynamicRef(root, scope) != nil {
		t.Error("DynamicRef of a schema without $dynamicRef = non-nil")
	}
	// Without dynamic references no scope is kept.
	cs2, err := CompileSchemaIndex(json.RawMessage(`{"type":"object","properties":{"a":{"$ref":"#"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if cs2.Scoped() || len(cs2.Enter(nil, cs2.Schema())) != 0 {
		t.Error("a schema without dynamic references keeps a scope")
	}
}

// TestSchemaIndexErrors: a reference the index cannot resolve is an
// error naming it.
func TestSchemaIndexErrors(t *testing.T) {
	tests := []struct{ name, schema, want string }{
		{"remote", `{"type":"object","properties":{"a":{"$ref":"https://example.com/s.json"}}}`, `$ref "https://example.com/s.json" points outside the schema`},
		{"remote dynamic", `{"type":"object","properties":{"a":{"$dynamicRef":"https://example.com/s.json#x"}}}`, `$dynamicRef "https://example.com/s.json#x" points outside`},
		{"relative to the root without $id", `{"type":"object","$defs":{"i":{"$id":"http://e.com/i.json"}},"properties":{"a":{"$ref":"i.json"}}}`, "points outside"},
		{"missing anchor", `{"type":"object","properties":{"a":{"$ref":"#nope"}}}`, `no anchor "nope"`},
		{"anchor of another resource", `{"$id":"http://e.com/r","type":"object","$defs":{"i":{"$id":"i","$defs":{"x":{"$anchor":"in"}}}},"properties":{"a":{"$ref":"#in"}}}`, `no anchor "in"`},
		{"pointer to a non-schema", `{"type":"object","properties":{"a":{"$ref":"#/properties/a/type"}}}`, `$ref "#/properties/a/type"`},
		{"pointer past a list", `{"type":"object","allOf":[{}],"properties":{"a":{"$ref":"#/allOf/1"}}}`, `$ref "#/allOf/1"`},
		{"duplicate anchor", `{"type":"object","$defs":{"a":{"$anchor":"x"},"b":{"$anchor":"x"}}}`, `anchor "x" is defined twice`},
		{"cycle through a dynamic anchor", `{"$id":"http://e.com/r","$dynamicAnchor":"n","type":"object","$defs":{"d":{"$id":"d","$dynamicAnchor":"n","not":{"$dynamicRef":"#n"}}}}`, "refers back to itself"},
		{"cycle path", `{"type":"object","properties":{"a":{"allOf":[{"$ref":"#/properties/a"}]}}}`, `"#/properties/a"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := CompileSchemaIndex(json.RawMessage(tt.schema))
			if err == nil || !errors.Is(err, ErrBadSchema) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("CompileSchemaIndex = %v, want an ErrBadSchema containing %q", err, tt.want)
			}
		})
	}
}

// TestSubschemas: every keyword holding schemas is visited, maps in key
// order.
func TestSubschemas(t *testing.T) {
	cs, err := CompileSchemaIndex(json.RawMessage(`{"type":"object","$defs":{"b":{"title":"defs b"},"a":{"title":"defs a"}},
		"properties":{"p":{"title":"properties p"}},"prefixItems":[{"title":"prefixItems 0"}],"allOf":[{"title":"allOf 0"}],
		"items":{"title":"items"},"not":{"title":"not"},"contains":{"title":"contains"},"propertyNames":{"title":"propertyNames"},
		"unevaluatedProperties":{"title":"unevaluatedProperties"},"dependentSchemas":{"d":{"title":"dependentSchemas d"}},
		"if":{"title":"if"},"then":{"title":"then"},"else":{"title":"else"}}`))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for sub := range Subschemas(cs.Schema()) {
		got = append(got, sub.Title)
	}
	want := "defs a,defs b,properties p,dependentSchemas d,prefixItems 0,allOf 0,items,contains,propertyNames,unevaluatedProperties,not,if,then,else"
	if strings.Join(got, ",") != want {
		t.Errorf("Subschemas:\n%s\nwant\n%s", strings.Join(got, ","), want)
	}
}

// FuzzSchemaIndex: whatever the reference, compiling never panics, and a
// schema that compiles has every $ref resolved to a schema of its tree.
func FuzzSchemaIndex(f *testing.F) {
	for _, s := range []string{"#", "#/$defs/a/prefixItems/0", "#/properties/p/items/not", "#/$defs/%zz", "#/items/-1", "#a", "t.json#/x", "#/$defs/a/prefixItems/00", "http://e.com/r#"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, ref string) {
		raw, _ := json.Marshal(map[string]any{
			"$id": "http://e.com/r", "type": "object",
			"$defs":      map[string]any{"a": map[string]any{"$anchor": "a", "type": "array", "prefixItems": []any{map[string]any{"type": "string"}}, "items": map[string]any{"not": map[string]any{}}}},
			"properties": map[string]any{"p": map[string]any{"$ref": "#/$defs/a"}, "q": map[string]any{"$ref": ref}},
		})
		cs, err := compileSchemaNow(raw)
		if err != nil {
			if !errors.Is(err, ErrBadSchema) {
				t.Fatalf("error does not wrap ErrBadSchema: %v", err)
			}
			return
		}
		in := map[*jsonschema.Schema]bool{}
		var all func(s *jsonschema.Schema)
		all = func(s *jsonschema.Schema) {
			in[s] = true
			for sub := range Subschemas(s) {
				all(sub)
			}
		}
		all(cs.Schema())
		for s := range in {
			if s.Ref != "" && !in[cs.Ref(s)] {
				t.Fatalf("$ref %q resolved outside the tree", s.Ref)
			}
		}
	})
}

// embedsFunc embeds a FuncTool, as built-ins with their own Spec do.
type embedsFunc struct {
	*FuncTool
	spec Spec
}

func (e *embedsFunc) Spec() *Spec { return &e.spec }

// TestSchemaChecked: a tool built by the constructors (or embedding one
// and keeping its schema) has a checked schema; a hand-written tool, or
// one that swaps the schema, has not.
func TestSchemaChecked(t *testing.T) {
	type in struct {
		A string `json:"a"`
	}
	ft := Must(New("T", "d", func(context.Context, *Env, in) (*Result, error) { return nil, nil }))
	raw := Must(NewRaw("R", "d", json.RawMessage(`{"type":"object"}`), func(context.Context, *Env, json.RawMessage) (*Result, error) { return nil, nil }))
	kept := &embedsFunc{FuncTool: ft, spec: *ft.Spec()}
	kept.spec.Description = "changed"
	swapped := &embedsFunc{FuncTool: ft, spec: *ft.Spec()}
	swapped.spec.InputSchema = json.RawMessage(`{"type":"object","properties":{"a":{"type":"strin"}}}`)
	for _, tc := range []struct {
		name string
		t    Tool
		want bool
	}{
		{"New", ft, true},
		{"NewRaw", raw, true},
		{"embedding, schema kept", kept, true},
		{"embedding, schema swapped", swapped, false},
		{"hand-written", &bare{spec: Spec{Name: "B", InputSchema: EmptyObjectSchema}}, false},
	} {
		if got := SchemaChecked(tc.t); got != tc.want {
			t.Errorf("%s: SchemaChecked = %v, want %v", tc.name, got, tc.want)
		}
	}
}
