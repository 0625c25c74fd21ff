package console_test

import (
	"bufio"
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/runqueue"
	"github.com/gantry-dev/gantry/serve"
	"github.com/gantry-dev/gantry/serveapi"
)

// BenchmarkRunsPage: GET / (the runs list, 200 runs, logged in) over
// loopback, rendered by the server. Goal ≤ 100 ms.
func BenchmarkRunsPage(b *testing.B) {
	f := start(b, serve.Options{})
	c := &serveapi.Client{URL: f.url, Token: token}
	ctx := context.Background()
	var last runqueue.Run
	for i := range 200 {
		r, err := c.Start(ctx, runqueue.Request{Prompt: "run " + strings.Repeat("x", i%50), Dir: f.dir})
		if err != nil {
			b.Fatal(err)
		}
		last = r
	}
	for range c.Events(ctx, last.ID, 0) {
	}
	br := newBrowser(b, f.url)
	br.login()
	b.ResetTimer()
	for b.Loop() {
		resp, page := br.do(http.MethodGet, "/", nil, nil)
		if resp.StatusCode != http.StatusOK || strings.Count(page, `class="run"`) != 200 {
			b.Fatalf("%s, %d runs", resp.Status, strings.Count(page, `class="run"`))
		}
	}
}

// BenchmarkFirstEvent: a run records an event; how long until a browser
// following the run page's stream (the console's SSE, logged in) reads
// it, over loopback. Goal ≤ 50 ms.
func BenchmarkFirstEvent(b *testing.B) {
	gate := make(chan struct{})
	var recorded atomic.Int64 // UnixNano of the last Emit
	runner := runqueue.RunnerFunc(func(ctx context.Context, _ runqueue.Request, x runqueue.Exec) (*runqueue.Result, error) {
		x.Started("s")
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		recorded.Store(time.Now().UnixNano())
		x.Emit(map[string]string{"type": "system", "subtype": "init"})
		return &runqueue.Result{Subtype: "success"}, nil
	})
	f := start(b, serve.Options{Runner: runner})
	br := newBrowser(b, f.url)
	csrf := br.login()
	var total time.Duration
	for b.Loop() {
		resp, _ := br.do(http.MethodPost, "/new", url.Values{"csrf": {csrf}, "prompt": {"go"}, "dir": {f.dir}}, nil)
		loc := resp.Header.Get("Location")
		req, _ := http.NewRequest(http.MethodGet, f.url+loc+"/events", nil)
		req.Header.Set("Accept", "text/event-stream")
		sse, err := br.c.Do(req)
		if err != nil || sse.StatusCode != http.StatusOK {
			b.Fatalf("stream: %v %v", err, sse.Status)
		}
		gate <- struct{}{}
		sc := bufio.NewScanner(sse.Body)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "data:") {
				break
			}
		}
		total += time.Duration(time.Now().UnixNano() - recorded.Load())
		sse.Body.Close()
	}
	b.ReportMetric(float64(total.Microseconds())/float64(b.N)/1000, "ms/first-event")
}
