package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

type nested struct {
	X int    `json:"x"`
	Y string `json:"y,omitempty"`
}

type Embedded struct {
	E string `json:"e"`
}

type recursive struct {
	Next *recursive `json:"next,omitempty"`
}

type mutualA struct {
	B *mutualB `json:"b,omitempty"`
}

type mutualB struct {
	A []mutualA `json:"a"`
}

func TestInferSchema(t *testing.T) {
	tests := []struct {
		name string
		typ  reflect.Type
		want string
	}{
		{"json names, description, required", reflect.TypeFor[struct {
			Path  string `json:"file_path" jsonschema:"The absolute path"`
			Limit int    `json:"limit,omitempty" jsonschema:"Lines to read"`
			Zero  bool   `json:"zero,omitzero"`
			Skip  string `json:"-"`
			NoTag int
		}](), `{"type":"object","properties":{"file_path":{"type":"string","description":"The absolute path"},"limit":{"type":"integer","description":"Lines to read"},"zero":{"type":"boolean"},"NoTag":{"type":"integer"}},"required":["file_path","NoTag"],"additionalProperties":false}`},
		{"string enum", reflect.TypeFor[struct {
			Mode string `json:"mode" enum:"content, files_with_matches,count"`
		}](), `{"type":"object","properties":{"mode":{"type":"string","enum":["content","files_with_matches","count"]}},"required":["mode"],"additionalProperties":false}`},
		{"int, uint and float enums", reflect.TypeFor[struct {
			I int     `json:"i" enum:"-1,2"`
			U uint8   `json:"u" enum:"1,255"`
			F float64 `json:"f" enum:"1.5,2"`
		}](), `{"type":"object","properties":{"i":{"type":"integer","enum":[-1,2]},"u":{"type":"integer","enum":[1,255],"minimum":0,"maximum":255},"f":{"type":"number","enum":[1.5,2]}},"required":["i","u","f"],"additionalProperties":false}`},
		{"enum on slice items and pointers", reflect.TypeFor[struct {
			S []string   `json:"s,omitempty" enum:"a,b"`
			P *string    `json:"p,omitempty" enum:"x"`
			Q []*float32 `json:"q,omitempty" enum:"0.5"`
		}](), `{"type":"object","properties":{"s":{"type":"array","items":{"type":"string","enum":["a","b"]}},"p":{"type":"string","enum":["x"]},"q":{"type":"array","items":{"type":"number","enum":[0.5]}}},"additionalProperties":false}`},
		{"nested structs and slices of them", reflect.TypeFor[struct {
			N  nested   `json:"n"`
			NS []nested `json:"ns,omitempty"`
		}](), `{"type":"object","properties":{"n":{"type":"object","properties":{"x":{"type":"integer"},"y":{"type":"string"}},"required":["x"],"additionalProperties":false},"ns":{"type":"array","items":{"type":"object","properties":{"x":{"type":"integer"},"y":{"type":"string"}},"required":["x"],"additionalProperties":false}}},"required":["n"],"additionalProperties":false}`},
		{"maps with string keys", reflect.TypeFor[struct {
			M map[string]float64 `json:"m,omitempty"`
			E map[string]nested  `json:"e,omitempty"`
		}](), `{"type":"object","properties":{"m":{"type":"object","additionalProperties":{"type":"number"}},"e":{"type":"object","additionalProperties":{"type":"object","properties":{"x":{"type":"integer"},"y":{"type":"string"}},"required":["x"],"additionalProperties":false}}},"additionalProperties":false}`},
		{"pointers are not nullable", reflect.TypeFor[struct {
			P  *int     `json:"p,omitempty"`
			PP **string `json:"pp,omitempty"`
			PN *nested  `json:"pn,omitempty"`
		}](), `{"type":"object","properties":{"p":{"type":"integer"},"pp":{"type":"string"},"pn":{"type":"object","properties":{"x":{"type":"integer"},"y":{"type":"string"}},"required":["x"],"additionalProperties":false}},"additionalProperties":false}`},
		{"time.Time is date-time", reflect.TypeFor[struct {
			At    time.Time  `json:"at"`
			Maybe *time.Time `json:"maybe,omitempty"`
		}](), `{"type":"object","properties":{"at":{"type":"string","format":"date-time"},"maybe":{"type":"string","format":"date-time"}},"required":["at"],"additionalProperties":false}`},
		{"embedded fields are promoted", reflect.TypeFor[struct {
			Embedded
			X int `json:"x"`
		}](), `{"type":"object","properties":{"e":{"type":"string"},"x":{"type":"integer"}},"required":["e","x"],"additionalProperties":false}`},
		{"pointer to struct input", reflect.TypeFor[*nested](), `{"type":"object","properties":{"x":{"type":"integer"},"y":{"type":"string"}},"required":["x"],"additionalProperties":false}`},
		{"empty struct", reflect.TypeFor[struct{}](), `{"type":"object","additionalProperties":false}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := InferSchemaType(tt.typ)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Fatalf("schema\n got %s\nwant %s", got, tt.want)
			}
			if err := CheckSchema(got); err != nil {
				t.Fatalf("inferred schema does not pass CheckSchema: %v", err)
			}
		})
	}
}

func TestInferSchemaErrors(t *testing.T) {
	tests := []struct {
		name string
		typ  reflect.Type
		want string
	}{
		{"not a struct", reflect.TypeFor[string](), "is not a struct"},
		{"slice input", reflect.TypeFor[[]nested](), "is not a struct"},
		{"map input", reflect.TypeFor[map[string]any](), "is not a struct"},
		{"func field", reflect.TypeFor[struct {
			F func() `json:"f"`
		}](), "func() is unsupported"},
		{"chan field", reflect.TypeFor[struct {
			C chan int `json:"c"`
		}](), "chan"},
		{"complex field", reflect.TypeFor[struct {
			C complex128 `json:"c"`
		}](), "complex128"},
		{"non-string map key", reflect.TypeFor[struct {
			M map[int]string `json:"m"`
		}](), "map key"},
		{"recursive type", reflect.TypeFor[recursive](), "cycle"},
		{"mutually recursive types", reflect.TypeFor[mutualA](), "cycle"},
		{"empty enum", reflect.TypeFor[struct {
			E string `json:"e" enum:""`
		}](), "empty enum"},
		{"enum on bool", reflect.TypeFor[struct {
			B bool `json:"b" enum:"true"`
		}](), "enum tag on a bool"},
		{"bad int enum", reflect.TypeFor[struct {
			I int `json:"i" enum:"1,x"`
		}](), `"x" is not an integer`},
		{"negative uint enum", reflect.TypeFor[struct {
			U uint `json:"u" enum:"-1"`
		}](), `"-1" is not an integer`},
		{"int8 enum overflow", reflect.TypeFor[struct {
			I int8 `json:"i" enum:"300"`
		}](), `"300" is not an integer`},
		{"bad float enum", reflect.TypeFor[struct {
			F float64 `json:"f" enum:"1.5,a"`
		}](), `"a" is not a number`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := InferSchemaType(tt.typ)
			if err == nil {
				t.Fatalf("no error; schema %s", got)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %q does not mention %q", err, tt.want)
			}
		})
	}
}

func TestCheckSchema(t *testing.T) {
	tests := []struct {
		name, schema string
		ok           bool
	}{
		{"empty object", `{"type":"object"}`, true},
		{"properties", `{"type":"object","properties":{"a":{"type":"string","minLength":1}},"required":["a"]}`, true},
		{"with $defs", `{"type":"object","$defs":{"s":{"type":"string"}},"properties":{"a":{"$ref":"#/$defs/s"}}}`, true},
		{"empty", ``, false},
		{"blank", "  \n", false},
		{"not JSON", `{"type":`, false},
		{"not an object", `[]`, false},
		{"string type", `{"type":"string"}`, false},
		{"no type", `{"properties":{}}`, false},
		{"type in another case", `{"tYpe":"object"}`, false},
		{"type in another case beside type", `{"Type":"string","type":"object"}`, true},
		{"bad keyword value", `{"type":"object","properties":{"a":{"type":"nope"}}}`, false},
		{"dangling ref", `{"type":"object","properties":{"a":{"$ref":"#/$defs/missing"}}}`, false},
		{"bad pattern", `{"type":"object","properties":{"a":{"type":"string","pattern":"("}}}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckSchema(json.RawMessage(tt.schema))
			if (err == nil) != tt.ok {
				t.Fatalf("CheckSchema = %v, want ok=%v", err, tt.ok)
			}
			if err != nil && !errors.Is(err, ErrBadSchema) {
				t.Fatalf("error does not wrap ErrBadSchema: %v", err)
			}
		})
	}
}

func TestValidName(t *testing.T) {
	tests := map[string]bool{
		"Read": true, "mcp__github__create_issue": true, "a-b_c9": true, strings.Repeat("x", 64): true,
		"": false, strings.Repeat("x", 65): false, "a b": false, "a.b": false, "ä": false, "a/b": false, "a\n": false,
	}
	for name, want := range tests {
		if got := ValidName(name); got != want {
			t.Errorf("ValidName(%q) = %v, want %v", name, got, want)
		}
	}
}

func FuzzCheckSchema(f *testing.F) {
	for _, s := range []string{`{"type":"object"}`, `{"type":"object","properties":{"a":{"$ref":"#/x"}}}`, `[]`, `{"type":"object","pattern":"("}`, `null`, ``} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		err := CheckSchema(json.RawMessage(s))
		if err == nil {
			var top map[string]any
			if json.Unmarshal([]byte(s), &top) != nil || top["type"] != "object" {
				t.Fatalf("CheckSchema accepted %q", s)
			}
		} else if !errors.Is(err, ErrBadSchema) {
			t.Fatalf("error does not wrap ErrBadSchema: %v", err)
		}
	})
}

func FuzzValidName(f *testing.F) {
	for _, s := range []string{"Read", "", "a b", strings.Repeat("y", 64), "ä"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := len(s) >= 1 && len(s) <= 64
		for i := 0; i < len(s); i++ {
			c := s[i]
			if !(c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
				want = false
			}
		}
		if got := ValidName(s); got != want {
			t.Fatalf("ValidName(%q) = %v, want %v", s, got, want)
		}
	})
}

// TestCompiledSchemaMemo: the same schema bytes compile once (tools built
// per session share the compiled schema); a bad schema's error is kept too.
func TestCompiledSchemaMemo(t *testing.T) {
	raw := json.RawMessage(`{"type":"object","properties":{"memo_test":{"type":"string"}}}`)
	a, err := compileSchema(raw)
	if err != nil {
		t.Fatal(err)
	}
	b, err := compileSchema(bytes.Clone(raw))
	if err != nil || a != b {
		t.Fatalf("second compile: %p %p %v", a, b, err)
	}
	bad := json.RawMessage(`{"type":"object","properties":{"x":{"type":12}}}`)
	for range 2 {
		if _, err := compileSchema(bad); !errors.Is(err, ErrBadSchema) {
			t.Fatalf("bad schema: %v", err)
		}
	}
}

func BenchmarkNewTextBuild(b *testing.B) {
	type in struct {
		Path  string `json:"path" jsonschema:"The file"`
		Limit int    `json:"limit,omitempty" jsonschema:"At most this many"`
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := NewText("Probe", "A probe.", func(context.Context, *Env, in) (string, error) { return "", nil }); err != nil {
			b.Fatal(err)
		}
	}
}
