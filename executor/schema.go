package executor

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	validator "github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
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
	schema *validator.Schema
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
	doc, err := validator.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return &compiled{err: fmt.Errorf("input schema is not JSON: %w", err)}
	}
	c := validator.NewCompiler()
	if err := c.AddResource("input.json", doc); err != nil {
		return &compiled{err: fmt.Errorf("input schema: %w", err)}
	}
	s, err := c.Compile("input.json")
	if err != nil {
		return &compiled{err: fmt.Errorf("input schema does not compile: %w", err)}
	}
	return &compiled{schema: s, emptyOK: s.Validate(map[string]any{}) == nil}
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

var printer = message.NewPrinter(language.English)

// decodeInput parses an input the way the validator expects it (numbers as
// json.Number, so large integers survive).
func decodeInput(raw json.RawMessage) (any, error) {
	if len(raw) == 0 {
		return map[string]any{}, nil
	}
	return validator.UnmarshalJSON(bytes.NewReader(raw))
}

// fieldErrors flattens a validation error into its leaves, sorted by path
// then message, without duplicates.
func fieldErrors(root *validator.Schema, err error) []FieldError {
	var ve *validator.ValidationError
	if !errors.As(err, &ve) {
		return []FieldError{{Message: err.Error()}}
	}
	var out []FieldError
	var walk func(e *validator.ValidationError)
	walk = func(e *validator.ValidationError) {
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		if _, ok := e.ErrorKind.(*kind.Group); ok {
			return
		}
		switch k := e.ErrorKind.(type) {
		case *kind.Required:
			// One error per missing property, at its own path, with its
			// expected type.
			for _, name := range k.Missing {
				loc := append(slices.Clip(e.InstanceLocation), name)
				fe := FieldError{Path: jsonPointer(loc), Message: "required property is missing"}
				if s := schemaAt(root, loc); s != nil && s.Types != nil {
					fe.Expected = s.Types.ToStrings()
				}
				out = append(out, fe)
			}
			return
		case *kind.AdditionalProperties:
			for _, name := range k.Properties {
				loc := append(slices.Clip(e.InstanceLocation), name)
				out = append(out, FieldError{Path: jsonPointer(loc), Message: "unknown property (not in the schema; remove it)"})
			}
			return
		}
		fe := FieldError{Path: jsonPointer(e.InstanceLocation), Message: e.ErrorKind.LocalizedString(printer)}
		if s := schemaAt(root, e.InstanceLocation); s != nil && s.Types != nil {
			fe.Expected = s.Types.ToStrings()
		}
		out = append(out, fe)
	}
	walk(ve)
	slices.SortFunc(out, func(a, b FieldError) int {
		if c := strings.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		return strings.Compare(a.Message, b.Message)
	})
	return slices.CompactFunc(out, func(a, b FieldError) bool { return a.Path == b.Path && a.Message == b.Message })
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

// schemaAt follows properties and items from root along an instance
// location; nil when the location is not described by a plain subschema.
func schemaAt(s *validator.Schema, loc []string) *validator.Schema {
	for _, tok := range loc {
		s = deref(s)
		if s == nil {
			return nil
		}
		if p, ok := s.Properties[tok]; ok {
			s = p
			continue
		}
		if _, err := strconv.Atoi(tok); err == nil {
			if it := itemsSchema(s); it != nil {
				s = it
				continue
			}
		}
		if ap, ok := s.AdditionalProperties.(*validator.Schema); ok {
			s = ap
			continue
		}
		return nil
	}
	return deref(s)
}

func deref(s *validator.Schema) *validator.Schema {
	for i := 0; s != nil && s.Ref != nil && s.Types == nil && i < 32; i++ {
		s = s.Ref
	}
	return s
}

func itemsSchema(s *validator.Schema) *validator.Schema {
	if s.Items2020 != nil {
		return s.Items2020
	}
	if it, ok := s.Items.(*validator.Schema); ok {
		return it
	}
	return nil
}
