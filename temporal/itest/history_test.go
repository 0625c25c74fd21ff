package itest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/temporalproto"

	"github.com/gantry-dev/gantry/temporal/durable"
)

// TestRecordHistories records the histories the replay tests of package
// durable run (durable/testdata/*.json). It runs only with
// GANTRY_RECORD_HISTORY=1: record again when the workflow changes on
// purpose, and keep the old files for the runs still in flight (see
// docs/distributed.md, "Changing the workflow").
func TestRecordHistories(t *testing.T) {
	if os.Getenv("GANTRY_RECORD_HISTORY") == "" {
		t.Skip("set GANTRY_RECORD_HISTORY=1 to record the replay histories")
	}
	c := newCluster(t)
	c.worker()
	record := func(name, id string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		it := c.c.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		h := &historypb.History{}
		for it.HasNext() {
			ev, err := it.Next()
			if err != nil {
				t.Fatal(err)
			}
			h.Events = append(h.Events, ev)
		}
		b, err := temporalproto.CustomJSONMarshalOptions{Indent: "  "}.Marshal(h)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join("..", "durable", "testdata", name+".json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Three tool calls, each asked about; two allowed, one denied.
	dir := t.TempDir()
	id := c.start(testSpec(dir), "calls=3 cmd=echo {i} >> n.txt")
	for i, answer := range []string{`{"choice":"allow_once"}`, `{"choice":"deny","message":"no"}`, `{"choice":"allow_once"}`} {
		ask := waitAsk(t, c, id)
		if err := durable.Answer(context.Background(), c.c, id, ask.ID, []byte(answer)); err != nil {
			t.Fatalf("answer %d: %v", i, err)
		}
	}
	if res := c.wait(id, time.Minute); res.Subtype != "success" {
		t.Fatalf("result = %+v", res)
	}
	record("ask-and-tools", id)
	// A run cancelled while it waits for an answer.
	id = c.start(testSpec(t.TempDir()), "calls=1 cmd=echo x >> y.txt")
	waitAsk(t, c, id)
	if err := durable.Cancel(context.Background(), c.c, id); err != nil {
		t.Fatal(err)
	}
	if res := c.wait(id, time.Minute); res.Subtype != "interrupted" {
		t.Fatalf("result = %+v", res)
	}
	record("cancelled-ask", id)
	// Three read-only calls in one message: one batch, run at once.
	dir = t.TempDir()
	for i := 1; i <= 3; i++ {
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d.txt", i)), []byte("x\n"), 0o644)
	}
	id = c.start(testSpec(dir), "calls=3 per=3 cmd=cat f{i}.txt")
	if res := c.wait(id, time.Minute); res.Subtype != "success" || res.NumTurns != 2 {
		t.Fatalf("result = %+v", res)
	}
	record("parallel-reads", id)
}
