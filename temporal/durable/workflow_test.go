package durable

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"

	"github.com/gantry-dev/gantry/llm/anthropic"
	"github.com/gantry-dev/gantry/llm/llmtest"
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

// toolTimeline records the tool activities of a test run: the order of
// their starts and ends ("+id", "-id") and the most that ran at once.
type toolTimeline struct {
	mu      sync.Mutex
	events  []string
	running int
	most    int
}

func (tl *toolTimeline) listen(env *testsuite.TestWorkflowEnvironment) {
	id := func(args converter.EncodedValues) string {
		var in toolInput
		if err := args.Get(&in); err != nil {
			return "?"
		}
		return in.ID
	}
	env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, args converter.EncodedValues) {
		if info.ActivityType.Name != activityTool {
			return
		}
		tl.mu.Lock()
		defer tl.mu.Unlock()
		tl.events = append(tl.events, "+"+id(args))
		tl.running++
		tl.most = max(tl.most, tl.running)
	})
	env.SetOnActivityCompletedListener(func(info *activity.Info, result converter.EncodedValue, err error) {
		if info.ActivityType.Name != activityTool {
			return
		}
		var out toolOutput
		result.Get(&out)
		tl.mu.Lock()
		defer tl.mu.Unlock()
		tl.events = append(tl.events, "-"+out.Outcome.ID)
		tl.running--
	})
}

// TestParallelReadOnlyCalls: the read-only calls of one message run at
// once; a call that is not read-only runs alone, after the calls before
// it ended and before the calls after it start; the results reach the
// model in the model's order.
func TestParallelReadOnlyCalls(t *testing.T) {
	dir := t.TempDir()
	for i := 1; i <= 5; i++ {
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d.txt", i)), []byte(fmt.Sprintf("file %d\n", i)), 0o644)
	}
	// Each read sleeps a little so that calls that may overlap do.
	read := func(i int) string { return fmt.Sprintf("sleep 0.3; cat f%d.txt", i) }
	for _, tc := range []struct {
		name  string
		cmds  []string
		most  int
		check func(t *testing.T, events []string)
	}{
		{"five reads", []string{read(1), read(2), read(3), read(4), read(5)}, 5, func(t *testing.T, ev []string) {
			for i := range 5 {
				if !strings.HasPrefix(ev[i], "+") {
					t.Errorf("a call ended before every read started: %v", ev)
				}
			}
		}},
		{"a write in the middle", []string{read(1), read(2), "echo w >> w.txt", read(4), read(5)}, 2, func(t *testing.T, ev []string) {
			// Batches [1 2] [3] [4 5].
			pos := map[string]int{}
			for i, e := range ev {
				pos[e] = i
			}
			if pos["+toolu_3"] < pos["-toolu_1"] || pos["+toolu_3"] < pos["-toolu_2"] ||
				pos["+toolu_4"] < pos["-toolu_3"] || pos["+toolu_5"] < pos["-toolu_3"] {
				t.Errorf("the write overlapped another call: %v", ev)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.NewServer(t, llmtest.WithResponder(func(req llmtest.Request) (llmtest.Reply, bool) {
				if len(req.ToolResults()) > 0 {
					return llmtest.TextReply("done"), true
				}
				var calls []llmtest.ToolCall
				for i, c := range tc.cmds {
					in, _ := json.Marshal(map[string]string{"command": c})
					calls = append(calls, llmtest.ToolCall{ID: fmt.Sprintf("toolu_%d", i+1), Name: "Bash", Input: string(in)})
				}
				return llmtest.ToolReply(calls...), true
			}))
			p := anthropic.New(anthropic.Options{BaseURL: srv.URL(), APIKey: "test", Model: "claude-test"})
			var s testsuite.WorkflowTestSuite
			env := newEnv(&s)
			Register(env, testActivities(t, p))
			var tl toolTimeline
			tl.listen(env)
			env.ExecuteWorkflow(WorkflowName, RunInput{Spec: testSpec(dir, "Bash", "Edit"), Prompt: "go"})
			if err := env.GetWorkflowError(); err != nil {
				t.Fatal(err)
			}
			var res Result
			env.GetWorkflowResult(&res)
			if res.Subtype != "success" || res.NumTurns != 2 {
				t.Fatalf("result = %+v", res)
			}
			if tl.most != tc.most {
				t.Errorf("at most %d calls ran at once, want %d (%v)", tl.most, tc.most, tl.events)
			}
			tc.check(t, tl.events)
			reqs := srv.Requests()
			results := reqs[len(reqs)-1].ToolResults()
			for i, r := range results {
				want := fmt.Sprintf("toolu_%d", i+1)
				if r.ToolUseID != want || r.IsError {
					t.Errorf("result %d: %s error=%v %v, want %s", i, r.ToolUseID, r.IsError, r.Content, want)
				}
			}
		})
	}
}
