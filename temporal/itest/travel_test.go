package itest

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/temporal/durable"
	"github.com/gantry-dev/gantry/temporal/internal/fakemodel"
)

// TestStateTravelsAcrossWorkers: a file read on worker A is edited on
// worker B; "allow for this session" answered on B holds on worker C, where
// the file B wrote is edited again without a new Read. Each ask is the
// moment the run changes worker (the previous one stops).
func TestStateTravelsAcrossWorkers(t *testing.T) {
	c := newCluster(t)
	dir := t.TempDir()
	f := filepath.Join(dir, "f.txt")
	os.WriteFile(f, []byte("one\n"), 0o644)
	edit := func(from, to string) fakemodel.Call {
		return fakemodel.Call{Name: "Edit", Input: map[string]any{"file_path": f, "old_string": from, "new_string": to}}
	}
	id := c.start(testSpec(dir), fakemodel.Script(
		fakemodel.Call{Name: "Read", Input: map[string]any{"file_path": f}}, // A
		edit("one", "two"), // asks; B after the answer
		fakemodel.Call{Name: "Bash", Input: map[string]any{"command": "touch other.txt"}}, // asks (an Edit rule approves a redirect, not touch); C after the answer
		edit("two", "three"), // C: no ask, no Read
	))
	w := c.worker()
	var answers []string
	for i, choice := range []string{"allow_session", "allow_once"} {
		ask := waitAsk(t, c, id)
		w.Stop()
		w = c.worker()
		if err := durable.Answer(context.Background(), c.c, id, ask.ID, []byte(`{"choice":"`+choice+`"}`)); err != nil {
			t.Fatalf("answer %d: %v", i, err)
		}
		answers = append(answers, ask.ToolUseID)
	}
	res := c.wait(id, 2*time.Minute)
	if res.Subtype != "success" || res.Text != "done after 4" {
		page, _ := durable.Events(context.Background(), c.c, id, 0)
		t.Fatalf("result = %+v; pending %+v", res, page.Pending)
	}
	if len(answers) != 2 || answers[0] != "toolu_2" || answers[1] != "toolu_3" {
		t.Errorf("asked about %v, want toolu_2 and toolu_3 only", answers)
	}
	if b, _ := os.ReadFile(f); string(b) != "three\n" {
		t.Errorf("f.txt = %q, want both edits", b)
	}
	reqs := c.model.Requests()
	for _, r := range reqs[len(reqs)-1].ToolResults() {
		if r.IsError {
			t.Errorf("%s failed: %v", r.ToolUseID, r.Content)
		}
	}
}
