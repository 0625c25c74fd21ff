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
// GANTRY_RECORD_HISTORY=1, and writes only the files that do not exist:
// old histories stay, since runs recorded with them may be in flight (see
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
		path := filepath.Join("..", "durable", "testdata", name+".json")
		if _, err := os.Stat(path); err == nil {
			// Kept: runs recorded with it may be in flight (delete the
			// file to record it again).
			t.Logf("%s exists; not recorded again", path)
			return
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
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
	// A subagent (a child workflow) whose call asks: the ask is answered
	// through the parent, which forwards it to the child.
	dir = t.TempDir()
	// The replay test replays a history under its file's name as the
	// workflow id (a child's id is derived from its parent's).
	named := func(name string, spec durable.Spec, prompt string) string {
		t.Helper()
		id, err := durable.Start(context.Background(), c.c, spec, prompt, durable.StartOptions{RunID: name, TaskQueue: c.queue})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	id = named("subagent-ask", testSpec(dir, "Agent"), agentPrompt("calls=1 cmd=echo child >> c.txt", false))
	ask := waitAsk(t, c, id)
	if err := durable.Answer(context.Background(), c.c, id, ask.ID, []byte(`{"choice":"allow_once"}`)); err != nil {
		t.Fatal(err)
	}
	if res := c.wait(id, time.Minute); res.Subtype != "success" {
		t.Fatalf("result = %+v", res)
	}
	record("subagent-ask", id)
	// A background agent whose completion the parent waits for; then a
	// compaction (a small context window) before the last turns.
	spec := testSpec(t.TempDir(), "Bash", "Edit", "Agent")
	spec.ContextWindow, spec.CompactThreshold, spec.KeepMessages = 1000, 0.5, 2
	id = named("background-agent", spec, agentPrompt("calls=2 cmd=echo {i} >> bg.txt", true))
	if res := c.wait(id, time.Minute); res.Subtype != "success" {
		t.Fatalf("result = %+v", res)
	}
	record("background-agent", id)
	id = named("compaction", spec, "calls=6 cmd=echo {i} >> n.txt")
	if res := c.wait(id, time.Minute); res.Subtype != "success" {
		t.Fatalf("result = %+v", res)
	}
	record("compaction", id)
}
