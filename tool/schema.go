package tool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	validator "github.com/santhosh-tekuri/jsonschema/v6"
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
	b, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("tool: marshal schema of %v: %w", t, err)
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

// ErrBadSchema is wrapped by the errors of [CheckSchema].
var ErrBadSchema = errors.New("bad input schema")

// CheckSchema reports whether raw is a usable input schema: valid JSON, an
// object schema ("type": "object"), and a schema the validator can compile.
func CheckSchema(raw json.RawMessage) error {
	_, err := compileSchema(raw)
	return err
}

// maxCompiledSchemas bounds [compiledSchemas]. A program's tools have a
// few hundred distinct schemas at most; the bound only protects a program
// that builds tools with fresh schemas forever (the memo is then emptied
// and refilled).
const maxCompiledSchemas = 4096

// compiledSchemas memoises compileSchema by the schema's bytes. Compiling
// (which validates the schema against its meta-schema) is most of what
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
	s   *validator.Schema
	err error
}

// compileSchema checks raw like [CheckSchema] and returns the compiled
// schema, from the memo when the same bytes were compiled before.
func compileSchema(raw json.RawMessage) (*validator.Schema, error) {
	compiledSchemas.mu.RLock()
	c, ok := compiledSchemas.m[string(raw)] // no allocation for the lookup
	compiledSchemas.mu.RUnlock()
	if ok {
		return c.s, c.err
	}
	c.s, c.err = compileSchemaNow(raw)
	compiledSchemas.mu.Lock()
	if len(compiledSchemas.m) >= maxCompiledSchemas {
		clear(compiledSchemas.m)
	}
	compiledSchemas.m[string(raw)] = c
	compiledSchemas.mu.Unlock()
	return c.s, c.err
}

// compileSchemaNow is compileSchema without the memo.
func compileSchemaNow(raw json.RawMessage) (*validator.Schema, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, fmt.Errorf("%w: empty", ErrBadSchema)
	}
	var top map[string]any
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadSchema, err)
	}
	if top["type"] != "object" {
		return nil, fmt.Errorf("%w: the top-level type must be \"object\", got %v", ErrBadSchema, top["type"])
	}
	doc, err := validator.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadSchema, err)
	}
	c := validator.NewCompiler()
	if err := c.AddResource("input.json", doc); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadSchema, err)
	}
	sch, err := c.Compile("input.json")
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadSchema, err)
	}
	return sch, nil
}

var validName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`) }) // compiled on first use, not at init

// ValidName reports whether name is a usable tool name: 1–64 ASCII letters,
// digits, underscores or hyphens (the intersection of what the model APIs
// accept).
func ValidName(name string) bool { return validName().MatchString(name) }

// EmptyObjectSchema is the input schema of a tool without input.
var EmptyObjectSchema = json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)
