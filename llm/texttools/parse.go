package texttools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Syntax is the call syntax told to the model, quoted again in the error
// of a malformed call.
const Syntax = "<tool_name>\n<parameter_name>value</parameter_name>\n</tool_name>"

// maxTagName bounds a tag name; a longer name is not a tag.
const maxTagName = 128

// piece is one output of the [parser]: text, the opening of a call, a
// fragment of its input JSON, or its end.
type piece struct {
	kind  pieceKind
	text  string          // pieceText: the text; pieceDelta: a JSON fragment
	name  string          // pieceStart, pieceEnd: the tool name
	input json.RawMessage // pieceEnd: the complete input object
	err   error           // pieceEnd: why the call is malformed
}

type pieceKind int

const (
	pieceText pieceKind = iota + 1
	pieceStart
	pieceDelta
	pieceEnd
)

type parseState int

const (
	stText  parseState = iota // outside calls
	stCall                    // inside <tool>, between parameters
	stParam                   // inside <tool><param>, reading the value
	stBad                     // inside a malformed call: skipping to </tool>
)

// parser turns streamed text into text and tool calls. A call is a tag
// named after a known tool holding one tag per parameter, whose content is
// the parameter's value taken verbatim (no entity decoding; one newline
// right after the opening tag and one right before the closing tag are
// dropped, so a value may sit on lines of its own). Text that might still
// begin a call is held back until it is decided, so text pieces never
// contain a call. The zero parser is not usable: see [newParser].
type parser struct {
	tools map[string]bool
	names []string
	// tags are the parameter aliases of the tools that have some.
	tags map[string]*paramTags

	state  parseState
	buf    []byte // undecided input held back
	tool   string
	param  string
	pclose string // "</param>"
	tclose string // "</tool>"
	params []string
	vals   map[string]string
	val    strings.Builder
	began  bool // the value's leading newline is decided
	nl     bool // a newline at the end of the value is held back
	why    string
	out    []piece
}

func newParser(names []string) *parser {
	return newParserTags(names, nil)
}

// newParserTags is [newParser] with the tools' parameter aliases: a
// parameter tag that is an alias ([ParamTag]) stands for its parameter.
func newParserTags(names []string, tags map[string]*paramTags) *parser {
	p := &parser{tools: make(map[string]bool, len(names)), tags: tags}
	for _, n := range names {
		if n != "" && !p.tools[n] {
			p.tools[n] = true
			p.names = append(p.names, n)
		}
	}
	return p
}

// feed parses s and returns the pieces it completes. The returned slice is
// reused by the next call.
func (p *parser) feed(s string) []piece {
	p.out = p.out[:0]
	p.buf = append(p.buf, s...)
	p.run(false)
	return p.out
}

// finish ends the input: held-back text is text, and an unfinished call is
// malformed.
func (p *parser) finish() []piece {
	p.out = p.out[:0]
	p.run(true)
	switch p.state {
	case stText:
		if len(p.buf) > 0 {
			p.emitText(string(p.buf))
		}
	case stParam:
		tag := strings.TrimSuffix(strings.TrimPrefix(p.pclose, "</"), ">")
		p.fail(fmt.Sprintf("the value of <%s> was not closed with </%s>", tag, tag))
		p.endBad()
	case stCall:
		p.fail(fmt.Sprintf("the call was not closed with </%s>", p.tool))
		p.endBad()
	case stBad:
		p.endBad()
	}
	p.buf = p.buf[:0]
	return p.out
}

func (p *parser) run(final bool) {
	off := 0
	for off < len(p.buf) {
		var n int
		b := p.buf[off:]
		switch p.state {
		case stText:
			n = p.inText(b, final)
		case stCall:
			n = p.inCall(b, final)
		case stParam:
			n = p.inParam(b, final)
		case stBad:
			n = p.inBad(b, final)
		}
		if n == 0 {
			break // wait for more input
		}
		off += n
	}
	p.buf = p.buf[:copy(p.buf, p.buf[off:])]
}

// inText consumes text up to a possible call opening.
func (p *parser) inText(b []byte, final bool) int {
	i := bytes.IndexByte(b, '<')
	if i < 0 {
		p.emitText(string(b))
		return len(b)
	}
	if i > 0 {
		p.emitText(string(b[:i]))
		return i
	}
	name, n := tagAt(b, false)
	switch {
	case n > 0 && p.tools[name]:
		return p.open(name, n)
	case n > 0 && strings.IndexByte(name, '_') > 0:
		// A snake_case tag is never HTML: a call of a tool that is not in
		// the request (read_file, execute_command …) when a parameter tag
		// follows. It goes on as a call, and the executor answers it as an
		// unknown tool (with the names it may have meant).
		switch callFollows(b[n:], final) {
		case 1:
			return p.open(name, n)
		case 0:
			return 0
		}
	case n == 0 && !final:
		return 0 // an unfinished tag: a call or not is decided once it is whole
	}
	p.emitText("<")
	return 1
}

// open starts the call of name whose opening tag is n bytes long.
func (p *parser) open(name string, n int) int {
	p.tool, p.params, p.vals, p.why = name, p.params[:0], nil, ""
	p.tclose = "</" + name + ">"
	p.state = stCall
	p.out = append(p.out, piece{kind: pieceStart, name: name})
	return n
}

// maxCallGap bounds the whitespace between an unknown snake_case tag and
// its first parameter tag.
const maxCallGap = 64

// callFollows reports whether b (what follows an unknown snake_case tag)
// starts with optional whitespace and an opening tag: 1 yes, -1 no, 0 not
// decided yet (more input may come).
func callFollows(b []byte, final bool) int {
	i := 0
	for i < len(b) && i <= maxCallGap && isSpace(b[i]) {
		i++
	}
	switch {
	case i > maxCallGap:
		return -1
	case i+1 >= len(b):
		if final {
			return -1
		}
		return 0
	case b[i] == '<' && isNameByte(b[i+1], true):
		return 1
	}
	return -1
}

// inCall consumes whitespace, a parameter's opening tag, or the call's
// closing tag.
func (p *parser) inCall(b []byte, final bool) int {
	i := 0
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	if i > 0 {
		return i
	}
	if b[0] != '<' {
		return p.bad(b, final, "text outside the parameter tags (put every value inside <parameter_name>…</parameter_name>)")
	}
	name, n := tagAt(b, true)
	switch {
	case n > 0 && name == p.tool:
		p.endCall()
		return n
	case n > 0:
		return p.bad(b, final, fmt.Sprintf("unexpected </%s> inside the call", name))
	case n == 0 && !final:
		return 0
	}
	tag, n := paramTagAt(b)
	switch {
	case n == 0 && !final:
		return 0
	case n <= 0:
		return p.bad(b, final, fmt.Sprintf("a '<' that begins neither a parameter tag nor </%s>", p.tool))
	}
	name = p.tags[p.tool].param(tag)
	if _, dup := p.vals[name]; dup {
		p.fail(fmt.Sprintf("parameter <%s> is given twice", tag))
		p.state = stBad
		return n
	}
	p.param, p.began, p.nl = name, false, false
	p.pclose = "</" + tag + ">"
	p.val.Reset()
	p.state = stParam
	if len(p.params) == 0 {
		p.delta(`{"` + jsonEscape(name) + `":"`)
	} else {
		p.delta(`,"` + jsonEscape(name) + `":"`)
	}
	return n
}

// inParam consumes a parameter's value up to its closing tag.
func (p *parser) inParam(b []byte, final bool) int {
	if !p.began {
		p.began = true
		if b[0] == '\n' {
			return 1
		}
	}
	closing := p.pclose
	if b[0] == '<' {
		if len(b) >= len(closing) && string(b[:len(closing)]) == closing {
			if p.vals == nil {
				p.vals = make(map[string]string)
			}
			p.vals[p.param] = p.val.String() // a held-back newline is dropped
			p.params = append(p.params, p.param)
			p.delta(`"`)
			p.state = stCall
			return len(closing)
		}
		if !final && len(b) < len(closing) && closing[:len(b)] == string(b) {
			return 0
		}
	}
	i := 1 + bytes.IndexByte(b[1:], '<')
	if i == 0 {
		i = len(b)
	}
	if i == len(b) && !final {
		// Keep an incomplete UTF-8 sequence for the next chunk.
		i -= partialRune(b)
		if i == 0 {
			return 0
		}
	}
	c := b[:i]
	if c[len(c)-1] == '\n' {
		// It may be the newline before the closing tag: hold it back.
		p.addValue(c[:len(c)-1], true)
		p.nl = true
	} else {
		p.addValue(c, false)
	}
	return i
}

// addValue appends s to the value, after a held-back newline.
func (p *parser) addValue(s []byte, flush bool) {
	if len(s) == 0 && !flush {
		return
	}
	if p.nl {
		p.nl = false
		p.val.WriteByte('\n')
		p.delta(`\n`)
	}
	if len(s) > 0 {
		p.val.Write(s)
		p.delta(jsonEscape(string(s)))
	}
}

// inBad skips the rest of a malformed call, up to its closing tag.
func (p *parser) inBad(b []byte, final bool) int {
	closing := p.tclose
	if i := bytes.Index(b, []byte(closing)); i >= 0 {
		p.endBad()
		return i + len(closing)
	}
	if final {
		return len(b)
	}
	// Keep what may be the beginning of the closing tag.
	n := len(b) - (len(closing) - 1)
	for k := max(n, 0); k < len(b); k++ {
		if b[k] == '<' && strings.HasPrefix(closing, string(b[k:])) {
			return k
		}
	}
	return len(b)
}

// bad marks the call malformed and goes on skipping it from b.
func (p *parser) bad(b []byte, final bool, why string) int {
	p.fail(why)
	p.state = stBad
	return p.inBad(b, final)
}

func (p *parser) fail(why string) {
	if p.why == "" {
		p.why = why
	}
}

func (p *parser) endCall() {
	var in []byte
	if len(p.params) == 0 {
		in = []byte(`{}`)
		p.delta(`{}`)
	} else {
		in = append(in, '{')
		for i, k := range p.params {
			if i > 0 {
				in = append(in, ',')
			}
			in = appendJSONString(in, k)
			in = append(in, ':')
			in = appendJSONString(in, p.vals[k])
		}
		in = append(in, '}')
		p.delta(`}`)
	}
	p.out = append(p.out, piece{kind: pieceEnd, name: p.tool, input: in})
	p.state = stText
}

func (p *parser) endBad() {
	p.out = append(p.out, piece{kind: pieceEnd, name: p.tool, input: json.RawMessage(`{}`),
		err: errors.New("malformed " + p.tool + " call: " + p.why + ". Write a call as\n" + Syntax)})
	p.state = stText
}

func (p *parser) delta(s string) {
	if p.state == stBad {
		return
	}
	if k := len(p.out) - 1; k >= 0 && p.out[k].kind == pieceDelta {
		p.out[k].text += s
		return
	}
	p.out = append(p.out, piece{kind: pieceDelta, text: s})
}

func (p *parser) emitText(s string) {
	if k := len(p.out) - 1; k >= 0 && p.out[k].kind == pieceText {
		p.out[k].text += s
		return
	}
	p.out = append(p.out, piece{kind: pieceText, text: s})
}

// tagAt reads the tag at the start of b ("<name>", or "</name>" when
// closing is set). n > 0 is the tag's length; n == 0 means b is too short
// to decide; n < 0 means b does not start with such a tag.
func tagAt(b []byte, closing bool) (name string, n int) {
	i := 1
	if closing {
		if len(b) < 2 {
			return "", 0
		}
		if b[1] != '/' {
			return "", -1
		}
		i = 2
	}
	start := i
	for ; i < len(b); i++ {
		c := b[i]
		switch {
		case c == '>' && i > start:
			return string(b[start:i]), i + 1
		case i-start >= maxTagName:
			return "", -1
		case isNameByte(c, i == start):
		default:
			return "", -1
		}
	}
	return "", 0
}

// paramTagAt reads a parameter's opening tag at the start of b, like
// tagAt, but also takes a name that starts with '-' (<-i>): a model that
// writes Grep's "-i" as it is named rather than as its alias <i> is
// understood. Its closing tag is </-i>.
func paramTagAt(b []byte) (name string, n int) {
	if len(b) >= 2 && b[1] == '-' {
		i := 2
		for i < len(b) && b[i] == '-' {
			i++
		}
		if i == len(b) {
			return "", 0
		}
		if !isNameByte(b[i], true) && !(b[i] >= '0' && b[i] <= '9') {
			return "", -1
		}
		rest, m := tagAt(append([]byte{'<', 'x'}, b[i:]...), false)
		switch {
		case m == 0:
			return "", 0
		case m < 0 || i-1+len(rest) > maxTagName:
			return "", -1
		}
		return string(b[1:i]) + rest[1:], i + m - 2
	}
	return tagAt(b, false)
}

func isNameByte(c byte, first bool) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_':
		return true
	case c >= '0' && c <= '9', c == '-', c == '.', c == ':':
		return !first
	}
	return false
}

// partialRune returns the length of an incomplete UTF-8 sequence at the end
// of b (0 if it ends on a whole rune).
func partialRune(b []byte) int {
	for k := 1; k <= utf8.UTFMax-1 && k <= len(b); k++ {
		c := b[len(b)-k]
		if c < 0x80 {
			return 0
		}
		if utf8.RuneStart(c) {
			if utf8.FullRune(b[len(b)-k:]) {
				return 0
			}
			return k
		}
	}
	return 0
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// jsonEscape returns s escaped for the inside of a JSON string.
func jsonEscape(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
			return string(appendEscaped(nil, s))
		}
	}
	return s
}

// appendJSONString appends s as a JSON string.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	dst = appendEscaped(dst, s)
	return append(dst, '"')
}

const hexDigits = "0123456789abcdef"

// appendEscaped appends s escaped for the inside of a JSON string; invalid
// UTF-8 becomes U+FFFD, as encoding/json does.
func appendEscaped(dst []byte, s string) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c == '\n':
				dst = append(dst, '\\', 'n')
			case c == '\r':
				dst = append(dst, '\\', 'r')
			case c == '\t':
				dst = append(dst, '\\', 't')
			case c < 0x20:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			dst = append(dst, `\ufffd`...)
		} else {
			dst = append(dst, s[i:i+n]...)
		}
		i += n
	}
	return dst
}
