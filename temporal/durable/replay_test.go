package durable

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// TestReplay runs recorded histories through the workflow code: a change
// that would break runs in flight (a different order of activities, a new
// one in the middle, a timer that was not there) fails here. The
// histories are recorded by itest's TestRecordHistories; each is replayed
// with its file's name as the workflow id (the run id the recorder gave
// it, from which subagents' ids derive).
func TestReplay(t *testing.T) {
	files, err := filepath.Glob("testdata/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no recorded histories in testdata (%v)", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			r := worker.NewWorkflowReplayer()
			r.RegisterWorkflowWithOptions(RunWorkflow, workflow.RegisterOptions{Name: WorkflowName})
			h, err := client.HistoryFromJSON(mustOpen(t, f), client.HistoryJSONOptions{})
			if err != nil {
				t.Fatal(err)
			}
			id := strings.TrimSuffix(filepath.Base(f), ".json")
			if err := r.ReplayWorkflowHistoryWithOptions(nil, h, worker.ReplayWorkflowHistoryOptions{
				OriginalExecution: workflow.Execution{ID: id, RunID: "replay"},
			}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func mustOpen(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}
