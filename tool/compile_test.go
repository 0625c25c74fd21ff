package tool

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
)

// TestCompileSchema: what the validator's package does not check itself is
// checked here (the meta-schema's rules for the keywords it reads), in
// subschemas too; drafts other than draft-07 and 2020-12 compile as 2020-12.
func TestCompileSchema(t *testing.T) {
	tests := []struct {
		name, schema string
		ok           bool
	}{
		{"2020-12", `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object"}`, true},
		{"draft-07", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"a":{"$ref":"#/definitions/s"}},"definitions":{"s":{"type":"string"}}}`, true},
		{"draft-04", `{"$schema":"http://json-schema.org/draft-04/schema#","type":"object"}`, true},
		{"not an object schema", `{"type":"string"}`, true},
		{"boolean schema", `true`, true},
		{"type list", `{"type":["string","null"]}`, true},
		{"unknown type", `{"type":"object","properties":{"a":{"type":"strng"}}}`, false},
		{"type listed twice", `{"type":["string","string"]}`, false},
		{"type not a string", `{"type":1}`, false},
		{"negative minLength", `{"type":"object","properties":{"a":{"type":"string","minLength":-1}}}`, false},
		{"fractional maxItems", `{"type":"array","maxItems":1.5}`, false},
		{"zero multipleOf", `{"$defs":{"n":{"multipleOf":0}}}`, false},
		{"required twice", `{"type":"object","required":["a","a"]}`, false},
		{"required not a list", `{"type":"object","required":"a"}`, false},
		{"empty enum", `{"items":{"enum":[]}}`, false},
		{"nested in anyOf", `{"anyOf":[{"type":"nope"}]}`, false},
		{"remote ref", `{"$ref":"https://example.com/s.json"}`, false},
		{"bad pattern in patternProperties", `{"patternProperties":{"(":{}}}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs, err := CompileSchema(json.RawMessage(tt.schema))
			if (err == nil) != tt.ok {
				t.Fatalf("CompileSchema = %v, want ok=%v", err, tt.ok)
			}
			if err != nil && !errors.Is(err, ErrBadSchema) {
				t.Fatalf("error does not wrap ErrBadSchema: %v", err)
			}
			if err == nil && rs.Validate(map[string]any{"a": "x"}) != nil && tt.name == "draft-04" {
				t.Fatalf("draft-04 schema rejects a valid value")
			}
		})
	}
}

func memoised(raw json.RawMessage) bool {
	compiledSchemas.mu.RLock()
	defer compiledSchemas.mu.RUnlock()
	_, ok := compiledSchemas.m[string(raw)]
	return ok
}

// TestBuildChecksWhatItMust: a schema this package inferred is not
// compiled when the tool is built (it is valid by construction; it is
// compiled when an input is first validated); a caller's schema, a schema
// an option replaced and a Doc's examples are checked at build.
func TestBuildChecksWhatItMust(t *testing.T) {
	type in struct {
		BuildCheck9071 string `json:"build_check_9071"`
	}
	noop := func(context.Context, *Env, in) (*Result, error) { return TextResult(""), nil }
	inferred := Must(New("Inferred", "d", noop))
	if memoised(inferred.Spec().InputSchema) {
		t.Fatal("an inferred schema was compiled at build")
	}
	if _, err := CompileSchema(inferred.Spec().InputSchema); err != nil {
		t.Fatalf("the inferred schema does not compile: %v", err)
	}
	bad := json.RawMessage(`{"type":"object","properties":{"a":{"type":"nope"}}}`)
	if _, err := NewRaw("Raw", "d", bad, func(context.Context, *Env, json.RawMessage) (*Result, error) { return nil, nil }); !errors.Is(err, ErrBadSchema) {
		t.Errorf("NewRaw with a bad schema: %v", err)
	}
	if _, err := New("Replaced", "d", noop, WithSpec(func(s *Spec) { s.InputSchema = bad })); !errors.Is(err, ErrBadSchema) {
		t.Errorf("an option's bad schema: %v", err)
	}
	ex := WithDoc(Doc{Short: "d", Examples: []Example{{Description: "wrong", Input: json.RawMessage(`{"build_check_9071":1}`)}}})
	if _, err := New("Examples", "d", noop, ex); !errors.Is(err, ErrBadExample) {
		t.Errorf("a bad example: %v", err)
	}
}
