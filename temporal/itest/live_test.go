package itest

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/worker"

	"github.com/gantry-dev/gantry/llm/anthropic"
	"github.com/gantry-dev/gantry/llm/llmtest"
	"github.com/gantry-dev/gantry/runqueue"
	"github.com/gantry-dev/gantry/serve"
	"github.com/gantry-dev/gantry/store"
	"github.com/gantry-dev/gantry/temporal/durable"
	"github.com/gantry-dev/gantry/temporal/internal/fakemodel"
)

// TestLiveDeltas: a worker streams its model call's events to the serve
// process's live endpoint (HTTP, as a separate worker process does), and
// an SSE follower of the run sees the text deltas before the assistant
// message that completes them; the deltas add up to the message's text.
func TestLiveDeltas(t *testing.T) {
	c := newCluster(t)
	// A slow model: the reply comes two characters at a time.
	slow := llmtest.NewServer(t, llmtest.WithResponder(fakemodel.Respond), llmtest.WithChunkSize(2),
		llmtest.WithChunkDelay(150*time.Millisecond), llmtest.WithHeaderDelay(300*time.Millisecond))
	prov := anthropic.New(anthropic.Options{BaseURL: slow.URL(), APIKey: "test", Model: "claude-test"})

	st, err := store.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "serve.db"), store.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	broker := &durable.Broker{}
	eng := durable.NewEngine(c.c, durable.EngineOptions{TaskQueue: c.queue, Live: broker})
	srv, err := serve.New(serve.Options{Store: st, Engine: eng, Tick: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle(durable.LivePath, broker.Handler(""))
	mux.Handle("/", srv.Handler())
	hs := &http.Server{Handler: mux}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	base := "http://" + ln.Addr().String()

	home := t.TempDir()
	acts, err := durable.NewActivities(durable.WorkerOptions{Provider: prov, Getenv: fakemodel.Getenv(home), UserHome: home,
		SessionHome: home, Live: &durable.HTTPPublisher{URL: base}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { acts.Close() })
	c.ts.NewWorkerWithOptions(c.queue, func(r worker.Registry) { durable.Register(r, acts) }, worker.Options{})

	bg := context.Background()
	run, err := eng.Start(bg, runqueue.Request{Prompt: "calls=0 say something", Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(bg, 2*time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/v1/runs/"+run.ID+"/events", nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var (
		order  []string // "delta" or the recorded event's type
		text   string
		final  string
		id, ev string
		data   []byte
	)
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "id:"):
			id = strings.TrimSpace(line[3:])
		case strings.HasPrefix(line, "event:"):
			ev = strings.TrimSpace(line[6:])
		case strings.HasPrefix(line, "data:"):
			data = append(data, strings.TrimSpace(line[5:])...)
		case line == "" && ev != "":
			switch ev {
			case "stream_event":
				if id != "" {
					t.Errorf("a live event has an id (%s): reconnecting clients would skip recorded events", id)
				}
				var se struct {
					Event struct {
						Type  string `json:"type"`
						Delta struct {
							Type string `json:"type"`
							Text string `json:"text"`
						} `json:"delta"`
					} `json:"event"`
					SessionID string `json:"session_id"`
					Turn      int    `json:"turn"`
				}
				if err := json.Unmarshal(data, &se); err != nil || se.SessionID != run.ID || se.Turn != 1 {
					t.Errorf("live event %s: %+v %v", data, se, err)
				}
				if se.Event.Type == "content_block_delta" && se.Event.Delta.Type == "text_delta" {
					text += se.Event.Delta.Text
					order = append(order, "delta")
				}
			case "assistant":
				var m struct {
					Message struct {
						Content []struct {
							Text string `json:"text"`
						} `json:"content"`
					} `json:"message"`
				}
				json.Unmarshal(data, &m)
				if len(m.Message.Content) > 0 {
					final = m.Message.Content[0].Text
				}
				order = append(order, ev)
			default:
				order = append(order, ev)
			}
			id, ev, data = "", "", nil
		}
	}
	first := strings.Index(strings.Join(order, ","), "assistant")
	deltasBefore := strings.Count(strings.Join(order, ",")[:max(first, 0)], "delta")
	if first < 0 || deltasBefore < 2 {
		t.Fatalf("events in order: %v — want text deltas before the assistant message", order)
	}
	if final != "done after 0" || text != final {
		t.Errorf("deltas add up to %q; the message says %q", text, final)
	}
}
