package streamjson_test

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// A reader of the TypeScript declarations the Agent SDK ships
// (sdk-tools.d.ts), enough of the language to check JSON values against
// its tool output types: interfaces, type aliases, object literals with
// optional properties and index signatures, arrays, tuples, unions,
// literal types, null, unknown and references to other declarations.

// tsType is one parsed type.
type tsType struct {
	kind  string // prim, lit, object, array, tuple, union, ref
	name  string // prim: string, number, boolean, unknown, null, any; ref: the name
	lit   any    // lit: string, float64 or bool
	props map[string]tsProp
	index *tsType // object: the type of [k: string]: T
	elem  *tsType // array
	elems []*tsType
	rest  *tsType // tuple: the type of the elements after elems (...T[])
	alts  []*tsType
}

type tsProp struct {
	typ      *tsType
	optional bool
}

// tsDecls are the declarations of one file by name.
type tsDecls map[string]*tsType

// parseDecls parses the exported interfaces and type aliases of src.
func parseDecls(src string) (tsDecls, error) {
	p := &tsParser{toks: tokenize(src)}
	decls := tsDecls{}
	for !p.done() {
		if p.peek() != "export" {
			return nil, p.errorf("want export")
		}
		p.next()
		switch p.next() {
		case "interface":
			name := p.next()
			t, err := p.object()
			if err != nil {
				return nil, err
			}
			decls[name] = t
		case "type":
			name := p.next()
			if err := p.expect("="); err != nil {
				return nil, err
			}
			t, err := p.typ()
			if err != nil {
				return nil, err
			}
			if p.peek() == ";" {
				p.next()
			}
			decls[name] = t
		default:
			return nil, p.errorf("want interface or type")
		}
	}
	return decls, nil
}

// tokenize splits src into tokens, dropping comments.
func tokenize(src string) []string {
	var toks []string
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case strings.HasPrefix(src[i:], "/*"):
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				return toks
			}
			i += end + 4
		case strings.HasPrefix(src[i:], "//"):
			end := strings.IndexByte(src[i:], '\n')
			if end < 0 {
				return toks
			}
			i += end
		case c == ' ' || c == '\n' || c == '\t' || c == '\r':
			i++
		case c == '"' || c == '\'':
			j := i + 1
			for j < len(src) && src[j] != c {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(src) {
				return append(toks, "\x00") // an unterminated string: a token no rule accepts
			}
			toks = append(toks, src[i:j+1])
			i = j + 1
		case c == '_' || c == '$' || c == '-' || unicode.IsLetter(rune(c)) || unicode.IsDigit(rune(c)):
			j := i + 1
			for j < len(src) && (src[j] == '_' || src[j] == '$' || src[j] == '.' || unicode.IsLetter(rune(src[j])) || unicode.IsDigit(rune(src[j]))) {
				j++
			}
			toks = append(toks, src[i:j])
			i = j
		default:
			toks = append(toks, string(c))
			i++
		}
	}
	return toks
}

type tsParser struct {
	toks []string
	pos  int
}

func (p *tsParser) done() bool { return p.pos >= len(p.toks) }

func (p *tsParser) peek() string {
	if p.done() {
		return ""
	}
	return p.toks[p.pos]
}

func (p *tsParser) next() string {
	t := p.peek()
	p.pos++
	return t
}

func (p *tsParser) errorf(format string, args ...any) error {
	return fmt.Errorf("token %d (%q): %s", p.pos, p.peek(), fmt.Sprintf(format, args...))
}

func (p *tsParser) expect(tok string) error {
	if p.peek() != tok {
		return p.errorf("want %q", tok)
	}
	p.next()
	return nil
}

// typ parses a union (a leading | is allowed).
func (p *tsParser) typ() (*tsType, error) {
	if p.peek() == "|" {
		p.next()
	}
	first, err := p.postfix()
	if err != nil {
		return nil, err
	}
	alts := []*tsType{first}
	for p.peek() == "|" {
		p.next()
		t, err := p.postfix()
		if err != nil {
			return nil, err
		}
		alts = append(alts, t)
	}
	if len(alts) == 1 {
		return first, nil
	}
	return &tsType{kind: "union", alts: alts}, nil
}

// postfix parses a primary type followed by any number of [].
func (p *tsParser) postfix() (*tsType, error) {
	t, err := p.primary()
	if err != nil {
		return nil, err
	}
	for p.peek() == "[" && p.pos+1 < len(p.toks) && p.toks[p.pos+1] == "]" {
		p.pos += 2
		t = &tsType{kind: "array", elem: t}
	}
	return t, nil
}

func (p *tsParser) primary() (*tsType, error) {
	tok := p.peek()
	switch {
	case tok == "":
		return nil, p.errorf("unexpected end")
	case tok == "{":
		return p.object()
	case tok == "(":
		p.next()
		t, err := p.typ()
		if err != nil {
			return nil, err
		}
		return t, p.expect(")")
	case tok == "[":
		p.next()
		tuple := &tsType{kind: "tuple"}
		for p.peek() != "]" {
			rest := false
			if p.peek() == "." {
				for range 3 {
					if err := p.expect("."); err != nil {
						return nil, err
					}
				}
				rest = true
			}
			t, err := p.typ()
			if err != nil {
				return nil, err
			}
			if rest {
				if t.kind != "array" || tuple.rest != nil {
					return nil, p.errorf("a rest element must be the one array")
				}
				tuple.rest = t.elem
			} else {
				if tuple.rest != nil {
					return nil, p.errorf("elements after a rest element are not supported")
				}
				tuple.elems = append(tuple.elems, t)
			}
			if p.peek() == "," {
				p.next()
			} else if p.peek() != "]" {
				return nil, p.errorf("want , or ]")
			}
		}
		p.next()
		return tuple, nil
	case tok[0] == '"' || tok[0] == '\'':
		p.next()
		s, err := strconv.Unquote(`"` + strings.ReplaceAll(tok[1:len(tok)-1], `"`, `\"`) + `"`)
		if err != nil {
			return nil, p.errorf("bad string literal")
		}
		return &tsType{kind: "lit", lit: s}, nil
	case tok == "true" || tok == "false":
		p.next()
		return &tsType{kind: "lit", lit: tok == "true"}, nil
	case tok == "string" || tok == "number" || tok == "boolean" || tok == "unknown" || tok == "null" || tok == "any":
		p.next()
		return &tsType{kind: "prim", name: tok}, nil
	case tok[0] == '-' || unicode.IsDigit(rune(tok[0])):
		p.next()
		f, err := strconv.ParseFloat(tok, 64)
		if err != nil {
			return nil, p.errorf("bad number literal")
		}
		return &tsType{kind: "lit", lit: f}, nil
	case tok[0] == '_' || tok[0] == '$' || unicode.IsLetter(rune(tok[0])):
		p.next()
		if p.peek() == "<" {
			return nil, p.errorf("generic types are not supported")
		}
		return &tsType{kind: "ref", name: tok}, nil
	}
	return nil, p.errorf("unexpected token")
}

// object parses { prop?: T; [k: string]: T; … }.
func (p *tsParser) object() (*tsType, error) {
	if err := p.expect("{"); err != nil {
		return nil, err
	}
	obj := &tsType{kind: "object", props: map[string]tsProp{}}
	for p.peek() != "}" {
		if p.done() {
			return nil, p.errorf("unterminated object")
		}
		if p.peek() == "[" {
			p.next()
			p.next() // the key's name
			if err := p.expect(":"); err != nil {
				return nil, err
			}
			if p.next() != "string" {
				return nil, p.errorf("index signatures must have string keys")
			}
			if err := p.expect("]"); err != nil {
				return nil, err
			}
			if err := p.expect(":"); err != nil {
				return nil, err
			}
			t, err := p.typ()
			if err != nil {
				return nil, err
			}
			obj.index = t
		} else {
			name := p.next()
			if name == "" {
				return nil, p.errorf("unterminated object")
			}
			if len(name) >= 2 && (name[0] == '"' || name[0] == '\'') {
				name = name[1 : len(name)-1]
			}
			opt := false
			if p.peek() == "?" {
				p.next()
				opt = true
			}
			if err := p.expect(":"); err != nil {
				return nil, err
			}
			t, err := p.typ()
			if err != nil {
				return nil, err
			}
			obj.props[name] = tsProp{typ: t, optional: opt}
		}
		if p.peek() == ";" || p.peek() == "," {
			p.next()
		}
	}
	p.next()
	return obj, nil
}

// check reports how v (decoded JSON) fails to be a value of t: nil when it
// is one. Objects are checked field for field: a missing required field
// and a field the type does not declare (without an index signature) are
// both failures.
func (d tsDecls) check(t *tsType, v any, path string) error { return d.checkDepth(t, v, path, 0) }

func (d tsDecls) checkDepth(t *tsType, v any, path string, depth int) error {
	if depth > 200 {
		return fmt.Errorf("%s: types nest too deep (a recursive alias?)", path)
	}
	depth++
	switch t.kind {
	case "ref":
		target, ok := d[t.name]
		if !ok {
			return fmt.Errorf("%s: unknown type %s", path, t.name)
		}
		return d.checkDepth(target, v, path, depth)
	case "prim":
		ok := false
		switch t.name {
		case "unknown", "any":
			ok = true
		case "null":
			ok = v == nil
		case "string":
			_, ok = v.(string)
		case "number":
			_, ok = v.(float64)
		case "boolean":
			_, ok = v.(bool)
		}
		if !ok {
			return fmt.Errorf("%s: %s is not a %s", path, short(v), t.name)
		}
		return nil
	case "lit":
		if v != t.lit {
			return fmt.Errorf("%s: %s is not %v", path, short(v), t.lit)
		}
		return nil
	case "union":
		var errs []string
		for _, a := range t.alts {
			err := d.checkDepth(a, v, path, depth)
			if err == nil {
				return nil
			}
			errs = append(errs, err.Error())
		}
		return fmt.Errorf("%s: no alternative matches: [%s]", path, strings.Join(errs, " | "))
	case "array":
		arr, ok := v.([]any)
		if !ok {
			return fmt.Errorf("%s: %s is not an array", path, short(v))
		}
		for i, e := range arr {
			if err := d.checkDepth(t.elem, e, fmt.Sprintf("%s[%d]", path, i), depth); err != nil {
				return err
			}
		}
		return nil
	case "tuple":
		arr, ok := v.([]any)
		if !ok || len(arr) < len(t.elems) || len(arr) > len(t.elems) && t.rest == nil {
			return fmt.Errorf("%s: %s is not a tuple of %d", path, short(v), len(t.elems))
		}
		for i, e := range arr {
			et := t.rest
			if i < len(t.elems) {
				et = t.elems[i]
			}
			if err := d.checkDepth(et, e, fmt.Sprintf("%s[%d]", path, i), depth); err != nil {
				return err
			}
		}
		return nil
	case "object":
		obj, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: %s is not an object", path, short(v))
		}
		names := make([]string, 0, len(t.props))
		for name := range t.props {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			p := t.props[name]
			fv, present := obj[name]
			if !present {
				if !p.optional {
					return fmt.Errorf("%s: required field %q is missing", path, name)
				}
				continue
			}
			if err := d.checkDepth(p.typ, fv, path+"."+name, depth); err != nil {
				return err
			}
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if _, declared := t.props[k]; declared {
				continue
			}
			if t.index == nil {
				return fmt.Errorf("%s: field %q is not declared", path, k)
			}
			if err := d.checkDepth(t.index, obj[k], path+"."+k, depth); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("%s: unknown type kind %q", path, t.kind)
}

func short(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 80 {
		return string(b[:80]) + "…"
	}
	return string(b)
}

func TestParseDecls(t *testing.T) {
	src := `
/** doc */
export interface A {
  /** the path */
  p: string;
  n?: number | null;
  kind: "x" | 'y';
  list: { a: boolean; [k: string]: unknown }[];
  pair: [string, number];
  flag?: true;
  paths?: [string, ...string[]];
}
export type B = | A | string[] | (A | number)[];
`
	d, err := parseDecls(src)
	if err != nil {
		t.Fatal(err)
	}
	a := &tsType{kind: "ref", name: "A"}
	b := &tsType{kind: "ref", name: "B"}
	tests := []struct {
		typ  *tsType
		json string
		ok   bool
	}{
		{a, `{"p":"x","kind":"x","list":[],"pair":["a",1]}`, true},
		{a, `{"p":"x","kind":"y","n":null,"list":[{"a":true,"extra":1}],"pair":["a",1],"flag":true}`, true},
		{a, `{"p":"x","kind":"z","list":[],"pair":["a",1]}`, false},        // not a literal
		{a, `{"kind":"x","list":[],"pair":["a",1]}`, false},                // p missing
		{a, `{"p":"x","kind":"x","list":[],"pair":["a",1],"q":1}`, false},  // q not declared
		{a, `{"p":"x","kind":"x","list":[],"pair":["a"]}`, false},          // short tuple
		{a, `{"p":"x","kind":"x","list":[{"a":1}],"pair":["a",1]}`, false}, // a not boolean
		{a, `{"p":"x","kind":"x","list":[],"pair":["a",1],"flag":false}`, false},
		{a, `{"p":"x","kind":"x","list":[],"pair":["a",1],"paths":["a","b","c"]}`, true},
		{a, `{"p":"x","kind":"x","list":[],"pair":["a",1],"paths":[]}`, false},
		{b, `["a","b"]`, true},
		{b, `[1,{"p":"x","kind":"x","list":[],"pair":["a",1]}]`, true},
		{b, `[true]`, false},
	}
	for i, tt := range tests {
		var v any
		if err := json.Unmarshal([]byte(tt.json), &v); err != nil {
			t.Fatal(err)
		}
		err := d.check(tt.typ, v, "$")
		if (err == nil) != tt.ok {
			t.Errorf("%d: check(%s) = %v, want ok=%v", i, tt.json, err, tt.ok)
		}
	}
}

func FuzzParseDecls(f *testing.F) {
	f.Add(`export interface A { p: string; q?: (number | "x")[]; [k: string]: unknown }`)
	f.Add(`export type B = | { a: [string, true] } | null;`)
	f.Add(`export type C = D[][];`)
	f.Add(`export interface E { "quoted-key": 'single' }`)
	f.Add("export interface 0{0:0\"")
	f.Fuzz(func(t *testing.T, src string) {
		d, err := parseDecls(src)
		if err != nil {
			return
		}
		for _, typ := range d {
			_ = d.check(typ, map[string]any{"a": []any{1.0, "x", nil}}, "$") // must not panic or loop
		}
	})
}
