package durable

import (
	"bufio"
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/gantry-dev/gantry/runqueue"
)

// Live events: the stream events of a model call in flight (text and
// thinking deltas, tool-use inputs as they are written), published to the
// API's followers as they arrive. They are previews, never recorded: the
// run's message event, in its history, is the truth, and a follower that
// reconnects gets the messages, not the deltas it missed.
//
// A worker's model activity hands them to a [Publisher]: a [Broker] when
// the API runs in the same process, an [HTTPPublisher] that streams them to
// the live endpoint of a `gantry-temporal serve` process (its
// [Broker.Handler]) otherwise. Whichever worker makes the call publishes
// it, so a call taken over by another worker after its first died goes
// on streaming from there (Attempt says a new attempt began: followers
// drop what they had of that turn).

// LiveCall names one model call: its run, its turn (1 = the run's first
// model call) and its attempt (1 = first; a call retried after its worker
// died or the model failed counts up).
type LiveCall struct {
	RunID   string `json:"run_id"`
	Turn    int    `json:"turn"`
	Attempt int    `json:"attempt"`
}

// LiveEvent is one live event of a call: Event is the stream-json
// stream_event's "event" (the Anthropic Messages stream shape Gantry
// writes for every provider: message_start, content_block_start,
// content_block_delta, …).
type LiveEvent struct {
	LiveCall
	Event json.RawMessage `json:"event"`
}

// Publisher receives the live events of a worker's model calls.
type Publisher interface {
	// Open begins the live events of one call; the sink is closed when
	// the call ends. Neither Open nor the sink's Send may block the call
	// for long: a sink drops events it cannot pass on.
	Open(ctx context.Context, call LiveCall) LiveSink
}

// LiveSink takes the live events of one model call.
type LiveSink interface {
	Send(event json.RawMessage)
	Close()
}

// Publishers publishes to each of ps.
type Publishers []Publisher

// Open implements Publisher.
func (ps Publishers) Open(ctx context.Context, call LiveCall) LiveSink {
	sinks := make(multiSink, 0, len(ps))
	for _, p := range ps {
		sinks = append(sinks, p.Open(ctx, call))
	}
	return sinks
}

type multiSink []LiveSink

func (m multiSink) Send(ev json.RawMessage) {
	for _, s := range m {
		s.Send(ev)
	}
}

func (m multiSink) Close() {
	for _, s := range m {
		s.Close()
	}
}

// liveBuffer is how many live events a subscriber (or a sink waiting on
// its connection) holds before it drops new ones.
const liveBuffer = 1024

// Broker hands the live events published to it to the subscribers of
// their run. A subscriber that falls behind loses events (they are
// previews); a run is never slowed down. The zero value is ready to use;
// it is safe for concurrent use.
type Broker struct {
	mu   sync.Mutex
	subs map[string]map[chan LiveEvent]struct{}
}

var _ Publisher = (*Broker)(nil)

// Publish hands ev to the subscribers of its run.
func (b *Broker) Publish(ev LiveEvent) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for ch := range b.subs[ev.RunID] {
		select {
		case ch <- ev:
		default: // behind: drop
		}
	}
}

// Subscribe returns the live events of run id from now on; cancel ends
// the subscription and closes the channel.
func (b *Broker) Subscribe(id string) (events <-chan LiveEvent, cancel func()) {
	ch := make(chan LiveEvent, liveBuffer)
	b.mu.Lock()
	if b.subs == nil {
		b.subs = map[string]map[chan LiveEvent]struct{}{}
	}
	if b.subs[id] == nil {
		b.subs[id] = map[chan LiveEvent]struct{}{}
	}
	b.subs[id][ch] = struct{}{}
	b.mu.Unlock()
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			b.mu.Lock()
			delete(b.subs[id], ch)
			if len(b.subs[id]) == 0 {
				delete(b.subs, id)
			}
			b.mu.Unlock()
			close(ch)
		})
	}
}

// Subscribers is how many subscriptions run id has.
func (b *Broker) Subscribers(id string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.subs[id])
}

// Open implements Publisher: the events go straight to the subscribers.
func (b *Broker) Open(_ context.Context, call LiveCall) LiveSink {
	return brokerSink{b: b, call: call}
}

type brokerSink struct {
	b    *Broker
	call LiveCall
}

func (s brokerSink) Send(ev json.RawMessage) { s.b.Publish(LiveEvent{LiveCall: s.call, Event: ev}) }
func (brokerSink) Close()                    {}

// LivePath is the path of a serve process's live endpoint.
const LivePath = "/v1/live"

// maxLiveLine bounds one line of a live stream.
const maxLiveLine = 4 << 20

// Handler is the live endpoint workers stream to (POST [LivePath]): the
// body is one model call's stream, newline-delimited JSON — the
// [LiveCall] first, then one stream event per line — read as it arrives
// and published to the broker. With a token, the request needs it as a
// bearer token.
func (b *Broker) Handler(token string) http.Handler {
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "POST a model call's live events", http.StatusMethodNotAllowed)
			return
		}
		if token != "" && subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			http.Error(w, "a valid bearer token is required", http.StatusUnauthorized)
			return
		}
		sc := bufio.NewScanner(r.Body)
		sc.Buffer(make([]byte, 64<<10), maxLiveLine)
		if !sc.Scan() {
			http.Error(w, "the stream is empty", http.StatusBadRequest)
			return
		}
		var call LiveCall
		if err := json.Unmarshal(sc.Bytes(), &call); err != nil || call.RunID == "" {
			http.Error(w, "the first line must name the call (run_id, turn, attempt)", http.StatusBadRequest)
			return
		}
		for sc.Scan() {
			line := bytes.TrimSpace(sc.Bytes())
			if len(line) == 0 || !json.Valid(line) {
				continue
			}
			b.Publish(LiveEvent{LiveCall: call, Event: json.RawMessage(bytes.Clone(line))})
		}
		w.WriteHeader(http.StatusNoContent)
	})
}

// Live yields the live events of run id as stream-json stream_event lines
// (Seq 0: they are not the run's recorded events), until ctx ends.
func (b *Broker) Live(ctx context.Context, id string) iter.Seq[runqueue.Event] {
	return func(yield func(runqueue.Event) bool) {
		ch, cancel := b.Subscribe(id)
		defer cancel()
		for {
			select {
			case <-ctx.Done():
				return
			case ev := <-ch:
				line, err := json.Marshal(map[string]any{"type": "stream_event", "event": ev.Event, "session_id": id,
					"parent_tool_use_id": nil, "turn": ev.Turn, "attempt": ev.Attempt})
				if err != nil {
					continue
				}
				if !yield(runqueue.Event{Type: "stream_event", Data: line}) {
					return
				}
			}
		}
	}
}

// HTTPPublisher streams each model call's live events to a serve
// process's live endpoint: one POST per call, its body written as the
// events come. A serve process that cannot be reached loses the events
// (they are previews); the call never waits for it.
type HTTPPublisher struct {
	// URL is the serve process's base URL ("http://127.0.0.1:8484").
	URL string
	// Token is its bearer token ("" = none).
	Token string
	// Client sends the requests (nil = a client without timeout: a
	// stream lasts as long as the call).
	Client *http.Client
}

var _ Publisher = (*HTTPPublisher)(nil)

// Open implements Publisher.
func (p *HTTPPublisher) Open(ctx context.Context, call LiveCall) LiveSink {
	head, err := json.Marshal(call)
	if err != nil {
		return nopSink{}
	}
	s := &httpSink{ch: make(chan json.RawMessage, liveBuffer), done: make(chan struct{})}
	pr, pw := io.Pipe()
	req, err := http.NewRequestWithContext(context.WithoutCancel(ctx), http.MethodPost, strings.TrimRight(p.URL, "/")+LivePath, pr)
	if err != nil {
		return nopSink{}
	}
	req.Header.Set("Content-Type", "application/x-ndjson")
	if p.Token != "" {
		req.Header.Set("Authorization", "Bearer "+p.Token)
	}
	cl := p.Client
	if cl == nil {
		cl = http.DefaultClient
	}
	go func() { // the writer: the call's events, then the end of the body
		defer pw.Close()
		if _, err := pw.Write(append(head, '\n')); err != nil {
			return
		}
		for ev := range s.ch {
			if _, err := pw.Write(append(ev, '\n')); err != nil {
				for range s.ch { // the serve process went away: drain
				}
				return
			}
		}
	}()
	go func() { // the request
		defer close(s.done)
		resp, err := cl.Do(req)
		if err != nil {
			pr.CloseWithError(err)
			return
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		pr.CloseWithError(errors.New("the live endpoint answered"))
	}()
	return s
}

type httpSink struct {
	mu     sync.Mutex
	closed bool
	ch     chan json.RawMessage
	done   chan struct{}
}

func (s *httpSink) Send(ev json.RawMessage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	select {
	case s.ch <- ev:
	default: // behind: drop
	}
}

// Close ends the body; it waits a moment for the request to finish so a
// worker that stops does not cut the stream's tail.
func (s *httpSink) Close() {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		close(s.ch)
	}
	s.mu.Unlock()
	select {
	case <-s.done:
	case <-time.After(2 * time.Second):
	}
}

type nopSink struct{}

func (nopSink) Send(json.RawMessage) {}
func (nopSink) Close()               {}

// String describes the publisher for logs.
func (p *HTTPPublisher) String() string { return fmt.Sprintf("live events to %s%s", p.URL, LivePath) }
