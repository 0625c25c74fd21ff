package durable

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"

	"github.com/gantry-dev/gantry/llm/anthropic"
	"github.com/gantry-dev/gantry/llm/llmtest"
	"github.com/gantry-dev/gantry/tool"
)

// scripted is a model that makes the calls given, one per turn, then
// says "done".
func scripted(t *testing.T, calls ...llmtest.ToolCall) (*llmtest.Server, *Activities) {
	srv := llmtest.NewServer(t, llmtest.WithResponder(func(req llmtest.Request) (llmtest.Reply, bool) {
		n := len(req.ToolResults())
		if n >= len(calls) {
			return llmtest.TextReply("done"), true
		}
		return llmtest.ToolReply(calls[n]), true
	}))
	p := anthropic.New(anthropic.Options{BaseURL: srv.URL(), APIKey: "test", Model: "claude-test"})
	return srv, testActivities(t, p)
}

func call(id, name string, input map[string]any) llmtest.ToolCall {
	b, _ := json.Marshal(input)
	return llmtest.ToolCall{ID: id, Name: name, Input: string(b)}
}

// oneFile is a directory holding f.txt ("one\n").
func oneFile(t *testing.T) (dir, f string) {
	dir = t.TempDir()
	f = filepath.Join(dir, "f.txt")
	if err := os.WriteFile(f, []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, f
}

func readCall(id, f string) llmtest.ToolCall {
	return call(id, "Read", map[string]any{"file_path": f})
}

func editCall(id, f, from, to string) llmtest.ToolCall {
	return call(id, "Edit", map[string]any{"file_path": f, "old_string": from, "new_string": to})
}

// freshEveryStep makes every tool call start from a fresh runtime, as on
// another worker: the run's runtime is released after each tool call.
func freshEveryStep(env *testsuite.TestWorkflowEnvironment, a *Activities, after func(id string)) {
	env.SetOnActivityCompletedListener(func(info *activity.Info, result converter.EncodedValue, err error) {
		if info.ActivityType.Name != activityTool {
			return
		}
		a.Release(context.Background(), info.WorkflowExecution.ID, nil)
		if after != nil {
			var out toolOutput
			result.Get(&out)
			after(out.Outcome.ID)
		}
	})
}

// TestStateTravels: each step on a fresh runtime (another worker). The
// Read of step 1 lets step 2 Edit the file; "allow for this session",
// answered at step 2, lets step 3's Edit run without asking again; the
// written state of step 2 lets step 3 edit again.
func TestStateTravels(t *testing.T) {
	dir, f := oneFile(t)
	srv, a := scripted(t, readCall("toolu_1", f), editCall("toolu_2", f, "one", "two"), editCall("toolu_3", f, "two", "three"))
	var s testsuite.WorkflowTestSuite
	env := newEnv(&s)
	Register(env, a)
	freshEveryStep(env, a, nil)
	asks := 0
	answer := func(choice string) {
		v, err := env.QueryWorkflow(QueryEvents, EventsQuery{})
		if err != nil {
			t.Error(err)
			return
		}
		var page EventsPage
		v.Get(&page)
		for _, ask := range page.Pending {
			asks++
			env.UpdateWorkflow(UpdateAnswer, fmt.Sprint(asks), &testsuite.TestUpdateCallback{
				OnReject: func(err error) { t.Errorf("answer rejected: %v", err) }, OnAccept: func() {}, OnComplete: func(any, error) {},
			}, AnswerInput{ID: ask.ID, Answer: json.RawMessage(`{"choice":"` + choice + `"}`)})
		}
	}
	env.RegisterDelayedCallback(func() { answer("allow_session") }, time.Hour)
	env.RegisterDelayedCallback(func() { answer("deny") }, 2*time.Hour) // a second ask: the grant did not travel
	env.ExecuteWorkflow(WorkflowName, RunInput{Spec: testSpec(dir), Prompt: "go"})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if asks != 1 {
		t.Errorf("%d asks, want 1 (the session grant must travel to the next worker)", asks)
	}
	reqs := srv.Requests()
	for _, r := range reqs[len(reqs)-1].ToolResults() {
		if r.IsError {
			t.Errorf("%s failed: %v", r.ToolUseID, r.Content)
		}
	}
	if b, _ := os.ReadFile(f); string(b) != "three\n" {
		t.Errorf("f.txt = %q, want both edits", b)
	}
	if a.Runtimes() != 0 {
		t.Errorf("%d runtimes left", a.Runtimes())
	}
}

// TestStateTravelsFailClosed: a file changed after it was read is not
// marked read on the next worker: the Edit is refused and the model told
// to read the file; the file is not changed.
func TestStateTravelsFailClosed(t *testing.T) {
	dir, f := oneFile(t)
	srv, a := scripted(t, readCall("toolu_1", f), editCall("toolu_2", f, "one", "two"))
	var s testsuite.WorkflowTestSuite
	env := newEnv(&s)
	Register(env, a)
	freshEveryStep(env, a, func(id string) {
		if id == "toolu_1" {
			os.WriteFile(f, []byte("one, changed behind the model's back\n"), 0o644)
		}
	})
	env.ExecuteWorkflow(WorkflowName, RunInput{Spec: testSpec(dir, "Edit"), Prompt: "go"})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	res := reqs[len(reqs)-1].ToolResults()
	if len(res) != 2 || !res[1].IsError || !strings.Contains(res[1].Content[0].Text, "Read it") {
		t.Errorf("the Edit's result = %+v, want a refusal telling to read the file", res[len(res)-1])
	}
	if b, _ := os.ReadFile(f); !strings.Contains(string(b), "changed") || strings.Contains(string(b), "two") {
		t.Errorf("f.txt = %q", b)
	}
}

func TestCarryFiles(t *testing.T) {
	at := time.Unix(100, 0)
	files := []tool.FileState{{Path: "/w/a.go", Hash: "1", At: at}, {Path: "/w/sub/b.go", Hash: "2", At: at}, {Path: "/w/c.go", Hash: "3", At: at}}
	got := carryFiles(files, json.RawMessage(`{"file_path":"sub/b.go","edits":[{"old":"a.go"}],"n":3}`))
	if len(got) != 2 || got[0].Path != "/w/a.go" || got[1].Path != "/w/sub/b.go" {
		t.Errorf("carryFiles = %+v", got)
	}
	if carryFiles(files, json.RawMessage(`not json`)) != nil {
		t.Error("entries carried for an invalid input")
	}
	// Newer wins; an older report does not replace.
	have := mergeFiles(nil, []tool.FileState{{Path: "/w/a.go", Hash: "1", At: at}})
	have = mergeFiles(have, []tool.FileState{{Path: "/w/a.go", Hash: "2", At: at.Add(time.Second)}})
	have = mergeFiles(have, []tool.FileState{{Path: "/w/a.go", Hash: "old", At: at.Add(-time.Second)}})
	if len(have) != 1 || have[0].Hash != "2" {
		t.Errorf("mergeFiles = %+v", have)
	}
	var many []tool.FileState
	for i := range maxCarriedFiles + 10 {
		many = append(many, tool.FileState{Path: fmt.Sprintf("/f%d", i), Hash: "h", At: at.Add(time.Duration(i) * time.Second)})
	}
	have = mergeFiles(nil, many)
	if len(have) != maxCarriedFiles || have[0].Path != "/f10" {
		t.Errorf("bounded merge kept %d, first %s", len(have), have[0].Path)
	}
	if g := mergeGrants([]string{"Edit"}, []string{"Edit", "Bash(ls *)"}); strings.Join(g, ",") != "Edit,Bash(ls *)" {
		t.Errorf("mergeGrants = %v", g)
	}
}

// TestSeedFiles: an entry is taken only when the file has its hash; a
// runtime's newer entry is kept; a stale one is dropped.
func TestSeedFiles(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "f.txt")
	os.WriteFile(f, []byte("v1"), 0o644)
	h1, _ := hashFile(f)
	at := time.Unix(100, 0)
	fs := newFileStates()
	fs.seed([]tool.FileState{{Path: f, Hash: h1, At: at}, {Path: filepath.Join(dir, "missing"), Hash: h1, At: at}, {Path: "rel", Hash: h1}})
	if st, ok := fs.Get(f); !ok || st.Size != 2 {
		t.Errorf("matching entry not seeded: %+v %v", st, ok)
	}
	if _, ok := fs.Get(filepath.Join(dir, "missing")); ok {
		t.Error("an entry for a missing file was seeded")
	}
	mark := fs.mark()
	os.WriteFile(f, []byte("v2"), 0o644)
	fs.seed([]tool.FileState{{Path: f, Hash: "stale", At: at.Add(time.Hour)}})
	if _, ok := fs.Get(f); ok {
		t.Error("a runtime entry contradicted by the run and the file was kept")
	}
	h2, _ := hashFile(f)
	fs.Put(tool.FileState{Path: f, Hash: h2, At: at.Add(2 * time.Hour)})
	fs.seed([]tool.FileState{{Path: f, Hash: h1, At: at}})
	if st, _ := fs.Get(f); st.Hash != h2 {
		t.Error("the runtime's newer entry was replaced")
	}
	if got := fs.since(mark); len(got) != 1 || got[0].Hash != h2 {
		t.Errorf("since = %+v", got)
	}
}
