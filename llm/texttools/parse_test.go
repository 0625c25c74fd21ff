package texttools

import (
	"encoding/json"
	"maps"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/tool"
)

type call struct {
	name, input, err string
}

// collect feeds chunks to a parser and returns the text, the calls, and
// whether every call's deltas joined into its input.
func collect(t testing.TB, names []string, chunks []string) (string, []call) {
	t.Helper()
	return collectP(t, newParser(names), chunks)
}

// collectP is collect with a parser of one's own (with parameter aliases).
func collectP(t testing.TB, p *parser, chunks []string) (string, []call) {
	t.Helper()
	var text strings.Builder
	var calls []call
	var deltas strings.Builder
	open := false
	handle := func(ps []piece) {
		for _, pc := range ps {
			switch pc.kind {
			case pieceText:
				if open {
					t.Fatalf("text %q inside a call", pc.text)
				}
				text.WriteString(pc.text)
			case pieceStart:
				open = true
				deltas.Reset()
			case pieceDelta:
				if !open {
					t.Fatalf("delta outside a call")
				}
				deltas.WriteString(pc.text)
			case pieceEnd:
				open = false
				c := call{name: pc.name, input: string(pc.input)}
				if pc.err != nil {
					c.err = pc.err.Error()
				} else {
					if !json.Valid(pc.input) {
						t.Fatalf("invalid input %s", pc.input)
					}
					if got := deltas.String(); !jsonEqual(got, string(pc.input)) {
						t.Fatalf("deltas %q do not make the input %s", got, pc.input)
					}
				}
				calls = append(calls, c)
			}
		}
	}
	for _, c := range chunks {
		handle(p.feed(c))
	}
	handle(p.finish())
	if open {
		t.Fatal("call left open after finish")
	}
	return text.String(), calls
}

func jsonEqual(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}

var parseCases = []struct {
	name  string
	in    string
	text  string
	calls []call
}{
	{"plain text", "Hello <b>world</b> a<b & c", "Hello <b>world</b> a<b & c", nil},
	{"one call", "Reading.\n<Read>\n<file_path>/a.go</file_path>\n</Read>\n", "Reading.\n\n",
		[]call{{name: "Read", input: `{"file_path":"/a.go"}`}}},
	{"no params", "<TaskList></TaskList>", "", []call{{name: "TaskList", input: `{}`}}},
	{"two calls", "<Read><file_path>a</file_path></Read> and <Bash><command>ls -l</command><timeout>5</timeout></Bash>done",
		" and done", []call{{name: "Read", input: `{"file_path":"a"}`}, {name: "Bash", input: `{"command":"ls -l","timeout":"5"}`}}},
	{"code with < and &", "<Write>\n<file_path>/x.go</file_path>\n<content>\nif a < b && c > d {\n\treturn \"<Read>\" // </conten\n}\n</content>\n</Write>",
		"", []call{{name: "Write", input: `{"file_path":"/x.go","content":"if a \u003c b \u0026\u0026 c \u003e d {\n\treturn \"\u003cRead\u003e\" // \u003c/conten\n}"}`}}},
	{"entities kept verbatim", "<Bash><command>echo &lt;x&gt; &amp;</command></Bash>", "",
		[]call{{name: "Bash", input: `{"command":"echo \u0026lt;x\u0026gt; \u0026amp;"}`}}},
	{"newlines kept inside", "<Write><content>\n\na\n\n</content></Write>", "",
		[]call{{name: "Write", input: `{"content":"\na\n"}`}}},
	{"unknown tag is text", "<Frob><x>1</x></Frob>", "<Frob><x>1</x></Frob>", nil},
	{"unknown snake_case call", "Let me look.\n<read_file>\n<path>a.go</path>\n</read_file>", "Let me look.\n",
		[]call{{name: "read_file", input: `{"path":"a.go"}`}}},
	{"snake_case tag without parameters is text", "a <my_var> b <x_y>\n\ntext</x_y>", "a <my_var> b <x_y>\n\ntext</x_y>", nil},
	{"snake_case tag at the end is text", "see <read_file>", "see <read_file>", nil},
	{"prefix of a tool name is text", "<Rea and <Readx>", "<Rea and <Readx>", nil},
	{"tool name at the end", "see <Read", "see <Read", nil},
	{"text between params", "<Read>hello<file_path>a</file_path></Read>after", "after",
		[]call{{name: "Read", input: `{}`, err: "text outside the parameter tags"}}},
	{"duplicate param", "<Read><a>1</a><a>2</a></Read>", "",
		[]call{{name: "Read", input: `{}`, err: "given twice"}}},
	{"unclosed value", "<Read><file_path>abc", "",
		[]call{{name: "Read", input: `{}`, err: "was not closed with </file_path>"}}},
	{"unclosed call", "<Read><file_path>abc</file_path>", "",
		[]call{{name: "Read", input: `{}`, err: "not closed with </Read>"}}},
	{"wrong closing tag", "<Read><file_path>a</file_path></Bash></Read>x", "x",
		[]call{{name: "Read", input: `{}`, err: "unexpected </Bash>"}}},
	{"malformed then good", "<Read>?</Read><Read><file_path>b</file_path></Read>", "",
		[]call{{name: "Read", err: "text outside the parameter tags", input: `{}`}, {name: "Read", input: `{"file_path":"b"}`}}},
	{"utf-8", "é<Bash><command>echo ü€😀</command></Bash>😀", "é😀",
		[]call{{name: "Bash", input: `{"command":"echo ü€😀"}`}}},
}

func TestParserEverySplit(t *testing.T) {
	names := []string{"Read", "Bash", "Write", "TaskList"}
	for _, tc := range parseCases {
		t.Run(tc.name, func(t *testing.T) {
			check := func(label string, chunks []string) {
				t.Helper()
				text, calls := collect(t, names, chunks)
				if text != tc.text {
					t.Fatalf("%s: text = %q, want %q", label, text, tc.text)
				}
				if len(calls) != len(tc.calls) {
					t.Fatalf("%s: calls = %+v, want %+v", label, calls, tc.calls)
				}
				for i, c := range calls {
					w := tc.calls[i]
					if c.name != w.name || (w.err == "" && !jsonEqual(c.input, w.input)) || (w.err == "") != (c.err == "") || !strings.Contains(c.err, w.err) {
						t.Fatalf("%s: call %d = %+v, want %+v", label, i, c, w)
					}
					if c.err != "" && !strings.Contains(c.err, Syntax) {
						t.Fatalf("%s: error %q does not quote the syntax", label, c.err)
					}
				}
			}
			check("whole", []string{tc.in})
			for i := 1; i < len(tc.in); i++ {
				check("split", []string{tc.in[:i], tc.in[i:]})
			}
			var bytes []string
			for i := range len(tc.in) {
				bytes = append(bytes, tc.in[i:i+1])
			}
			check("bytes", bytes)
		})
	}
}

func TestFormatCallRoundTrip(t *testing.T) {
	inputs := []string{
		`{"file_path":"/a.go","offset":10,"limit":5}`,
		`{"content":"line1\nline2\n","file_path":"x"}`,
		`{"content":"\nstarts with a newline"}`,
		`{"edits":[{"old":"a","new":"b"}],"flag":true}`,
		`{}`,
	}
	for _, in := range inputs {
		text, calls := collect(t, []string{"T"}, []string{FormatCall("T", json.RawMessage(in))})
		if text != "\n" || len(calls) != 1 || calls[0].err != "" {
			t.Fatalf("%s: text %q calls %+v", in, text, calls)
		}
		// Non-string values come back as their JSON text (the executor
		// coerces them).
		var raw map[string]json.RawMessage
		_ = json.Unmarshal([]byte(in), &raw)
		want := map[string]string{}
		for k, v := range raw {
			var s string
			if json.Unmarshal(v, &s) == nil {
				want[k] = s
			} else {
				want[k] = string(v)
			}
		}
		wb, _ := json.Marshal(want)
		if !jsonEqual(calls[0].input, string(wb)) {
			t.Fatalf("round trip of %s = %s, want %s", in, calls[0].input, wb)
		}
	}
}

func FuzzParser(f *testing.F) {
	for _, tc := range parseCases {
		f.Add(tc.in, uint8(3))
	}
	f.Add("<Grep>\n<pattern>a<b</pattern>\n<i>true</i><-A>3</-A>\n</Grep>", uint8(2))
	f.Add("<Grep><--i>x</--i><-->y</--></Grep><Grep><-", uint8(1))
	f.Add("<Grep><A>1</A><A>2</A></Grep>", uint8(5))
	f.Fuzz(func(t *testing.T, in string, step uint8) {
		names := []string{"Read", "Bash", "Write", "TaskList", "Grep"}
		newP := func() *parser { return newParserTags(names, map[string]*paramTags{"Grep": tagsOf(grepLike)}) }
		collect := func(t testing.TB, _ []string, chunks []string) (string, []call) { return collectP(t, newP(), chunks) }
		wholeText, wholeCalls := collect(t, names, []string{in})
		n := int(step%16) + 1
		var chunks []string
		for i := 0; i < len(in); i += n {
			chunks = append(chunks, in[i:min(i+n, len(in))])
		}
		text, calls := collect(t, names, chunks)
		if text != wholeText || len(calls) != len(wholeCalls) {
			t.Fatalf("chunked parse differs: %q %+v vs %q %+v", text, calls, wholeText, wholeCalls)
		}
		for i := range calls {
			if calls[i] != wholeCalls[i] {
				t.Fatalf("call %d: %+v vs %+v", i, calls[i], wholeCalls[i])
			}
		}
		if len(calls) == 0 && text != in {
			t.Fatalf("no calls but text %q != input %q", text, in)
		}
	})
}

// grepLike has Grep's parameters whose names are not tags, and one whose
// alias would be another parameter's name.
var grepLike = &tool.Spec{Name: "Grep", InputSchema: json.RawMessage(`{"type":"object","properties":{
	"pattern":{"type":"string"},"-i":{"type":"boolean"},"-A":{"type":"number"},"-B":{"type":"number"},
	"-C":{"type":"number"},"-n":{"type":"boolean"},"-o":{"type":"boolean"},"context":{"type":"number"},
	"-context":{"type":"number"},"%":{"type":"string"}},"required":["pattern"]}`)}

func TestParamTags(t *testing.T) {
	tags := tagsOf(grepLike)
	want := map[string]string{"-i": "i", "-A": "A", "-B": "B", "-C": "C", "-n": "n", "-o": "o", "%": "param_25"}
	if len(tags.toTag) != len(want) {
		t.Errorf("aliases %v, want %v", tags.toTag, want)
	}
	for k, tag := range want {
		if tags.tag(k) != tag || tags.param(tag) != k {
			t.Errorf("%q: tag %q, back %q; want %q", k, tags.tag(k), tags.param(tag), tag)
		}
	}
	// "-context" would be <context>, another parameter: it keeps its name.
	if tags.tag("-context") != "-context" || tags.param("context") != "context" {
		t.Errorf("clash: %q %q", tags.tag("-context"), tags.param("context"))
	}
	if back := decodeTags(tags.encode()); !maps.Equal(back.toTag, tags.toTag) || !maps.Equal(back.fromTag, tags.fromTag) {
		t.Errorf("encoded and decoded: %+v, want %+v", back, tags)
	}
	if tagsOf(&tool.Spec{Name: "Read", InputSchema: json.RawMessage(`{"type":"object","properties":{"file_path":{}}}`)}) != nil {
		t.Error("aliases for valid names")
	}

	p := func() *parser { return newParserTags([]string{"Grep"}, map[string]*paramTags{"Grep": tags}) }
	in := "Searching.\n<Grep>\n<pattern>a<b</pattern>\n<i>true</i>\n<A>3</A>\n<-n>true</-n>\n<-context>2</-context>\n</Grep>"
	for _, n := range []int{1, 3, len(in)} {
		var chunks []string
		for i := 0; i < len(in); i += n {
			chunks = append(chunks, in[i:min(i+n, len(in))])
		}
		text, calls := collectP(t, p(), chunks)
		if text != "Searching.\n" || len(calls) != 1 || calls[0].err != "" ||
			!jsonEqual(calls[0].input, `{"pattern":"a<b","-i":"true","-A":"3","-n":"true","-context":"2"}`) {
			t.Fatalf("chunk %d: %q %+v", n, text, calls)
		}
	}
	// A parameter given under its alias and its name is given twice.
	if _, calls := collectP(t, p(), []string{"<Grep><i>true</i><-i>false</-i></Grep>"}); len(calls) != 1 || !strings.Contains(calls[0].err, "given twice") {
		t.Errorf("%+v", calls)
	}

	// Earlier calls are written back with the aliases and read back the same.
	for _, in := range []string{`{"pattern":"x","-i":true,"-A":3,"-context":1,"%":"p"}`, `{"-o":true}`} {
		text := formatCall("Grep", json.RawMessage(in), tags)
		if strings.Contains(text, "<-i>") || strings.Contains(text, "<-A>") {
			t.Errorf("written without aliases: %s", text)
		}
		_, calls := collectP(t, p(), []string{text})
		var want map[string]any
		json.Unmarshal([]byte(in), &want)
		for k, v := range want {
			b, _ := json.Marshal(v)
			if s, ok := v.(string); ok {
				b = []byte(s)
			}
			want[k] = string(b)
		}
		wb, _ := json.Marshal(want)
		if len(calls) != 1 || !jsonEqual(calls[0].input, string(wb)) {
			t.Errorf("round trip of %s: %s gave %+v", in, text, calls)
		}
	}
	if got := FormatCall("Grep", json.RawMessage(`{"-i":true}`)); got != "<Grep>\n<i>true</i>\n</Grep>\n" {
		t.Errorf("FormatCall %q", got)
	}
}
