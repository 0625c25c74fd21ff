package interaction

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// FormField is one property of an MCP elicitation form: the form's schema
// is a flat JSON Schema object whose properties are strings, numbers,
// integers, booleans or enums.
type FormField struct {
	Name        string `json:"-"`
	Type        string `json:"type"`
	Title       string `json:"title"`
	Description string `json:"description"`
	Enum        []any  `json:"enum"`
	Default     any    `json:"default"`
	Required    bool   `json:"-"`
}

// FormFields reads the fields of an elicitation form's schema, sorted by
// name. An empty schema has no fields.
func FormFields(schema json.RawMessage) ([]FormField, error) {
	if len(schema) == 0 {
		return nil, nil
	}
	var s struct {
		Properties map[string]FormField `json:"properties"`
		Required   []string             `json:"required"`
	}
	if err := json.Unmarshal(schema, &s); err != nil {
		return nil, fmt.Errorf("interaction: the form's schema: %w", err)
	}
	out := make([]FormField, 0, len(s.Properties))
	for _, name := range slices.Sorted(maps.Keys(s.Properties)) {
		f := s.Properties[name]
		f.Name, f.Required = name, slices.Contains(s.Required, name)
		out = append(out, f)
	}
	return out, nil
}

// Label is the field's title, else its name.
func (f FormField) Label() string {
	if f.Title != "" {
		return f.Title
	}
	return f.Name
}

// Parse converts what a person typed to the field's JSON type: one of the
// enum's values (as written), yes/no for a boolean, a whole number for an
// integer, a number for a number, else the text. The error says what to
// type instead.
func (f FormField) Parse(s string) (any, error) {
	if len(f.Enum) > 0 {
		for _, v := range f.Enum {
			if fmt.Sprint(v) == s {
				return v, nil
			}
		}
		return nil, errors.New("choose one of the listed values")
	}
	switch f.Type {
	case "boolean":
		switch strings.ToLower(s) {
		case "y", "yes", "true":
			return true, nil
		case "n", "no", "false":
			return false, nil
		}
		return nil, errors.New("answer yes or no")
	case "integer":
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, errors.New("give a whole number")
		}
		return n, nil
	case "number":
		n, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, errors.New("give a number")
		}
		return n, nil
	}
	return s, nil
}
