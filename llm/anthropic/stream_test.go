package anthropic

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

// ev is one server-sent event as the API frames it.
func ev(name, data string) string { return "event: " + name + "\ndata: " + data + "\n\n" }

const (
	msgStart = `{"type":"message_start","message":{"id":"msg_01","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":25,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}}}`
	msgStop  = `{"type":"message_stop"}`
	ping     = `{"type": "ping"}`
)

func stop(reason string) string {
	return `{"type":"message_delta","delta":{"stop_reason":"` + reason + `","stop_sequence":null},"usage":{"output_tokens":15}}`
}

func block(i, cb string) string {
	return `{"type":"content_block_start","index":` + i + `,"content_block":` + cb + `}`
}

func delta(i, d string) string {
	return `{"type":"content_block_delta","index":` + i + `,"delta":` + d + `}`
}

func blockStop(i string) string { return `{"type":"content_block_stop","index":` + i + `}` }

// textReply is a whole reply of one text block.
var textReply = ev("message_start", msgStart) + ev("content_block_start", block("0", `{"type":"text","text":""}`)) +
	ev("ping", ping) +
	ev("content_block_delta", delta("0", `{"type":"text_delta","text":"Hello"}`)) +
	ev("content_block_delta", delta("0", `{"type":"text_delta","text":"!"}`)) +
	ev("content_block_stop", blockStop("0")) + ev("message_delta", stop("end_turn")) + ev("message_stop", msgStop)

// toolReply is text, then a tool use whose input comes in pieces.
var toolReply = ev("message_start", msgStart) +
	ev("content_block_start", block("0", `{"type":"text","text":"Let me look."}`)) + ev("content_block_stop", blockStop("0")) +
	ev("content_block_start", block("1", `{"type":"tool_use","id":"toolu_01","name":"Read","input":{}}`)) +
	ev("content_block_delta", delta("1", `{"type":"input_json_delta","partial_json":""}`)) +
	ev("content_block_delta", delta("1", `{"type":"input_json_delta","partial_json":"{\"file_pa"}`)) +
	ev("content_block_delta", delta("1", `{"type":"input_json_delta","partial_json":"th\": \"a.go\"}"}`)) +
	ev("content_block_stop", blockStop("1")) +
	ev("content_block_start", block("2", `{"type":"tool_use","id":"toolu_02","name":"Bash","input":{}}`)) +
	ev("content_block_delta", delta("2", `{"type":"input_json_delta","partial_json":"{\"command\": "}`)) +
	ev("content_block_stop", blockStop("2")) +
	ev("message_delta", stop("tool_use")) + ev("message_stop", msgStop)

// thinkingReply has thinking with a signature and a redacted block.
var thinkingReply = ev("message_start", msgStart) +
	ev("content_block_start", block("0", `{"type":"thinking","thinking":"","signature":""}`)) +
	ev("content_block_delta", delta("0", `{"type":"thinking_delta","thinking":"Let me think \u2014 \"carefully\".\n"}`)) +
	ev("content_block_delta", delta("0", `{"type":"signature_delta","signature":"EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"}`)) +
	ev("content_block_stop", blockStop("0")) +
	ev("content_block_start", block("1", `{"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix/LafPsn4aDFIT"}`)) +
	ev("content_block_stop", blockStop("1")) +
	ev("content_block_start", block("2", `{"type":"thinking","thinking":"whole","signature":"sig"}`)) +
	ev("content_block_stop", blockStop("2")) +
	ev("content_block_start", block("3", `{"type":"text","text":""}`)) +
	ev("content_block_delta", delta("3", `{"type":"text_delta","text":"caf\u00e9 \ud83d\ude00 <b>&amp;</b>"}`)) +
	ev("content_block_delta", delta("3", `{"type":"citations_delta","citation":{"type":"char_location","cited_text":"x"}}`)) +
	ev("content_block_stop", blockStop("3")) +
	ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"max_tokens","stop_sequence":null},"usage":{"input_tokens":7,"output_tokens":4096,"cache_creation_input_tokens":100,"cache_read_input_tokens":2000}}`) +
	ev("message_stop", msgStop)

// searchReply has a server-side web search: results, then a failed search.
var searchReply = ev("message_start", msgStart) +
	ev("content_block_start", block("0", `{"type":"server_tool_use","id":"srvtoolu_01","name":"web_search","input":{}}`)) +
	ev("content_block_delta", delta("0", `{"type":"input_json_delta","partial_json":"{\"query\":\"go\"}"}`)) +
	ev("content_block_stop", blockStop("0")) +
	ev("content_block_start", block("1", `{"type":"web_search_tool_result","tool_use_id":"srvtoolu_01","content":[{"type":"web_search_result","title":"The Go Programming Language","url":"https://go.dev/","encrypted_content":"Eo8J","page_age":"1 day ago"},{"type":"web_search_result","title":"Go","url":"https://pkg.go.dev/","encrypted_content":"Eo9J","page_age":null}]}`)) +
	ev("content_block_stop", blockStop("1")) +
	ev("content_block_start", block("2", `{"type":"web_search_tool_result","tool_use_id":"srvtoolu_02","content":{"type":"web_search_tool_result_error","error_code":"max_uses_exceeded"}}`)) +
	ev("content_block_stop", blockStop("2")) +
	ev("content_block_start", block("3", `{"type":"web_search_tool_result","tool_use_id":"srvtoolu_03","content":[]}`)) +
	ev("content_block_stop", blockStop("3")) +
	ev("message_delta", stop("pause_turn")) + ev("message_stop", msgStop)

const overloaded = `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`

// streamCases are replies of every shape the API sends, and damaged ones.
// For each, the decoder must yield what the SDK's stream and the former
// mapping of its union yield; wantErr, if set, is in the decoder's error
// (whose wording may differ from the SDK path's, which must fail too).
var streamCases = []struct {
	name, wire, wantErr string
}{
	{name: "text", wire: textReply},
	{name: "tool use with partial JSON", wire: toolReply},
	{name: "thinking, redacted thinking, escapes, citations", wire: thinkingReply},
	{name: "web search results and error", wire: searchReply},
	{name: "a delta longer than the read buffer", wire: ev("message_start", msgStart) + ev("content_block_delta", delta("0", `{"type":"text_delta","text":"`+strings.Repeat(`long \"quoted\" text \u00e9 `, 1000)+`"}`)) + ev("message_stop", msgStop)},
	{name: "stop reasons", wire: ev("message_start", msgStart) + ev("message_delta", stop("refusal")) + ev("message_delta", stop("stop_sequence")) + ev("message_stop", msgStop)},
	{name: "context window stop", wire: ev("message_start", msgStart) + ev("message_delta", stop("model_context_window_exceeded")) + ev("message_stop", msgStop)},
	{name: "message_delta without stop reason keeps the earlier one", wire: ev("message_start", msgStart) + ev("message_delta", stop("end_turn")) + ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":null},"usage":{"output_tokens":20}}`) + ev("message_stop", msgStop)},
	{name: "CRLF lines, comments, ids, retry, split data", wire: strings.ReplaceAll(
		": keep-alive\nretry: 3000\nid: 1\nevent: message_start\ndata: "+msgStart+"\n\n"+
			"event:content_block_start\ndata:"+block("0", `{"type":"text","text":"a"}`)+"\n\n"+
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\ndata:  \"index\":0,\ndata: \"delta\":{\"type\":\"text_delta\",\"text\":\"b\"}}\n\n"+
			"\n\n: another comment\n\n"+
			ev("message_stop", msgStop), "\n", "\r\n")},
	{name: "events named by their data, not their name", wire: ev("message_start", msgStart) + ev("whatever", delta("0", `{"type":"text_delta","text":"x"}`)) + ev("message_stop", msgStop)},
	{name: "data without a name is skipped", wire: ev("message_start", msgStart) + "data: " + delta("0", `{"type":"text_delta","text":"x"}`) + "\n\n" + ev("message_stop", msgStop)},
	{name: "empty data is skipped", wire: ev("message_start", msgStart) + "event: content_block_delta\ndata:\n\n" + "event: content_block_delta\n\n" + ev("message_stop", msgStop)},
	{name: "unknown events and blocks are skipped", wire: ev("message_start", msgStart) + ev("future_event", `{"type":"future_event","x":1}`) + ev("content_block_start", block("0", `{"type":"container_upload","file_id":"f"}`)) + ev("content_block_delta", delta("7", `{"type":"input_json_delta","partial_json":"{"}`)) + ev("content_block_stop", blockStop("7")) + ev("message_stop", msgStop)},
	{name: "error event before content", wire: ev("message_start", msgStart) + ev("error", overloaded)},
	{name: "error event after content", wire: ev("message_start", msgStart) + ev("content_block_start", block("0", `{"type":"text","text":"partial"}`)) + ev("error", overloaded)},
	{name: "error event that is not JSON", wire: ev("message_start", msgStart) + ev("error", `overloaded, try later`)},
	{name: "error event with an unknown type", wire: ev("error", `{"type":"error","error":{"type":"weird_error","message":"?"}}`)},
	{name: "stream ends without message_stop", wire: strings.TrimSuffix(textReply, ev("message_stop", msgStop))},
	{name: "stream ends inside a line", wire: textReply[:len(textReply)-20]},
	{name: "last event without an empty line", wire: strings.TrimSuffix(textReply, "\n")},
	{name: "empty body", wire: ""},
	{name: "only pings", wire: ev("ping", ping) + ev("ping", ping)},
	{name: "malformed JSON", wire: ev("message_start", msgStart) + ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"`), wantErr: `malformed "content_block_delta" event: unexpected end of JSON input`},
	{name: "malformed JSON after content", wire: ev("message_start", msgStart) + ev("content_block_start", block("0", `{"type":"text","text":"a"}`)) + ev("content_block_delta", `{"type":}`), wantErr: "malformed"},
	{name: "data that is not an object", wire: ev("message_start", msgStart) + ev("content_block_delta", `[1,2]`), wantErr: "not a JSON object"},
	{name: "two data lines, one empty", wire: ev("message_start", msgStart) + "event: x\ndata:\ndata:\n\n", wantErr: "malformed"},
}

// response is a streamed 200 response with body wire.
func response(wire string) *http.Response {
	req, _ := http.NewRequest(http.MethodPost, "https://api.anthropic.com/v1/messages", nil)
	return &http.Response{
		StatusCode: 200, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:  http.Header{"Content-Type": {"text/event-stream"}, "Request-Id": {"req_011"}},
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

var compareErrors = cmp.Comparer(func(a, b error) bool {
	return (a == nil) == (b == nil) && (a == nil || a.Error() == b.Error())
})

func TestStreamDecoderMatchesSDK(t *testing.T) {
	p := New(Options{APIKey: "k", LookupEnv: func(string) (string, bool) { return "", false }})
	for _, tc := range streamCases {
		t.Run(tc.name, func(t *testing.T) {
			want, wantErr := decodeAll(p, (*Provider).sdkEvents, tc.wire)
			got, err := decodeAll(p, (*Provider).events, tc.wire)
			if diff := cmp.Diff(want, got, compareErrors); diff != "" {
				t.Errorf("events (-sdk +decoder):\n%s", diff)
			}
			switch {
			case tc.wantErr != "":
				if err == nil || wantErr == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v (sdk: %v), want one containing %q", err, wantErr, tc.wantErr)
				}
				if errors.Is(err, llm.ErrInterrupted) != errors.Is(wantErr, llm.ErrInterrupted) {
					t.Errorf("interrupted: %v, sdk %v", err, wantErr)
				}
			case (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error():
				t.Fatalf("err = %v\nsdk: %v", err, wantErr)
			}
			if wantErr != nil && !errors.Is(wantErr, llm.ErrInterrupted) && len(want) > 0 {
				t.Errorf("an error after %d events is not ErrInterrupted: %v", len(want), wantErr)
			}
		})
	}
}

// TestStreamErrorEventClassified: an error event decodes to the SDK's
// error type, so that its classification (overloaded, retryable before
// content, interrupted after) is the one the SDK path had.
func TestStreamErrorEventClassified(t *testing.T) {
	p := New(Options{APIKey: "k", LookupEnv: func(string) (string, bool) { return "", false }})
	_, err := decodeAll(p, (*Provider).events, ev("error", overloaded))
	var ae *llm.APIError
	if !errors.As(err, &ae) || !errors.Is(err, llm.ErrOverloaded) || errors.Is(err, llm.ErrInterrupted) || ae.RequestID != "req_011" || ae.Message != "Overloaded" {
		t.Fatalf("err = %#v", err)
	}
	_, err = decodeAll(p, (*Provider).events, textReply[:strings.Index(textReply, "event: content_block_stop")]+ev("error", overloaded))
	if !errors.Is(err, llm.ErrInterrupted) || !errors.Is(err, llm.ErrOverloaded) {
		t.Fatalf("after content: err = %v", err)
	}
}

// FuzzStreamDecoder feeds damaged and unusual streams to the decoder and
// to the SDK path: the decoder must not panic, and where both read a stream
// without error they must yield the same events.
func FuzzStreamDecoder(f *testing.F) {
	for _, tc := range streamCases {
		f.Add(tc.wire)
	}
	p := New(Options{APIKey: "k", LookupEnv: func(string) (string, bool) { return "", false }})
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

// BenchmarkStreamDecode decodes a reply of ~200 events (text deltas and
// a tool use's input in pieces) from memory: "decoder" is Gantry's,
// "sdk" the SDK's stream and the former mapping of its union.
func BenchmarkStreamDecode(b *testing.B) {
	var w strings.Builder
	w.WriteString(ev("message_start", msgStart) + ev("content_block_start", block("0", `{"type":"text","text":""}`)))
	for range 150 {
		w.WriteString(ev("content_block_delta", delta("0", `{"type":"text_delta","text":"some words of text "}`)))
	}
	w.WriteString(ev("content_block_stop", blockStop("0")) + ev("content_block_start", block("1", `{"type":"tool_use","id":"toolu_01","name":"Read","input":{}}`)))
	for range 40 {
		w.WriteString(ev("content_block_delta", delta("1", `{"type":"input_json_delta","partial_json":"{\"file_pa"}`)))
	}
	w.WriteString(ev("content_block_stop", blockStop("1")) + ev("message_delta", stop("tool_use")) + ev("message_stop", msgStop))
	wire := w.String()
	p := New(Options{APIKey: "k", LookupEnv: func(string) (string, bool) { return "", false }})
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
