package openai_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/llm/openai"
	"github.com/gantry-dev/gantry/tool"
)

// TestLongTextsHeldOnce: with an [llm.MessageEncodings], the long texts of
// a conversation (tool results, replies, prompts; quotes, control
// characters, HTML, invalid UTF-8 and U+2028 included) are not held a
// second time in the kept encodings, and the body is byte for byte the
// body encoded without the cache, turn after turn.
func TestLongTextsHeldOnce(t *testing.T) {
	long := func(seed string) string {
		return strings.Repeat("     1\t"+seed+" \"quoted\" <b>&amp;</b> \\ \x01 \xff \u2028 é\n", 30)
	}
	p := openai.New(openai.WithAPIKey("k"), openai.WithLookupEnv(func(string) (string, bool) { return "", false }))
	var enc llm.MessageEncodings
	msgs := []llm.Message{llm.UserText(long("prompt"))}
	var texts int64
	for turn := range 4 {
		id := "t" + string(rune('0'+turn))
		msgs = append(msgs,
			llm.AssistantMessage(llm.Text(long("reply")), llm.ToolUse(id, "Read", json.RawMessage(`{"file_path":"a"}`))),
			llm.UserMessage(llm.ToolResult(id, []tool.Content{tool.Text(long("result"))}, false)))
		texts += 2 * int64(len(long("result")))
		req := llm.Request{Model: "m", Messages: msgs, Tools: specs("Read"), Cache: llm.AllCacheHints}
		plain, err := p.Body(&req)
		if err != nil {
			t.Fatal(err)
		}
		req.Encodings = &enc
		cached, err := p.Body(&req)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(cached, plain) {
			t.Fatalf("turn %d: the body with the cache differs from the body without", turn)
		}
		if !json.Valid(cached) {
			t.Fatalf("turn %d: not JSON", turn)
		}
	}
	if held, size := enc.Held(), enc.Size(); held > size-texts {
		t.Fatalf("the encodings hold %d of their %d bytes: the long texts (%d bytes) are held twice", held, size, texts)
	}
}
