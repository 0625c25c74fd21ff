package executor

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/gantry-dev/gantry/tool"
)

// maxCachedSchemas bounds the compiled-schema cache. Real pools hold a few
// hundred tools at most; the bound only protects against a program that
// builds tools with fresh schemas forever (the cache is then emptied and
// refilled).
const maxCachedSchemas = 4096

// schemaCache holds compiled input schemas keyed by the schema's bytes, so
// that each distinct schema is compiled once however many tool values share
// it, and a tool whose Spec returns a fresh pointer each time still hits the
// cache. It is safe for concurrent use.
type schemaCache struct {
	mu sync.RWMutex
	m  map[string]*compiled
}

// compiled is one compiled schema, or the error compiling it gave.
type compiled struct {
	schema *inputSchema
	err    error
	// emptyOK records that the empty object is valid, the fast path for
	// tools without input.
	emptyOK bool
}

// sharedSchemas is the compiled-schema cache of every executor of the
// process: a compiled schema is immutable and safe for concurrent use, and
// sessions built from one registry send the same schemas, so thousands of
// sessions compile each schema once. It is a memo of a pure function (the
// bytes decide the result), bounded by maxCachedSchemas.
var sharedSchemas = newSchemaCache()

func newSchemaCache() *schemaCache { return &schemaCache{m: make(map[string]*compiled)} }

func (c *schemaCache) get(raw json.RawMessage) *compiled {
	c.mu.RLock()
	e := c.m[string(raw)] // no allocation for the lookup
	c.mu.RUnlock()
	if e != nil {
		return e
	}
	e = compileSchema(raw)
	c.mu.Lock()
	if old := c.m[string(raw)]; old != nil {
		e = old
	} else {
		if len(c.m) >= maxCachedSchemas {
			clear(c.m)
		}
		c.m[string(raw)] = e
	}
	c.mu.Unlock()
	return e
}

func compileSchema(raw json.RawMessage) *compiled {
	if len(bytes.TrimSpace(raw)) == 0 {
		return &compiled{err: errors.New("empty input schema")}
	}
	rs, err := tool.CompileSchema(raw)
	if err != nil {
		return &compiled{err: fmt.Errorf("input schema does not compile: %w", err)}
	}
	s := &inputSchema{rs: rs, refs: newRefIndex(rs.Schema()), formats: bytes.Contains(raw, []byte(`"format"`))}
	return &compiled{schema: s, emptyOK: s.Validate(map[string]any{}) == nil}
}

// inputSchema is a compiled input schema (google/jsonschema-go, through
// [tool.CompileSchema]): immutable, safe for concurrent use.
type inputSchema struct {
	rs   *jsonschema.Resolved
	refs *refIndex
	// formats is set when the schema may hold a "format" (its bytes
	// name the keyword): only then does Validate walk for formats.
	formats bool
}

func (s *inputSchema) root() *jsonschema.Schema { return s.rs.Schema() }

// Validate checks v, a value as [decodeInput] returns it (numbers as
// json.Number). The validator reads a json.Number as a string, so it
// checks a copy with plain numbers. It reads "format" as an annotation;
// Gantry asserts formats on tool inputs, so an input the validator
// accepts is then walked for them ([formatsOnly]). The error is a
// *validationError, which keeps v for [fieldErrors].
func (s *inputSchema) Validate(v any) error {
	if err := s.rs.Validate(plainNumbers(v)); err != nil {
		return &validationError{instance: v, err: err}
	}
	if s.formats {
		x := &explainer{refs: s.refs, mode: formatsOnly}
		x.walk(v, s.root(), nil, 0)
		if len(x.out) > 0 {
			return &validationError{instance: v, err: errors.New(x.out[0].String())}
		}
	}
	return nil
}

// validationError is a failed validation and the value that failed.
type validationError struct {
	instance any
	err      error
}

func (e *validationError) Error() string { return e.err.Error() }
func (e *validationError) Unwrap() error { return e.err }

// plainNumbers returns v with every json.Number as an int64 (when it is
// one) or a float64; maps and slices holding numbers are copied, v is not
// modified.
func plainNumbers(v any) any {
	nv, _ := plainNumbersOf(v)
	return nv
}

// plainNumbersOf is plainNumbers that also reports whether anything
// changed.
func plainNumbersOf(v any) (any, bool) {
	switch x := v.(type) {
	case json.Number:
		if n, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return n, true
		}
		f, _ := strconv.ParseFloat(string(x), 64) // ±Inf beyond float64: still a number
		return f, true
	case map[string]any:
		var out map[string]any
		for k, e := range x {
			if ne, changed := plainNumbersOf(e); changed {
				if out == nil {
					out = maps.Clone(x)
				}
				out[k] = ne
			}
		}
		if out != nil {
			return out, true
		}
	case []any:
		var out []any
		for i, e := range x {
			if ne, changed := plainNumbersOf(e); changed {
				if out == nil {
					out = slices.Clone(x)
				}
				out[i] = ne
			}
		}
		if out != nil {
			return out, true
		}
	}
	return v, false
}

// FieldError is one schema violation of an input.
type FieldError struct {
	// Path is the JSON pointer of the offending value ("" is the whole
	// input, "/todos/0/status" a nested field).
	Path string `json:"path"`
	// Message says what is wrong ("got string, want boolean", "missing
	// property 'file_path'").
	Message string `json:"message"`
	// Expected lists the JSON types the schema wants at Path, if it says.
	Expected []string `json:"expected,omitempty"`
}

func (f FieldError) String() string {
	var b strings.Builder
	if f.Path == "" {
		b.WriteString("(input)")
	} else {
		b.WriteString(f.Path)
	}
	b.WriteString(": ")
	b.WriteString(f.Message)
	if len(f.Expected) > 0 && !strings.Contains(f.Message, "want ") {
		b.WriteString(" (expected ")
		b.WriteString(strings.Join(f.Expected, " or "))
		b.WriteString(")")
	}
	return b.String()
}

// InputError is the error of an input that does not match its tool's
// schema, with every violation found.
type InputError struct {
	Tool   string
	Fields []FieldError
	// Syntax is set when the input is not JSON at all.
	Syntax error
}

func (e *InputError) Error() string {
	var b strings.Builder
	if e.Syntax != nil {
		fmt.Fprintf(&b, "Invalid input for tool %s: the input is not a JSON object (%v). Send the arguments as one JSON object matching the tool's input schema.", e.Tool, e.Syntax)
		return b.String()
	}
	fmt.Fprintf(&b, "Invalid input for tool %s (%d error", e.Tool, len(e.Fields))
	if len(e.Fields) != 1 {
		b.WriteString("s")
	}
	b.WriteString("):")
	for _, f := range e.Fields {
		b.WriteString("\n- ")
		b.WriteString(f.String())
	}
	b.WriteString("\nFix these fields and call the tool again.")
	return b.String()
}

// decodeInput parses an input the way the executor keeps it: numbers as
// json.Number, so large integers survive coercion and re-encoding.
func decodeInput(raw json.RawMessage) (any, error) {
	if len(raw) == 0 {
		return map[string]any{}, nil
	}
	return decodeJSON(bytes.NewReader(raw))
}

// decodeJSON decodes exactly one JSON value with json.Number numbers;
// anything after it but white space is an error.
func decodeJSON(r io.Reader) (any, error) {
	dec := json.NewDecoder(r)
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("invalid character after top-level value")
	}
	return v, nil
}

// fieldErrors lists the violations of a failed validation, sorted by path
// then message, without duplicates: the validator decides whether an input
// is valid and stops at its first violation, so [explain] walks the input
// to name them all. A violation the walk cannot name (a keyword it does not
// explain) is reported with the validator's own message.
func fieldErrors(s *inputSchema, err error) []FieldError {
	var ve *validationError
	if !errors.As(err, &ve) {
		return []FieldError{{Message: err.Error()}}
	}
	x := &explainer{refs: s.refs}
	x.walk(ve.instance, s.root(), nil, 0)
	out := x.out
	if len(out) == 0 {
		out = []FieldError{{Message: validatorMessage(ve.err)}}
	}
	slices.SortFunc(out, func(a, b FieldError) int {
		if c := strings.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		return strings.Compare(a.Message, b.Message)
	})
	return slices.CompactFunc(out, func(a, b FieldError) bool { return a.Path == b.Path && a.Message == b.Message })
}

// validatorMessage is the validator's error without its schema-location
// prefixes ("validating root: validating /properties/a: …").
func validatorMessage(err error) string {
	msg := err.Error()
	for {
		rest, ok := strings.CutPrefix(msg, "validating ")
		if !ok {
			return msg
		}
		_, after, ok := strings.Cut(rest, ": ")
		if !ok {
			return msg
		}
		msg = after
	}
}

func jsonPointer(tokens []string) string {
	if len(tokens) == 0 {
		return ""
	}
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		t = strings.ReplaceAll(t, "~", "~0")
		b.WriteString(strings.ReplaceAll(t, "/", "~1"))
	}
	return b.String()
}

// refIndex resolves the references of a compiled schema for the walks:
// JSON pointers, anchors ($anchor, $dynamicAnchor — older drafts' "$id":
// "#name" arrives translated to $anchor) and the $ids of embedded
// resources. The validator resolves references itself (exactly, with base
// URIs); the walks' resolution is by name, which for the schemas tools
// publish is the same.
type refIndex struct {
	root    *jsonschema.Schema
	anchors map[string]*jsonschema.Schema
	ids     map[string]*jsonschema.Schema
	// plain holds the subschemas with neither a format nor a reference
	// in them: a walk for formats skips them.
	plain map[*jsonschema.Schema]bool
}

func newRefIndex(root *jsonschema.Schema) *refIndex {
	r := &refIndex{root: root, plain: map[*jsonschema.Schema]bool{}}
	// visit indexes s and reports whether a format may apply below it (a
	// format, or a reference, which may lead to one).
	var visit func(s *jsonschema.Schema, depth int) bool
	visit = func(s *jsonschema.Schema, depth int) bool {
		if s == nil {
			return false
		}
		if depth > maxExplainDepth*4 {
			return true
		}
		for _, a := range []string{s.Anchor, s.DynamicAnchor} {
			if a != "" {
				if r.anchors == nil {
					r.anchors = map[string]*jsonschema.Schema{}
				}
				if _, dup := r.anchors[a]; !dup {
					r.anchors[a] = s
				}
			}
		}
		if s.ID != "" && depth > 0 {
			if r.ids == nil {
				r.ids = map[string]*jsonschema.Schema{}
			}
			r.ids[s.ID] = s
		}
		formats := s.Format != "" || s.Ref != "" || s.DynamicRef != ""
		for _, m := range []map[string]*jsonschema.Schema{s.Defs, s.Definitions, s.Properties, s.PatternProperties, s.DependentSchemas} {
			for _, sub := range m {
				formats = visit(sub, depth+1) || formats
			}
		}
		for _, l := range [][]*jsonschema.Schema{s.PrefixItems, s.ItemsArray, s.AllOf, s.AnyOf, s.OneOf} {
			for _, sub := range l {
				formats = visit(sub, depth+1) || formats
			}
		}
		for _, sub := range []*jsonschema.Schema{s.Items, s.AdditionalItems, s.Contains, s.UnevaluatedItems, s.AdditionalProperties,
			s.PropertyNames, s.UnevaluatedProperties, s.Not, s.If, s.Then, s.Else, s.ContentSchema} {
			formats = visit(sub, depth+1) || formats
		}
		if !formats {
			r.plain[s] = true
		}
		return formats
	}
	visit(root, 0)
	return r
}

// resolve resolves ref; nil when it cannot (the walks read nil as
// "nothing known").
func (r *refIndex) resolve(ref string) *jsonschema.Schema {
	doc, frag, _ := strings.Cut(ref, "#")
	base := r.root
	if doc != "" && doc != r.root.ID {
		base = r.ids[doc]
		if base == nil {
			for id, s := range r.ids { // an $id written relative to an absolute base
				if strings.HasSuffix(id, "/"+doc) {
					base = s
					break
				}
			}
		}
		if base == nil {
			return nil
		}
	}
	if frag != "" && frag[0] != '/' {
		return r.anchors[frag]
	}
	return resolveRef(base, "#"+frag)
}

// deref follows $ref from s while s says nothing of its type.
func (r *refIndex) deref(s *jsonschema.Schema) *jsonschema.Schema {
	for i := 0; s != nil && s.Ref != "" && schemaTypes(s) == nil && i < 32; i++ {
		s = r.resolve(s.Ref)
	}
	return s
}

// itemSchema is the schema of item i of an array (prefixItems, a draft-07
// items array, then items), or nil.
func itemSchema(s *jsonschema.Schema, i int) *jsonschema.Schema {
	switch {
	case i < len(s.PrefixItems):
		return s.PrefixItems[i]
	case s.ItemsArray != nil:
		if i < len(s.ItemsArray) {
			return s.ItemsArray[i]
		}
		return s.AdditionalItems
	}
	return s.Items
}

// schemaTypes is the type keyword of s as a list (nil when absent).
func schemaTypes(s *jsonschema.Schema) []string {
	if s.Type != "" {
		return []string{s.Type}
	}
	return s.Types
}

// resolveRef resolves a reference within root: "#" or a JSON pointer
// fragment ("#/$defs/x"). Other references give nil ([refIndex.resolve]
// resolves those).
func resolveRef(root *jsonschema.Schema, ref string) *jsonschema.Schema {
	frag, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil
	}
	if frag == "" {
		return root
	}
	if frag[0] != '/' {
		return nil
	}
	s := root
	toks := strings.Split(frag[1:], "/")
	for i := 0; i < len(toks) && s != nil; i++ {
		next := func() (string, bool) {
			if i+1 >= len(toks) {
				return "", false
			}
			i++
			return unescapePointer(toks[i]), true
		}
		index := func(l []*jsonschema.Schema) *jsonschema.Schema {
			t, ok := next()
			n, err := strconv.Atoi(t)
			if !ok || err != nil || n < 0 || n >= len(l) {
				return nil
			}
			return l[n]
		}
		key := func(m map[string]*jsonschema.Schema) *jsonschema.Schema {
			t, ok := next()
			if !ok {
				return nil
			}
			return m[t]
		}
		switch unescapePointer(toks[i]) {
		case "$defs":
			s = key(s.Defs)
		case "definitions":
			s = key(s.Definitions)
		case "properties":
			s = key(s.Properties)
		case "patternProperties":
			s = key(s.PatternProperties)
		case "dependentSchemas":
			s = key(s.DependentSchemas)
		case "items":
			if s.ItemsArray != nil {
				s = index(s.ItemsArray)
			} else {
				s = s.Items
			}
		case "prefixItems":
			s = index(s.PrefixItems)
		case "allOf":
			s = index(s.AllOf)
		case "anyOf":
			s = index(s.AnyOf)
		case "oneOf":
			s = index(s.OneOf)
		case "additionalProperties":
			s = s.AdditionalProperties
		case "additionalItems":
			s = s.AdditionalItems
		case "not":
			s = s.Not
		case "if":
			s = s.If
		case "then":
			s = s.Then
		case "else":
			s = s.Else
		case "contains":
			s = s.Contains
		case "propertyNames":
			s = s.PropertyNames
		default:
			return nil
		}
	}
	return s
}

// unescapePointer decodes one JSON pointer token of a URI fragment.
func unescapePointer(t string) string {
	if u, err := url.PathUnescape(t); err == nil {
		t = u
	}
	return strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
}
