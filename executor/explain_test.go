package executor

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestFieldErrors: every violation of an input is named at its path, with
// the schema's expected types, whichever keyword it breaks; the validator
// decides validity.
func TestFieldErrors(t *testing.T) {
	const schema = `{"type":"object","$defs":{"level":{"type":"string","enum":["low","high"]}},
		"properties":{
			"name":{"type":"string","minLength":2,"maxLength":4,"pattern":"^[a-z]+$"},
			"n":{"type":"integer","minimum":1,"maximum":10,"multipleOf":2},
			"x":{"type":"number","exclusiveMinimum":0,"exclusiveMaximum":1},
			"tags":{"type":"array","items":{"type":"string"},"minItems":1,"maxItems":2,"uniqueItems":true},
			"pair":{"type":"array","prefixItems":[{"type":"string"},{"type":"boolean"}],"items":false},
			"level":{"$ref":"#/$defs/level"},
			"k":{"const":"fixed"},
			"one":{"oneOf":[{"type":"string"},{"type":"integer"}]},
			"any":{"anyOf":[{"type":"string"},{"type":"boolean"}]},
			"nope":{"not":{"type":"string"}},
			"meta":{"type":"object","additionalProperties":{"type":"integer"},"minProperties":1},
			"must":{},
			"has":{"type":"object","propertyNames":{"maxLength":2}}
		},
		"dependentRequired":{"n":["x"]},
		"if":{"properties":{"k":{"const":"fixed"}},"required":["k"]},"then":{"required":["one"]},
		"required":["name","must"],"additionalProperties":false}`
	c := compileSchema(json.RawMessage(schema))
	if c.err != nil {
		t.Fatal(c.err)
	}
	tests := []struct {
		name, in string
		want     []string // "path: message" of every field error, in order
	}{
		{"valid", `{"name":"ab","must":1,"n":2,"x":0.5,"tags":["a"],"pair":["a",true],"level":"low","k":"fixed","one":1,"any":true,"nope":1,"meta":{"a":1}}`, nil},
		{"missing and unknown", `{"extra":1}`, []string{"/extra: unknown property (not in the schema; remove it)", "/must: required property is missing", "/name: required property is missing"}},
		{"wrong type", `{"name":1,"must":1}`, []string{"/name: got integer, want string"}},
		{"string bounds", `{"name":"ABCDE","must":1}`, []string{"/name: does not match the pattern \"^[a-z]+$\"", "/name: length must be at most 4, got 5"}},
		{"short string", `{"name":"a","must":1}`, []string{"/name: length must be at least 2, got 1"}},
		{"dependentRequired", `{"name":"ab","must":1,"n":2}`, []string{"/x: required property is missing"}},
		{"number bounds", `{"name":"ab","must":1,"n":11,"x":1}`, []string{"/n: must be <= 10, got 11", "/n: must be a multiple of 2, got 11", "/x: must be < 1, got 1"}},
		{"integer", `{"name":"ab","must":1,"n":2.5,"x":0.5}`, []string{"/n: got number, want integer"}},
		{"array bounds", `{"name":"ab","must":1,"tags":[]}`, []string{"/tags: must have at least 1 items, got 0"}},
		{"array items", `{"name":"ab","must":1,"tags":["a",1,"a"]}`, []string{"/tags: items 0 and 2 are equal (uniqueItems)", "/tags: must have at most 2 items, got 3", "/tags/1: got integer, want string"}},
		{"tuple", `{"name":"ab","must":1,"pair":["a","b","c"]}`, []string{"/pair/1: got string, want boolean", "/pair/2: no item allowed here"}},
		{"enum through $ref", `{"name":"ab","must":1,"level":"mid"}`, []string{`/level: value must be one of "low", "high"`}},
		{"const", `{"name":"ab","must":1,"k":"other"}`, []string{`/k: value must be "fixed"`}},
		{"oneOf", `{"name":"ab","must":1,"one":true}`, []string{"/one: matches none of the 2 alternatives (oneOf)"}},
		{"anyOf", `{"name":"ab","must":1,"any":1}`, []string{"/any: matches none of the 2 alternatives (anyOf)"}},
		{"not", `{"name":"ab","must":1,"nope":"s"}`, []string{`/nope: must not match the schema of "not"`}},
		{"additionalProperties schema", `{"name":"ab","must":1,"meta":{"a":"x"}}`, []string{"/meta/a: got string, want integer"}},
		{"minProperties", `{"name":"ab","must":1,"meta":{}}`, []string{"/meta: must have at least 1 properties, got 0"}},
		{"if/then", `{"name":"ab","must":1,"k":"fixed"}`, []string{`/one: required property is missing`}},
		{"a keyword the walk does not read: the validator's message", `{"name":"ab","must":1,"has":{"abc":1}}`, []string{`: maxLength: "abc" contains 3 Unicode code points, more than 2`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := decodeInput(json.RawMessage(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			verr := c.schema.Validate(v)
			if (verr == nil) != (tt.want == nil) {
				t.Fatalf("Validate = %v, want valid=%v", verr, tt.want == nil)
			}
			if verr == nil {
				return
			}
			var got []string
			for _, f := range fieldErrors(c.schema, verr) {
				got = append(got, f.Path+": "+f.Message)
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("field errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// TestFieldErrorsExpected: a missing property names the types its schema
// wants, through $ref.
func TestFieldErrorsExpected(t *testing.T) {
	c := compileSchema(json.RawMessage(`{"type":"object","$defs":{"b":{"type":["boolean","null"]}},"properties":{"flag":{"$ref":"#/$defs/b"}},"required":["flag"]}`))
	if c.err != nil {
		t.Fatal(c.err)
	}
	v, _ := decodeInput(json.RawMessage(`{}`))
	fe := fieldErrors(c.schema, c.schema.Validate(v))
	if len(fe) != 1 || fe[0].Path != "/flag" || strings.Join(fe[0].Expected, ",") != "boolean,null" {
		t.Fatalf("got %+v", fe)
	}
	if s := fe[0].String(); s != "/flag: required property is missing (expected boolean or null)" {
		t.Errorf("String() = %q", s)
	}
}

// TestValidationNumbers: numbers keep their text through decoding and
// coercion, and the validator sees them as numbers, beyond the range of
// int64 and float64 too.
func TestValidationNumbers(t *testing.T) {
	c := compileSchema(json.RawMessage(`{"type":"object","properties":{"i":{"type":"integer"},"n":{"type":"number","maximum":1e300},"s":{"type":"string"}}}`))
	if c.err != nil {
		t.Fatal(c.err)
	}
	for _, tc := range []struct {
		in    string
		valid bool
	}{
		{`{"i":12345678901234567890123}`, true},
		{`{"i":1.0}`, true},
		{`{"i":1.5}`, false},
		{`{"n":-0.5e-3}`, true},
		{`{"i":"3"}`, false},
		{`{"s":3}`, false},
		{`{"s":"3"}`, true},
	} {
		v, err := decodeInput(json.RawMessage(tc.in))
		if err != nil {
			t.Fatal(err)
		}
		if err := c.schema.Validate(v); (err == nil) != tc.valid {
			t.Errorf("%s: Validate = %v, want valid=%v", tc.in, err, tc.valid)
		}
	}
	v, _ := decodeInput(json.RawMessage(`{"i":"1234567890123456789","n":"1e300","s":"x"}`))
	nv, changed := coerce(v, c.schema)
	out, _ := encodeInput(nv)
	if !changed || string(out) != `{"i":1234567890123456789,"n":1e300,"s":"x"}` {
		t.Errorf("coerced %s (changed=%v)", out, changed)
	}
}

// TestSchemaDrafts: draft-07 is validated as draft-07 (siblings of $ref
// ignored, items arrays), an unknown $schema as 2020-12.
func TestSchemaDrafts(t *testing.T) {
	for _, tc := range []struct {
		name, schema, in string
		valid            bool
	}{
		{"draft-07 tuple", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"p":{"type":"array","items":[{"type":"string"}],"additionalItems":false}}}`, `{"p":["a",1]}`, false},
		{"draft-07 definitions", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","definitions":{"s":{"type":"string"}},"properties":{"p":{"$ref":"#/definitions/s"}}}`, `{"p":1}`, false},
		{"draft-04 read as 2020-12", `{"$schema":"http://json-schema.org/draft-04/schema#","type":"object","properties":{"p":{"type":"string"}}}`, `{"p":"a"}`, true},
		{"2019-09 read as 2020-12", `{"$schema":"https://json-schema.org/draft/2019-09/schema","type":"object","properties":{"p":{"type":"string"}}}`, `{"p":1}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := compileSchema(json.RawMessage(tc.schema))
			if c.err != nil {
				t.Fatal(c.err)
			}
			v, _ := decodeInput(json.RawMessage(tc.in))
			if err := c.schema.Validate(v); (err == nil) != tc.valid {
				t.Errorf("Validate = %v, want valid=%v", err, tc.valid)
			}
		})
	}
}

// FuzzFieldErrors: whatever the input, an invalid one gets at least one
// field error and a valid one passes.
func FuzzFieldErrors(f *testing.F) {
	fuzzFieldErrors(f, `{"type":"object","properties":{"a":{"type":"string","minLength":1},"b":{"type":"array","items":{"type":"integer","minimum":0}},
		"c":{"oneOf":[{"type":"string"},{"type":"object","required":["x"]}]},"d":{"type":"object","additionalProperties":false,"properties":{"e":{"enum":[1,"2",null]}}}},"required":["a"]}`,
		`{"a":"x"}`, `{"a":""}`, `{"b":[1,-1,"x"]}`, `{"a":"x","c":{}}`, `{"a":"x","d":{"e":2,"f":1}}`, `{"a":"x","c":{"x":1}}`)
}

// fuzzFieldErrors fuzzes inputs against schema: validating never panics,
// and an input refused (by the validator or for a format) gets at least
// one field error.
func fuzzFieldErrors(f *testing.F, schema string, seeds ...string) {
	c := compileSchema(json.RawMessage(schema))
	if c.err != nil {
		f.Fatal(c.err)
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := decodeInput(json.RawMessage(s))
		if err != nil {
			return
		}
		if err := c.schema.Validate(v); err != nil && len(fieldErrors(c.schema, err)) == 0 {
			t.Fatalf("%s: refused (%v) without a field error", s, err)
		}
	})
}
