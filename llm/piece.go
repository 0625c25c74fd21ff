package llm

import (
	"bytes"
	"unicode/utf8"
)

// A Piece is one element of a request body's array — an encoded message —
// as [MessageEncodings.Encode] returns it and [StreamBody] splices it:
// bytes, or bytes around a text of the message that is written
// JSON-escaped when the body is read. A conversation's long texts (tool
// results, replies) are then held once, as the message's string, instead
// of a second time inside the message's encoding for as long as the
// conversation's encodings are kept (see [MessageEncodings]).
//
// The zero value is an empty piece.
type Piece struct {
	b []byte    // the bytes; with t, those before the text
	t *textPart // non-nil: b, then t.s escaped, then t.after
}

// textPart is a text written JSON-escaped (without its quotes, which are
// in the bytes around it), the way the provider SDKs' encoders write a
// string: with or without the escaping of <, > and &.
type textPart struct {
	s     string
	html  bool
	n     int    // the escaped length of s
	after []byte // the piece's bytes after the text (not used in a Body's parts)
}

// BytesPiece returns a piece of the bytes b, which must not be modified
// afterwards.
func BytesPiece(b []byte) Piece { return Piece{b: b} }

// Len returns the piece's length in bytes as written.
func (p Piece) Len() int {
	if p.t == nil {
		return len(p.b)
	}
	return len(p.b) + p.t.n + len(p.t.after)
}

// AppendTo appends the piece as written to dst and returns the extended
// slice.
func (p Piece) AppendTo(dst []byte) []byte {
	dst = append(dst, p.b...)
	if p.t != nil {
		dst = appendEscaped(dst, p.t.s, p.t.html)
		dst = append(dst, p.t.after...)
	}
	return dst
}

// minTextPiece is the shortest text worth holding once: below it, the
// bytes saved do not pay for the piece's bookkeeping.
const minTextPiece = 256

// splitTexts returns the pieces of one encoded message: each of enc's
// slices, and where the JSON string of one of m's long texts appears in a
// slice exactly as [appendEscaped] writes it (with or without HTML
// escaping), the bytes around it as a piece that references the text
// instead of holding its escaped copy. What the pieces write is byte for
// byte enc: a text is split off only where its escaping was found, so an
// encoder that escapes otherwise costs the saving, never the output. The
// bytes around a text are copied (the encoder's buffer is let go).
func splitTexts(enc [][]byte, m *Message) []Piece {
	out := make([]Piece, len(enc))
	for i, b := range enc {
		out[i] = Piece{b: b}
	}
	var buf []byte
	split := func(s string) {
		if len(s) < minTextPiece {
			return
		}
		for _, html := range [2]bool{true, false} {
			buf = append(appendEscaped(append(buf[:0], '"'), s, html), '"')
			for i := range out {
				p := &out[i]
				if p.t != nil {
					continue
				}
				at := bytes.Index(p.b, buf)
				if at < 0 {
					continue
				}
				end := at + len(buf) - 1 // the closing quote
				around := make([]byte, 0, at+1+len(p.b)-end)
				around = append(append(around, p.b[:at+1]...), p.b[end:]...)
				*p = Piece{b: around[: at+1 : at+1], t: &textPart{s: s, html: html, n: len(buf) - 2, after: around[at+1:]}}
				return
			}
			if !htmlSensitive(s) {
				return // the same bytes either way: not there
			}
		}
	}
	for j := range m.Content {
		bl := &m.Content[j]
		split(bl.Text)
		for k := range bl.Content {
			split(bl.Content[k].Text)
		}
	}
	return out
}

func htmlSensitive(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '<', '>', '&':
			return true
		}
	}
	return false
}

const hexDigits = "0123456789abcdef"

// escapeUnit returns the escape of the character at the start of s and its
// length in s, or ok false when it is written as it is.
func escapeUnit(s string, html bool, out *[6]byte) (esc []byte, size int, ok bool) {
	b := s[0]
	if b < utf8.RuneSelf {
		switch {
		case b == '"' || b == '\\':
			out[0], out[1] = '\\', b
			return out[:2], 1, true
		case b >= 0x20 && !(html && (b == '<' || b == '>' || b == '&')):
			return nil, 1, false
		}
		switch b {
		case '\b':
			out[0], out[1] = '\\', 'b'
			return out[:2], 1, true
		case '\f':
			out[0], out[1] = '\\', 'f'
			return out[:2], 1, true
		case '\n':
			out[0], out[1] = '\\', 'n'
			return out[:2], 1, true
		case '\r':
			out[0], out[1] = '\\', 'r'
			return out[:2], 1, true
		case '\t':
			out[0], out[1] = '\\', 't'
			return out[:2], 1, true
		}
		*out = [6]byte{'\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF]}
		return out[:], 1, true
	}
	c, size := utf8.DecodeRuneInString(s)
	switch {
	case c == utf8.RuneError && size == 1:
		*out = [6]byte{'\\', 'u', 'f', 'f', 'f', 'd'}
		return out[:], 1, true
	case c == '\u2028' || c == '\u2029':
		*out = [6]byte{'\\', 'u', '2', '0', '2', hexDigits[c&0xF]}
		return out[:], size, true
	}
	return nil, size, false
}

// appendEscaped appends s as the provider SDKs' JSON encoders (forks of
// encoding/json) write the inside of a string: ", \ and control
// characters escaped (\b, \f, \n, \r, \t or \u00XX), invalid UTF-8 as
// \ufffd, U+2028 and U+2029 escaped, and with html also <, > and &.
func appendEscaped(dst []byte, s string, html bool) []byte {
	var u [6]byte
	start := 0
	for i := 0; i < len(s); {
		esc, size, ok := escapeUnit(s[i:], html, &u)
		if !ok {
			i += size
			continue
		}
		dst = append(dst, s[start:i]...)
		dst = append(dst, esc...)
		i += size
		start = i
	}
	return append(dst, s[start:]...)
}

// plainASCII classifies bytes for escaping: 1 written as it is, 2 written
// as it is unless HTML is escaped (<, >, &), 0 escaped or not ASCII.
const plainASCII = "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x01\x00\x01\x01\x01\x02\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x02\x01\x02\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x00\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"

// escapeInto writes as much of s, escaped, as fits in dst without cutting a
// character or an escape, and returns the bytes written and the bytes of s
// used. It writes nothing when the first character does not fit.
func escapeInto(dst []byte, s string, html bool) (written, used int) {
	limit := uint8(2) // the class below which a byte is not plain
	if html {
		limit = 1
	}
	var u [6]byte
	for used < len(s) && written < len(dst) {
		// A run of plain bytes: copy as much as fits.
		end := min(len(s), used+len(dst)-written)
		j := used
		for j < end && plainASCII[s[j]] != 0 && plainASCII[s[j]] <= limit {
			j++
		}
		if j > used {
			written += copy(dst[written:], s[used:j])
			used = j
			continue
		}
		switch c := s[used]; c {
		case '\n', '\t', '"', '\\':
			if len(dst)-written < 2 {
				return written, used
			}
			dst[written] = '\\'
			switch c {
			case '\n':
				dst[written+1] = 'n'
			case '\t':
				dst[written+1] = 't'
			default:
				dst[written+1] = c
			}
			written += 2
			used++
			continue
		}
		esc, size, ok := escapeUnit(s[used:], html, &u)
		if !ok {
			esc = []byte(s[used : used+size]) // a character written as it is
		}
		if len(esc) > len(dst)-written {
			return written, used
		}
		written += copy(dst[written:], esc)
		used += size
	}
	return written, used
}
