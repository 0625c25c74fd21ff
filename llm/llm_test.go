package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gantry-dev/gantry/llm"
)

func TestParseInput(t *testing.T) {
	tests := []struct {
		in, want string
		err      bool
	}{
		{"", "{}", false},
		{" \n\t", "{}", false},
		{`{"a":1}`, `{"a":1}`, false},
		{"{ \"a\" : [1, 2] ,\n \"b\": \"x y\" }", `{"a":[1,2],"b":"x y"}`, false},
		{`{"a":`, "{}", true},
		{`[1,2]`, "{}", true},
		{`"str"`, "{}", true},
		{`{"a":1}{"b":2}`, "{}", true},
	}
	for _, tt := range tests {
		got, err := llm.ParseInput([]byte(tt.in))
		if string(got) != tt.want || (err != nil) != tt.err {
			t.Errorf("ParseInput(%q) = %s, %v; want %s, err %v", tt.in, got, err, tt.want, tt.err)
		}
	}
}

func FuzzParseInput(f *testing.F) {
	for _, s := range []string{"", `{"a":1}`, "{ \"a\" : \"b c\" }", `{"a":"\" x"}`, `[`, `{"a":"\\"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, err := llm.ParseInput(raw)
		if !json.Valid(got) || got[0] != '{' {
			t.Fatalf("ParseInput(%q) = %q: not a JSON object", raw, got)
		}
		if err == nil && strings.TrimSpace(string(raw)) != "" {
			var a, b any
			if json.Unmarshal(raw, &a) != nil || json.Unmarshal(got, &b) != nil || !cmp.Equal(a, b) {
				t.Fatalf("ParseInput(%q) = %q changed the value", raw, got)
			}
		}
	})
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		h    map[string]string
		want time.Duration
	}{
		{nil, 0},
		{map[string]string{"retry-after": "2"}, 2 * time.Second},
		{map[string]string{"retry-after": "0.5"}, 500 * time.Millisecond},
		{map[string]string{"retry-after-ms": "1500"}, 1500 * time.Millisecond},
		{map[string]string{"retry-after-ms": "20", "retry-after": "9"}, 20 * time.Millisecond},
		{map[string]string{"retry-after-ms": "junk", "retry-after": "9"}, 9 * time.Second},
		{map[string]string{"retry-after": now.Add(30 * time.Second).Format(http.TimeFormat)}, 30 * time.Second},
		{map[string]string{"retry-after": now.Add(-time.Hour).Format(http.TimeFormat)}, 0},
		{map[string]string{"retry-after": "-3"}, 0},
		{map[string]string{"retry-after": "soon"}, 0},
	}
	for _, tt := range tests {
		h := http.Header{}
		for k, v := range tt.h {
			h.Set(k, v)
		}
		if got := llm.ParseRetryAfter(h, now); got != tt.want {
			t.Errorf("ParseRetryAfter(%v) = %v, want %v", tt.h, got, tt.want)
		}
	}
}

func FuzzParseRetryAfter(f *testing.F) {
	f.Add("2", "")
	f.Add("", "1500")
	f.Add("Wed, 21 Oct 2015 07:28:00 GMT", "x")
	f.Add("1e308", "1e308")
	f.Fuzz(func(t *testing.T, ra, ms string) {
		h := http.Header{}
		h.Set("retry-after", ra)
		h.Set("retry-after-ms", ms)
		if d := llm.ParseRetryAfter(h, time.Unix(1e9, 0)); d < 0 {
			t.Fatalf("negative delay %v for %q/%q", d, ra, ms)
		}
	})
}

func TestParseErrorBody(t *testing.T) {
	tests := []struct {
		body, typ, code, msg string
	}{
		{`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, "overloaded_error", "", "Overloaded"},
		{`{"error":{"message":"Bad key","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`, "invalid_request_error", "invalid_api_key", "Bad key"},
		{`{"error":"model 'x' not found"}`, "", "", "model 'x' not found"},
		{`{"message":"busy","type":"server_error"}`, "server_error", "", "busy"},
		{`{"error":{"code":429,"message":"slow down"}}`, "", "429", "slow down"},
		{"<html>502 Bad Gateway</html>\n", "", "", "<html>502 Bad Gateway</html>"},
	}
	for _, tt := range tests {
		typ, code, msg := llm.ParseErrorBody([]byte(tt.body))
		if typ != tt.typ || code != tt.code || msg != tt.msg {
			t.Errorf("ParseErrorBody(%s) = %q %q %q", tt.body, typ, code, msg)
		}
	}
}

func FuzzParseErrorBody(f *testing.F) {
	f.Add([]byte(`{"type":"error","error":{"type":"x","message":"y"}}`))
	f.Add([]byte(`{"error":"m"}`))
	f.Add([]byte(`{"error":{"code":1.5}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		_, _, msg := llm.ParseErrorBody(body)
		if !json.Valid(body) && len(msg) > 500 {
			t.Fatalf("message of %d bytes", len(msg))
		}
	})
}

func TestAPIErrorIs(t *testing.T) {
	tests := []struct {
		err  *llm.APIError
		is   []error
		not  []error
		retr bool
	}{
		{&llm.APIError{StatusCode: 529}, []error{llm.ErrOverloaded}, []error{llm.ErrServer, llm.ErrRateLimited}, true},
		{&llm.APIError{StatusCode: 200, Type: "overloaded_error"}, []error{llm.ErrOverloaded}, nil, true},
		{&llm.APIError{StatusCode: 429}, []error{llm.ErrRateLimited}, []error{llm.ErrOverloaded}, true},
		{&llm.APIError{StatusCode: 502}, []error{llm.ErrServer}, nil, true},
		{&llm.APIError{StatusCode: 408}, nil, []error{llm.ErrBadRequest}, true},
		{&llm.APIError{StatusCode: 401}, []error{llm.ErrAuth}, []error{llm.ErrBadRequest}, false},
		{&llm.APIError{StatusCode: 400, Message: "prompt is too long: 1 > 0"}, []error{llm.ErrBadRequest, llm.ErrContextLength}, nil, false},
		{&llm.APIError{StatusCode: 400, Code: "context_length_exceeded"}, []error{llm.ErrContextLength}, nil, false},
		{&llm.APIError{StatusCode: 400, Message: "bad tool"}, []error{llm.ErrBadRequest}, []error{llm.ErrContextLength}, false},
	}
	for _, tt := range tests {
		err := fmt.Errorf("wrapped: %w", tt.err)
		for _, s := range tt.is {
			if !errors.Is(err, s) {
				t.Errorf("%v is not %v", tt.err, s)
			}
		}
		for _, s := range tt.not {
			if errors.Is(err, s) {
				t.Errorf("%v is %v", tt.err, s)
			}
		}
		if llm.Retryable(err) != tt.retr {
			t.Errorf("Retryable(%v) = %v", tt.err, !tt.retr)
		}
	}
	if llm.Retryable(context.Canceled) || llm.Retryable(fmt.Errorf("x: %w: %w", llm.ErrConnection, context.DeadlineExceeded)) {
		t.Error("a context error is retryable")
	}
	if !llm.Retryable(fmt.Errorf("x: %w", llm.ErrConnection)) || !llm.Retryable(llm.ErrInterrupted) {
		t.Error("connection errors are not retryable")
	}
}

// script is a fake attempt: each call plays the next list of steps.
type step struct {
	ev  llm.Event
	err error
}

func scripted(attempts ...[]step) (func(context.Context) iter.Seq2[llm.Event, error], *int) {
	n := 0
	return func(context.Context) iter.Seq2[llm.Event, error] {
		steps := attempts[n]
		n++
		return func(yield func(llm.Event, error) bool) {
			for _, s := range steps {
				if !yield(s.ev, s.err) || s.err != nil {
					return
				}
			}
		}
	}, &n
}

var (
	text = step{ev: llm.Event{Type: llm.EventTextDelta, Text: "hi"}}
	end  = step{ev: llm.Event{Type: llm.EventMessageEnd, StopReason: llm.StopEndTurn}}
)

func TestRetryPolicy(t *testing.T) {
	overloaded := &llm.APIError{StatusCode: 529}
	limited := &llm.APIError{StatusCode: 429, RetryAfter: 3 * time.Second}
	tests := []struct {
		name     string
		policy   llm.RetryPolicy
		attempts [][]step
		wantErr  error
		calls    int
		sleeps   []time.Duration
	}{
		{"success", llm.RetryPolicy{}, [][]step{{text, end}}, nil, 1, nil},
		{"backoff grows", llm.RetryPolicy{}, [][]step{{{err: overloaded}}, {{err: overloaded}}, {{err: overloaded}}, {text, end}},
			nil, 4, []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, time.Second}},
		{"backoff capped", llm.RetryPolicy{BaseDelay: time.Second, MaxDelay: 3 * time.Second, MaxAttempts: 5},
			[][]step{{{err: overloaded}}, {{err: overloaded}}, {{err: overloaded}}, {{err: overloaded}}, {text, end}},
			nil, 5, []time.Duration{500 * time.Millisecond, time.Second, 1500 * time.Millisecond, 1500 * time.Millisecond}},
		{"retry-after honoured", llm.RetryPolicy{}, [][]step{{{err: limited}}, {text, end}}, nil, 2, []time.Duration{3 * time.Second}},
		{"retry-after too long", llm.RetryPolicy{MaxRetryAfter: time.Second}, [][]step{{{err: limited}}, {text, end}}, llm.ErrRateLimited, 1, nil},
		{"attempts run out", llm.RetryPolicy{MaxAttempts: 2}, [][]step{{{err: overloaded}}, {{err: overloaded}}}, llm.ErrOverloaded, 2, []time.Duration{250 * time.Millisecond}},
		{"not retryable", llm.RetryPolicy{}, [][]step{{{err: &llm.APIError{StatusCode: 400}}}}, llm.ErrBadRequest, 1, nil},
		{"no retry after an event", llm.RetryPolicy{}, [][]step{{text, {err: fmt.Errorf("%w: reset", llm.ErrInterrupted)}}, {text, end}}, llm.ErrInterrupted, 1, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var slept []time.Duration
			p := tt.policy
			p.Jitter = func() float64 { return 0 }
			p.Sleep = func(_ context.Context, d time.Duration) error { slept = append(slept, d); return nil }
			attempt, calls := scripted(tt.attempts...)
			_, err := llm.Collect(llm.Retry(t.Context(), p, attempt))
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Errorf("err = %v, want %v", err, tt.wantErr)
			}
			if *calls != tt.calls {
				t.Errorf("%d attempts, want %d", *calls, tt.calls)
			}
			if diff := cmp.Diff(tt.sleeps, slept); diff != "" {
				t.Errorf("sleeps (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRetryJitterAndCancel(t *testing.T) {
	p := llm.RetryPolicy{Jitter: func() float64 { return 0.999 }}
	if d := p.Delay(1, errors.New("x")); d <= 490*time.Millisecond || d >= 500*time.Millisecond {
		t.Errorf("jittered delay %v, want just under 500ms", d)
	}
	// The default sleep honours cancellation.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	attempt, calls := scripted([]step{{err: &llm.APIError{StatusCode: 529}}}, []step{text, end})
	_, err := llm.Collect(llm.Retry(ctx, llm.RetryPolicy{BaseDelay: time.Hour}, attempt))
	if !errors.Is(err, context.Canceled) || *calls != 1 {
		t.Errorf("err = %v after %d attempts", err, *calls)
	}
}

func TestAccumulator(t *testing.T) {
	var a llm.Accumulator
	for _, ev := range []llm.Event{
		{Type: llm.EventMessageStart, ID: "m1", Model: "x", Usage: llm.Usage{InputTokens: 3}},
		{Type: llm.EventThinkingDelta, Index: 0, Text: "hm"},
		{Type: llm.EventThinkingDelta, Index: 0, Signature: "s1"},
		{Type: llm.EventThinkingDelta, Index: 0, Signature: "s2"},
		{Type: llm.EventTextDelta, Index: 1, Text: "a"},
		{Type: llm.EventToolUseStart, Index: 3, ID: "t2", Name: "B"},
		{Type: llm.EventToolUseStart, Index: 2, ID: "t1", Name: "A"},
		{Type: llm.EventToolUseDelta, Index: 2, Text: `{}`},
		{Type: llm.EventTextDelta, Index: 1, Text: "b"},
		{Type: llm.EventToolUseEnd, Index: 2, ID: "t1", Name: "A", Input: json.RawMessage(`{}`)},
		{Type: llm.EventTextDelta, Index: 4, Text: ""},
	} {
		a.Add(ev)
	}
	want := []llm.Block{llm.Thinking("hm", "s1s2"), llm.Text("ab"), llm.ToolUse("t1", "A", json.RawMessage(`{}`))}
	r := a.Response()
	if diff := cmp.Diff(want, r.Message.Content); diff != "" {
		t.Errorf("content without the orphan t2 (-want +got):\n%s", diff)
	}
	if a.Done() || r.ID != "m1" || r.Usage.InputTokens != 3 {
		t.Errorf("response %+v done %v", r, a.Done())
	}
	a.Add(llm.Event{Type: llm.EventMessageEnd, StopReason: llm.StopToolUse, Usage: llm.Usage{InputTokens: 3, OutputTokens: 9}})
	if r := a.Response(); !a.Done() || r.StopReason != llm.StopToolUse || r.Usage.OutputTokens != 9 {
		t.Errorf("after end: %+v", r)
	}
}

func TestCollectWithoutEnd(t *testing.T) {
	attempt, _ := scripted([]step{text})
	if _, err := llm.Collect(attempt(t.Context())); !errors.Is(err, llm.ErrInterrupted) {
		t.Errorf("err = %v", err)
	}
}

func TestUsage(t *testing.T) {
	u := llm.Usage{InputTokens: 1, OutputTokens: 2, CacheCreationInputTokens: 3, CacheReadInputTokens: 4}
	if s := u.Add(u); s != (llm.Usage{2, 4, 6, 8}) || u.PromptTokens() != 8 {
		t.Errorf("Add = %+v, PromptTokens = %d", s, u.PromptTokens())
	}
}

func ExampleCollect() {
	// A provider that always answers "hello" (a real one is
	// anthropic.New(…) or openai.New(…)).
	p := llm.ProviderFunc(func(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
		return func(yield func(llm.Event, error) bool) {
			_ = yield(llm.Event{Type: llm.EventTextDelta, Text: "hello"}, nil) &&
				yield(llm.Event{Type: llm.EventMessageEnd, StopReason: llm.StopEndTurn}, nil)
		}
	})
	resp, err := llm.Collect(p.Stream(context.Background(), &llm.Request{Messages: []llm.Message{llm.UserText("hi")}}))
	if err != nil {
		panic(err)
	}
	fmt.Println(resp.Message.Text(), resp.StopReason)
	// Output: hello end_turn
}
