package llm_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/tool"
)

// recorder is an adapter's encode function that names the message and
// variant it encodes and counts its calls; system messages become no
// piece, assistant messages two.
type recorder struct {
	msgs  *[]llm.Message
	calls []int
}

func (r *recorder) encode(i int, v uint8) ([][]byte, error) {
	r.calls = append(r.calls, i)
	m := (*r.msgs)[i]
	switch m.Role {
	case llm.RoleSystem:
		return nil, nil
	case llm.RoleAssistant:
		return [][]byte{fmt.Appendf(nil, "a:%s/%d", m.Text(), v), []byte("a2")}, nil
	}
	if m.Text() == "fail" {
		return nil, errors.New("cannot encode")
	}
	return [][]byte{fmt.Appendf(nil, "%s:%s/%d", m.Role, m.Text(), v)}, nil
}

func joined(p []llm.Piece) string {
	s := make([]string, len(p))
	for i, b := range p {
		s[i] = string(b.AppendTo(nil))
	}
	return strings.Join(s, " ")
}

func TestMessageEncodings(t *testing.T) {
	var c llm.MessageEncodings
	var msgs []llm.Message
	r := &recorder{msgs: &msgs}
	encode := func(variant func(int) uint8) string {
		t.Helper()
		r.calls = nil
		out, err := c.Encode([]llm.Piece{llm.BytesPiece([]byte("head"))}, "fmt", msgs, variant, r.encode)
		if err != nil {
			t.Fatal(err)
		}
		return joined(out)
	}
	lastMarked := func(i int) uint8 {
		if i == len(msgs)-1 {
			return 1
		}
		return 0
	}
	check := func(step, got, want string, calls ...int) {
		t.Helper()
		if got != want {
			t.Errorf("%s: pieces %q, want %q", step, got, want)
		}
		if !slices.Equal(r.calls, calls) {
			t.Errorf("%s: encoded messages %v, want %v", step, r.calls, calls)
		}
	}

	msgs = []llm.Message{llm.UserText("u0")}
	check("first", encode(lastMarked), "head user:u0/1", 0)
	msgs = append(msgs, llm.AssistantMessage(llm.Text("r1")), llm.UserText("u2"))
	// u0 lost its mark: encoded again; the rest is new.
	check("append", encode(lastMarked), "head user:u0/0 a:r1/0 a2 user:u2/1", 0, 1, 2)
	check("same again", encode(lastMarked), "head user:u0/0 a:r1/0 a2 user:u2/1")
	check("nil variant is 0", encode(nil), "head user:u0/0 a:r1/0 a2 user:u2/0", 2)

	// A system message is sent as no piece and still cached.
	msgs = append(msgs, llm.Message{Role: llm.RoleSystem, Content: []llm.Block{llm.Text("s")}})
	check("system", encode(nil), "head user:u0/0 a:r1/0 a2 user:u2/0", 3)

	// Rewind: a shorter conversation keeps its prefix and drops the rest.
	msgs = msgs[:2]
	check("rewind", encode(nil), "head user:u0/0 a:r1/0 a2")
	if n := c.Len(); n != 2 {
		t.Errorf("after the rewind %d messages held, want 2", n)
	}
	// The same position with another message (a new slice): encoded.
	msgs = append(msgs, llm.UserText("u2b"))
	check("replaced tail", encode(nil), "head user:u0/0 a:r1/0 a2 user:u2b/0", 2)

	// Compaction: new messages at every position.
	msgs = []llm.Message{llm.UserText("summary"), msgs[1], msgs[2]}
	check("compaction", encode(nil), "head user:summary/0 a:r1/0 a2 user:u2b/0", 0)

	// A merge makes a new content slice; the role takes part in the key.
	merged := llm.Message{Role: llm.RoleUser, Content: append(slices.Clip(msgs[2].Content), llm.Text("more"))}
	msgs[2] = merged
	check("merged", encode(nil), "head user:summary/0 a:r1/0 a2 user:u2bmore/0", 2)
	msgs[2].Role = llm.RoleAssistant
	check("role", encode(nil), "head user:summary/0 a:r1/0 a2 a:u2bmore/0 a2", 2)
	msgs[2].Role = llm.RoleUser

	// Appending to a message's own slice in place changes its length.
	grow := make([]llm.Block, 1, 4)
	grow[0] = llm.Text("g")
	msgs = append(msgs, llm.Message{Role: llm.RoleUser, Content: grow})
	encode(nil)
	msgs[3].Content = append(msgs[3].Content, llm.Text("h"))
	check("grown in place", encode(nil), "head user:summary/0 a:r1/0 a2 user:u2bmore/0 user:gh/0", 3)

	// Another format forgets everything.
	r.calls = nil
	if _, err := c.Encode(nil, "other", msgs, nil, r.encode); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.calls, []int{0, 1, 2, 3}) {
		t.Errorf("another format encoded %v, want all", r.calls)
	}

	// An error is returned and not cached; the next call encodes again.
	msgs = append(msgs, llm.UserText("fail"))
	if _, err := c.Encode(nil, "other", msgs, nil, r.encode); err == nil {
		t.Fatal("no error from a failing encode")
	}
	msgs[4] = llm.UserText("ok")
	r.calls = nil
	if _, err := c.Encode(nil, "other", msgs, nil, r.encode); err != nil || !slices.Equal(r.calls, []int{4}) {
		t.Errorf("after an error: encoded %v (err %v), want [4]", r.calls, err)
	}

	c.Reset()
	if c.Len() != 0 {
		t.Errorf("Reset kept %d", c.Len())
	}
	check("after Reset", encode(nil), "head user:summary/0 a:r1/0 a2 user:u2bmore/0 user:gh/0 user:ok/0", 0, 1, 2, 3, 4)
}

func TestMessageEncodingsNil(t *testing.T) {
	var c *llm.MessageEncodings
	msgs := []llm.Message{llm.UserText("a"), llm.AssistantMessage(llm.Text("b"))}
	r := &recorder{msgs: &msgs}
	for range 2 {
		r.calls = nil
		out, err := c.Encode(nil, "fmt", msgs, func(int) uint8 { return 1 }, r.encode)
		if err != nil {
			t.Fatal(err)
		}
		if got := joined(out); got != "user:a/1 a:b/1 a2" || !slices.Equal(r.calls, []int{0, 1}) {
			t.Errorf("nil cache: %q, encoded %v", got, r.calls)
		}
	}
}

// TestMessageEncodingsRewrite: a rewriting layer's messages keep their
// identity from one request to the next, a rewrite that reads earlier
// messages is made again when they change, and one made again equal
// keeps the identity it had.
func TestMessageEncodingsRewrite(t *testing.T) {
	var c llm.MessageEncodings
	var msgs []llm.Message
	var calls []int
	// Upper-cases a message whose text starts with "r" and prefixes it
	// with the first message's text (so it reads the prefix); passes
	// other messages through.
	rewrite := func(i int) (llm.Message, bool) {
		calls = append(calls, i)
		m := msgs[i]
		if !strings.HasPrefix(m.Text(), "r") {
			return m, false
		}
		return llm.UserText(msgs[0].Text() + ">" + strings.ToUpper(m.Text())), true
	}
	run := func(step string, want string, wantCalls ...int) []llm.Message {
		t.Helper()
		calls = nil
		out := c.Rewrite("layer", msgs, rewrite)
		var got []string
		for _, m := range out {
			got = append(got, m.Text())
		}
		if g := strings.Join(got, " "); g != want {
			t.Errorf("%s: %q, want %q", step, g, want)
		}
		if !slices.Equal(calls, wantCalls) {
			t.Errorf("%s: rewrote %v, want %v", step, calls, wantCalls)
		}
		return out
	}
	same := func(step string, a, b llm.Message) {
		t.Helper()
		if len(a.Content) == 0 || &a.Content[0] != &b.Content[0] {
			t.Errorf("%s: the rewritten message lost its identity", step)
		}
	}
	msgs = []llm.Message{llm.UserText("s"), llm.AssistantMessage(llm.Text("a")), llm.UserText("r1")}
	first := run("first", "s a s>R1", 0, 1, 2)
	if &first[0].Content[0] != &msgs[0].Content[0] {
		t.Error("a message passed through is not the caller's")
	}
	msgs = append(msgs, llm.AssistantMessage(llm.Text("b")), llm.UserText("r2"))
	second := run("append", "s a s>R1 b s>R2", 3, 4)
	same("append", first[2], second[2])
	// A new first message: the rewrites reading it are made again.
	msgs = slices.Clone(msgs)
	msgs[0] = llm.UserText("t")
	third := run("new prefix", "t a t>R1 b t>R2", 0, 2, 4)
	// The old prefix back, as a new slice with the same text: made again,
	// equal to what was kept the time before — but not to the last time.
	msgs[0] = llm.UserText("t")
	fourth := run("same content", "t a t>R1 b t>R2", 0, 2, 4)
	same("equal rewrite", third[2], fourth[2])
	same("equal rewrite", third[4], fourth[4])
	// Rewind and another layer.
	msgs = msgs[:3]
	run("rewind", "t a t>R1")
	calls = nil
	c.Rewrite("other", msgs, rewrite)
	if !slices.Equal(calls, []int{0, 1, 2}) {
		t.Errorf("another layer rewrote %v, want all", calls)
	}
	c.Reset()
	run("after Reset", "t a t>R1", 0, 1, 2)

	var nilc *llm.MessageEncodings
	calls = nil
	if out := nilc.Rewrite("layer", msgs, rewrite); len(out) != 3 || len(calls) != 3 {
		t.Errorf("nil cache: %d messages, %d rewrites", len(out), len(calls))
	}
}

// TestMessageEncodingsIntern: equal messages decoded afresh take the
// identity of the ones met before, so the encodings are reused; a
// message that differs in any field keeps its own.
func TestMessageEncodingsIntern(t *testing.T) {
	decode := func(msgs []llm.Message) []llm.Message {
		b, err := json.Marshal(msgs)
		if err != nil {
			t.Fatal(err)
		}
		var out []llm.Message
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	conv := []llm.Message{
		llm.UserText("hi"),
		llm.AssistantMessage(llm.Thinking("t", "sig"), llm.ToolUse("t1", "Read", json.RawMessage(`{"a":1}`))),
		llm.UserMessage(llm.ToolResult("t1", []tool.Content{tool.Text("x"), tool.Image([]byte("png"), "image/png")}, false)),
	}
	var c llm.MessageEncodings
	var encoded []int
	encode := func(msgs []llm.Message) {
		t.Helper()
		encoded = nil
		if _, err := c.Encode(nil, "fmt", msgs, nil, func(i int, _ uint8) ([][]byte, error) {
			encoded = append(encoded, i)
			return [][]byte{[]byte(msgs[i].Text())}, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	encode(c.Intern(decode(conv)))
	encode(c.Intern(decode(conv)))
	if len(encoded) != 0 {
		t.Errorf("the same conversation decoded again encoded %v", encoded)
	}
	changes := []func(m *llm.Message){
		func(m *llm.Message) { m.Role = llm.RoleAssistant },
		func(m *llm.Message) { m.Content[0].IsError = true },
		func(m *llm.Message) { m.Content[0].Content[1].Data[0] = 'q' },
		func(m *llm.Message) { m.Content[0].Content[0].Title = "t" },
		func(m *llm.Message) { m.Content[0].Content = m.Content[0].Content[:1] },
		func(m *llm.Message) { m.Content[0].Content = nil },
		func(m *llm.Message) { m.Content = append(m.Content, llm.Text("")) },
	}
	for k, change := range changes {
		msgs := decode(conv)
		change(&msgs[2])
		encode(c.Intern(msgs))
		if !slices.Equal(encoded, []int{2}) {
			t.Errorf("change %d: encoded %v, want [2]", k, encoded)
		}
		encode(c.Intern(decode(conv)))
		if !slices.Equal(encoded, []int{2}) {
			t.Errorf("change %d undone: encoded %v, want [2]", k, encoded)
		}
	}
	if n := c.Size(); n != int64(len("hi")) {
		t.Errorf("Size = %d, want %d", n, len("hi"))
	}
	var nilc *llm.MessageEncodings
	if got := nilc.Intern(conv); &got[0] != &conv[0] {
		t.Error("nil cache changed the slice")
	}
}

// TestMessageEqualCoversFields guards Intern's comparison: every field of
// llm.Block and tool.Content takes part in it. A new field must join
// blockEqual/contentEqual in encoded.go and this list.
func TestMessageEqualCoversFields(t *testing.T) {
	for _, c := range []struct {
		typ    reflect.Type
		fields []string
	}{
		{reflect.TypeFor[llm.Block](), []string{"Type", "Text", "Data", "MIMEType", "ID", "Name", "Input", "ToolUseID", "Content", "IsError", "Signature", "Redacted"}},
		{reflect.TypeFor[tool.Content](), []string{"Type", "Text", "Data", "MIMEType", "URI", "Name", "Title", "Description"}},
		{reflect.TypeFor[llm.Message](), []string{"Role", "Content"}},
	} {
		for f := range c.typ.Fields() {
			if !slices.Contains(c.fields, f.Name) {
				t.Errorf("%s.%s is new: compare it in llm's messageEqual (encoded.go) and list it here", c.typ, f.Name)
			}
		}
	}
}
