package executor

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
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
	cs, err := tool.CompileSchemaIndex(raw)
	if err != nil {
		return &compiled{err: fmt.Errorf("input schema does not compile: %w", err)}
	}
	s := &inputSchema{cs: cs}
	if bytes.Contains(raw, []byte(`"format"`)) {
		s.formats, s.plain = true, plainSchemas(cs.Schema())
	}
	return &compiled{schema: s, emptyOK: s.Validate(map[string]any{}) == nil}
}

// inputSchema is a compiled input schema (google/jsonschema-go, through
// [tool.CompileSchema]): immutable, safe for concurrent use. Where its
// references point is the compiled schema's to say ([tool.CompiledSchema]).
type inputSchema struct {
	cs *tool.CompiledSchema
	// formats is set when the schema may hold a "format" (its bytes
	// name the keyword): only then does Validate walk for formats.
	formats bool
	// plain holds the subschemas with neither a format nor a reference
	// in them (with formats only): a walk for formats skips them.
	plain map[*jsonschema.Schema]bool
}

func (s *inputSchema) root() *jsonschema.Schema { return s.cs.Schema() }

// Validate checks v, a value as [decodeInput] returns it (numbers as
// json.Number). The validator reads a json.Number as a string, so it
// checks a copy with plain numbers. It reads "format" as an annotation;
// Gantry asserts formats on tool inputs, so an input the validator
// accepts is then walked for them ([formatsOnly]). The error is a
// *validationError, which keeps v for [fieldErrors].
func (s *inputSchema) Validate(v any) error {
	if err := s.cs.Validate(plainNumbers(v)); err != nil {
		return &validationError{instance: v, err: err}
	}
	if s.formats {
		x := &explainer{in: s, mode: formatsOnly}
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
	x := &explainer{in: s}
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

// plainSchemas lists the subschemas of root with neither a format nor a
// reference in them, nor below them: a walk for formats skips them.
func plainSchemas(root *jsonschema.Schema) map[*jsonschema.Schema]bool {
	plain := map[*jsonschema.Schema]bool{}
	// visit reports whether a format may apply below s (a format, or a
	// reference, which may lead to one).
	var visit func(s *jsonschema.Schema, depth int) bool
	visit = func(s *jsonschema.Schema, depth int) bool {
		if depth > maxExplainDepth*4 {
			return true
		}
		formats := s.Format != "" || s.Ref != "" || s.DynamicRef != ""
		for sub := range tool.Subschemas(s) {
			formats = visit(sub, depth+1) || formats
		}
		if !formats {
			plain[s] = true
		}
		return formats
	}
	visit(root, 0)
	return plain
}

// deref follows $ref from s while s says nothing of its type.
func deref(cs *tool.CompiledSchema, s *jsonschema.Schema) *jsonschema.Schema {
	for i := 0; s != nil && s.Ref != "" && schemaTypes(s) == nil && i < 32; i++ {
		s = cs.Ref(s)
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
