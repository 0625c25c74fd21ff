package executor

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/gantry-dev/gantry/tool"
)

// maxCoerceDepth bounds the recursion of coercion (through nested values and
// $ref chains) so that a hostile input or a recursive schema cannot blow the
// stack.
const maxCoerceDepth = 64

// coerce repairs the common mistakes models make in tool inputs, guided by
// the schema, recursively:
//
//   - "true" / "false" where the schema wants a boolean → the boolean;
//   - a numeric string where it wants a number or an integer → the number;
//   - a JSON object or array passed as a string where it wants an object or
//     an array → the decoded value;
//   - null for an optional property whose schema does not allow null → the
//     property is omitted.
//
// A value is changed only where its type is one the schema does not accept
// and the replacement's type is one it does, so a valid input is never
// changed. coerce reports whether it changed anything; v is modified in
// place (maps and slices) and the new root is returned.
func coerce(v any, s *inputSchema) (any, bool) {
	c := coercer{cs: s.cs}
	return c.value(v, s.root(), 0)
}

// coercer walks a value along its schema; cs says where $ref points.
type coercer struct{ cs *tool.CompiledSchema }

func (co coercer) value(v any, s *jsonschema.Schema, depth int) (any, bool) {
	if s == nil || depth > maxCoerceDepth {
		return v, false
	}
	changed := false
	// allOf branches and a $ref next to other keywords all apply.
	if s.Ref != "" {
		var c bool
		v, c = co.value(v, co.cs.Ref(s), depth+1)
		changed = changed || c
	}
	for _, sub := range s.AllOf {
		var c bool
		v, c = co.value(v, sub, depth+1)
		changed = changed || c
	}
	if types := schemaTypes(s); types != nil {
		if nv, ok := convert(v, types); ok {
			v, changed = nv, true
		}
	}
	switch x := v.(type) {
	case map[string]any:
		for name, pv := range x {
			ps, ok := s.Properties[name]
			if !ok {
				if s.AdditionalProperties == nil {
					continue
				}
				ps = s.AdditionalProperties
			}
			if pv == nil && !slices.Contains(s.Required, name) && co.rejectsNull(ps) {
				delete(x, name)
				changed = true
				continue
			}
			if nv, c := co.value(pv, ps, depth+1); c {
				x[name] = nv
				changed = true
			}
		}
	case []any:
		for i, iv := range x {
			if nv, c := co.value(iv, itemSchema(s, i), depth+1); c {
				x[i] = nv
				changed = true
			}
		}
	}
	return v, changed
}

// rejectsNull reports whether a property schema declares types and null is
// not one of them.
func (co coercer) rejectsNull(s *jsonschema.Schema) bool {
	s = deref(co.cs, s)
	if s == nil || schemaTypes(s) == nil {
		return false
	}
	return !slices.Contains(schemaTypes(s), "null")
}

// convert turns a string into the value of a type in want, when v's own type
// is not in want.
func convert(v any, want []string) (any, bool) {
	str, ok := v.(string)
	if !ok || slices.Contains(want, "string") {
		return v, false
	}
	if slices.Contains(want, "boolean") {
		switch str {
		case "true":
			return true, true
		case "false":
			return false, true
		}
	}
	if slices.Contains(want, "integer") || slices.Contains(want, "number") {
		if n, ok := parseNumber(str, !slices.Contains(want, "number")); ok {
			return n, true
		}
	}
	if slices.Contains(want, "object") || slices.Contains(want, "array") {
		t := strings.TrimSpace(str)
		if len(t) >= 2 && ((t[0] == '{' && slices.Contains(want, "object")) || (t[0] == '[' && slices.Contains(want, "array"))) {
			if d, err := decodeJSON(strings.NewReader(t)); err == nil {
				return d, true
			}
		}
	}
	if slices.Contains(want, "null") && str == "null" {
		return nil, true
	}
	return v, false
}

// parseNumber accepts a string that is exactly a JSON number (surrounding
// spaces allowed); with integer, only integral values.
func parseNumber(s string, integer bool) (json.Number, bool) {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > 64 || !json.Valid([]byte(s)) || !isNumberLiteral(s) {
		return "", false
	}
	if integer {
		if _, err := strconv.ParseInt(s, 10, 64); err != nil {
			f, err := strconv.ParseFloat(s, 64)
			if err != nil || f != float64(int64(f)) {
				return "", false
			}
		}
	}
	return json.Number(s), true
}

func isNumberLiteral(s string) bool {
	c := s[0]
	return c == '-' || (c >= '0' && c <= '9')
}

// encodeInput marshals a coerced value back to compact JSON. Numbers are
// json.Number, so they keep their text.
func encodeInput(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}
