package llm_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/llm"
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

func joined(p [][]byte) string {
	s := make([]string, len(p))
	for i, b := range p {
		s[i] = string(b)
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
		out, err := c.Encode([][]byte{[]byte("head")}, "fmt", msgs, variant, r.encode)
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
