package tool

import (
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
)

// appendInferred appends the JSON of s byte for byte as
// jsonschema.Schema.MarshalJSON writes it (the same keyword order, property
// order, escaping and true/false shorthands), for the keywords inference
// sets: type, properties, items, description, enum, minimum, maximum,
// minItems, maxItems, required, additionalProperties, not and format. It
// reports false, having appended nothing, if s or a subschema uses any
// other keyword; the caller then marshals s with encoding/json.
//
// Marshalling through the library allocates much more (it copies the
// schema struct at every level and marshals each property on its own),
// for every tool schema, which every process that builds the built-in
// tools pays at start-up.
func appendInferred(b []byte, s *jsonschema.Schema) ([]byte, bool) {
	start := len(b)
	out, ok := appendSchema(b, s)
	if !ok {
		return b[:start], false
	}
	return out, true
}

func appendSchema(b []byte, s *jsonschema.Schema) ([]byte, bool) {
	if s == nil {
		return append(b, "null"...), true
	}
	if !inferredOnly(s) {
		return b, false
	}
	start := len(b)
	b = append(b, '{')
	n := 0
	key := func(k string) {
		if n > 0 {
			b = append(b, ',')
		}
		n++
		b = append(b, '"')
		b = append(b, k...)
		b = append(b, '"', ':')
	}
	switch {
	case s.Type != "":
		key("type")
		b = appendString(b, s.Type)
	case s.Types != nil:
		key("type")
		b = appendStrings(b, s.Types)
	}
	var ok bool
	if s.Properties != nil {
		key("properties")
		if b, ok = appendProperties(b, s); !ok {
			return b, false
		}
	}
	if s.Items != nil {
		key("items")
		if b, ok = appendSchema(b, s.Items); !ok {
			return b, false
		}
	}
	if s.Description != "" {
		key("description")
		b = appendString(b, s.Description)
	}
	if len(s.Enum) > 0 {
		key("enum")
		b = append(b, '[')
		for i, v := range s.Enum {
			if i > 0 {
				b = append(b, ',')
			}
			switch v := v.(type) {
			case string:
				b = appendString(b, v)
			case int64:
				b = strconv.AppendInt(b, v, 10)
			case uint64:
				b = strconv.AppendUint(b, v, 10)
			default:
				j, err := json.Marshal(v)
				if err != nil {
					return b, false
				}
				b = append(b, j...)
			}
		}
		b = append(b, ']')
	}
	for _, f := range []struct {
		name string
		v    *float64
	}{{"minimum", s.Minimum}, {"maximum", s.Maximum}} {
		if f.v != nil {
			j, err := json.Marshal(*f.v)
			if err != nil {
				return b, false
			}
			key(f.name)
			b = append(b, j...)
		}
	}
	for _, f := range []struct {
		name string
		v    *int
	}{{"minItems", s.MinItems}, {"maxItems", s.MaxItems}} {
		if f.v != nil {
			key(f.name)
			b = strconv.AppendInt(b, int64(*f.v), 10)
		}
	}
	if len(s.Required) > 0 {
		key("required")
		b = appendStrings(b, s.Required)
	}
	if s.AdditionalProperties != nil {
		key("additionalProperties")
		if b, ok = appendSchema(b, s.AdditionalProperties); !ok {
			return b, false
		}
	}
	if s.Not != nil {
		key("not")
		if b, ok = appendSchema(b, s.Not); !ok {
			return b, false
		}
	}
	if s.Format != "" {
		key("format")
		b = appendString(b, s.Format)
	}
	b = append(b, '}')
	// The library writes {} as true and {"not":true} as false.
	switch string(b[start:]) {
	case `{}`:
		b = append(b[:start], "true"...)
	case `{"not":true}`:
		b = append(b[:start], "false"...)
	}
	return b, true
}

// appendProperties writes the properties in PropertyOrder, then the rest
// sorted, as the library does.
func appendProperties(b []byte, s *jsonschema.Schema) ([]byte, bool) {
	b = append(b, '{')
	n := 0
	var ok bool
	entry := func(name string, p *jsonschema.Schema) bool {
		if n > 0 {
			b = append(b, ',')
		}
		n++
		b = appendString(b, name)
		b = append(b, ':')
		b, ok = appendSchema(b, p)
		return ok
	}
	done := make(map[string]bool, len(s.PropertyOrder))
	for _, name := range s.PropertyOrder {
		if done[name] {
			return b, false // the library refuses duplicates
		}
		done[name] = true
		if p, in := s.Properties[name]; in && !entry(name, p) {
			return b, false
		}
	}
	rest := make([]string, 0, len(s.Properties))
	for name := range s.Properties {
		if !done[name] {
			rest = append(rest, name)
		}
	}
	slices.Sort(rest)
	for _, name := range rest {
		if !entry(name, s.Properties[name]) {
			return b, false
		}
	}
	return append(b, '}'), true
}

// inferredOnly reports whether s sets no keyword but those appendSchema
// writes (and not both type forms, which the library refuses).
func inferredOnly(s *jsonschema.Schema) bool {
	if s.Type != "" && s.Types != nil {
		return false
	}
	c := *s
	c.Type, c.Types, c.Properties, c.PropertyOrder, c.Items = "", nil, nil, nil, nil
	c.Description, c.Enum, c.Minimum, c.Maximum, c.MinItems, c.MaxItems = "", nil, nil, nil, nil, nil
	c.Required, c.AdditionalProperties, c.Not, c.Format = nil, nil, nil, ""
	return reflect.ValueOf(&c).Elem().IsZero()
}

func appendStrings(b []byte, ss []string) []byte {
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, s)
	}
	return append(b, ']')
}

// appendString writes s as encoding/json does by default (HTML-safe: <, >
// and & escaped; U+2028 and U+2029 escaped; invalid UTF-8 as U+FFFD).
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
