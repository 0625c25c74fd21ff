package tool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"strconv"
	"strings"
)

// A dialect is a JSON Schema draft, named by "$schema". Tool schemas come
// from MCP servers and programs written against any of them; the validator
// (google/jsonschema-go) is given one: every schema is translated to the
// 2020-12 form of what its own draft means (translateSchema), the one home
// of the differences between drafts.
type dialect int

const (
	draft2020 dialect = iota // also the dialect of a schema without "$schema"
	draft2019
	draft07
	draft06
	draft04
)

func (d dialect) String() string {
	return [...]string{"2020-12", "2019-09", "draft-07", "draft-06", "draft-04"}[d]
}

// schema2020 is the "$schema" of a translated schema.
const schema2020 = "https://json-schema.org/draft/2020-12/schema"

// dialectOf reads a "$schema" URI: the meta-schemas of drafts 04, 06, 07,
// 2019-09 and 2020-12, with http or https and with or without the empty
// fragment. Any other URI is an error: a custom or unknown meta-schema
// could give keywords meanings Gantry cannot know, and guessing would
// validate inputs by rules the tool's author did not write.
func dialectOf(uri string) (dialect, error) {
	u := strings.TrimSuffix(uri, "#")
	if rest, ok := strings.CutPrefix(u, "https://"); ok {
		u = rest
	} else if rest, ok := strings.CutPrefix(u, "http://"); ok {
		u = rest
	} else {
		u = "?" + u // no scheme: not a meta-schema's URI
	}
	switch u {
	case "json-schema.org/draft/2020-12/schema":
		return draft2020, nil
	case "json-schema.org/draft/2019-09/schema":
		return draft2019, nil
	case "json-schema.org/draft-07/schema":
		return draft07, nil
	case "json-schema.org/draft-06/schema":
		return draft06, nil
	case "json-schema.org/draft-04/schema":
		return draft04, nil
	case "json-schema.org/draft-03/schema", "json-schema.org/draft-02/schema", "json-schema.org/draft-01/schema":
		return 0, fmt.Errorf("$schema %q: drafts before 04 are not supported (Gantry validates drafts 04, 06, 07, 2019-09 and 2020-12)", uri)
	}
	return 0, fmt.Errorf("$schema %q is not a JSON Schema draft Gantry knows (04, 06, 07, 2019-09 or 2020-12; without $schema a schema is read as 2020-12)", uri)
}

// notIn lists, per dialect, the keywords that 2020-12 evaluates but the
// dialect does not have: a schema of that dialect holding one means
// nothing by it (unknown keywords are ignored), so the translation drops
// it rather than let 2020-12 give it a meaning. Containers of subschemas
// ($defs, definitions) assert nothing and are kept in every dialect.
var notIn = [...][]string{
	draft2020: {"$recursiveRef", "$recursiveAnchor"},
	draft2019: {"prefixItems", "$dynamicRef", "$dynamicAnchor"},
	draft07:   {"prefixItems", "$dynamicRef", "$dynamicAnchor", "$anchor", "dependentRequired", "dependentSchemas", "unevaluatedItems", "unevaluatedProperties", "minContains", "maxContains", "$recursiveRef", "$recursiveAnchor"},
	draft06:   {"prefixItems", "$dynamicRef", "$dynamicAnchor", "$anchor", "dependentRequired", "dependentSchemas", "unevaluatedItems", "unevaluatedProperties", "minContains", "maxContains", "$recursiveRef", "$recursiveAnchor", "if", "then", "else"},
	draft04:   {"prefixItems", "$dynamicRef", "$dynamicAnchor", "$anchor", "dependentRequired", "dependentSchemas", "unevaluatedItems", "unevaluatedProperties", "minContains", "maxContains", "$recursiveRef", "$recursiveAnchor", "if", "then", "else", "$id", "const", "contains", "propertyNames"},
}

func droppedIn(d dialect, kw string) bool {
	for _, k := range notIn[d] {
		if k == kw {
			return true
		}
	}
	return false
}

// keptBesideRef are the keywords a schema with "$ref" keeps in drafts 04
// to 07, where "$ref" makes its siblings ignored: containers other
// references point into, and annotations.
func keptBesideRef(kw string) bool {
	switch kw {
	case "$ref", "definitions", "$defs", "title", "description", "$comment", "$schema":
		return true
	}
	return false
}

// Where subschemas sit, by keyword.
func schemaMapKeyword(kw string) bool {
	switch kw {
	case "properties", "patternProperties", "$defs", "definitions", "dependentSchemas":
		return true
	}
	return false
}

func schemaListKeyword(kw string) bool {
	switch kw {
	case "allOf", "anyOf", "oneOf", "prefixItems":
		return true
	}
	return false
}

func schemaKeyword(kw string) bool {
	switch kw {
	case "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames",
		"unevaluatedItems", "unevaluatedProperties", "contentSchema", "items", "additionalItems":
		return true
	}
	return false
}

// recursiveAnchor names the $dynamicAnchor a 2019-09 "$recursiveAnchor":
// true becomes.
const recursiveAnchor = "gantry-recursive"

// keywords are the keywords the validator reads or the translation knows.
// An array, not a map: nothing is built at init.
var keywords = [...]string{"$anchor", "$comment", "$defs", "$dynamicAnchor", "$dynamicRef", "$id", "$ref", "$schema", "$vocabulary",
	"additionalItems", "additionalProperties", "allOf", "anyOf", "const", "contains", "contentEncoding",
	"contentMediaType", "contentSchema", "default", "definitions", "dependencies", "dependentRequired",
	"dependentSchemas", "deprecated", "description", "else", "enum", "examples", "exclusiveMaximum",
	"exclusiveMinimum", "format", "if", "items", "maxContains", "maxItems", "maxLength", "maxProperties",
	"maximum", "minContains", "minItems", "minLength", "minProperties", "minimum", "multipleOf", "not", "oneOf",
	"pattern", "patternProperties", "prefixItems", "properties", "propertyNames", "readOnly", "required", "then",
	"title", "type", "unevaluatedItems", "unevaluatedProperties", "uniqueItems", "writeOnly",
	"id", "$recursiveRef", "$recursiveAnchor"}

// keywordLike reports whether k is not a keyword but matches one without
// regard to case ("$Ref", "Properties", "$reſ"): encoding/json, which the
// validator decodes schemas with, would read it as that keyword, although
// keywords are case-sensitive and k means nothing. The translation drops
// such keys, so that what it checks (references, cycles) is what the
// validator reads.
func keywordLike(k string) bool {
	if len(k) > 64 {
		return false
	}
	like := false
	for _, kw := range keywords {
		if k == kw {
			return false
		}
		like = like || strings.EqualFold(k, kw)
	}
	return like
}

// translateSchema returns raw in the 2020-12 form of what it means in its
// own dialect (its "$schema"; 2020-12 without one), or raw itself when
// that is already the case. What it translates:
//
//   - drafts 04–07: "$ref" makes its siblings ignored (they are dropped,
//     but for definitions and annotations); array "items" and
//     "additionalItems" become "prefixItems" and "items"; "dependencies"
//     becomes "dependentRequired" and "dependentSchemas"; an "$id" (draft
//     04: "id") that is a fragment becomes an "$anchor";
//   - draft 04: boolean "exclusiveMinimum"/"exclusiveMaximum" become the
//     numeric bound they modify (read so in every dialect, where a
//     boolean has no other meaning);
//   - 2019-09: array "items", "$recursiveRef" and "$recursiveAnchor";
//   - every dialect: keywords it does not have are dropped (notIn), and a
//     JSON pointer in a "$ref" that passes through a renamed keyword is
//     rewritten to the new place.
//
// An unknown "$schema" is an error, and so is what would harm the
// process: nesting past maxSchemaDepth, data after the schema. Keys
// matching a keyword only without regard to case are dropped
// (keywordLike). Where references point — and whether they stay in the
// document — is decided on the compiled result (schemaref.go), not here.
func translateSchema(raw json.RawMessage) (json.RawMessage, error) {
	if n := nesting(raw); n > 2*maxSchemaDepth {
		return nil, fmt.Errorf("schema nested deeper than %d levels", maxSchemaDepth)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("invalid character after the schema")
	}
	root, ok := doc.(map[string]any)
	if !ok {
		return raw, nil // a boolean schema, or not a schema (the compiler says so)
	}
	d := draft2020
	if v, ok := root["$schema"]; ok {
		s, ok := v.(string)
		if !ok {
			return nil, errors.New("$schema is not a string")
		}
		var err error
		if d, err = dialectOf(s); err != nil {
			return nil, err
		}
	}
	tr := &translator{ids: map[string]resource{}}
	if err := tr.collect(root, d, &url.URL{}, 0); err != nil {
		return nil, err
	}
	out, err := tr.node(root, d, &url.URL{}, "", 0)
	if err != nil {
		return nil, err
	}
	if !tr.changed {
		return raw, nil
	}
	m := out.(map[string]any)
	if _, ok := m["$schema"]; ok {
		m["$schema"] = schema2020
	}
	return json.Marshal(m)
}

// maxSchemaDepth bounds the translation's recursion (a schema nested
// deeper is refused rather than exhausting the stack, or the time of the
// validator's decoder, which reads each level again for every level above
// it).
const maxSchemaDepth = 256

// nesting is the deepest nesting of JSON objects and arrays in raw.
func nesting(raw []byte) int {
	depth, most, inString := 0, 0, false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case inString:
			if c == '\\' {
				i++
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
			most = max(most, depth)
		case c == '}' || c == ']':
			depth--
		}
	}
	return most
}

// translator holds one translation.
type translator struct {
	// ids maps the base URI of each schema resource of the document
	// (fragment-free, resolved) to the resource; "" is the root. The
	// translation needs them to rewrite JSON pointers in references
	// through renamed keywords, and to know where 2019-09's
	// "$recursiveAnchor" is set.
	ids     map[string]resource
	changed bool
}

type resource struct {
	node    map[string]any
	dialect dialect
	// recursive is a 2019-09 "$recursiveAnchor": true at the resource.
	recursive bool
}

// nodeDialect is the dialect of a schema inside one of dialect d: its own
// "$schema" when it has one.
func nodeDialect(m map[string]any, d dialect) (dialect, error) {
	v, ok := m["$schema"]
	if !ok {
		return d, nil
	}
	s, ok := v.(string)
	if !ok {
		return d, errors.New("$schema is not a string")
	}
	return dialectOf(s)
}

// idOf is the identifier keyword of m in dialect d ("id" in draft 04),
// "" when it has none or it is ignored (beside "$ref" before 2019-09).
func idOf(m map[string]any, d dialect) (string, error) {
	key := "$id"
	if d == draft04 {
		key = "id"
	}
	v, ok := m[key]
	if !ok {
		return "", nil
	}
	if _, ref := m["$ref"]; ref && d >= draft07 {
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		if d == draft04 {
			return "", nil // "id" in draft 04 may be anything but a string only in a broken schema; ignore it
		}
		return "", fmt.Errorf("%s is not a string", key)
	}
	return s, nil
}

// collect records the resources of the document (schemas with an $id)
// under their resolved base URIs, before the translation rewrites
// references into them.
func (tr *translator) collect(v any, d dialect, base *url.URL, depth int) error {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	if depth > maxSchemaDepth {
		return fmt.Errorf("schema nested deeper than %d levels", maxSchemaDepth)
	}
	d, err := nodeDialect(m, d)
	if err != nil {
		return err
	}
	rec := d == draft2019 && m["$recursiveAnchor"] == true
	if depth == 0 {
		tr.ids[""] = resource{m, d, rec}
	}
	id, err := idOf(m, d)
	if err != nil {
		return err
	}
	if id != "" {
		u, err := url.Parse(id)
		if err != nil {
			return fmt.Errorf("$id %q: %v", id, err)
		}
		if u.Scheme != "" || u.Host != "" || u.Path != "" || u.Opaque != "" {
			nb := base.ResolveReference(u)
			nb.Fragment, nb.RawFragment = "", ""
			base = nb
			tr.ids[base.String()] = resource{m, d, rec}
		}
	}
	for kw, v := range m {
		var subs []any
		switch {
		case schemaMapKeyword(kw) || kw == "dependencies":
			mm, _ := v.(map[string]any)
			for _, sub := range mm {
				subs = append(subs, sub)
			}
		case schemaListKeyword(kw) || kw == "items":
			if l, ok := v.([]any); ok {
				subs = l
			} else if schemaKeyword(kw) {
				subs = []any{v}
			}
		case schemaKeyword(kw):
			subs = []any{v}
		}
		for _, sub := range subs {
			if err := tr.collect(sub, d, base, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// node translates one schema of dialect d whose base URI is base; res is
// the base URI's key in tr.ids.
func (tr *translator) node(v any, d dialect, base *url.URL, res string, depth int) (any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return v, nil // true, false, or not a schema (the compiler says so)
	}
	if depth > maxSchemaDepth {
		return nil, fmt.Errorf("schema nested deeper than %d levels", maxSchemaDepth)
	}
	d, err := nodeDialect(m, d)
	if err != nil {
		return nil, err
	}
	out := make(map[string]any, len(m))
	if _, ok := m["$schema"]; ok {
		if depth > 0 {
			tr.changed = true // only the root says which dialect the translation is
		} else {
			out["$schema"] = m["$schema"]
			if d != draft2020 {
				tr.changed = true
			}
		}
	}
	_, hasRef := m["$ref"]
	ignoreSiblings := hasRef && d >= draft07
	// The identifier: a new base URI, or an anchor in the old form.
	id, err := idOf(m, d)
	if err != nil {
		return nil, err
	}
	if d == draft04 {
		if _, ok := m["id"]; ok {
			tr.changed = true
		}
	}
	if _, ok := m["$id"]; ok && (d == draft04 || ignoreSiblings) {
		tr.changed = true // not an identifier here
	}
	if id != "" {
		u, err := url.Parse(id)
		if err != nil {
			return nil, fmt.Errorf("$id %q: %v", id, err)
		}
		frag := u.Fragment
		if u.Scheme != "" || u.Host != "" || u.Path != "" || u.Opaque != "" {
			nb := base.ResolveReference(u)
			nb.Fragment, nb.RawFragment = "", ""
			base, res = nb, nb.String()
			u.Fragment, u.RawFragment = "", ""
			out["$id"] = u.String()
			if u.String() != id || d == draft04 {
				tr.changed = true
			}
		} else if frag == "" {
			tr.changed = true // "#" names the base itself
		}
		if frag != "" {
			// The form of drafts 04–07 (2019-09 has $anchor; read so in
			// every dialect, where a fragment has no other meaning).
			out["$anchor"] = frag
			tr.changed = true
		}
	}
	for kw, val := range m {
		switch kw {
		case "$schema", "$id", "id":
			continue // done above ("id" is not a keyword after draft 04)
		}
		if keywordLike(kw) {
			tr.changed = true
			continue
		}
		if ignoreSiblings && !keptBesideRef(kw) {
			tr.changed = true
			continue
		}
		if droppedIn(d, kw) {
			tr.changed = true
			continue
		}
		switch {
		case kw == "$ref" || kw == "$dynamicRef":
			ref, ok := val.(string)
			if !ok {
				return nil, fmt.Errorf("%s is not a string", kw)
			}
			nref, err := tr.ref(ref, base)
			if err != nil {
				return nil, err
			}
			if nref != ref {
				tr.changed = true
			}
			out[kw] = nref
		case kw == "exclusiveMinimum" || kw == "exclusiveMaximum":
			b, isBool := val.(bool)
			if !isBool {
				out[kw] = val
				continue
			}
			tr.changed = true
			bound := "minimum"
			if kw == "exclusiveMaximum" {
				bound = "maximum"
			}
			if n, ok := m[bound]; ok && b {
				out[kw] = n
			}
		case kw == "minimum" || kw == "maximum":
			if b, ok := m["exclusive"+strings.ToUpper(kw[:1])+kw[1:]].(bool); ok && b {
				continue // became the exclusive bound
			}
			out[kw] = val
		case kw == "items":
			if l, ok := val.([]any); ok {
				if d == draft2020 {
					if _, ok := m["prefixItems"]; ok {
						return nil, errors.New("items is an array beside prefixItems (in 2020-12 items is one schema)")
					}
				}
				// The array form (before 2020-12): prefixItems, and
				// additionalItems for the rest.
				tr.changed = true
				pl := make([]any, len(l))
				for i, sub := range l {
					if pl[i], err = tr.node(sub, d, base, res, depth+1); err != nil {
						return nil, err
					}
				}
				out["prefixItems"] = pl
				if ai, ok := m["additionalItems"]; ok {
					if out["items"], err = tr.node(ai, d, base, res, depth+1); err != nil {
						return nil, err
					}
				}
				continue
			}
			if out[kw], err = tr.node(val, d, base, res, depth+1); err != nil {
				return nil, err
			}
		case kw == "additionalItems":
			tr.changed = true // done with items; ignored without an items array
		case kw == "dependencies" || kw == "dependentRequired" || kw == "dependentSchemas":
			continue // below
		case kw == "$recursiveAnchor":
			tr.changed = true
			if val == true && (depth == 0 || id != "") {
				out["$dynamicAnchor"] = recursiveAnchor
			}
		case kw == "$recursiveRef":
			tr.changed = true
			if val != "#" {
				return nil, fmt.Errorf("$recursiveRef %v: only \"#\" is meaningful", val)
			}
			if tr.ids[res].recursive {
				out["$dynamicRef"] = "#" + recursiveAnchor
			} else if hasRef {
				out["allOf"] = append(asList(out["allOf"]), map[string]any{"$ref": "#"})
			} else {
				out["$ref"] = "#"
			}
		case schemaMapKeyword(kw):
			mm, ok := val.(map[string]any)
			if !ok {
				out[kw] = val // the compiler reports it
				continue
			}
			om := make(map[string]any, len(mm))
			for name, sub := range mm {
				if om[name], err = tr.node(sub, d, base, res, depth+1); err != nil {
					return nil, err
				}
			}
			out[kw] = om
		case schemaListKeyword(kw):
			l, ok := val.([]any)
			if !ok {
				out[kw] = val
				continue
			}
			ol := make([]any, len(l))
			for i, sub := range l {
				if ol[i], err = tr.node(sub, d, base, res, depth+1); err != nil {
					return nil, err
				}
			}
			if prev, ok := out[kw].([]any); ok { // allOf from $recursiveRef
				ol = append(ol, prev...)
			}
			out[kw] = ol
		case schemaKeyword(kw):
			if out[kw], err = tr.node(val, d, base, res, depth+1); err != nil {
				return nil, err
			}
		default:
			out[kw] = val
		}
	}
	if ignoreSiblings {
		if _, ok := m["dependencies"]; ok {
			tr.changed = true
		}
		return out, nil
	}
	if err := tr.dependencies(m, out, d, base, res, depth); err != nil {
		return nil, err
	}
	return out, nil
}

// dependencies translates "dependencies" (before 2019-09; read so in every
// dialect, where it has no other meaning) into "dependentRequired" and
// "dependentSchemas", merged with those keywords where the dialect has
// them.
func (tr *translator) dependencies(m, out map[string]any, d dialect, base *url.URL, res string, depth int) error {
	req := map[string]any{}
	sch := map[string]any{}
	if !droppedIn(d, "dependentRequired") {
		if mm, ok := m["dependentRequired"].(map[string]any); ok {
			maps.Copy(req, mm)
		} else if v, ok := m["dependentRequired"]; ok {
			out["dependentRequired"] = v // not an object: the compiler reports it
		}
		if mm, ok := m["dependentSchemas"].(map[string]any); ok {
			for name, sub := range mm {
				t, err := tr.node(sub, d, base, res, depth+1)
				if err != nil {
					return err
				}
				sch[name] = t
			}
		} else if v, ok := m["dependentSchemas"]; ok {
			out["dependentSchemas"] = v
		}
	}
	if v, ok := m["dependencies"]; ok {
		deps, ok := v.(map[string]any)
		if !ok {
			return errors.New("dependencies is not an object")
		}
		tr.changed = true
		for name, dv := range deps {
			if l, ok := dv.([]any); ok {
				req[name] = l
				continue
			}
			t, err := tr.node(dv, d, base, res, depth+1)
			if err != nil {
				return err
			}
			sch[name] = t
		}
	}
	if len(req) > 0 {
		out["dependentRequired"] = req
	}
	if len(sch) > 0 {
		out["dependentSchemas"] = sch
	}
	return nil
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// ref translates a reference: a JSON pointer through a keyword the
// translation renames is rewritten. A reference that does not name a
// resource of the document is left as it is (the index of the compiled
// schema refuses it, schemaref.go).
func (tr *translator) ref(ref string, base *url.URL) (string, error) {
	u, err := url.Parse(ref)
	if err != nil {
		return "", fmt.Errorf("$ref %q: %v", ref, err)
	}
	target := base.ResolveReference(u)
	frag := target.Fragment
	target.Fragment, target.RawFragment = "", ""
	res, ok := tr.ids[target.String()]
	if !ok || frag == "" || frag[0] != '/' {
		return ref, nil // the resource itself, or an anchor (kept under its name)
	}
	toks := strings.Split(frag[1:], "/")
	for i, t := range toks {
		toks[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	nt, changed, err := translatePointer(res.node, res.dialect, toks)
	if err != nil {
		return "", fmt.Errorf("$ref %q: %v", ref, err)
	}
	if !changed {
		return ref, nil
	}
	var b strings.Builder
	b.WriteString(ref[:strings.IndexByte(ref, '#')+1])
	for _, t := range nt {
		b.WriteByte('/')
		t = strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1")
		b.WriteString((&url.URL{Fragment: t}).EscapedFragment())
	}
	return b.String(), nil
}

// translatePointer follows a JSON pointer through the original document
// from node and returns it as a pointer into the translation.
func translatePointer(node map[string]any, d dialect, toks []string) ([]string, bool, error) {
	var out []string
	changed := false
	var cur any = node
	for i := 0; i < len(toks); i++ {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false, errors.New("the pointer does not lead to a schema")
		}
		var err error
		if d, err = nodeDialect(m, d); err != nil {
			return nil, false, err
		}
		kw := toks[i]
		if _, ref := m["$ref"]; ref && d >= draft07 && !keptBesideRef(kw) {
			return nil, false, fmt.Errorf("the pointer leads into %q beside a $ref, which %s ignores", kw, d)
		}
		if droppedIn(d, kw) {
			return nil, false, fmt.Errorf("the pointer leads into %q, which is not a keyword of %s", kw, d)
		}
		index := func(v any) (any, error) {
			l, ok := v.([]any)
			if !ok || i+1 >= len(toks) {
				return nil, fmt.Errorf("the pointer does not lead to a schema in %q", kw)
			}
			i++
			n, err := strconv.Atoi(toks[i])
			if err != nil || n < 0 || n >= len(l) {
				return nil, fmt.Errorf("no item %q in %q", toks[i], kw)
			}
			out = append(out, toks[i])
			return l[n], nil
		}
		key := func(v any) (any, error) {
			mm, ok := v.(map[string]any)
			if !ok || i+1 >= len(toks) {
				return nil, fmt.Errorf("the pointer does not lead to a schema in %q", kw)
			}
			i++
			sub, ok := mm[toks[i]]
			if !ok {
				return nil, fmt.Errorf("no %q in %q", toks[i], kw)
			}
			out = append(out, toks[i])
			return sub, nil
		}
		_, itemsArray := m["items"].([]any)
		switch {
		case kw == "items" && itemsArray:
			out = append(out, "prefixItems")
			changed = true
			cur, err = index(m[kw])
		case kw == "additionalItems":
			if !itemsArray {
				return nil, false, errors.New("the pointer leads into additionalItems, which is ignored without an items array")
			}
			out = append(out, "items")
			changed = true
			cur = m[kw]
		case kw == "dependencies":
			deps, _ := m[kw].(map[string]any)
			if i+1 < len(toks) {
				if _, isList := deps[toks[i+1]].([]any); isList {
					return nil, false, errors.New("the pointer leads to a list of property names, not a schema")
				}
			}
			out = append(out, "dependentSchemas")
			changed = true
			cur, err = key(m[kw])
		case schemaMapKeyword(kw):
			out = append(out, kw)
			cur, err = key(m[kw])
		case schemaListKeyword(kw):
			out = append(out, kw)
			cur, err = index(m[kw])
		case schemaKeyword(kw):
			v, ok := m[kw]
			if !ok {
				return nil, false, fmt.Errorf("no %q in the schema", kw)
			}
			out = append(out, kw)
			cur = v
		default:
			return nil, false, fmt.Errorf("%q is not a keyword holding a schema", kw)
		}
		if err != nil {
			return nil, false, err
		}
	}
	return out, changed, nil
}
