package durable

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestBrokerFanOut(t *testing.T) {
	var b Broker
	a, cancelA := b.Subscribe("r1")
	c, cancelC := b.Subscribe("r1")
	other, cancelO := b.Subscribe("r2")
	defer cancelO()
	call := LiveCall{RunID: "r1", Turn: 1, Attempt: 1}
	sink := b.Open(context.Background(), call)
	sink.Send(json.RawMessage(`{"type":"message_start"}`))
	sink.Close()
	for _, ch := range []<-chan LiveEvent{a, c} {
		select {
		case ev := <-ch:
			if ev.LiveCall != call || string(ev.Event) != `{"type":"message_start"}` {
				t.Errorf("event = %+v", ev)
			}
		case <-time.After(time.Second):
			t.Fatal("a subscriber got nothing")
		}
	}
	select {
	case ev := <-other:
		t.Errorf("another run's subscriber got %+v", ev)
	default:
	}
	cancelA()
	cancelA() // twice is fine
	if n := b.Subscribers("r1"); n != 1 {
		t.Errorf("subscribers after one cancel = %d", n)
	}
	// A subscriber that does not read loses events; the publisher never
	// blocks.
	done := make(chan struct{})
	go func() {
		for i := range 3 * liveBuffer {
			b.Publish(LiveEvent{LiveCall: call, Event: json.RawMessage(fmt.Sprint(i))})
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Publish blocked on a slow subscriber")
	}
	if len(c) != liveBuffer {
		t.Errorf("a slow subscriber holds %d events, want its buffer (%d)", len(c), liveBuffer)
	}
	cancelC()
	if n := b.Subscribers("r1"); n != 0 {
		t.Errorf("subscribers = %d", n)
	}
}

// TestLiveOverHTTP: HTTPPublisher streams a call to the broker's handler;
// the handler refuses a missing token and a stream that does not name
// its call.
func TestLiveOverHTTP(t *testing.T) {
	var b Broker
	srv := httptest.NewServer(b.Handler("s3cret"))
	defer srv.Close()
	events, cancel := b.Subscribe("run-1")
	defer cancel()

	p := &HTTPPublisher{URL: srv.URL, Token: "s3cret"}
	sink := p.Open(context.Background(), LiveCall{RunID: "run-1", Turn: 2, Attempt: 3})
	want := []string{`{"type":"content_block_delta","delta":{"type":"text_delta","text":"he"}}`, `{"type":"message_stop"}`}
	for _, w := range want {
		sink.Send(json.RawMessage(w))
	}
	// The first event arrives while the call is still open.
	select {
	case ev := <-events:
		if ev.Turn != 2 || ev.Attempt != 3 || string(ev.Event) != want[0] {
			t.Errorf("first event = %+v", ev)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no live event before the call ended")
	}
	sink.Close()
	select {
	case ev := <-events:
		if string(ev.Event) != want[1] {
			t.Errorf("second event = %s", ev.Event)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the second event did not arrive")
	}

	for _, tt := range []struct {
		name, auth, body string
		status           int
	}{
		{"no token", "", `{"run_id":"run-1"}` + "\n", http.StatusUnauthorized},
		{"wrong token", "Bearer nope", `{"run_id":"run-1"}` + "\n", http.StatusUnauthorized},
		{"no call", "Bearer s3cret", `{"type":"message_stop"}` + "\n", http.StatusBadRequest},
		{"empty", "Bearer s3cret", "", http.StatusBadRequest},
		{"ok, a bad line skipped", "Bearer s3cret", `{"run_id":"run-1","turn":1}` + "\nnot json\n" + `{"type":"ping"}` + "\n", http.StatusNoContent},
	} {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+LivePath, strings.NewReader(tt.body))
		if tt.auth != "" {
			req.Header.Set("Authorization", tt.auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.status {
			t.Errorf("%s: status %d, want %d", tt.name, resp.StatusCode, tt.status)
		}
	}
	select {
	case ev := <-events:
		if string(ev.Event) != `{"type":"ping"}` {
			t.Errorf("event = %s", ev.Event)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the valid line was not published")
	}
	select {
	case ev := <-events:
		t.Errorf("unexpected event %s", ev.Event)
	default:
	}

	// A serve process that is gone: the sink drops, Close returns.
	dead := &HTTPPublisher{URL: "http://127.0.0.1:1"}
	s := dead.Open(context.Background(), LiveCall{RunID: "x"})
	s.Send(json.RawMessage(`{}`))
	start := time.Now()
	s.Close()
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Close took %v", d)
	}
}

func TestBrokerLiveLines(t *testing.T) {
	var b Broker
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan string, 1)
	go func() {
		for ev := range b.Live(ctx, "r") {
			if ev.Seq != 0 || ev.Type != "stream_event" {
				t.Errorf("live event %+v", ev)
			}
			got <- string(ev.Data)
			return
		}
	}()
	for b.Subscribers("r") == 0 {
		time.Sleep(time.Millisecond)
	}
	b.Publish(LiveEvent{LiveCall: LiveCall{RunID: "r", Turn: 4, Attempt: 1}, Event: json.RawMessage(`{"type":"message_start"}`)})
	line := <-got
	cancel()
	var m map[string]any
	if err := json.Unmarshal([]byte(line), &m); err != nil || m["type"] != "stream_event" || m["session_id"] != "r" || m["turn"] != float64(4) {
		t.Errorf("line = %s", line)
	}
}

// FuzzLiveHandler: whatever a worker (or anyone who has the token) sends
// to the live endpoint, the handler does not panic, answers 204 or 400,
// and publishes only lines that are JSON, for the run the first line
// names.
func FuzzLiveHandler(f *testing.F) {
	f.Add([]byte(`{"run_id":"r","turn":1,"attempt":1}` + "\n" + `{"type":"message_start"}` + "\n"))
	f.Add([]byte("not json\n{}\n"))
	f.Add([]byte(`{"run_id":"r"}` + "\n\n\n" + `[1,2` + "\n" + `"x"` + "\n"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, body []byte) {
		var b Broker
		events, cancel := b.Subscribe("r")
		defer cancel()
		rec := httptest.NewRecorder()
		b.Handler("").ServeHTTP(rec, httptest.NewRequest(http.MethodPost, LivePath, strings.NewReader(string(body))))
		if rec.Code != http.StatusNoContent && rec.Code != http.StatusBadRequest {
			t.Fatalf("status %d", rec.Code)
		}
		for {
			select {
			case ev := <-events:
				if ev.RunID != "r" || !json.Valid(ev.Event) {
					t.Fatalf("published %+v", ev)
				}
			default:
				return
			}
		}
	})
}

// BenchmarkBrokerPublish is the cost of one live event (a text delta)
// handed to a run's followers.
func BenchmarkBrokerPublish(b *testing.B) {
	for _, subs := range []int{1, 10} {
		b.Run(fmt.Sprintf("subscribers=%d", subs), func(b *testing.B) {
			var br Broker
			for range subs {
				ch, cancel := br.Subscribe("r")
				defer cancel()
				go func() {
					for range ch {
					}
				}()
			}
			ev := LiveEvent{LiveCall: LiveCall{RunID: "r", Turn: 1, Attempt: 1},
				Event: json.RawMessage(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hello"}}`)}
			b.ReportAllocs()
			for b.Loop() {
				br.Publish(ev)
			}
		})
	}
}

// BenchmarkLiveLine is the cost of a live event from Publish to the SSE
// line a follower gets.
func BenchmarkLiveLine(b *testing.B) {
	var br Broker
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	lines := make(chan struct{})
	go func() {
		for range br.Live(ctx, "r") {
			lines <- struct{}{}
		}
	}()
	for br.Subscribers("r") == 0 {
		time.Sleep(time.Millisecond)
	}
	ev := LiveEvent{LiveCall: LiveCall{RunID: "r", Turn: 1, Attempt: 1},
		Event: json.RawMessage(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hello"}}`)}
	b.ReportAllocs()
	for b.Loop() {
		br.Publish(ev)
		<-lines
	}
}
