package durable

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
)

// newEnv is a test environment whose deadlock detector tolerates a loaded
// machine (a race build on two busy cores).
func newEnv(s *testsuite.WorkflowTestSuite) *testsuite.TestWorkflowEnvironment {
	env := s.NewTestWorkflowEnvironment()
	env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: time.Minute})
	return env
}

// TestAskAnsweredAfterDays: a Bash call that needs approval makes the
// workflow wait; the answer comes three (simulated) days later and the call
// runs once, with the answer.
func TestAskAnsweredAfterDays(t *testing.T) {
	_, p := fakeModel(t)
	dir := t.TempDir()
	var s testsuite.WorkflowTestSuite
	env := newEnv(&s)
	Register(env, testActivities(t, p))
	start := env.Now()
	var asked []Ask
	env.RegisterDelayedCallback(func() {
		v, err := env.QueryWorkflow(QueryEvents, EventsQuery{})
		if err != nil {
			t.Errorf("query: %v", err)
			return
		}
		var page EventsPage
		if err := v.Get(&page); err != nil {
			t.Error(err)
			return
		}
		asked = page.Pending
		if len(asked) != 1 {
			t.Errorf("pending asks = %+v, want one", page.Pending)
			return
		}
		env.UpdateWorkflow(UpdateAnswer, "bad", &testsuite.TestUpdateCallback{
			OnReject: func(error) {},
			OnAccept: func() { t.Error("an answer to an unknown ask was accepted") },
		}, AnswerInput{ID: "nope", Answer: json.RawMessage(`{"choice":"allow_once"}`)})
		env.UpdateWorkflow(UpdateAnswer, "bad-choice", &testsuite.TestUpdateCallback{
			OnReject: func(error) {},
			OnAccept: func() { t.Error("an answer with an unknown choice was accepted") },
		}, AnswerInput{ID: asked[0].ID, Answer: json.RawMessage(`{"choice":"maybe"}`)})
		env.UpdateWorkflow(UpdateAnswer, "ok", &testsuite.TestUpdateCallback{
			OnReject:   func(err error) { t.Errorf("answer rejected: %v", err) },
			OnAccept:   func() {},
			OnComplete: func(any, error) {},
		}, AnswerInput{ID: asked[0].ID, Answer: json.RawMessage(`{"choice":"allow_once"}`)})
	}, 72*time.Hour)
	env.ExecuteWorkflow(WorkflowName, RunInput{Spec: testSpec(dir), Prompt: "calls=1 cmd=echo ran >> side.txt"})
	if !env.IsWorkflowCompleted() {
		t.Fatal("workflow did not complete")
	}
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var res Result
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if res.Subtype != "success" || res.Text != "done after 1" {
		t.Errorf("result = %+v", res)
	}
	if waited := env.Now().Sub(start); waited < 72*time.Hour {
		t.Errorf("the run ended after %v, before the answer", waited)
	}
	if len(asked) == 1 {
		var req struct {
			ToolName string `json:"tool_name"`
		}
		json.Unmarshal(asked[0].Request, &req)
		if req.ToolName != "Bash" || asked[0].Kind != "permission" {
			t.Errorf("ask = %+v", asked[0])
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "side.txt"))
	if err != nil || string(b) != "ran\n" {
		t.Errorf("side.txt = %q, %v; want the command run once", b, err)
	}
}

// TestDeniedAsk: a deny answer reaches the model as the call's result.
func TestDeniedAsk(t *testing.T) {
	srv, p := fakeModel(t)
	dir := t.TempDir()
	var s testsuite.WorkflowTestSuite
	env := newEnv(&s)
	Register(env, testActivities(t, p))
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(UpdateAnswer, "deny", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { t.Errorf("answer rejected: %v", err) }, OnAccept: func() {}, OnComplete: func(any, error) {},
		}, AnswerInput{ID: "toolu_1#1", Answer: json.RawMessage(`{"choice":"deny","message":"not today"}`)})
	}, time.Hour)
	env.ExecuteWorkflow(WorkflowName, RunInput{Spec: testSpec(dir), Prompt: "calls=1 cmd=echo ran >> side.txt"})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "side.txt")); err == nil {
		t.Error("the denied command ran")
	}
	reqs := srv.Requests()
	last := reqs[len(reqs)-1].ToolResults()
	if len(last) != 1 || !last[0].IsError || !strings.Contains(last[0].Content[0].Text, "not today") {
		t.Errorf("tool result sent to the model = %+v", last)
	}
}
