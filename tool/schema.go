package tool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
)

// InferSchema returns the JSON Schema of T, which must be a struct (or a
// pointer to one). The rules:
//
//   - Property names come from `json` tags (a field tagged "-" is left out).
//   - A field is required unless its json tag has omitempty or omitzero.
//   - The `jsonschema:"…"` tag is the property's description.
//   - The `enum:"a,b,c"` tag restricts a string, integer or number property
//     (or the items of a slice of them) to the listed values.
//   - Nested structs become nested object schemas that disallow extra
//     properties; slices and arrays become arrays; maps with string keys
//     become objects with additionalProperties; pointers are followed (a
//     pointer field is not nullable in the schema: leave it out instead).
//   - time.Time is a string with format date-time.
//   - Functions, channels, complex numbers and maps with non-string keys are
//     an error, as are recursive types.
func InferSchema[T any]() (json.RawMessage, error) {
	return InferSchemaType(reflect.TypeFor[T]())
}

// InferSchemaType is [InferSchema] for a reflect.Type. The result is
// computed once per type (tools built per session infer nothing again);
// each call returns its own copy.
func InferSchemaType(t reflect.Type) (json.RawMessage, error) {
	if b, ok := inferred.Load(t); ok {
		return bytes.Clone(b.(json.RawMessage)), nil
	}
	s, err := inferSchema(t)
	if err != nil {
		return nil, err
	}
	b, ok := appendInferred(nil, s)
	if !ok {
		if b, err = json.Marshal(s); err != nil {
			return nil, fmt.Errorf("tool: marshal schema of %v: %w", t, err)
		}
	}
	inferred.Store(t, json.RawMessage(b))
	return bytes.Clone(b), nil
}

// inferred memoises InferSchemaType by type: the schema is a pure function
// of the type, and the set of input types of a program is fixed.
var inferred sync.Map // reflect.Type → json.RawMessage

func inferSchema(t reflect.Type) (*jsonschema.Schema, error) {
	base := t
	for base.Kind() == reflect.Pointer {
		base = base.Elem()
	}
	if base.Kind() != reflect.Struct {
		return nil, fmt.Errorf("tool: input type %v is not a struct: a tool's input is a JSON object", t)
	}
	opts := &jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[time.Time](): {Type: "string", Format: "date-time"},
	}}
	s, err := jsonschema.ForType(base, opts)
	if err != nil {
		return nil, fmt.Errorf("tool: infer schema of %v: %w", t, err)
	}
	if err := applyTags(base, s, map[reflect.Type]bool{}); err != nil {
		return nil, fmt.Errorf("tool: infer schema of %v: %w", t, err)
	}
	dropNull(s)
	return s, nil
}

// applyTags walks t alongside its schema and applies the tags jsonschema-go
// does not know (enum).
func applyTags(t reflect.Type, s *jsonschema.Schema, seen map[reflect.Type]bool) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if s == nil {
		return nil
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return applyTags(t.Elem(), s.Items, seen)
	case reflect.Map:
		return applyTags(t.Elem(), s.AdditionalProperties, seen)
	case reflect.Struct:
		if t == reflect.TypeFor[time.Time]() || seen[t] {
			return nil
		}
		seen[t] = true
		defer delete(seen, t)
		for _, f := range reflect.VisibleFields(t) {
			if !f.IsExported() {
				continue
			}
			name, ok := jsonName(f)
			if !ok {
				continue
			}
			ps := s.Properties[name]
			if ps == nil {
				continue
			}
			if tag, ok := f.Tag.Lookup("enum"); ok {
				if err := setEnum(f, ps, tag); err != nil {
					return err
				}
			}
			if err := applyTags(f.Type, ps, seen); err != nil {
				return err
			}
		}
	}
	return nil
}

func jsonName(f reflect.StructField) (string, bool) {
	tag := f.Tag.Get("json")
	if tag == "-" {
		return "", false
	}
	name, _, _ := strings.Cut(tag, ",")
	if f.Anonymous && name == "" {
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Struct {
			return "", false // promoted fields follow
		}
	}
	if name == "" {
		name = f.Name
	}
	return name, true
}

func setEnum(f reflect.StructField, s *jsonschema.Schema, tag string) error {
	target := s
	ft := f.Type
	for ft.Kind() == reflect.Pointer {
		ft = ft.Elem()
	}
	if (ft.Kind() == reflect.Slice || ft.Kind() == reflect.Array) && s.Items != nil {
		target, ft = s.Items, ft.Elem()
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
	}
	var vals []any
	for _, v := range strings.Split(tag, ",") {
		v = strings.TrimSpace(v)
		switch ft.Kind() {
		case reflect.String:
			vals = append(vals, v)
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			n, err := strconv.ParseInt(v, 10, ft.Bits())
			if err != nil {
				return fmt.Errorf("field %s: enum value %q is not an integer of %v", f.Name, v, ft)
			}
			vals = append(vals, n)
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			n, err := strconv.ParseUint(v, 10, ft.Bits())
			if err != nil {
				return fmt.Errorf("field %s: enum value %q is not an integer of %v", f.Name, v, ft)
			}
			vals = append(vals, n)
		case reflect.Float32, reflect.Float64:
			n, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return fmt.Errorf("field %s: enum value %q is not a number", f.Name, v)
			}
			vals = append(vals, n)
		default:
			return fmt.Errorf("field %s: enum tag on a %v field", f.Name, ft)
		}
	}
	if len(vals) == 0 || tag == "" {
		return fmt.Errorf("field %s: empty enum tag", f.Name)
	}
	target.Enum = vals
	return nil
}

// dropNull turns the ["null", T] types jsonschema-go gives pointers into T:
// models should leave an optional field out rather than send null.
func dropNull(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if len(s.Types) == 2 && s.Types[0] == "null" {
		s.Type, s.Types = s.Types[1], nil
	}
	for _, p := range s.Properties {
		dropNull(p)
	}
	dropNull(s.Items)
	dropNull(s.AdditionalProperties)
}

// ErrBadSchema is wrapped by the errors of [CheckSchema] and [CompileSchema].
var ErrBadSchema = errors.New("bad input schema")

// CheckSchema reports whether raw is a usable input schema: valid JSON, an
// object schema ("type": "object"), and a schema [CompileSchema] compiles.
func CheckSchema(raw json.RawMessage) error {
	_, err := compileSchema(raw)
	return err
}

// maxCompiledSchemas bounds [compiledSchemas]. A program's tools have a
// few hundred distinct schemas at most; the bound only protects a program
// that builds tools with fresh schemas forever (the memo is then emptied
// and refilled).
const maxCompiledSchemas = 4096

// compiledSchemas memoises CompileSchema by the schema's bytes. Compiling
// (which checks the schema and resolves its references) is most of what
// building a tool costs; tools built per session or per workspace from the
// same definition compile the same bytes, so each distinct schema is
// compiled once per process. It is a memo of a pure function keyed by its
// whole input, bounded, and a compiled schema is immutable and safe for
// concurrent use: nothing of it is visible to callers but the time saved.
var compiledSchemas = struct {
	mu sync.RWMutex
	m  map[string]compiledSchema
}{m: make(map[string]compiledSchema)}

type compiledSchema struct {
	s   *CompiledSchema
	err error
	// topErr is set when the schema compiles but is not an input schema
	// (its top-level type is not "object"): see [CheckSchema].
	topErr error
}

// compileSchema checks raw like [CheckSchema] and returns the compiled
// schema.
func compileSchema(raw json.RawMessage) (*jsonschema.Resolved, error) {
	c := compileMemo(raw)
	if c.err != nil {
		return nil, c.err
	}
	if c.topErr != nil {
		return nil, c.topErr
	}
	return c.s.rs, nil
}

// CompileSchemaIndex is [CompileSchema] with the index of where each
// reference of the compiled schema points ([CompiledSchema.Ref],
// [CompiledSchema.DynamicRef]): the one resolution of references, which
// the executor's walks follow. It comes from the same memo. Errors wrap
// [ErrBadSchema].
func CompileSchemaIndex(raw json.RawMessage) (*CompiledSchema, error) {
	c := compileMemo(raw)
	return c.s, c.err
}

// CompileSchema compiles a JSON Schema for validation. The dialect is the
// one "$schema" names — drafts 04, 06, 07, 2019-09 and 2020-12 — or
// 2020-12 without "$schema"; another "$schema" is an error. The schema is
// first translated to the 2020-12 form of what it means in its own dialect
// (see docs/tool-schemas.md: draft 04's boolean exclusive bounds and "id",
// "$ref" making its siblings ignored before 2019-09, array "items",
// "dependencies", keywords a dialect does not have), so the compiled
// schema is always 2020-12, and [jsonschema.Resolved.Schema] returns the
// translation. CompileSchema checks what the validator relies on — JSON
// that decodes into a schema, known type names, non-negative bounds,
// patterns that compile — and that every reference ($ref, $dynamicRef)
// resolves within the document (by JSON pointer, $anchor or the $id of an
// embedded resource): a reference to anything else is an error, since a
// tool runtime never loads a schema a tool names, and so is a reference
// cycle that never descends into the input. It returns the resolved
// schema, immutable and safe for concurrent use, from the memo when the
// same bytes were compiled before. The validator is google/jsonschema-go,
// whose package initialisation is cheap (see docs/scale.md); it validates
// values as encoding/json decodes them into any (numbers as float64) or as
// int64 and float64, and reads a [json.Number] as a string. It does not
// assert "format"; the executor does (see executor.ValidateInput). Errors
// wrap [ErrBadSchema].
func CompileSchema(raw json.RawMessage) (*jsonschema.Resolved, error) {
	c := compileMemo(raw)
	if c.err != nil {
		return nil, c.err
	}
	return c.s.rs, nil
}

// compileMemo is CompileSchema's memo lookup.
func compileMemo(raw json.RawMessage) compiledSchema {
	compiledSchemas.mu.RLock()
	c, ok := compiledSchemas.m[string(raw)] // no allocation for the lookup
	compiledSchemas.mu.RUnlock()
	if ok {
		return c
	}
	c.s, c.err = compileSchemaNow(raw)
	if c.err == nil {
		c.topErr = checkTopLevel(raw)
	}
	compiledSchemas.mu.Lock()
	if len(compiledSchemas.m) >= maxCompiledSchemas {
		clear(compiledSchemas.m)
	}
	compiledSchemas.m[string(raw)] = c
	compiledSchemas.mu.Unlock()
	return c
}

// checkTopLevel checks that an input schema is an object schema: its own
// top-level "type" is "object", as the model APIs want it (the schema is
// sent as it is, not as translated). The key is matched exactly: a struct
// field would also take "tYpe", which means nothing.
func checkTopLevel(raw json.RawMessage) error {
	var top map[string]json.RawMessage
	var typ any
	if err := json.Unmarshal(raw, &top); err == nil {
		_ = json.Unmarshal(top["type"], &typ)
	}
	if typ != "object" {
		return fmt.Errorf("%w: the top-level type must be \"object\", got %v", ErrBadSchema, typ)
	}
	return nil
}

// compileSchemaNow is CompileSchema without the memo.
func compileSchemaNow(raw json.RawMessage) (*CompiledSchema, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, fmt.Errorf("%w: empty", ErrBadSchema)
	}
	tr, err := translateSchema(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadSchema, err)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(tr, &s); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadSchema, err)
	}
	if err := checkKeywords(&s); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadSchema, err)
	}
	// The index comes before the validator's resolution: it refuses a
	// reference leaving the document (which the validator would try to
	// load) and a reference cycle, with Gantry's messages.
	idx, err := indexSchema(&s)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadSchema, err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadSchema, err)
	}
	return &CompiledSchema{rs: rs, idx: idx}, nil
}

// checkKeywords checks, in s and its subschemas, what the meta-schema says
// of the keywords jsonschema-go reads without checking: type names, bounds
// that must not be negative, required names listed once, a non-empty enum.
func checkKeywords(s *jsonschema.Schema) error {
	if s == nil {
		return nil
	}
	if err := checkOwnKeywords(s); err != nil {
		return err
	}
	for sub := range Subschemas(s) {
		if err := checkKeywords(sub); err != nil {
			return err
		}
	}
	return nil
}

func checkOwnKeywords(s *jsonschema.Schema) error {
	types := s.Types
	if s.Type != "" {
		types = []string{s.Type}
	}
	for i, t := range types {
		switch t {
		case "null", "boolean", "object", "array", "number", "string", "integer":
		default:
			return fmt.Errorf("type %q is not a JSON Schema type", t)
		}
		if slices.Contains(types[:i], t) {
			return fmt.Errorf("type %q is listed twice", t)
		}
	}
	for _, b := range []struct {
		name string
		n    *int
	}{{"minLength", s.MinLength}, {"maxLength", s.MaxLength}, {"minItems", s.MinItems}, {"maxItems", s.MaxItems},
		{"minProperties", s.MinProperties}, {"maxProperties", s.MaxProperties}, {"minContains", s.MinContains}, {"maxContains", s.MaxContains}} {
		if b.n != nil && *b.n < 0 {
			return fmt.Errorf("%s is negative", b.name)
		}
	}
	if s.MultipleOf != nil && *s.MultipleOf <= 0 {
		return errors.New("multipleOf must be greater than 0")
	}
	for i, r := range s.Required {
		if slices.Contains(s.Required[:i], r) {
			return fmt.Errorf("required lists %q twice", r)
		}
	}
	if s.Enum != nil && len(s.Enum) == 0 {
		return errors.New("enum is empty")
	}
	return nil
}

// validName is compiled on first use, not at init. The length bound is
// checked apart: a counted repetition ({1,64}) compiles to 64 nested
// optional groups, a recursion deep enough to grow the stack several times.
var validName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-zA-Z0-9_-]+$`) })

// ValidName reports whether name is a usable tool name: 1–64 ASCII letters,
// digits, underscores or hyphens (the intersection of what the model APIs
// accept).
func ValidName(name string) bool { return len(name) <= 64 && validName().MatchString(name) }

// EmptyObjectSchema is the input schema of a tool without input.
var EmptyObjectSchema = json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)

// schemaChecker is implemented by [FuncTool], and so by the types that
// embed one: its input schema is the one its constructor checked, or
// made valid by construction.
type schemaChecker interface{ checkedInputSchema() json.RawMessage }

func (f *FuncTool) checkedInputSchema() json.RawMessage { return f.spec.InputSchema }

// SchemaChecked reports whether the input schema of t was checked when t
// was built: t was built by this package's constructors (or embeds such a
// tool) and its spec still has that tool's schema. A pool checks the
// schema of any other tool with [CheckSchema] when it takes the tool, so
// that a hand-written tool with a schema that does not compile is refused
// there, naming the tool, rather than failing every call.
func SchemaChecked(t Tool) bool {
	c, ok := t.(schemaChecker)
	if !ok {
		return false
	}
	own, got := c.checkedInputSchema(), t.Spec().InputSchema
	return len(own) == len(got) && (len(own) == 0 || &own[0] == &got[0])
}
