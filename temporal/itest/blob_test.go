package itest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
	"google.golang.org/protobuf/proto"

	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/temporal/claimcheck"
	"github.com/gantry-dev/gantry/temporal/durable"
	"github.com/gantry-dev/gantry/temporal/internal/fakemodel"
)

// bigFile writes a file of about n bytes of numbered lines to dir.
func bigFile(t testing.TB, dir string, n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "%07d %s\n", i, strings.Repeat("x", 91))
	}
	path := filepath.Join(dir, "big.txt")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// readLargePrompt makes the fake model Read path whole (allow_large: the
// Read tool's own limit, 10 MB, applies; its result is not budgeted).
func readLargePrompt(path string) string {
	return fmt.Sprintf(`calls=1 tool=Read cmd={"file_path":%q,"allow_large":true}`, path)
}

// historySize is the encoded size of a run's history (every run of its
// workflow id's current chain is one run here).
func historySize(t testing.TB, c *cluster, id string) (bytes, events int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	it := c.c.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		bytes += proto.Size(ev)
		events++
	}
	return bytes, events
}

// TestLargeToolOutput: a tool returns 1 MB (a whole-file Read). The run
// completes, its history holds references only (far under 1 MB), the
// model got the whole output (the worker decoded it), and a follower and
// gantry serve's engine both read it back.
func TestLargeToolOutput(t *testing.T) {
	c := newCluster(t)
	c.worker()
	dir := t.TempDir()
	path := bigFile(t, dir, 1<<20)
	id := c.start(testSpec(dir), readLargePrompt(path))
	res := c.wait(id, 2*time.Minute)
	if res.Subtype != "success" || res.Text != "done after 1" {
		t.Fatalf("result = %+v", res)
	}
	size, events := historySize(t, c, id)
	t.Logf("history: %d bytes in %d events", size, events)
	if size > 64<<10 {
		t.Errorf("the history is %d bytes: the 1 MB output is in it", size)
	}
	// The model's second request carried the whole output.
	reqs := c.model.Requests()
	last := reqs[len(reqs)-1].ToolResults()
	if len(last) != 1 || len(last[0].Content) == 0 || len(last[0].Content[0].Text) < 1<<20 || last[0].IsError {
		t.Fatalf("the model got %+v", summary(last))
	}
	// A follower (the events query, decoded by the client's codec).
	page, err := durable.Events(context.Background(), c.c, id, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := 0
	for _, e := range page.Events {
		if e.Type == durable.EventMessage && e.Message.Role == llm.RoleUser {
			for _, b := range e.Message.Content {
				for _, cb := range b.Content {
					got += len(cb.Text)
				}
			}
		}
	}
	if got < 1<<20 {
		t.Errorf("the follower got %d bytes of tool output", got)
	}
	// gantry serve's engine: the tool result line holds the output.
	eng := durable.NewEngine(c.c, durable.EngineOptions{TaskQueue: c.queue, DataConverter: c.dc})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	longest := 0
	for ev, err := range eng.Events(ctx, id, 0) {
		if err != nil {
			t.Fatal(err)
		}
		longest = max(longest, len(ev.Data))
	}
	if longest < 1<<20 {
		t.Errorf("serve's longest event line is %d bytes", longest)
	}
	// A follower whose store lacks the blobs gets an error at once, not
	// an endless retry.
	other, err := claimcheck.OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	stranger := c.ts.NewClientWithOptions(client.Options{DataConverter: claimcheck.DataConverter(other, claimcheck.Options{}),
		Logger: log.NewStructuredLogger(slog.New(slog.DiscardHandler))})
	fctx, fcancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer fcancel()
	var followErr error
	for _, err := range durable.Follow(fctx, stranger, id, durable.FollowOptions{}) {
		if err != nil {
			followErr = err
			break
		}
	}
	if !errors.Is(followErr, claimcheck.ErrNotFound) || fctx.Err() != nil {
		t.Errorf("following with another store: %v (want the blob error, at once)", followErr)
	}
	// Pruning keeps every blob the run refers to.
	live, err := claimcheck.LiveRefs(ctx, c.c, c.ts.GetDefaultNamespace())
	if err != nil {
		t.Fatal(err)
	}
	st, err := claimcheck.Prune(ctx, c.blobs, live, claimcheck.PruneOptions{Grace: time.Nanosecond})
	if err != nil || st.Referenced == 0 || st.Referenced != st.Blobs-st.Deleted {
		t.Fatalf("prune: %+v %v", st, err)
	}
	page2, err := durable.Events(context.Background(), c.c, id, 0)
	if err != nil || len(page2.Events) != len(page.Events) {
		t.Fatalf("after prune: %v", err)
	}
	// A lost blob is an error naming it, never an empty output: decode
	// the tool activity's result from the history with the blobs gone.
	for info := range c.blobs.Blobs(ctx) {
		c.blobs.Delete(ctx, info.Sum)
	}
	it := c.c.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	checked := 0
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ev.GetActivityTaskCompletedEventAttributes().GetResult().GetPayloads() {
			if string(p.Metadata["encoding"]) != claimcheck.EncodingStrings {
				continue
			}
			checked++
			var v map[string]any
			if err := c.dc.FromPayload(p, &v); err == nil || !strings.Contains(err.Error(), "blob not found") || v != nil {
				t.Errorf("decoding with the blob gone: %v (value %v)", err, v != nil)
			}
		}
	}
	if checked != 1 {
		t.Errorf("%d activity results refer to blobs, want 1 (the Read)", checked)
	}
}

func summary(rs []llm.Block) string {
	var out []string
	for _, r := range rs {
		n := 0
		for _, c := range r.Content {
			n += len(c.Text)
		}
		out = append(out, fmt.Sprintf("%s: %d bytes, error=%v", r.ToolUseID, n, r.IsError))
	}
	return strings.Join(out, "; ")
}

// BenchmarkLargeOutputHistory reports the history size of a run whose
// tool returns 1 MB, with the claim-check store and without it.
func BenchmarkLargeOutputHistory(b *testing.B) {
	for _, tc := range []struct {
		name string
		opts claimcheck.Options
	}{{"claim-check", claimcheck.Options{}}, {"inline", claimcheck.Options{Threshold: -1}}} {
		b.Run(tc.name, func(b *testing.B) {
			c := newClusterWith(b, tc.opts)
			c.worker()
			var size, events int
			for b.Loop() {
				dir := b.TempDir()
				id := c.start(testSpec(dir), readLargePrompt(bigFile(b, dir, 1<<20)))
				if res := c.wait(id, 2*time.Minute); res.Subtype != "success" {
					b.Fatalf("result = %+v", res)
				}
				size, events = historySize(b, c, id)
			}
			b.ReportMetric(float64(size), "history-bytes")
			b.ReportMetric(float64(events), "history-events")
		})
	}
}

// TestLargeModelMessage: the model writes 1 MB (a Write whose content is
// in the model's message and in every later request): the history holds
// references only, and the file has the content.
func TestLargeModelMessage(t *testing.T) {
	c := newCluster(t)
	c.worker()
	dir := t.TempDir()
	content := strings.Repeat("a line of generated code\n", 1<<20/25)
	out := filepath.Join(dir, "gen.txt")
	id := c.start(testSpec(dir, "Write", "Edit"), fakemodel.Script(fakemodel.Call{Name: "Write", Input: map[string]any{"file_path": out, "content": content}}))
	if res := c.wait(id, 2*time.Minute); res.Subtype != "success" || res.Text != "done after 1" {
		t.Fatalf("result = %+v", res)
	}
	if b, err := os.ReadFile(out); err != nil || string(b) != content {
		t.Fatalf("gen.txt: %d bytes, %v; want the %d bytes the model wrote", len(b), err, len(content))
	}
	size, events := historySize(t, c, id)
	t.Logf("history: %d bytes in %d events", size, events)
	if size > 64<<10 {
		t.Errorf("the history is %d bytes: the 1 MB message is in it", size)
	}
}
