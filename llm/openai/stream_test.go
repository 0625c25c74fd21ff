package openai

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gantry-dev/gantry/llm"
)

// data is one server-sent event as the API frames it.
func data(d string) string { return "data: " + d + "\n\n" }

const (
	first  = `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`
	finish = `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{},"finish_reason":"%s"}]}`
	usage  = `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[],"usage":{"prompt_tokens":30,"completion_tokens":7,"total_tokens":37,"prompt_tokens_details":{"cached_tokens":10,"cache_write_tokens":5}}}`
	doneEv = "data: [DONE]\n\n"
)

func content(s string) string {
	return `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{"content":` + s + `},"finish_reason":null}]}`
}

func fin(reason string) string { return strings.Replace(finish, "%s", reason, 1) }

func toolDeltaJSON(idx, id, name, args string) string {
	f := `"arguments":` + args
	if name != "" {
		f = `"name":"` + name + `",` + f
	}
	tc := `{"index":` + idx + `,"type":"function","function":{` + f + `}`
	if id != "" {
		tc = `{"index":` + idx + `,"id":"` + id + `","type":"function","function":{` + f + `}`
	}
	return `{"id":"chatcmpl-1","model":"gpt-4o","choices":[{"index":0,"delta":{"tool_calls":[` + tc + `}]},"finish_reason":null}]}`
}

// textReply is a whole reply of one text.
var textReply = data(first) + data(content(`"Hel"`)) + data(content(`"lo"`)) + data(fin("stop")) + data(usage) + doneEv

var toolReply = data(first) + data(toolDeltaJSON("0", "call_1", "Read", `""`)) + data(toolDeltaJSON("0", "", "", `"{\"file_path\""`)) +
	data(toolDeltaJSON("0", "", "", `":\"a.txt\"}"`)) + data(toolDeltaJSON("1", "call_2", "Grep", `"{\"pattern\":\"x\"}"`)) +
	data(fin("tool_calls")) + data(usage) + doneEv

var streamCases = []struct {
	name, wire string
	wantErr    string // a substring of the error, when its text is not the SDK's
}{
	{name: "text", wire: textReply},
	{name: "tool calls", wire: toolReply},
	{name: "ollama: every call at index 0", wire: data(first) + data(toolDeltaJSON("0", "c1", "Read", `"{}"`)) + data(toolDeltaJSON("0", "c2", "Glob", `"{\"pattern\":\"*\"}"`)) + data(fin("tool_calls")) + doneEv},
	{name: "reasoning_content then text", wire: data(first) + data(`{"id":"x","model":"m","choices":[{"index":0,"delta":{"reasoning_content":"think"}}]}`) + data(content(`"ok"`)) + data(fin("stop")) + doneEv},
	{name: "reasoning (ollama)", wire: data(first) + data(`{"id":"x","model":"m","choices":[{"index":0,"delta":{"reasoning":"hmm","reasoning_content":null}}]}`) + data(fin("stop")) + doneEv},
	{name: "refusal", wire: data(first) + data(`{"id":"x","model":"m","choices":[{"index":0,"delta":{"refusal":"no"}}]}`) + data(fin("content_filter")) + doneEv},
	{name: "every finish reason", wire: data(first) + data(content(`"a"`)) + data(fin("length")) + doneEv},
	{name: "stop after tool calls", wire: data(first) + data(toolDeltaJSON("0", "c1", "Read", `"{}"`)) + data(fin("stop")) + doneEv},
	{name: "choice n>0 ignored", wire: data(first) + data(`{"id":"x","model":"m","choices":[{"index":1,"delta":{"content":"other"}},{"index":0,"delta":{"content":"mine"}}]}`) + data(fin("stop")) + doneEv},
	{name: "CRLF framing, comments, named events", wire: strings.ReplaceAll(": keep-alive\n\n"+textReply, "\n", "\r\n")},
	{name: "event without data skipped", wire: "event: ping\n\n" + textReply},
	{name: "thread event", wire: data(first) + "event: thread.run\ndata: {\"id\":\"t\"}\n\n" + data(content(`"x"`)) + data(fin("stop")) + doneEv},
	{name: "no [DONE]", wire: strings.TrimSuffix(textReply, doneEv)},
	{name: "ends before the finish reason", wire: data(first) + data(content(`"Hel"`))},
	{name: "empty body", wire: ""},
	{name: "only [DONE]", wire: doneEv},
	{name: "data after [DONE]", wire: textReply + data(content(`"late"`))},
	{name: "loose values", wire: data(`{"id":5,"model":null,"choices":[{"index":"0","delta":{"content":5,"tool_calls":[{"index":"0","id":7,"function":{"name":"Read","arguments":{"a":1}}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":"12","completion_tokens":1.5}}`) + doneEv},
	{name: "choices not all objects", wire: data(`{"id":"x","model":"m","choices":[1,{"index":0,"delta":{"content":"a"}}]}`) + data(fin("stop")) + doneEv},
	{name: "null chunk", wire: data(`null`) + data(fin("stop")) + doneEv},
	{name: "error event", wire: data(`{"error":{"message":"Overloaded","type":"server_error","code":"overloaded"}}`)},
	{name: "error after content", wire: data(first) + data(content(`"partial"`)) + data(`{"error":{"message":"boom","type":"server_error"}}`)},
	{name: "malformed JSON", wire: data(first) + data(`{"id":"x","choices":[`)},
	{name: "malformed JSON after content", wire: data(first) + data(content(`"a"`)) + data(`{"id":`)},
	{name: "not an object", wire: data(first) + data(`[1,2]`), wantErr: "json: cannot unmarshal"},
	{name: "a string", wire: data(`"x"`), wantErr: "json: cannot unmarshal"},
	{name: "invalid character", wire: data(first) + data(`{"id":x}`)},
}

// response is a streamed 200 response with body wire.
func response(wire string) *http.Response {
	req, _ := http.NewRequest(http.MethodPost, "https://api.openai.com/v1/chat/completions", nil)
	return &http.Response{
		StatusCode: 200, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:  http.Header{"Content-Type": {"text/event-stream"}, "X-Request-Id": {"req_1"}},
		Body:    io.NopCloser(strings.NewReader(wire)),
		Request: req,
	}
}

type decodeFunc func(*Provider, context.Context, *http.Response, func(llm.Event, error) bool)

// decodeAll collects what f yields for wire.
func decodeAll(p *Provider, f decodeFunc, wire string) (evs []llm.Event, err error) {
	f(p, context.Background(), response(wire), func(e llm.Event, e2 error) bool {
		if e2 != nil {
			err = e2
			return false
		}
		evs = append(evs, e)
		return true
	})
	return evs, err
}

func testProvider() *Provider {
	return New(Options{APIKey: "k", LookupEnv: func(string) (string, bool) { return "", false }})
}

var compareErrors = cmp.Comparer(func(a, b error) bool {
	return (a == nil) == (b == nil) && (a == nil || a.Error() == b.Error())
})

func containsAny(s, alts string) bool {
	for _, a := range strings.Split(alts, "|") {
		if strings.Contains(s, a) {
			return true
		}
	}
	return false
}

func TestStreamDecoderMatchesSDK(t *testing.T) {
	p := testProvider()
	for _, tc := range streamCases {
		t.Run(tc.name, func(t *testing.T) {
			want, wantErr := decodeAll(p, (*Provider).sdkEvents, tc.wire)
			got, err := decodeAll(p, (*Provider).events, tc.wire)
			if diff := cmp.Diff(want, got, compareErrors); diff != "" {
				t.Errorf("events (-sdk +decoder):\n%s", diff)
			}
			switch {
			case tc.wantErr != "":
				if err == nil || wantErr == nil || !containsAny(err.Error(), tc.wantErr) || !containsAny(wantErr.Error(), tc.wantErr) {
					t.Fatalf("err = %v (sdk: %v), want one containing %q", err, wantErr, tc.wantErr)
				}
				if errors.Is(err, llm.ErrInterrupted) != errors.Is(wantErr, llm.ErrInterrupted) {
					t.Errorf("interrupted: %v, sdk %v", err, wantErr)
				}
			case (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error():
				t.Fatalf("err = %v\nsdk: %v", err, wantErr)
			}
			if err != nil {
				var ae, we *llm.APIError
				if errors.As(err, &ae) != errors.As(wantErr, &we) || ae != nil && (ae.Type != we.Type || ae.Code != we.Code || ae.Message != we.Message || ae.StatusCode != we.StatusCode) {
					t.Errorf("API error %#v, sdk %#v", ae, we)
				}
			}
		})
	}
}

// FuzzStreamDecoder feeds damaged and unusual streams to the decoder and
// to the SDK path: the decoder must not panic, and where both read a
// stream without error they must yield the same events.
func FuzzStreamDecoder(f *testing.F) {
	for _, tc := range streamCases {
		f.Add(tc.wire)
	}
	p := testProvider()
	f.Fuzz(func(t *testing.T, wire string) {
		got, err := decodeAll(p, (*Provider).events, wire)
		want, wantErr := decodeAll(p, (*Provider).sdkEvents, wire)
		if err != nil || wantErr != nil {
			return
		}
		if diff := cmp.Diff(want, got, compareErrors); diff != "" {
			t.Errorf("events (-sdk +decoder):\n%s", diff)
		}
	})
}

// BenchmarkStreamDecode decodes a reply of ~200 chunks (text deltas and a
// tool call's arguments in pieces) from memory: "decoder" is Gantry's,
// "sdk" the SDK's stream read as the adapter read it before.
func BenchmarkStreamDecode(b *testing.B) {
	var w strings.Builder
	w.WriteString(data(first))
	for range 150 {
		w.WriteString(data(content(`"some words of text "`)))
	}
	w.WriteString(data(toolDeltaJSON("0", "call_1", "Read", `""`)))
	for range 40 {
		w.WriteString(data(toolDeltaJSON("0", "", "", `"{\"file_pa"`)))
	}
	w.WriteString(data(fin("tool_calls")) + data(usage) + doneEv)
	wire := w.String()
	p := testProvider()
	for _, c := range []struct {
		name string
		f    decodeFunc
	}{{"decoder", (*Provider).events}, {"sdk", (*Provider).sdkEvents}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(wire)))
			events := 0
			for b.Loop() {
				evs, err := decodeAll(p, c.f, wire)
				if err != nil {
					b.Fatal(err)
				}
				events = len(evs)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*events), "ns/event")
		})
	}
}
