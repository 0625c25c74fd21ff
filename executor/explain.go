package executor

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/big"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
)

// maxExplainDepth bounds the recursion of [explainer.walk] through nested
// values and $ref chains.
const maxExplainDepth = 64

// explainer names the violations of an input the validator rejected, one
// [FieldError] per leaf: a wrong type, a missing or unknown property, a
// value outside an enum or a bound, a string not of its format. It reads
// the keywords models get wrong; the validator, not the walk, decides
// validity of everything but formats, so a keyword the walk does not read
// only makes an explanation shorter (see [fieldErrors]). Formats are the
// walk's own verdict (the validator reads them as annotations): see
// [formatsOnly].
type explainer struct {
	in   *inputSchema
	mode explainMode
	out  []FieldError
	// scope is the dynamic scope of the walk (the schema resources it
	// passed through), kept only for a schema with dynamic references
	// ([tool.CompiledSchema.Scoped]).
	scope []*jsonschema.Schema
}

// explainMode says what a walk reports.
type explainMode int

const (
	// explainAll reports structure and formats: an input the validator
	// or the format check rejected.
	explainAll explainMode = iota
	// structureOnly reports what the validator checks (no formats): a
	// walk deciding which alternative (anyOf, oneOf, if) a value is of.
	structureOnly
	// formatsOnly reports formats only, on an input the validator
	// accepted: where a format sits in alternatives, it counts in the
	// alternatives the value structurally matches. Formats under "not"
	// and in keywords the walk does not read are not asserted.
	formatsOnly
)

func (x *explainer) add(loc []string, s *jsonschema.Schema, msg string) {
	if x.mode == formatsOnly {
		return
	}
	x.record(loc, s, msg)
}

func (x *explainer) addFormat(loc []string, s *jsonschema.Schema, msg string) {
	if x.mode == structureOnly {
		return
	}
	x.record(loc, s, msg)
}

func (x *explainer) record(loc []string, s *jsonschema.Schema, msg string) {
	fe := FieldError{Path: jsonPointer(loc), Message: msg}
	if s != nil {
		fe.Expected = schemaTypes(s)
	}
	x.out = append(x.out, fe)
}

// clean reports whether a walk in mode finds nothing wrong with v
// against s.
func (x *explainer) clean(mode explainMode, v any, s *jsonschema.Schema, loc []string, depth int) bool {
	sub := &explainer{in: x.in, mode: mode, scope: x.scope}
	sub.walk(v, s, loc, depth)
	return len(sub.out) == 0
}

func (x *explainer) walk(v any, s *jsonschema.Schema, loc []string, depth int) {
	if s == nil || depth > maxExplainDepth || (x.mode == formatsOnly && x.in.plain[s]) {
		return
	}
	cs := x.in.cs
	if cs.Scoped() {
		n := len(x.scope)
		x.scope = cs.Enter(x.scope, s)
		defer func() { x.scope = x.scope[:n] }()
	}
	loc = slices.Clip(loc)
	if s.Ref != "" {
		x.walk(v, cs.Ref(s), loc, depth+1)
	}
	if s.DynamicRef != "" {
		x.walk(v, cs.DynamicRef(s, x.scope), loc, depth+1)
	}
	for _, sub := range s.AllOf {
		x.walk(v, sub, loc, depth+1)
	}
	if s.Not != nil && x.clean(structureOnly, v, s.Not, loc, depth+1) {
		if isFalseSchema(s) {
			x.add(loc, nil, "not allowed here")
		} else {
			x.add(loc, nil, "must not match the schema of \"not\"")
		}
		return
	}
	if len(s.AnyOf) > 0 {
		x.alternatives(v, s.AnyOf, "anyOf", loc, depth)
	}
	if len(s.OneOf) > 0 {
		x.alternatives(v, s.OneOf, "oneOf", loc, depth)
	}
	if s.If != nil {
		if x.clean(structureOnly, v, s.If, loc, depth+1) {
			x.walk(v, s.Then, loc, depth+1)
		} else {
			x.walk(v, s.Else, loc, depth+1)
		}
	}
	if types := schemaTypes(s); types != nil {
		got := valueType(v)
		if !slices.Contains(types, got) && !(got == "integer" && slices.Contains(types, "number")) {
			x.add(loc, s, fmt.Sprintf("got %s, want %s", got, strings.Join(types, " or ")))
			return
		}
	}
	if x.mode == formatsOnly { // the validator passed what follows; only strings' formats and what holds them remain
		switch val := v.(type) {
		case string:
			x.walkFormat(val, s, loc)
		case map[string]any:
			x.walkObject(val, s, loc, depth)
		case []any:
			x.walkArray(val, s, loc, depth)
		}
		return
	}
	if s.Enum != nil && !slices.ContainsFunc(s.Enum, func(e any) bool { return equalJSON(v, e) }) {
		vals := make([]string, len(s.Enum))
		for i, e := range s.Enum {
			vals[i] = compactJSON(e)
		}
		x.add(loc, s, "value must be one of "+strings.Join(vals, ", "))
	}
	if s.Const != nil && !equalJSON(v, *s.Const) {
		x.add(loc, s, "value must be "+compactJSON(*s.Const))
	}
	switch val := v.(type) {
	case string:
		x.walkString(val, s, loc)
	case json.Number:
		x.walkNumber(val, s, loc)
	case map[string]any:
		x.walkObject(val, s, loc, depth)
	case []any:
		x.walkArray(val, s, loc, depth)
	}
}

// alternatives explains anyOf or oneOf. A value matches an alternative
// when it holds structurally and its formats are valid; when it holds
// structurally for some but fails their formats, the format errors of the
// first such are reported (the likely intent: an optional date given as a
// bad date, not as null).
func (x *explainer) alternatives(v any, alts []*jsonschema.Schema, kw string, loc []string, depth int) {
	var candidate *jsonschema.Schema
	for _, b := range alts {
		if !x.clean(structureOnly, v, b, loc, depth+1) {
			continue
		}
		if x.mode == structureOnly || x.clean(explainAll, v, b, loc, depth+1) {
			return
		}
		if candidate == nil {
			candidate = b
		}
	}
	if candidate != nil {
		x.walk(v, candidate, loc, depth+1)
		return
	}
	x.add(loc, nil, fmt.Sprintf("matches none of the %d alternatives (%s)", len(alts), kw))
}

func (x *explainer) walkString(v string, s *jsonschema.Schema, loc []string) {
	n := utf8.RuneCountInString(v)
	if s.MinLength != nil && n < *s.MinLength {
		x.add(loc, s, fmt.Sprintf("length must be at least %d, got %d", *s.MinLength, n))
	}
	if s.MaxLength != nil && n > *s.MaxLength {
		x.add(loc, s, fmt.Sprintf("length must be at most %d, got %d", *s.MaxLength, n))
	}
	if s.Pattern != "" {
		if re, err := regexp.Compile(s.Pattern); err == nil && !re.MatchString(v) {
			x.add(loc, s, fmt.Sprintf("does not match the pattern %q", s.Pattern))
		}
	}
	x.walkFormat(v, s, loc)
}

// walkFormat checks the format of a string (not in structureOnly walks).
func (x *explainer) walkFormat(v string, s *jsonschema.Schema, loc []string) {
	if s.Format != "" && x.mode != structureOnly {
		if err := checkFormat(s.Format, v); err != nil {
			x.addFormat(loc, s, fmt.Sprintf("not a valid %s: %v", s.Format, err))
		}
	}
}

func (x *explainer) walkNumber(v json.Number, s *jsonschema.Schema, loc []string) {
	r, ok := new(big.Rat).SetString(string(v))
	if !ok {
		return
	}
	cmp := func(f *float64) int {
		b := new(big.Rat)
		b.SetFloat64(*f)
		return r.Cmp(b)
	}
	if s.Minimum != nil && cmp(s.Minimum) < 0 {
		x.add(loc, s, fmt.Sprintf("must be >= %v, got %s", *s.Minimum, v))
	}
	if s.Maximum != nil && cmp(s.Maximum) > 0 {
		x.add(loc, s, fmt.Sprintf("must be <= %v, got %s", *s.Maximum, v))
	}
	if s.ExclusiveMinimum != nil && cmp(s.ExclusiveMinimum) <= 0 {
		x.add(loc, s, fmt.Sprintf("must be > %v, got %s", *s.ExclusiveMinimum, v))
	}
	if s.ExclusiveMaximum != nil && cmp(s.ExclusiveMaximum) >= 0 {
		x.add(loc, s, fmt.Sprintf("must be < %v, got %s", *s.ExclusiveMaximum, v))
	}
	if s.MultipleOf != nil && *s.MultipleOf > 0 {
		m := new(big.Rat)
		m.SetFloat64(*s.MultipleOf)
		if !new(big.Rat).Quo(r, m).IsInt() {
			x.add(loc, s, fmt.Sprintf("must be a multiple of %v, got %s", *s.MultipleOf, v))
		}
	}
}

func (x *explainer) walkObject(v map[string]any, s *jsonschema.Schema, loc []string, depth int) {
	if s.PropertyNames != nil && x.mode != structureOnly && !x.in.plain[s.PropertyNames] {
		x.propertyNames(v, s.PropertyNames, loc, depth)
	}
	for _, name := range s.Required {
		if _, ok := v[name]; !ok {
			x.add(append(loc, name), deref(x.in.cs, s.Properties[name]), "required property is missing")
		}
	}
	for _, name := range slices.Sorted(maps.Keys(s.DependentRequired)) {
		if _, ok := v[name]; !ok {
			continue
		}
		for _, req := range s.DependentRequired[name] {
			if _, ok := v[req]; !ok {
				x.add(append(loc, req), deref(x.in.cs, s.Properties[req]), "required property is missing")
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(s.DependentSchemas)) {
		if _, ok := v[name]; ok {
			x.walk(v, s.DependentSchemas[name], loc, depth+1)
		}
	}
	if s.MinProperties != nil && len(v) < *s.MinProperties {
		x.add(loc, s, fmt.Sprintf("must have at least %d properties, got %d", *s.MinProperties, len(v)))
	}
	if s.MaxProperties != nil && len(v) > *s.MaxProperties {
		x.add(loc, s, fmt.Sprintf("must have at most %d properties, got %d", *s.MaxProperties, len(v)))
	}
	for name, pv := range v {
		ploc := append(loc, name)
		if ps, ok := s.Properties[name]; ok {
			x.walk(pv, ps, ploc, depth+1)
			continue
		}
		matched := false
		for pat, ps := range s.PatternProperties {
			if x.mode == formatsOnly && x.in.plain[ps] && (s.AdditionalProperties == nil || x.in.plain[s.AdditionalProperties]) {
				continue // no format either way: whether it matches does not matter to a walk for formats
			}
			if re, err := regexp.Compile(pat); err == nil && re.MatchString(name) {
				matched = true
				x.walk(pv, ps, ploc, depth+1)
			}
		}
		if matched || s.AdditionalProperties == nil {
			continue
		}
		if isFalseSchema(s.AdditionalProperties) {
			x.add(ploc, nil, "unknown property (not in the schema; remove it)")
			continue
		}
		x.walk(pv, s.AdditionalProperties, ploc, depth+1)
	}
}

func (x *explainer) walkArray(v []any, s *jsonschema.Schema, loc []string, depth int) {
	if s.Contains != nil && x.mode != structureOnly && !x.in.plain[s.Contains] {
		x.contains(v, s, loc, depth)
	}
	if s.MinItems != nil && len(v) < *s.MinItems {
		x.add(loc, s, fmt.Sprintf("must have at least %d items, got %d", *s.MinItems, len(v)))
	}
	if s.MaxItems != nil && len(v) > *s.MaxItems {
		x.add(loc, s, fmt.Sprintf("must have at most %d items, got %d", *s.MaxItems, len(v)))
	}
	if s.UniqueItems && x.mode != formatsOnly {
	dup:
		for i := range v {
			for j := range i {
				if equalJSON(v[i], v[j]) {
					x.add(loc, s, fmt.Sprintf("items %d and %d are equal (uniqueItems)", j, i))
					break dup
				}
			}
		}
	}
	for i, iv := range v {
		is := itemSchema(s, i)
		if is == nil {
			continue
		}
		iloc := append(loc, fmt.Sprint(i))
		if isFalseSchema(is) {
			x.add(iloc, nil, "no item allowed here")
			continue
		}
		x.walk(iv, is, iloc, depth+1)
	}
}

// formatErrors walks v against s for formats only (the value matches s
// structurally) and returns what it finds.
func (x *explainer) formatErrors(v any, s *jsonschema.Schema, loc []string, depth int) []FieldError {
	sub := &explainer{in: x.in, mode: formatsOnly, scope: x.scope}
	sub.walk(v, s, loc, depth)
	return sub.out
}

// propertyNames asserts the formats of "propertyNames" on the names of
// an object (the validator checks the rest of it): a name that is not of
// its format is reported at its property.
func (x *explainer) propertyNames(v map[string]any, names *jsonschema.Schema, loc []string, depth int) {
	for _, name := range slices.Sorted(maps.Keys(v)) {
		for _, fe := range x.formatErrors(name, names, nil, depth+1) {
			x.addFormat(append(loc, name), nil, fmt.Sprintf("property name %q is %s", name, fe.Message))
		}
	}
}

// contains asserts the formats of "contains": at least minContains items
// (1 by default) must match it with their formats valid. Formats can only
// make fewer items match, so maxContains needs nothing more. When too few
// match, the format errors of the items that match it but for their
// formats are reported; without any, the shortfall (a violation the
// validator found, explained).
func (x *explainer) contains(v []any, s *jsonschema.Schema, loc []string, depth int) {
	need := 1
	if s.MinContains != nil {
		need = *s.MinContains
	}
	if need <= 0 {
		return
	}
	matched := 0
	var bad []FieldError
	for i, iv := range v {
		iloc := append(loc, fmt.Sprint(i))
		if !x.clean(structureOnly, iv, s.Contains, iloc, depth+1) {
			continue
		}
		errs := x.formatErrors(iv, s.Contains, iloc, depth+1)
		if len(errs) == 0 {
			if matched++; matched >= need {
				return
			}
			continue
		}
		bad = append(bad, errs...)
	}
	for _, fe := range bad {
		fe.Message += fmt.Sprintf(` (at least %d item(s) must match "contains")`, need)
		fe.Expected = nil
		x.out = append(x.out, fe)
	}
	if len(bad) == 0 {
		x.add(loc, nil, fmt.Sprintf(`must contain at least %d item(s) matching "contains", got %d`, need, matched))
	}
}

// isFalseSchema reports whether s is the schema false ({"not": {}}).
func isFalseSchema(s *jsonschema.Schema) bool {
	return s != nil && s.Not != nil && reflect.DeepEqual(*s, jsonschema.Schema{Not: &jsonschema.Schema{}})
}

// valueType is the JSON Schema type of a decoded input value; a number
// with an integral value is an integer.
func valueType(v any) string {
	switch x := v.(type) {
	case json.Number:
		if r, ok := new(big.Rat).SetString(string(x)); ok && r.IsInt() {
			return "integer"
		}
		return "number"
	case float64:
		if x == float64(int64(x)) {
			return "integer"
		}
		return "number"
	case int64, int:
		return "integer"
	}
	return jsonTypeName(v)
}

// equalJSON reports whether two decoded JSON values are equal, comparing
// numbers by value (1 and 1.0 are equal).
func equalJSON(a, b any) bool {
	if ra, ok := numberRat(a); ok {
		rb, ok := numberRat(b)
		return ok && ra.Cmp(rb) == 0
	}
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !equalJSON(xv, yv) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		return ok && slices.EqualFunc(x, y, equalJSON)
	}
	return a == b
}

func numberRat(v any) (*big.Rat, bool) {
	switch x := v.(type) {
	case json.Number:
		return new(big.Rat).SetString(string(x))
	case float64:
		r := new(big.Rat)
		if r.SetFloat64(x) == nil {
			return nil, false
		}
		return r, true
	case int64:
		return new(big.Rat).SetInt64(x), true
	case int:
		return new(big.Rat).SetInt64(int64(x)), true
	}
	return nil, false
}

func compactJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
