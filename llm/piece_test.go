package llm

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/gantry-dev/gantry/tool"
)

func bytesPieces(items [][]byte) []Piece {
	if items == nil {
		return nil
	}
	out := make([]Piece, len(items))
	for i, b := range items {
		out[i] = BytesPiece(b)
	}
	return out
}

// stringPieces is one BytesPiece per string.
func stringPieces(s ...string) []Piece {
	out := make([]Piece, len(s))
	for i, v := range s {
		out[i] = BytesPiece([]byte(v))
	}
	return out
}

// marshalString is encoding/json's encoding of s, with or without HTML
// escaping (the provider SDKs' encoders are forks of it).
func marshalString(t testing.TB, s string, html bool) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(html)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// toolResult is a message whose encoding holds text twice: as a tool
// result's content and as a text block, in a shape like the adapters'.
func toolResult(text string) (*Message, func(t testing.TB, html bool) [][]byte) {
	m := &Message{Role: RoleUser, Content: []Block{
		{Type: TypeToolResult, ToolUseID: "t1", Content: []tool.Content{{Type: tool.TypeText, Text: text}}},
		{Type: TypeText, Text: "note: " + text},
	}}
	enc := func(t testing.TB, html bool) [][]byte {
		var b []byte
		b = append(b, `{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":`...)
		b = append(b, marshalString(t, text, html)...)
		b = append(b, `}]},{"type":"text","text":`...)
		b = append(b, marshalString(t, "note: "+text, html)...)
		b = append(b, `}]}`...)
		return [][]byte{[]byte(`{"first":1}`), b}
	}
	return m, enc
}

func TestAppendEscapedMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{
		"", "plain", "quote \" backslash \\ slash /", "\n\t\r\b\f\x00\x01\x1f\x7f",
		"<a href=\"x\">&amp;</a>", "line\u2028sep\u2029para", "bad \xff\xfe utf8 \xe2\x82", "é中文🙂",
	} {
		for _, html := range []bool{true, false} {
			want := marshalString(t, s, html)
			got := append(appendEscaped([]byte{'"'}, s, html), '"')
			if !bytes.Equal(got, want) {
				t.Errorf("appendEscaped(%q, html=%v) = %s, want %s", s, html, got, want)
			}
		}
	}
}

func TestSplitTexts(t *testing.T) {
	long := strings.Repeat("     1\ta line of \"text\" <b> & more\n", 20)
	for _, html := range []bool{true, false} {
		m, enc := toolResult(long)
		raw := enc(t, html)
		pieces := splitTexts(raw, m)
		if len(pieces) != len(raw) {
			t.Fatalf("%d pieces from %d", len(pieces), len(raw))
		}
		held := 0
		for i, p := range pieces {
			if got := p.AppendTo(nil); !bytes.Equal(got, raw[i]) {
				t.Fatalf("html=%v piece %d\n got %s\nwant %s", html, i, got, raw[i])
			}
			if p.Len() != len(raw[i]) {
				t.Fatalf("Len = %d, want %d", p.Len(), len(raw[i]))
			}
			held += len(p.b)
			if p.t != nil {
				held += len(p.t.after)
			}
		}
		if pieces[1].t == nil || pieces[1].t.s != long || held > len(raw[0])+len(raw[1])-len(long) {
			t.Fatalf("html=%v: the text was not split off (%d bytes held of %d)", html, held, len(raw[0])+len(raw[1]))
		}
		var body Body
		body.AppendList(pieces)
		checkBody(t, &body, bytes.Join(raw, []byte(",")))
	}
	// An encoder that escapes otherwise: nothing split, the bytes kept.
	m, _ := toolResult(long)
	other := [][]byte{[]byte(`{"text":"` + strings.ReplaceAll(long, "\n", `\u000a`) + `"}`)}
	if p := splitTexts(other, m); p[0].t != nil || !bytes.Equal(p[0].b, other[0]) {
		t.Fatal("split a text the encoder escaped otherwise")
	}
	// Short texts stay bytes.
	m, enc := toolResult("short")
	if p := splitTexts(enc(t, true), m); p[1].t != nil {
		t.Fatal("split a short text")
	}
}

// FuzzTextPieces: a message's encoding split into pieces reads back as
// the encoding, byte for byte, through every reader path, whatever the
// text (escapes cut by the reader's buffer sizes included).
func FuzzTextPieces(f *testing.F) {
	f.Add("a line of text\n", uint8(20), true)
	f.Add("<&>\"\\\u2028\xff", uint8(40), false)
	f.Add("é\t中\x01", uint8(70), true)
	f.Fuzz(func(t *testing.T, unit string, reps uint8, html bool) {
		text := strings.Repeat(unit, int(reps))
		m, enc := toolResult(text)
		raw := enc(t, html)
		pieces := splitTexts(raw, m)
		if len(text) >= minTextPiece && utf8.ValidString(text) && pieces[1].t == nil {
			t.Fatalf("a valid text of %d bytes was not split off", len(text))
		}
		var body Body
		body.Append([]byte("["))
		body.AppendList(pieces)
		body.Append([]byte("]"))
		want := append(append([]byte("["), bytes.Join(raw, []byte(","))...), ']')
		checkBody(t, &body, want)
	})
}

// BenchmarkBodyRead reads a request body of 30 tool results of ~1 KB
// (line-numbered file text) as net/http's HTTP/2 transport does (Read into
// a buffer), with the texts held once and escaped at each read (text) or
// held escaped in the encodings (bytes): the CPU a turn pays for holding a
// conversation's texts once.
func BenchmarkBodyRead(b *testing.B) {
	text := strings.Repeat("     1\ta line of text\n", 45)
	for _, mode := range []string{"text", "bytes"} {
		b.Run(mode, func(b *testing.B) {
			items := make([]Piece, 30)
			for i := range items {
				m, enc := toolResult(text)
				p := splitTexts(enc(b, false)[1:], m)
				if mode == "bytes" {
					p[0] = BytesPiece(p[0].AppendTo(nil))
				}
				items[i] = p[0]
			}
			var body Body
			body.AppendList(items)
			buf := make([]byte, 16<<10)
			b.SetBytes(body.Len())
			b.ReportAllocs()
			for b.Loop() {
				r := body.Reader()
				for {
					if _, err := r.Read(buf); err != nil {
						break
					}
				}
			}
		})
	}
}
