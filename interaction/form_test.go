package interaction

import (
	"encoding/json"
	"testing"
)

func TestFormFields(t *testing.T) {
	fs, err := FormFields(json.RawMessage(`{"type":"object","properties":{"b":{"type":"integer","title":"Bee"},"a":{"type":"string","enum":["x",1]}},"required":["b"]}`))
	if err != nil || len(fs) != 2 {
		t.Fatalf("%+v, %v", fs, err)
	}
	if fs[0].Name != "a" || fs[0].Label() != "a" || fs[0].Required || fs[1].Label() != "Bee" || !fs[1].Required {
		t.Errorf("fields %+v", fs)
	}
	if v, err := fs[0].Parse("1"); err != nil || v != float64(1) {
		t.Errorf("enum value %v, %v", v, err)
	}
	if _, err := FormFields(json.RawMessage(`{`)); err == nil {
		t.Error("a broken schema was read")
	}
	if fs, err := FormFields(nil); fs != nil || err != nil {
		t.Errorf("no schema: %v, %v", fs, err)
	}
}

// FuzzFormFieldParse: typed values convert to the field's type or fail
// with a message; never a panic.
func FuzzFormFieldParse(f *testing.F) {
	for _, s := range []string{"", "12", "-3.5e2", "yes", "No", "abc", "1e999"} {
		f.Add(s, "integer")
		f.Add(s, "boolean")
	}
	f.Fuzz(func(t *testing.T, s, typ string) {
		v, err := FormField{Name: "f", Type: typ}.Parse(s)
		if err != nil {
			return
		}
		switch v.(type) {
		case int64:
			if typ != "integer" {
				t.Fatalf("int for %s", typ)
			}
		case float64:
			if typ != "number" {
				t.Fatalf("float for %s", typ)
			}
		case bool:
			if typ != "boolean" {
				t.Fatalf("bool for %s", typ)
			}
		case string:
			if typ == "integer" || typ == "number" || typ == "boolean" {
				t.Fatalf("string for %s", typ)
			}
		default:
			t.Fatalf("value %T", v)
		}
	})
}
