package tool

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/internal/benchcpu"
)

const (
	d04   = `"$schema":"http://json-schema.org/draft-04/schema#",`
	d06   = `"$schema":"http://json-schema.org/draft-06/schema#",`
	d07   = `"$schema":"http://json-schema.org/draft-07/schema#",`
	d2019 = `"$schema":"https://json-schema.org/draft/2019-09/schema",`
	d2020 = `"$schema":"https://json-schema.org/draft/2020-12/schema",`
)

// TestDialects: each draft's keywords mean what that draft says, per
// keyword, after the translation to 2020-12; the values are JSON texts of
// instances that must be valid or invalid.
func TestDialects(t *testing.T) {
	tests := []struct {
		name, schema   string
		valid, invalid []string
	}{
		// draft 04
		{"04 exclusiveMinimum true", `{` + d04 + `"minimum":5,"exclusiveMinimum":true}`, []string{`6`, `5.5`}, []string{`5`, `4`}},
		{"04 exclusiveMinimum false", `{` + d04 + `"minimum":5,"exclusiveMinimum":false}`, []string{`5`, `6`}, []string{`4`}},
		{"04 exclusiveMaximum true", `{` + d04 + `"maximum":5,"exclusiveMaximum":true}`, []string{`4.9`}, []string{`5`, `6`}},
		{"04 exclusiveMaximum false", `{` + d04 + `"maximum":5,"exclusiveMaximum":false}`, []string{`5`}, []string{`5.1`}},
		{"04 exclusive without a bound", `{` + d04 + `"exclusiveMinimum":true}`, []string{`-100`}, nil},
		{"04 both bounds exclusive", `{` + d04 + `"type":"object","properties":{"n":{"type":"number","minimum":0,"exclusiveMinimum":true,"maximum":1,"exclusiveMaximum":true}}}`,
			[]string{`{"n":0.5}`}, []string{`{"n":0}`, `{"n":1}`}},
		{"04 id anchor", `{` + d04 + `"properties":{"a":{"$ref":"#pos"}},"definitions":{"p":{"id":"#pos","minimum":0}}}`, []string{`{"a":1}`}, []string{`{"a":-1}`}},
		{"04 id base", `{` + d04 + `"id":"http://example.com/root.json","properties":{"a":{"$ref":"http://example.com/root.json#/definitions/p"}},"definitions":{"p":{"type":"integer"}}}`, []string{`{"a":1}`}, []string{`{"a":"x"}`}},
		{"04 $id is not a keyword", `{` + d04 + `"properties":{"a":{"$ref":"#/definitions/p"}},"definitions":{"p":{"$id":"#x","type":"integer"}}}`, []string{`{"a":1}`}, []string{`{"a":"x"}`}},
		{"04 const is not a keyword", `{` + d04 + `"const":1}`, []string{`2`}, nil},
		{"04 contains is not a keyword", `{` + d04 + `"contains":{"type":"string"}}`, []string{`[1]`}, nil},
		{"04 propertyNames is not a keyword", `{` + d04 + `"propertyNames":{"maxLength":1}}`, []string{`{"long":1}`}, nil},
		{"04 ref siblings ignored", `{` + d04 + `"definitions":{"i":{"type":"integer"}},"properties":{"a":{"$ref":"#/definitions/i","minimum":10}}}`, []string{`{"a":1}`}, []string{`{"a":"x"}`}},
		{"04 items array", `{` + d04 + `"items":[{"type":"string"},{"type":"integer"}],"additionalItems":false}`, []string{`["a",1]`, `["a"]`}, []string{`[1,"a"]`, `["a",1,2]`}},
		{"04 dependencies", `{` + d04 + `"dependencies":{"a":["b"],"c":{"required":["d"]}}}`, []string{`{"a":1,"b":2}`, `{"c":1,"d":2}`, `{}`}, []string{`{"a":1}`, `{"c":1}`}},
		// draft 06
		{"06 exclusiveMinimum number", `{` + d06 + `"exclusiveMinimum":5}`, []string{`6`}, []string{`5`}},
		{"06 const", `{` + d06 + `"const":"x"}`, []string{`"x"`}, []string{`"y"`}},
		{"06 contains", `{` + d06 + `"contains":{"type":"string"}}`, []string{`[1,"a"]`}, []string{`[1]`}},
		{"06 propertyNames", `{` + d06 + `"propertyNames":{"maxLength":2}}`, []string{`{"ab":1}`}, []string{`{"abc":1}`}},
		{"06 if is not a keyword", `{` + d06 + `"if":{"type":"string"},"then":{"minLength":5}}`, []string{`"abc"`}, nil},
		{"06 $id anchor", `{` + d06 + `"properties":{"a":{"$ref":"#i"}},"definitions":{"x":{"$id":"#i","type":"integer"}}}`, []string{`{"a":1}`}, []string{`{"a":"x"}`}},
		{"06 boolean schemas", `{` + d06 + `"properties":{"a":false,"b":true}}`, []string{`{"b":1}`}, []string{`{"a":1}`}},
		// draft 07
		{"07 if then else", `{` + d07 + `"if":{"type":"string"},"then":{"minLength":3},"else":{"minimum":0}}`, []string{`"abc"`, `1`}, []string{`"ab"`, `-1`}},
		{"07 ref siblings ignored", `{` + d07 + `"definitions":{"s":{"type":"string"}},"properties":{"a":{"$ref":"#/definitions/s","maxLength":1}}}`, []string{`{"a":"long"}`}, []string{`{"a":1}`}},
		{"07 root ref with definitions", `{` + d07 + `"type":"object","$ref":"#/definitions/A","definitions":{"A":{"type":"object","properties":{"x":{"type":"integer"}},"required":["x"]}}}`, []string{`{"x":1}`}, []string{`{}`, `{"x":"1"}`}},
		{"07 dependencies ignored beside $ref", `{` + d07 + `"definitions":{"o":{"type":"object"}},"properties":{"a":{"$ref":"#/definitions/o","dependencies":{"x":["y"]}}}}`, []string{`{"a":{"x":1}}`}, []string{`{"a":1}`}},
		{"07 $id ignored beside $ref", `{` + d07 + `"definitions":{"s":{"type":"string"}},"properties":{"a":{"$id":"http://other.example/x","$ref":"#/definitions/s"}}}`, []string{`{"a":"x"}`}, []string{`{"a":1}`}},
		{"07 $id with anchor", `{` + d07 + `"$id":"http://example.com/r.json","properties":{"a":{"$ref":"http://example.com/r.json#n"}},"definitions":{"n":{"$id":"#n","type":"integer"}}}`, []string{`{"a":1}`}, []string{`{"a":1.5}`}},
		{"07 embedded resource", `{` + d07 + `"$id":"http://example.com/r.json","properties":{"a":{"$ref":"item.json"}},"definitions":{"i":{"$id":"item.json","type":"string"}}}`, []string{`{"a":"x"}`}, []string{`{"a":1}`}},
		{"07 pointer into an embedded resource", `{` + d07 + `"$id":"http://example.com/r.json","definitions":{"t":{"$id":"t.json","items":[{"type":"string"}]}},"properties":{"a":{"$ref":"t.json#/items/0"}}}`, []string{`{"a":"x"}`}, []string{`{"a":1}`}},
		{"07 items array and additionalItems schema", `{` + d07 + `"items":[{"type":"string"}],"additionalItems":{"type":"integer"}}`, []string{`["a",1,2]`}, []string{`["a","b"]`}},
		{"07 items schema ignores additionalItems", `{` + d07 + `"items":{"type":"integer"},"additionalItems":false}`, []string{`[1,2,3]`}, []string{`["a"]`}},
		{"07 pointer into items array", `{` + d07 + `"properties":{"t":{"items":[{"type":"string"},{"type":"integer"}]},"u":{"$ref":"#/properties/t/items/1"}}}`, []string{`{"u":1}`}, []string{`{"u":"x"}`}},
		{"07 pointer into additionalItems", `{` + d07 + `"properties":{"t":{"items":[{}],"additionalItems":{"type":"integer"}},"u":{"$ref":"#/properties/t/additionalItems"}}}`, []string{`{"u":1}`}, []string{`{"u":"x"}`}},
		{"07 pointer into dependencies", `{` + d07 + `"dependencies":{"a":{"properties":{"b":{"type":"integer"}}}},"properties":{"u":{"$ref":"#/dependencies/a/properties/b"}}}`, []string{`{"u":1}`}, []string{`{"u":"x"}`}},
		{"07 unevaluatedProperties is not a keyword", `{` + d07 + `"properties":{"a":{}},"unevaluatedProperties":false}`, []string{`{"b":1}`}, nil},
		{"07 dependentRequired is not a keyword", `{` + d07 + `"dependentRequired":{"a":["b"]}}`, []string{`{"a":1}`}, nil},
		{"07 prefixItems is not a keyword", `{` + d07 + `"prefixItems":[{"type":"string"}]}`, []string{`[1]`}, nil},
		{"07 https and no fragment", `{"$schema":"https://json-schema.org/draft-07/schema","minimum":1}`, []string{`1`}, []string{`0`}},
		// 2019-09
		{"2019 ref siblings apply", `{` + d2019 + `"$defs":{"s":{"type":"string"}},"properties":{"a":{"$ref":"#/$defs/s","maxLength":1}}}`, []string{`{"a":"x"}`}, []string{`{"a":"long"}`, `{"a":1}`}},
		{"2019 items array", `{` + d2019 + `"items":[{"type":"string"}],"additionalItems":false}`, []string{`["a"]`}, []string{`["a","b"]`, `[1]`}},
		{"2019 dependentRequired", `{` + d2019 + `"dependentRequired":{"a":["b"]}}`, []string{`{"a":1,"b":1}`}, []string{`{"a":1}`}},
		{"2019 unevaluatedProperties", `{` + d2019 + `"allOf":[{"properties":{"a":{}}}],"unevaluatedProperties":false}`, []string{`{"a":1}`}, []string{`{"b":1}`}},
		{"2019 minContains", `{` + d2019 + `"contains":{"type":"string"},"minContains":2}`, []string{`["a","b"]`}, []string{`["a",1]`}},
		{"2019 $anchor", `{` + d2019 + `"properties":{"a":{"$ref":"#int"}},"$defs":{"i":{"$anchor":"int","type":"integer"}}}`, []string{`{"a":1}`}, []string{`{"a":"1"}`}},
		{"2019 recursiveRef", `{` + d2019 + `"$recursiveAnchor":true,"type":"object","properties":{"name":{"type":"string"},"children":{"type":"array","items":{"$recursiveRef":"#"}}}}`,
			[]string{`{"name":"a","children":[{"name":"b","children":[]}]}`}, []string{`{"name":"a","children":[{"name":1}]}`}},
		{"2019 recursiveRef without anchor", `{` + d2019 + `"type":"object","properties":{"next":{"$recursiveRef":"#"},"v":{"type":"integer"}}}`,
			[]string{`{"v":1,"next":{"v":2}}`}, []string{`{"v":1,"next":{"v":"x"}}`}},
		{"2019 prefixItems is not a keyword", `{` + d2019 + `"prefixItems":[{"type":"string"}]}`, []string{`[1]`}, nil},
		// 2020-12 and no $schema
		{"2020 prefixItems", `{` + d2020 + `"prefixItems":[{"type":"string"}],"items":false}`, []string{`["a"]`}, []string{`["a",1]`, `[1]`}},
		{"2020 dynamicRef", `{` + d2020 + `"$dynamicAnchor":"node","type":"object","properties":{"kids":{"type":"array","items":{"$dynamicRef":"#node"}},"v":{"type":"integer"}}}`,
			[]string{`{"v":1,"kids":[{"v":2}]}`}, []string{`{"kids":[{"v":"x"}]}`}},
		{"2020 pointer into $defs", `{` + d2020 + `"$defs":{"p":{"type":"integer"}},"properties":{"a":{"$ref":"#/$defs/p"}}}`, []string{`{"a":1}`}, []string{`{"a":"x"}`}},
		{"none is 2020", `{"$defs":{"s":{"type":"string"}},"properties":{"a":{"$ref":"#/$defs/s","maxLength":1}}}`, []string{`{"a":"x"}`}, []string{`{"a":"xy"}`}},
		{"none with boolean exclusive bound", `{"type":"object","properties":{"n":{"type":"integer","minimum":1,"exclusiveMinimum":true}}}`, []string{`{"n":2}`}, []string{`{"n":1}`}},
		{"none with items array", `{"items":[{"type":"string"}]}`, []string{`["a",1]`}, []string{`[1]`}},
		{"none with fragment $id", `{"properties":{"a":{"$ref":"#n"}},"$defs":{"n":{"$id":"#n","type":"integer"}}}`, []string{`{"a":1}`}, []string{`{"a":"x"}`}},
		{"recursion through properties", `{"type":"object","properties":{"v":{"type":"integer"},"next":{"$ref":"#"}}}`, []string{`{"v":1,"next":{"v":2,"next":{}}}`}, []string{`{"next":{"v":"x"}}`}},
		{"recursion through items of $defs", `{"type":"object","$defs":{"t":{"type":"array","items":{"$ref":"#/$defs/t"}}},"properties":{"t":{"$ref":"#/$defs/t"}}}`, []string{`{"t":[[],[[]]]}`}, []string{`{"t":[1]}`}},
		{"keywords are case-sensitive", `{"type":"object","properties":{"a":{"TYPE":"string","MinLength":3,"$Ref":"#","aLLoF":[{"$ref":"#"}]}}}`, []string{`{"a":1}`}, []string{`1`}},
		{"a key folding to a keyword by Unicode", "{\"type\":\"object\",\"$re\u017f\":\"#\"}", []string{`{}`}, nil},
		{"nested $schema switches dialect", `{"$defs":{"old":{` + d04 + `"minimum":1,"exclusiveMinimum":true}},"properties":{"a":{"$ref":"#/$defs/old"}}}`, []string{`{"a":2}`}, []string{`{"a":1}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs, err := CompileSchema(json.RawMessage(tt.schema))
			if err != nil {
				t.Fatalf("CompileSchema: %v", err)
			}
			for _, v := range tt.valid {
				if err := rs.Validate(decodeValue(t, v)); err != nil {
					t.Errorf("%s: want valid, got %v", v, err)
				}
			}
			for _, v := range tt.invalid {
				if err := rs.Validate(decodeValue(t, v)); err == nil {
					t.Errorf("%s: want invalid", v)
				}
			}
		})
	}
}

func decodeValue(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestDialectErrors: what cannot be compiled is an error that says why.
func TestDialectErrors(t *testing.T) {
	tests := []struct{ name, schema, want string }{
		{"unknown $schema", `{"$schema":"https://example.com/my-meta","type":"object"}`, "not a JSON Schema draft Gantry knows"},
		{"draft 03", `{"$schema":"http://json-schema.org/draft-03/schema#","type":"object"}`, "drafts before 04"},
		{"latest", `{"$schema":"http://json-schema.org/schema#","type":"object"}`, "not a JSON Schema draft"},
		{"$schema not a string", `{"$schema":7,"type":"object"}`, "not a string"},
		{"remote ref", `{"type":"object","properties":{"a":{"$ref":"https://example.com/s.json#/x"}}}`, `$ref "https://example.com/s.json#/x" points outside the schema`},
		{"relative remote ref", `{"type":"object","properties":{"a":{"$ref":"other.json"}}}`, `$ref "other.json" points outside`},
		{"meta-schema ref", `{` + d07 + `"type":"object","properties":{"s":{"$ref":"http://json-schema.org/draft-07/schema#"}}}`, "points outside"},
		{"missing pointer target", `{"type":"object","properties":{"a":{"$ref":"#/$defs/nope"}}}`, "nope"},
		{"missing anchor", `{"type":"object","properties":{"a":{"$ref":"#nope"}}}`, "nope"},
		{"pointer beside ref", `{` + d07 + `"type":"object","properties":{"a":{"$ref":"#/definitions/x","properties":{"b":{}}},"c":{"$ref":"#/properties/a/properties/b"}},"definitions":{"x":{}}}`, "beside a $ref"},
		{"recursiveRef not #", `{` + d2019 + `"type":"object","properties":{"a":{"$recursiveRef":"#/x"}}}`, "recursiveRef"},
		{"cycle: root $ref", `{"type":"object","$ref":"#"}`, "refers back to itself"},
		{"cycle: allOf", `{"type":"object","allOf":[{"$ref":"#"}]}`, "refers back to itself"},
		{"cycle: $defs", `{"type":"object","$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},"properties":{"x":{"$ref":"#/$defs/a"}}}`, "refers back to itself"},
		{"cycle: 07 anyOf", `{` + d07 + `"type":"object","definitions":{"a":{"$ref":"#/definitions/b"},"b":{"anyOf":[{"$ref":"#/definitions/a"}]}}}`, "refers back to itself"},
		{"cycle: anchor and not", `{"type":"object","$defs":{"a":{"$anchor":"x","not":{"$ref":"#x"}}}}`, "refers back to itself"},
		{"cycle: 04 id anchor", `{` + d04 + `"type":"object","definitions":{"a":{"id":"#x","allOf":[{"$ref":"#x"}]}}}`, "refers back to itself"},
		{"cycle: dynamicRef", `{"$dynamicAnchor":"n","type":"object","allOf":[{"$dynamicRef":"#n"}]}`, "refers back to itself"},
		{"cycle: recursiveRef", `{` + d2019 + `"$recursiveAnchor":true,"type":"object","anyOf":[{"$recursiveRef":"#"}]}`, "refers back to itself"},
		{"cycle: embedded resource", `{"$id":"http://e.com/r","type":"object","allOf":[{"$ref":"i.json"}],"$defs":{"i":{"$id":"i.json","if":{"$ref":"r"}}}}`, "refers back to itself"},
		{"deep nesting without translation", `{"type":"object","properties":{"a":` + strings.Repeat(`{"not":`, 600) + `{}` + strings.Repeat(`}`, 600) + `}}`, "deeper"},
		{"trailing data", `{"type":"object","$ref":"#/$defs/a","$defs":{"a":{}}} x`, "after the schema"},
		{"$schema without a scheme", `{"$schema":"json-schema.org/draft-07/schema#","type":"object"}`, "not a JSON Schema draft"},
		{"deep nesting", `{"type":"object","properties":{"a":` + strings.Repeat(`{"items":`, 300) + `{}` + strings.Repeat(`}`, 300) + `}}`, "deeper"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := CompileSchema(json.RawMessage(tt.schema))
			if err == nil || !errors.Is(err, ErrBadSchema) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("CompileSchema = %v, want an ErrBadSchema containing %q", err, tt.want)
			}
		})
	}
}

// TestTranslateUnchanged: a schema without anything to translate is
// compiled from its own bytes.
func TestTranslateUnchanged(t *testing.T) {
	for _, s := range []string{
		`{"type":"object","properties":{"a":{"type":"string"}}}`,
		`{` + d2020 + `"type":"object","items":{"type":"string"},"$defs":{"x":{"$id":"http://e.com/x","type":"string"}}}`,
		`true`,
	} {
		out, err := translateSchema(json.RawMessage(s))
		if err != nil || string(out) != s {
			t.Errorf("translateSchema(%s) = %s, %v; want it unchanged", s, out, err)
		}
	}
}

// FuzzTranslateSchema: the translation never panics, and what it returns
// is JSON that is translated to itself (a 2020-12 schema needs nothing
// more) and compiles or fails with ErrBadSchema.
func FuzzTranslateSchema(f *testing.F) {
	for _, s := range []string{
		`{` + d04 + `"minimum":5,"exclusiveMinimum":true,"id":"#a","items":[{"$ref":"#a"}],"additionalItems":false}`,
		`{` + d07 + `"$ref":"#/definitions/a","definitions":{"a":{"dependencies":{"x":["y"],"z":{"items":[{}]}}}},"properties":{"p":{"$ref":"#/definitions/a/dependencies/z/items/0"}}}`,
		`{` + d2019 + `"$recursiveAnchor":true,"items":{"$recursiveRef":"#"}}`,
		`{"$id":"http://e.com/r","$defs":{"x":{"$id":"x.json#y"}},"$ref":"x.json"}`,
		`{"type":"object"}`,
		`{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"properties":{"x":{"$ref":"#/$defs/a"}}}},"allOf":[{"$ref":"#/$defs/a"}]}`,
		`{"$dynamicAnchor":"n","items":{"$dynamicRef":"#n"},"anyOf":[{"$ref":"#/items"}]}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		rs, err := compileSchemaNow(json.RawMessage(s))
		if err != nil && !errors.Is(err, ErrBadSchema) {
			t.Fatalf("compile error does not wrap ErrBadSchema: %v", err)
		}
		if err == nil { // a compiled schema validates without running away (a reference cycle would overflow the stack)
			for _, v := range []any{map[string]any{"a": map[string]any{"b": []any{1.0, "x"}}}, []any{nil, true}, "s", 1.5} {
				_ = rs.Validate(v)
			}
		}
		out, err := translateSchema(json.RawMessage(s))
		if err != nil || string(out) == s {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("translation is not JSON: %s", out)
		}
		again, err := translateSchema(out)
		if err != nil {
			t.Fatalf("translation %s does not translate again: %v", out, err)
		}
		if string(again) != string(out) && !sameJSON(again, out) {
			t.Fatalf("translation is not stable:\n%s\n%s", out, again)
		}
	})
}

func sameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}

// benchSchemas are input schemas as tools publish them: an inferred one
// (nothing to translate), a draft-07 one as zod-to-json-schema writes it,
// a draft-04 one with boolean bounds, a 2020-12 one with $defs.
var benchSchemas = []struct{ name, schema string }{
	{"inferred", `{"type":"object","properties":{"file_path":{"type":"string","description":"The absolute path"},"offset":{"type":"integer"},"limit":{"type":"integer"}},"required":["file_path"],"additionalProperties":false}`},
	{"draft07", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","$ref":"#/definitions/Args","definitions":{"Args":{"type":"object","properties":{"at":{"type":"string","format":"date-time"},"title":{"type":"string","minLength":1},"tags":{"type":"array","items":{"type":"string"}},"where":{"$ref":"#/definitions/Place"}},"required":["at","title"],"additionalProperties":false},"Place":{"type":"object","properties":{"lat":{"type":"number","minimum":-90,"maximum":90},"lon":{"type":"number"}}}}}`},
	{"draft04", `{"$schema":"http://json-schema.org/draft-04/schema#","type":"object","properties":{"n":{"type":"integer","minimum":0,"exclusiveMinimum":true,"maximum":100,"exclusiveMaximum":true},"unit":{"$ref":"#/definitions/unit"},"pair":{"type":"array","items":[{"type":"string"},{"type":"number"}]}},"definitions":{"unit":{"enum":["m","s","kg"]}},"required":["n"]}`},
	{"2020-12", `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","$defs":{"id":{"type":"string","format":"uuid"}},"properties":{"id":{"$ref":"#/$defs/id"},"ids":{"type":"array","items":{"$ref":"#/$defs/id"}},"mode":{"enum":["a","b"]}},"required":["id"]}`},
}

// BenchmarkCompileSchema: translating and compiling one schema, without
// the memo (each distinct schema pays this once per process).
func BenchmarkCompileSchema(b *testing.B) {
	benchSchemasEach(b, func(raw json.RawMessage) error { _, err := compileSchemaNow(raw); return err })
}

// BenchmarkTranslateSchema: the translation's share of a compilation.
func BenchmarkTranslateSchema(b *testing.B) {
	benchSchemasEach(b, func(raw json.RawMessage) error { _, err := translateSchema(raw); return err })
}

func benchSchemasEach(b *testing.B, f func(json.RawMessage) error) {
	for _, s := range benchSchemas {
		b.Run(s.name, func(b *testing.B) {
			raw := json.RawMessage(s.schema)
			b.ReportAllocs()
			defer benchcpu.Start(b)()
			for b.Loop() {
				if err := f(raw); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
