package llmtest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	asdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/google/go-cmp/cmp"
	osdk "github.com/openai/openai-go/v3"

	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/llm/anthropic"
	"github.com/gantry-dev/gantry/llm/llmtest"
	"github.com/gantry-dev/gantry/llm/openai"
	"github.com/gantry-dev/gantry/llm/texttools"
	"github.com/gantry-dev/gantry/tool"
)

// This file checks llm.MessageEncodings through both adapters: a body
// spliced from cached message encodings is byte for byte the body
// without the cache, its messages are byte for byte the SDK's own
// encoding of each message param, and the whole body means what the
// SDK's encoding of Params means — turn after turn, while the cache
// breakpoint moves, and when the history is rewritten.

// shapes is one message of every shape the adapters encode.
func shapes() []llm.Message {
	png := []byte("\x89PNG\r\n\x1a\nfake")
	return []llm.Message{
		llm.UserText("Read a.go, then <fix> the \"bug\" & tell me — é \u2028 done"),
		llm.AssistantMessage(llm.Thinking("Let me look.", "sig-abc=="), llm.Text("Reading."), llm.ToolUse("t1", "Read", json.RawMessage(`{"file_path":"a.go"}`))),
		llm.UserMessage(llm.ToolResult("t1", []tool.Content{tool.Text("package a\n\nfunc A() {}\n")}, false)),
		llm.AssistantMessage(llm.RedactedThinking("opaque=="), llm.ToolUse("t2", "Bash", nil), llm.ToolUse("t3", "Grep", json.RawMessage(`{"pattern":"x"}`))),
		llm.UserMessage(
			llm.ToolResult("t2", []tool.Content{tool.Text("exit status 1"), tool.Text("stderr: no such file")}, true),
			llm.ToolResult("t3", []tool.Content{tool.Image(png, "image/png"), tool.Text("one match")}, false),
			llm.Text("<system-reminder>files changed</system-reminder>"),
		),
		{Role: llm.RoleSystem, Content: []llm.Block{llm.Text("A late instruction.")}},
		llm.AssistantMessage(llm.Text("Here is a screenshot request."), llm.ToolUse("t4", "Shot", json.RawMessage(`{}`))),
		llm.UserMessage(
			llm.ToolResult("t4", []tool.Content{tool.Audio([]byte("RIFF"), "audio/wav"), tool.ResourceLink("file:///x", "x", "text/plain"), tool.EmbeddedText("file:///y", "text/plain", "y text"), tool.EmbeddedBlob("file:///z", "image/png", png)}, false),
			llm.Image(png, "image/png"),
		),
		llm.AssistantMessage(llm.ToolUse("t5", "Read", json.RawMessage(`{"file_path":"b.go"}`))),
		llm.UserMessage(llm.ToolResult("t5", nil, true)),
		llm.AssistantMessage(llm.Text("")),
		llm.UserMessage(llm.Text(""), llm.Text("only the second block has text")),
		llm.AssistantMessage(llm.Text("a"), llm.Text("b")),
		llm.UserMessage(llm.Text("")), // sent with no content (Anthropic) or not at all (OpenAI)
		llm.AssistantMessage(llm.Thinking("", "sig-only")),
		llm.UserText("last words"),
	}
}

type (
	anthropicMessage = asdk.MessageParam
	openaiMessage    = osdk.ChatCompletionMessageParamUnion
)

// an adapter under test.
type adapter struct {
	name string
	body func(*llm.Request) ([]byte, error)
	// sdkMessages is the SDK's own encoding of each message param of
	// Params, and sdkBody its encoding of all of Params.
	sdkMessages func(*llm.Request) ([][]byte, []byte, error)
	provider    llm.Provider
}

func (ad adapter) stream(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	return llm.Collect(ad.provider.Stream(ctx, req))
}

// withText returns ads followed by each of them under the text tool
// protocol (llm/texttools): the request rewritten — tools described in
// the system prompt, calls and results as text — then encoded by the
// adapter.
func withText(ads []adapter) []adapter {
	out := slices.Clone(ads)
	for _, ad := range ads {
		out = append(out, adapter{
			name: ad.name + "/text",
			body: func(req *llm.Request) ([]byte, error) {
				r, _ := texttools.Rewrite(req)
				return ad.body(r)
			},
			sdkMessages: func(req *llm.Request) ([][]byte, []byte, error) {
				r, _ := texttools.Rewrite(req)
				return ad.sdkMessages(r)
			},
			provider: texttools.New(ad.provider),
		})
	}
	return out
}

func adapters(t testing.TB, srv *llmtest.Server) []adapter {
	noEnv := func(string) (string, bool) { return "", false }
	aopts := anthropic.Options{APIKey: "k", LookupEnv: noEnv, Retry: llm.RetryPolicy{MaxAttempts: 1}}
	oopts := openai.Options{APIKey: "k", LookupEnv: noEnv, Retry: llm.RetryPolicy{MaxAttempts: 1}, Model: "gpt-test"}
	if srv != nil {
		aopts.BaseURL = srv.URL()
		oopts.BaseURL = srv.OpenAIURL()
	}
	a, o := anthropic.New(aopts), openai.New(oopts)
	return []adapter{
		{
			name: "anthropic", body: a.Body,
			sdkMessages: func(req *llm.Request) ([][]byte, []byte, error) {
				p, err := a.Params(req)
				if err != nil {
					return nil, nil, err
				}
				return marshalEach(p.Messages, func(m *anthropicMessage) ([]byte, error) { return m.MarshalJSON() }, p.MarshalJSON)
			},
			provider: a,
		},
		{
			name: "openai", body: o.Body,
			sdkMessages: func(req *llm.Request) ([][]byte, []byte, error) {
				p, err := o.Params(req)
				if err != nil {
					return nil, nil, err
				}
				return marshalEach(p.Messages, func(m *openaiMessage) ([]byte, error) { return m.MarshalJSON() }, p.MarshalJSON)
			},
			provider: o,
		},
	}
}

func marshalEach[M any](ms []M, enc func(*M) ([]byte, error), whole func() ([]byte, error)) ([][]byte, []byte, error) {
	out := make([][]byte, len(ms))
	for i := range ms {
		var err error
		if out[i], err = enc(&ms[i]); err != nil {
			return nil, nil, err
		}
	}
	w, err := whole()
	return out, w, err
}

// checkBody compares the body of req (with its Encodings) with the body
// without them and with the SDK's encodings.
func checkBody(t testing.TB, ad adapter, req *llm.Request) []byte {
	t.Helper()
	got, err := ad.body(req)
	plain := *req
	plain.Encodings = nil
	want, werr := ad.body(&plain)
	if werr != nil || err != nil { // a conversation the adapter refuses: refused alike
		if err == nil || werr == nil || err.Error() != werr.Error() {
			t.Fatalf("%s: Body: error %v, without encodings %v", ad.name, err, werr)
		}
		return nil
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s: the body with cached encodings differs from the body without:\n got %s\nwant %s", ad.name, got, want)
	}
	sdkMsgs, sdkBody, err := ad.sdkMessages(&plain)
	if err != nil {
		t.Fatalf("%s: Params: %v", ad.name, err)
	}
	var top struct{ Messages []json.RawMessage }
	if err := json.Unmarshal(got, &top); err != nil {
		t.Fatalf("%s: body is not JSON: %v\n%s", ad.name, err, got)
	}
	if len(top.Messages) != len(sdkMsgs) {
		t.Fatalf("%s: %d messages sent, the SDK encodes %d", ad.name, len(top.Messages), len(sdkMsgs))
	}
	for i := range sdkMsgs {
		if !bytes.Equal(top.Messages[i], sdkMsgs[i]) {
			t.Fatalf("%s: messages[%d]\n got %s\nwant %s (the SDK's encoding)", ad.name, i, top.Messages[i], sdkMsgs[i])
		}
	}
	var g, w map[string]any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(sdkBody, &w); err != nil {
		t.Fatal(err)
	}
	w["stream"] = true
	if diff := cmp.Diff(w, g); diff != "" {
		t.Fatalf("%s: body (-SDK's params +body):\n%s", ad.name, diff)
	}
	return got
}

// TestEncodingsTurnByTurn grows a conversation one message at a time, as
// the agent loop does, with the cache breakpoint on the last user message
// on some turns and not on others, then rewrites its history.
func TestEncodingsTurnByTurn(t *testing.T) {
	all := shapes()
	for _, ad := range withText(adapters(t, nil)) {
		t.Run(ad.name, func(t *testing.T) {
			var enc llm.MessageEncodings
			req := func(msgs []llm.Message, hints llm.CacheHints) *llm.Request {
				return &llm.Request{Model: "m", System: []llm.SystemBlock{{Text: "sys", Cache: true}}, Messages: msgs,
					Tools: []*tool.Spec{{Name: "Read", Description: "Reads."}}, Cache: hints, Encodings: &enc}
			}
			for k := 1; k <= len(all); k++ {
				hints := llm.AllCacheHints
				if k%3 == 0 {
					hints = llm.CacheHints{}
				}
				checkBody(t, ad, req(all[:k], hints))
				checkBody(t, ad, req(all[:k], hints)) // all from the cache
			}
			if n := enc.Len(); n != len(all) {
				t.Errorf("%d messages held, want %d", n, len(all))
			}
			// Rewind: back to a prefix; its last user message takes the
			// breakpoint again.
			checkBody(t, ad, req(all[:5], llm.AllCacheHints))
			// Compaction: a summary, then the kept messages.
			compacted := append([]llm.Message{llm.UserText("Summary of the earlier part.")}, all[len(all)-6:]...)
			checkBody(t, ad, req(compacted, llm.AllCacheHints))
			// A merge: a new message at a position, made of two others.
			merged := slices.Clone(compacted)
			merged[1] = llm.Message{Role: llm.RoleAssistant, Content: append(slices.Clone(compacted[1].Content), llm.Text("merged"))}
			checkBody(t, ad, req(merged, llm.AllCacheHints))
			// A message changed in place is not noticed until Reset.
			merged[2].Content[0] = llm.Text("changed in place")
			enc.Reset()
			checkBody(t, ad, req(merged, llm.AllCacheHints))
		})
	}
}

// TestEncodingsShared: one cache met by two adapters (a conversation that
// moves from one provider to the other) re-encodes, never mixes formats.
func TestEncodingsShared(t *testing.T) {
	all := shapes()
	var enc llm.MessageEncodings
	ads := adapters(t, nil)
	for k := 1; k <= len(all); k++ {
		for _, ad := range ads {
			checkBody(t, ad, &llm.Request{Model: "m", Messages: all[:k], Cache: llm.AllCacheHints, Encodings: &enc})
		}
	}
}

// TestEncodingsOverHTTP drives the real SDK clients against the fake
// server over turns: what the server receives is the body without the
// cache, and it decodes to the conversation.
func TestEncodingsOverHTTP(t *testing.T) {
	srv := llmtest.NewServer(t)
	all := shapes()
	for _, ad := range withText(adapters(t, srv)) {
		t.Run(ad.name, func(t *testing.T) {
			var enc llm.MessageEncodings
			for k := 1; k <= len(all); k++ {
				srv.Script(llmtest.TextReply(fmt.Sprintf("reply %d", k)))
				req := &llm.Request{Model: "m", Messages: all[:k], Cache: llm.AllCacheHints, Encodings: &enc,
					Tools: []*tool.Spec{{Name: "Read", Description: "Reads."}}}
				resp, err := ad.stream(t.Context(), req)
				if err != nil {
					t.Fatal(err)
				}
				if got, want := resp.Message.Text(), fmt.Sprintf("reply %d", k); got != want {
					t.Fatalf("reply %q, want %q", got, want)
				}
				got := srv.LastRequest()
				plain := *req
				plain.Encodings = nil
				want, err := ad.body(&plain)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got.Body, want) {
					t.Fatalf("turn %d: the server received\n%s\nwant\n%s", k, got.Body, want)
				}
				if len(got.Messages) == 0 {
					t.Fatalf("turn %d: the server decoded no messages", k)
				}
			}
		})
	}
}

// FuzzEncodings edits a conversation by the fuzzer's bytes — append a
// shape, rewind, replace a message with a new one, merge two, move the
// breakpoint, change a message in place and Reset — and checks every body
// against the body without the cache and the SDK's encodings.
func FuzzEncodings(f *testing.F) {
	f.Add([]byte{0, 8, 16, 24, 32, 40, 48, 56})
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15})
	f.Add([]byte{0, 8, 16, 3, 0, 8, 5, 6, 16, 2, 0, 7})
	f.Add([]byte{0, 8, 16, 24, 4, 4, 1, 1, 9, 17, 5, 13})
	f.Add([]byte{8, 16, 24, 32, 48, 56, 6, 8, 16, 3, 19, 11, 4, 64, 72})
	f.Add([]byte{0, 8, 16, 10, 24, 16}) // a call rewound and replaced, its result back at its position
	ads := withText(adapters(f, nil))
	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) > 64 {
			ops = ops[:64]
		}
		all := shapes() // this run's own: case 7 changes them in place
		var (
			enc   llm.MessageEncodings
			msgs  []llm.Message
			hints = llm.AllCacheHints
		)
		for step, op := range ops {
			arg := int(op >> 3)
			switch op & 7 {
			case 0, 1: // append a shape (sharing its blocks, as history does)
				msgs = append(msgs, all[arg%len(all)])
			case 2: // rewind
				if len(msgs) > 0 {
					msgs = msgs[:arg%len(msgs)]
				}
			case 3: // replace a message with a copy (a new slice, same content) or another shape
				if len(msgs) > 0 {
					i := arg % len(msgs)
					msgs = slices.Clone(msgs)
					if arg&1 == 0 {
						msgs[i] = llm.Message{Role: msgs[i].Role, Content: slices.Clone(msgs[i].Content)}
					} else {
						msgs[i] = all[(arg>>1)%len(all)]
					}
				}
			case 4: // merge the last two
				if n := len(msgs); n >= 2 {
					m := llm.Message{Role: msgs[n-1].Role, Content: append(slices.Clone(msgs[n-2].Content), msgs[n-1].Content...)}
					msgs = append(slices.Clone(msgs[:n-2]), m)
				}
			case 5: // move the breakpoint
				hints.LastUserMessage = !hints.LastUserMessage
			case 6: // compaction: a summary and the last messages
				keep := min(arg%4, len(msgs))
				msgs = append([]llm.Message{llm.UserText(fmt.Sprintf("summary %d", step))}, msgs[len(msgs)-keep:]...)
			case 7: // change a message in place, then Reset
				if len(msgs) > 0 {
					if c := msgs[arg%len(msgs)].Content; len(c) > 0 {
						c[0] = llm.Text(fmt.Sprintf("changed %d", step))
					}
					enc.Reset()
				}
			}
			for _, ad := range ads {
				checkBody(t, ad, &llm.Request{Model: "m", Messages: msgs, Cache: hints, Encodings: &enc, Tools: tools})
			}
		}
	})
}

// TestTextRewritesKept: under the text tool protocol, a message rewritten
// for one request (its calls as tags, its results as envelopes) is the
// same message — the same content slice — in the next request, so the
// adapter reuses its encoding; a message without tool blocks is the
// caller's own. Without a cache, every request rewrites afresh.
func TestTextRewritesKept(t *testing.T) {
	all := shapes()
	var enc llm.MessageEncodings
	var prev []llm.Message
	for k := 1; k <= len(all); k++ {
		r, _ := texttools.Rewrite(&llm.Request{Messages: all[:k], Tools: tools, Encodings: &enc})
		for i, m := range r.Messages {
			if len(m.Content) == 0 {
				continue
			}
			if i < len(prev) && &m.Content[0] != &prev[i].Content[0] {
				t.Errorf("turn %d: message %d was rewritten again", k, i)
			}
			if !hasToolBlock(all[i]) && &m.Content[0] != &all[i].Content[0] {
				t.Errorf("turn %d: message %d has no tool block and is not the caller's", k, i)
			}
		}
		prev = r.Messages
	}
	plain1, _ := texttools.Rewrite(&llm.Request{Messages: all, Tools: tools})
	plain2, _ := texttools.Rewrite(&llm.Request{Messages: all, Tools: tools})
	if &plain1.Messages[2].Content[0] == &plain2.Messages[2].Content[0] {
		t.Error("without a cache the rewrites are shared")
	}
}

func hasToolBlock(m llm.Message) bool {
	return slices.ContainsFunc(m.Content, func(b llm.Block) bool {
		return b.Type == llm.TypeToolUse || b.Type == llm.TypeToolResult
	})
}

// tools are the tools of the fuzzed requests: Read has calls in
// shapes(), the others answer none of them (their results are named
// "unknown").
var tools = []*tool.Spec{{Name: "Read", Description: "Reads."}, {Name: "Bash", Description: "Runs."}}

// TestWithoutDecoding: a server that does not decode still answers both
// SDKs, streamed, and records nothing.
func TestWithoutDecoding(t *testing.T) {
	srv := llmtest.NewServer(t, llmtest.WithoutDecoding())
	for _, ad := range adapters(t, srv) {
		srv.Script(llmtest.ToolReply(llmtest.ToolCall{ID: "t1", Name: "Read", Input: `{"file_path":"a"}`}))
		resp, err := ad.stream(t.Context(), &llm.Request{Model: "m", Messages: shapes()})
		if err != nil {
			t.Fatalf("%s: %v", ad.name, err)
		}
		if u := resp.Message.ToolUses(); len(u) != 1 || u[0].Name != "Read" || string(u[0].Input) != `{"file_path":"a"}` {
			t.Errorf("%s: reply %+v", ad.name, resp.Message)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests recorded", n)
	}
}

// TestLongTextsHeldOnce: with an [llm.MessageEncodings], the long texts of
// a conversation (tool results, replies, prompts; quotes, control
// characters, HTML, invalid UTF-8 and U+2028 included) are not held a
// second time in the kept encodings, and the body is byte for byte the
// body encoded without the cache, turn after turn — for each adapter.
func TestLongTextsHeldOnce(t *testing.T) {
	long := func(seed string) string {
		return strings.Repeat("     1\t"+seed+" \"quoted\" <b>&amp;</b> \\ \x01 \xff \u2028 é\n", 30)
	}
	read := []*tool.Spec{{Name: "Read", Description: "Read things",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)}}
	for _, ad := range adapters(t, nil) {
		t.Run(ad.name, func(t *testing.T) {
			var enc llm.MessageEncodings
			msgs := []llm.Message{llm.UserText(long("prompt"))}
			var texts int64
			for turn := range 4 {
				id := "t" + string(rune('0'+turn))
				msgs = append(msgs,
					llm.AssistantMessage(llm.Text(long("reply")), llm.ToolUse(id, "Read", json.RawMessage(`{"file_path":"a"}`))),
					llm.UserMessage(llm.ToolResult(id, []tool.Content{tool.Text(long("result"))}, false)))
				texts += 2 * int64(len(long("result")))
				req := llm.Request{Model: "m", Messages: msgs, Tools: read, Cache: llm.AllCacheHints}
				plain, err := ad.body(&req)
				if err != nil {
					t.Fatal(err)
				}
				req.Encodings = &enc
				cached, err := ad.body(&req)
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
		})
	}
}

// TestConnectionReused: a reply read to its end leaves its connection to
// the next request, for each adapter, over HTTP/1.1 (where closing a
// response before its end closes the connection) and h2c.
func TestConnectionReused(t *testing.T) {
	noEnv := func(string) (string, bool) { return "", false }
	for _, h2 := range []bool{false, true} {
		for _, name := range []string{"anthropic", "openai"} {
			t.Run(map[bool]string{false: "http1", true: "h2c"}[h2]+"/"+name, func(t *testing.T) {
				var opts []llmtest.Option
				if h2 {
					opts = append(opts, llmtest.WithHTTP2())
				}
				srv := llmtest.NewServer(t, opts...)
				hc, dials := srv.DialCountingClient()
				defer hc.CloseIdleConnections()
				var p llm.Provider = anthropic.New(anthropic.Options{BaseURL: srv.URL(), APIKey: "k", LookupEnv: noEnv, HTTPClient: hc, Retry: llm.RetryPolicy{MaxAttempts: 1}})
				if name == "openai" {
					p = openai.New(openai.Options{BaseURL: srv.OpenAIURL(), APIKey: "k", Model: "gpt-test", LookupEnv: noEnv, HTTPClient: hc, Retry: llm.RetryPolicy{MaxAttempts: 1}})
				}
				for i := range 5 {
					srv.Script(llmtest.TextReply("hello there"))
					req := &llm.Request{Model: "m", Messages: []llm.Message{llm.UserText("hi")}}
					if _, err := llm.Collect(p.Stream(context.Background(), req)); err != nil {
						t.Fatalf("request %d: %v", i, err)
					}
				}
				if n := dials(); n != 1 {
					t.Errorf("%d connections dialled for 5 sequential requests, want 1", n)
				}
			})
		}
	}
}
