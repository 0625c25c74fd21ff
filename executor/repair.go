package executor

import (
	"encoding/json"
	"unicode/utf8"
)

// RepairJSONPrefix turns a prefix of a JSON object, as a model streams it,
// into valid JSON showing as much of it as is known: an open string value
// is closed (a dangling escape dropped), open objects and arrays are closed,
// a key without a value, a trailing comma and an unfinished number or
// literal are dropped. It returns nil when the prefix has no usable content
// (empty, or not the beginning of a JSON value).
//
// It is best effort, for showing a call early (WAIT status events); the
// input a tool runs with is always the complete one.
func RepairJSONPrefix(prefix []byte) json.RawMessage {
	r := repairer{}
	return r.run(prefix)
}

type container struct {
	obj       bool
	expectKey bool // in an object, waiting for a key
	afterKey  bool // a key is complete, value not yet complete
}

type repairer struct {
	stack []container
	// safe is the length of the longest prefix that, with the closers of
	// stack[:safeDepth], is valid JSON.
	safe      int
	safeDepth int
}

func (r *repairer) mark(i int) {
	r.safe, r.safeDepth = i, len(r.stack)
}

func (r *repairer) run(p []byte) json.RawMessage {
	i := skipSpace(p, 0)
	if i >= len(p) || (p[i] != '{' && p[i] != '[') {
		if json.Valid(p) {
			return json.RawMessage(append([]byte(nil), p...))
		}
		return nil
	}
	for i < len(p) {
		c := p[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '{' || c == '[':
			if !r.valueAllowed() {
				return r.finish(p, nil)
			}
			r.stack = append(r.stack, container{obj: c == '{', expectKey: c == '{'})
			i++
			r.mark(i)
		case c == '}' || c == ']':
			if len(r.stack) == 0 || r.top().obj != (c == '}') {
				return r.finish(p, nil)
			}
			r.stack = r.stack[:len(r.stack)-1]
			i++
			r.valueDone()
			r.mark(i)
		case c == ',':
			if len(r.stack) == 0 {
				return r.finish(p, nil)
			}
			t := r.top()
			if t.obj {
				t.expectKey = true
				t.afterKey = false
			}
			i++
		case c == ':':
			i++
		case c == '"':
			end, closed := scanString(p, i)
			if len(r.stack) > 0 && r.top().obj && r.top().expectKey {
				if !closed {
					return r.finish(p, nil) // a partial key: drop it
				}
				t := r.top()
				t.expectKey, t.afterKey = false, true
				i = end
				continue
			}
			if !closed {
				// An open string value: show it, closed.
				return r.finish(p, closeString(p[:end]))
			}
			i = end
			r.valueDone()
			r.mark(i)
		default:
			end := i
			for end < len(p) && !isDelim(p[end]) {
				end++
			}
			if end == len(p) || !json.Valid(p[i:end]) {
				if end == len(p) && json.Valid(p[i:end]) {
					return r.finish(p, p[:end])
				}
				return r.finish(p, nil)
			}
			i = end
			r.valueDone()
			r.mark(i)
		}
	}
	return r.finish(p, nil)
}

func (r *repairer) top() *container { return &r.stack[len(r.stack)-1] }

func (r *repairer) valueAllowed() bool {
	return len(r.stack) == 0 || !r.top().obj || r.top().afterKey
}

func (r *repairer) valueDone() {
	if len(r.stack) > 0 && r.top().obj {
		r.top().afterKey = false
	}
}

// finish closes the containers. With open (a prefix ending in a complete or
// force-closed value at the current depth), the current stack is closed
// after it; otherwise the last safe point is used.
func (r *repairer) finish(p []byte, open []byte) json.RawMessage {
	var out []byte
	var stack []container
	if open != nil {
		out = append([]byte(nil), open...)
		stack = r.stack
	} else {
		out = append([]byte(nil), p[:r.safe]...)
		stack = r.stack[:r.safeDepth]
	}
	for k := len(stack) - 1; k >= 0; k-- {
		if stack[k].obj {
			out = append(out, '}')
		} else {
			out = append(out, ']')
		}
	}
	if !json.Valid(out) {
		return nil
	}
	return out
}

func skipSpace(p []byte, i int) int {
	for i < len(p) && (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r') {
		i++
	}
	return i
}

func isDelim(c byte) bool {
	switch c {
	case ',', '}', ']', ' ', '\t', '\n', '\r', ':', '"', '{', '[':
		return true
	}
	return false
}

// scanString scans the string starting at p[i] == '"'; it returns the index
// after the closing quote, or len(p) and false if the string is open.
func scanString(p []byte, i int) (int, bool) {
	for j := i + 1; j < len(p); j++ {
		switch p[j] {
		case '\\':
			j++
		case '"':
			return j + 1, true
		}
	}
	return len(p), false
}

// closeString closes an open string prefix (starting with its quote),
// dropping an unfinished escape or UTF-8 sequence.
func closeString(s []byte) []byte {
	out := append([]byte(nil), s...)
	// Find the start of the open string: the last unescaped quote.
	// Trim an unfinished escape at the end.
	n := len(out)
	k := n - 1
	bs := 0
	for k >= 0 && out[k] == '\\' {
		bs++
		k--
	}
	if bs%2 == 1 {
		out = out[:n-1]
	} else if idx := lastEscapeU(out); idx >= 0 {
		out = out[:idx]
	}
	if k := len(out) - 1; k >= 0 && out[k] >= 0x80 {
		for k > 0 && out[k]&0xC0 == 0x80 && len(out)-k < utf8.UTFMax {
			k--
		}
		if !utf8.FullRune(out[k:]) {
			out = out[:k]
		}
	}
	return append(out, '"')
}

// lastEscapeU returns the index of an unfinished \uXXXX escape at the end of
// s, or -1.
func lastEscapeU(s []byte) int {
	for k := 1; k <= 5 && k <= len(s); k++ {
		i := len(s) - k
		if s[i] == '\\' && i+1 < len(s) && s[i+1] == 'u' {
			// Count the backslashes before it: an escaped backslash is not
			// an escape.
			bs := 0
			for j := i; j >= 0 && s[j] == '\\'; j-- {
				bs++
			}
			if bs%2 == 1 && k < 6 {
				return i
			}
		}
	}
	return -1
}
