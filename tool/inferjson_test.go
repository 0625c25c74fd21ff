package tool

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
)

type inferNested struct {
	Name  string            `json:"name" jsonschema:"a <name> & more"`
	Tags  []string          `json:"tags,omitempty" enum:"a,b"`
	Attrs map[string]string `json:"attrs,omitempty"`
}

type inferAll struct {
	Path    string         `json:"path" jsonschema:"The path; \"quoted\", tab\t, line\u2028, ünïcode"`
	Mode    string         `json:"mode,omitempty" enum:"fast,slow"`
	Count   int            `json:"count,omitempty" jsonschema:"how many"`
	Small   int8           `json:"small,omitempty"`
	Big     uint64         `json:"big,omitempty" enum:"1,2,18446744073709551615"`
	Ratio   float64        `json:"ratio,omitempty" enum:"0.5,1e-7,3"`
	Flag    *bool          `json:"flag,omitempty"`
	When    time.Time      `json:"when"`
	Nested  inferNested    `json:"nested"`
	List    []inferNested  `json:"list,omitempty"`
	Ptr     *inferNested   `json:"ptr,omitempty"`
	Fixed   [3]int         `json:"fixed,omitempty"`
	Any     any            `json:"any,omitempty"`
	Raw     map[string]any `json:"raw,omitempty"`
	Skipped string         `json:"-"`
	Inline
}

type Inline struct {
	Extra string `json:"extra,omitempty"`
}

// TestAppendInferred: the schema bytes of inference are the library's
// marshalling byte for byte, for every keyword inference sets.
func TestAppendInferred(t *testing.T) {
	for _, typ := range []reflect.Type{
		reflect.TypeFor[inferAll](), reflect.TypeFor[inferNested](), reflect.TypeFor[struct{}](),
		reflect.TypeFor[struct {
			A []*string `json:"a"`
		}](),
	} {
		s, err := inferSchema(typ)
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := appendInferred(nil, s)
		if !ok || string(got) != string(want) {
			t.Errorf("%v:\n got %s (%v)\nwant %s", typ, got, ok, want)
		}
	}
}

// TestAppendInferredFallsBack: a keyword outside inference's set is left to
// the library, as is what the library refuses.
func TestAppendInferredFallsBack(t *testing.T) {
	one := 1.0
	for _, s := range []*jsonschema.Schema{
		{Type: "string", Pattern: "^a"},
		{Type: "object", Properties: map[string]*jsonschema.Schema{"a": {Type: "string", MultipleOf: &one}}},
		{Type: "string", Types: []string{"string"}},
		{Type: "object", Extra: map[string]any{"x-a": 1}},
		{Type: "object", Properties: map[string]*jsonschema.Schema{"a": {}}, PropertyOrder: []string{"a", "a"}},
	} {
		if b, ok := appendInferred([]byte("x"), s); ok || string(b) != "x" {
			t.Errorf("%+v: got %q, %v; want a fallback", s, b, ok)
		}
	}
	for _, s := range []*jsonschema.Schema{{}, {Not: &jsonschema.Schema{}}, {Type: "object", Properties: map[string]*jsonschema.Schema{"b": nil, "a": {Not: &jsonschema.Schema{}}}, PropertyOrder: []string{"b"}}} {
		want, _ := json.Marshal(s)
		if got, ok := appendInferred(nil, s); !ok || string(got) != string(want) {
			t.Errorf("%+v: got %s, want %s", s, got, want)
		}
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", "<a href=\"x\">&amp;</a>", "tab\tnl\ncr\r\b\f\x00\x1f\x7f", "\u2028\u2029", "bad \xff utf8 \xc3", "ünï 😀"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendString(nil, s); string(got) != string(want) {
			t.Fatalf("appendString(%q) = %s, want %s", s, got, want)
		}
	})
}
