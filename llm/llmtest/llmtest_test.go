package llmtest

import (
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"

	anthropic "github.com/anthropics/anthropic-sdk-go"
	aoption "github.com/anthropics/anthropic-sdk-go/option"
	"github.com/google/go-cmp/cmp"
	openai "github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"
	"go.uber.org/goleak"

	"github.com/gantry-dev/gantry/llm"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestSplit(t *testing.T) {
	tests := []struct {
		s    string
		n    int
		want []string
	}{
		{"", 3, nil},
		{"abc", 0, []string{"abc"}},
		{"abcdefg", 3, []string{"abc", "def", "g"}},
		{"aé€b", 2, []string{"a", "é", "€", "b"}},
		{"€€", 1, []string{"€", "€"}},
	}
	for _, tt := range tests {
		if got := split(tt.s, tt.n); !cmp.Equal(got, tt.want) {
			t.Errorf("split(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
	}
}

func FuzzSplit(f *testing.F) {
	f.Add("hello wörld", 3)
	f.Add("€€€", 1)
	f.Add(`{"a":"b"}`, 0)
	f.Fuzz(func(t *testing.T, s string, n int) {
		n %= 64
		parts := split(s, n)
		if strings.Join(parts, "") != s {
			t.Fatalf("split(%q, %d) = %q loses bytes", s, n, parts)
		}
		for _, p := range parts {
			if p == "" {
				t.Fatalf("empty piece in %q", parts)
			}
			if utf8.ValidString(s) && !utf8.ValidString(p) {
				t.Fatalf("split(%q, %d) cut a rune: %q", s, n, parts)
			}
			if utf8.ValidString(s) && n > 0 && len(p) > n && utf8.RuneCountInString(p) > 1 {
				t.Fatalf("piece %q longer than %d", p, n)
			}
		}
	})
}

func TestAnthropicNonStreaming(t *testing.T) {
	srv := NewServer(t)
	srv.Script(Reply{
		Content: []llm.Block{llm.Thinking("hm", "sig"), llm.Text("hi"), llm.ToolUse("toolu_1", "Read", json.RawMessage(`{"path":"a"}`))},
		Usage:   llm.Usage{InputTokens: 3, OutputTokens: 4, CacheReadInputTokens: 5},
	})
	c := anthropic.NewClient(aoption.WithoutEnvironmentDefaults(), aoption.WithBaseURL(srv.URL()),
		aoption.WithAPIKey("k"), aoption.WithHTTPClient(srv.Client()), aoption.WithMaxRetries(0))
	msg, err := c.Messages.New(t.Context(), anthropic.MessageNewParams{
		Model: "m", MaxTokens: 10,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("q"))},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(msg.Content) != 3 || msg.Content[1].Text != "hi" || msg.Content[2].Name != "Read" ||
		string(msg.Content[2].Input) != `{"path":"a"}` || msg.Content[0].Signature != "sig" {
		t.Errorf("content = %+v", msg.Content)
	}
	if msg.StopReason != "tool_use" || msg.Usage.CacheReadInputTokens != 5 || msg.Model != "m" {
		t.Errorf("stop %q usage %+v", msg.StopReason, msg.Usage)
	}
	if r := srv.LastRequest(); r.Stream || r.API != "anthropic" || r.Messages[0].Content[0].Text != "q" {
		t.Errorf("recorded %+v", r)
	}
}

func TestOpenAINonStreaming(t *testing.T) {
	srv := NewServer(t)
	srv.Script(Reply{
		Content: []llm.Block{llm.Text("hi"), llm.ToolUse("call_1", "Read", json.RawMessage(`{"path":"a"}`))},
		Usage:   llm.Usage{InputTokens: 3, OutputTokens: 4, CacheReadInputTokens: 5},
	})
	c := openai.NewClient(ooption.WithBaseURL(srv.OpenAIURL()), ooption.WithAPIKey("k"),
		ooption.WithHTTPClient(srv.Client()), ooption.WithMaxRetries(0))
	resp, err := c.Chat.Completions.New(t.Context(), openai.ChatCompletionNewParams{
		Model:    "m",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("q")},
	})
	if err != nil {
		t.Fatal(err)
	}
	m := resp.Choices[0].Message
	if m.Content != "hi" || len(m.ToolCalls) != 1 || m.ToolCalls[0].Function.Arguments != `{"path":"a"}` || resp.Choices[0].FinishReason != "tool_calls" {
		t.Errorf("message = %+v", resp.Choices[0])
	}
	if resp.Usage.PromptTokens != 8 || resp.Usage.PromptTokensDetails.CachedTokens != 5 {
		t.Errorf("usage = %+v", resp.Usage)
	}
}

func TestErrorsAndEmptyScript(t *testing.T) {
	srv := NewServer(t)
	srv.Script(ErrorReply(529, "", ""), Reply{Status: 429, RetryAfter: "7"})
	c := anthropic.NewClient(aoption.WithoutEnvironmentDefaults(), aoption.WithBaseURL(srv.URL()),
		aoption.WithHTTPClient(srv.Client()), aoption.WithMaxRetries(0))
	params := anthropic.MessageNewParams{Model: "m", MaxTokens: 10,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("q"))}}
	for _, want := range []struct {
		status int
		typ    string
	}{{529, "overloaded_error"}, {429, "rate_limit_error"}, {400, "invalid_request_error"}} {
		_, err := c.Messages.New(t.Context(), params)
		var ae *anthropic.Error
		if !errors.As(err, &ae) || ae.StatusCode != want.status || string(ae.Type()) != want.typ {
			t.Errorf("err = %v, want %d %s", err, want.status, want.typ)
			continue
		}
		if want.status == 429 && ae.Response.Header.Get("retry-after") != "7" {
			t.Errorf("retry-after = %q", ae.Response.Header.Get("retry-after"))
		}
		if want.status == 400 && !strings.Contains(ae.RawJSON(), "no scripted reply left") {
			t.Errorf("body = %s", ae.RawJSON())
		}
	}
	if n := len(srv.Requests()); n != 3 || srv.Pending() != 0 {
		t.Errorf("%d requests, %d pending", n, srv.Pending())
	}
}

func TestStreamSuffix(t *testing.T) {
	big := strings.Repeat(`{"x":"`+strings.Repeat("a", 1000)+`"},`, 100)
	tests := []struct {
		name, body string
		want       bool
	}{
		{"stream", `{"model":"m","stream":true}`, true},
		{"trailing space", "{\"stream\":true}\n ", true},
		{"no stream", `{"model":"m"}`, false},
		{"stream false", `{"model":"m","stream":false}`, false},
		{"stream not last", `{"stream":true,"model":"m"}`, false},
		{"big", `{"messages":[` + big + `{}],"stream":true}`, true},
		{"big without", `{"messages":[` + big + `{}]}`, false},
		{"empty", ``, false},
	}
	for _, tt := range tests {
		for _, r := range []struct {
			name string
			r    func(string) io.Reader
		}{{"whole", func(s string) io.Reader { return strings.NewReader(s) }}, {"bytewise", func(s string) io.Reader { return iotest.OneByteReader(strings.NewReader(s)) }}} {
			got, err := streamSuffix(r.r(tt.body))
			if err != nil || got != tt.want {
				t.Errorf("%s (%s): %v, %v; want %v", tt.name, r.name, got, err, tt.want)
			}
		}
	}
	if _, err := streamSuffix(iotest.ErrReader(errors.New("boom"))); err == nil {
		t.Error("a read error was not returned")
	}
}
