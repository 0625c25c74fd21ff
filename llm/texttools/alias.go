package texttools

import (
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"

	"github.com/gantry-dev/gantry/tool"
)

// ParamTag returns the tag a parameter is written as in the text protocol:
// its name when that is a valid tag name (a letter or '_', then letters,
// digits, '_', '-', '.', ':'), else an alias made from it — leading bytes
// that cannot start a tag dropped, other invalid bytes turned into '_'
// (Grep's "-i" is <i>, "-A" is <A>); a name with nothing usable left is
// "param_" and its bytes in hex. The tools prompt names the alias next to
// the parameter, the parser maps it back, and earlier calls are written
// back with it. A parameter whose alias is another parameter's name keeps
// no alias (see [paramTags]).
func ParamTag(name string) string {
	if validTag(name) {
		return name
	}
	b := make([]byte, 0, len(name))
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case len(b) == 0 && isNameByte(c, true):
			b = append(b, c)
		case len(b) == 0:
		case isNameByte(c, false):
			b = append(b, c)
		default:
			b = append(b, '_')
		}
	}
	if len(b) == 0 || len(b) > maxTagName {
		return "param_" + hex.EncodeToString([]byte(name))[:min(2*len(name), maxTagName-6)]
	}
	return string(b)
}

func validTag(s string) bool {
	if s == "" || len(s) > maxTagName {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isNameByte(s[i], i == 0) {
			return false
		}
	}
	return true
}

// paramTags are the aliases of one tool's parameters.
type paramTags struct {
	toTag   map[string]string // parameter → tag
	fromTag map[string]string // tag → parameter
}

// tagsOf returns the aliases of the top-level parameters of s whose names
// are not valid tag names; nil when every name is a valid tag. An alias equal to
// another parameter's name, or to an earlier alias, is not used: that
// parameter is written under its own name (which the parser also reads,
// see [paramTagAt]).
func tagsOf(s *tool.Spec) *paramTags {
	var sch struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(s.InputSchema, &sch) != nil {
		return nil
	}
	var t *paramTags
	for k := range sch.Properties {
		tag := ParamTag(k)
		if tag == k {
			continue
		}
		if t == nil {
			t = &paramTags{toTag: map[string]string{}, fromTag: map[string]string{}}
		}
		if _, clash := sch.Properties[tag]; clash {
			continue
		}
		if _, dup := t.fromTag[tag]; dup {
			// Two names with one alias ("-a" and "_a"): neither gets it,
			// whatever the map's order.
			delete(t.toTag, t.fromTag[tag])
			t.fromTag[tag] = ""
			continue
		}
		t.toTag[k], t.fromTag[tag] = tag, k
	}
	if t != nil {
		for tag, k := range t.fromTag {
			if k == "" {
				delete(t.fromTag, tag)
			}
		}
	}
	return t
}

// tag is the tag parameter k is written as.
func (t *paramTags) tag(k string) string {
	if t != nil {
		if a, ok := t.toTag[k]; ok {
			return a
		}
	}
	return k
}

// param is the parameter written as tag.
func (t *paramTags) param(tag string) string {
	if t != nil {
		if k, ok := t.fromTag[tag]; ok {
			return k
		}
	}
	return tag
}

// encode writes t for the provider's per-tool cache: "" for nil, else a
// marker and NUL-separated parameter/tag pairs in order.
func (t *paramTags) encode() []byte {
	if t == nil {
		return nil
	}
	keys := make([]string, 0, len(t.toTag))
	for k := range t.toTag {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b := []byte{1}
	for _, k := range keys {
		b = append(b, k...)
		b = append(b, 0)
		b = append(b, t.toTag[k]...)
		b = append(b, 0)
	}
	return b
}

func decodeTags(b []byte) *paramTags {
	if len(b) == 0 {
		return nil
	}
	t := &paramTags{toTag: map[string]string{}, fromTag: map[string]string{}}
	parts := strings.Split(string(b[1:]), "\x00")
	for i := 0; i+1 < len(parts); i += 2 {
		t.toTag[parts[i]], t.fromTag[parts[i+1]] = parts[i+1], parts[i]
	}
	return t
}
