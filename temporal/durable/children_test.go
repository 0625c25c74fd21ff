package durable

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"

	"github.com/gantry-dev/gantry/agent"
	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/llm/llmtest"
	"github.com/gantry-dev/gantry/temporal/internal/fakemodel"
)

// agentPrompt is a parent's script: one Agent call whose subagent runs
// childPrompt (the fake model's script for the child).
func agentPrompt(childPrompt string, background bool) string {
	in, _ := json.Marshal(map[string]any{"description": "sub task", "prompt": childPrompt, "run_in_background": background})
	return "calls=1 tool=Agent cmd=" + string(in)
}

// requestsOf returns the recorded requests whose first message starts with
// prompt (one run's requests, as the fake model scripts by the prompt).
func requestsOf(srv *llmtest.Server, prompt string) []llmtest.Request {
	var out []llmtest.Request
	for _, r := range srv.Requests() {
		if len(r.Messages) > 0 && len(r.Messages[0].Content) > 0 && strings.HasPrefix(r.Messages[0].Content[0].Text, prompt) {
			out = append(out, r)
		}
	}
	return out
}

func readEvents(t *testing.T, env *testsuite.TestWorkflowEnvironment) EventsPage {
	t.Helper()
	v, err := env.QueryWorkflow(QueryEvents, EventsQuery{})
	if err != nil {
		t.Fatalf("query: %v", err)
	}
	var page EventsPage
	if err := v.Get(&page); err != nil {
		t.Fatal(err)
	}
	return page
}

func agentEvents(page EventsPage) []AgentEvent {
	var out []AgentEvent
	for _, e := range page.Events {
		if e.Type == EventAgent {
			out = append(out, *e.Agent)
		}
	}
	return out
}

// TestSubagent: an Agent call runs a child workflow with its own model and
// tool calls, its own narrowed pool and the agent type's system prompt;
// its reply is the call's result, its usage counts for the parent.
func TestSubagent(t *testing.T) {
	srv, p := fakeModel(t)
	dir := t.TempDir()
	var s testsuite.WorkflowTestSuite
	env := newEnv(&s)
	Register(env, testActivities(t, p))
	child := "calls=2 cmd=echo child >> sub.txt"
	parent := agentPrompt(child, false)
	res := runToEnd(t, env, RunInput{Spec: testSpec(dir, "Bash", "Edit", "Agent"), Prompt: parent})
	if res.Subtype != "success" || res.Text != "done after 1" {
		t.Fatalf("result = %+v", res)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "sub.txt"))
	if string(b) != "child\nchild\n" {
		t.Errorf("sub.txt = %q: the child's two calls must run once each", b)
	}
	creqs, preqs := requestsOf(srv, child), requestsOf(srv, "calls=1 tool=Agent")
	if len(creqs) != 3 || len(preqs) != 2 {
		t.Fatalf("child requests = %d (want 3), parent requests = %d (want 2)", len(creqs), len(preqs))
	}
	// The child's pool: the general-purpose type's (all but Agent); its
	// system prompt: the type's.
	if names := creqs[0].ToolNames(); slices.Contains(names, "Agent") || !slices.Contains(names, "Bash") {
		t.Errorf("child tools = %v", names)
	}
	if sys := creqs[0].System; len(sys) == 0 || !strings.Contains(sys[0].Text, "You are a subagent") {
		t.Errorf("child system prompt = %+v", sys)
	}
	if !slices.Contains(preqs[0].ToolNames(), "Agent") {
		t.Errorf("parent tools = %v, want Agent among them", preqs[0].ToolNames())
	}
	results := preqs[1].ToolResults()
	if len(results) != 1 || results[0].IsError || !strings.Contains(results[0].Content[0].Text, "done after 2") {
		t.Errorf("the Agent call's result = %+v", results)
	}
	// Usage: three child calls and two parent calls.
	if want := 5 * 10; res.Usage.OutputTokens != want {
		t.Errorf("output tokens = %d, want %d (the child's count for the parent)", res.Usage.OutputTokens, want)
	}
	evs := agentEvents(readEvents(t, env))
	if len(evs) != 2 || evs[0].Status != "running" || evs[1].Status != "completed" || evs[1].RunID != childID("default-test-workflow-id", "toolu_1") {
		t.Errorf("agent events = %+v", evs)
	}
}

// TestBackgroundAgent: a background Agent call returns its task at once;
// the child's completion reaches the parent, which waits for it when the
// model ends its turn and puts the notification in the conversation.
func TestBackgroundAgent(t *testing.T) {
	srv, p := fakeModel(t)
	dir := t.TempDir()
	var s testsuite.WorkflowTestSuite
	env := newEnv(&s)
	Register(env, testActivities(t, p))
	child := "calls=1 cmd=echo bg >> bg.txt"
	res := runToEnd(t, env, RunInput{Spec: testSpec(dir, "Bash", "Edit", "Agent"), Prompt: agentPrompt(child, true)})
	if res.Subtype != "success" {
		t.Fatalf("result = %+v", res)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "bg.txt")); string(b) != "bg\n" {
		t.Errorf("bg.txt = %q", b)
	}
	preqs := requestsOf(srv, "calls=1 tool=Agent")
	if len(preqs) != 3 {
		t.Fatalf("parent requests = %d, want 3 (the call, the end of the turn, the notification)", len(preqs))
	}
	started := preqs[1].ToolResults()[0].Content[0].Text
	if !strings.Contains(started, "running in the background") {
		t.Errorf("the Agent call's result = %q", started)
	}
	last := preqs[2].Messages[len(preqs[2].Messages)-1]
	text := ""
	for _, b := range last.Content {
		text += b.Text
	}
	if !strings.Contains(text, "<task-notification>") || !strings.Contains(text, "completed") || !strings.Contains(text, "done after 1") {
		t.Errorf("the notification the model got = %q", text)
	}
}

// TestChildAskThroughParent: a child's permission ask is listed by the
// parent (as "<child run id>/<ask id>"), answered through the parent, and
// forwarded to the child, whose call then runs.
func TestChildAskThroughParent(t *testing.T) {
	_, p := fakeModel(t)
	dir := t.TempDir()
	var s testsuite.WorkflowTestSuite
	env := newEnv(&s)
	Register(env, testActivities(t, p))
	var pending []Ask
	env.RegisterDelayedCallback(func() {
		pending = readEvents(t, env).Pending
		if len(pending) != 1 {
			t.Errorf("pending = %+v, want the child's ask", pending)
			return
		}
		env.UpdateWorkflow(UpdateAnswer, "ok", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { t.Errorf("answer rejected: %v", err) }, OnAccept: func() {}, OnComplete: func(_ any, err error) {
				if err != nil {
					t.Errorf("answer: %v", err)
				}
			},
		}, AnswerInput{ID: pending[0].ID, Answer: json.RawMessage(`{"choice":"allow_once"}`)})
	}, time.Hour)
	res := runToEnd(t, env, RunInput{Spec: testSpec(dir, "Agent"), Prompt: agentPrompt("calls=1 cmd=echo asked >> a.txt", false)})
	if res.Subtype != "success" {
		t.Fatalf("result = %+v", res)
	}
	want := childID("default-test-workflow-id", "toolu_1")
	if len(pending) == 1 && (pending[0].Agent != want || pending[0].ID != want+"/toolu_1#1") {
		t.Errorf("pending ask = %+v", pending[0])
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "asked\n" {
		t.Errorf("a.txt = %q: the child's call must run once, after the answer", b)
	}
	page := readEvents(t, env)
	if len(page.Pending) != 0 {
		t.Errorf("still pending: %+v", page.Pending)
	}
	var asked, answered bool
	for _, e := range page.Events {
		asked = asked || (e.Type == EventAsk && e.Ask.Agent == want)
		answered = answered || (e.Type == EventAnswered && e.Ask.Agent == want)
	}
	if !asked || !answered {
		t.Errorf("parent events: child ask shown %v, answered %v", asked, answered)
	}
}

// TestCancelCascades: cancelling the parent while its child waits for an
// answer ends the child (interrupted) and then the parent.
func TestCancelCascades(t *testing.T) {
	_, p := fakeModel(t)
	dir := t.TempDir()
	var s testsuite.WorkflowTestSuite
	env := newEnv(&s)
	Register(env, testActivities(t, p))
	env.RegisterDelayedCallback(func() {
		if n := len(readEvents(t, env).Pending); n != 1 {
			t.Errorf("pending asks = %d, want the child's", n)
		}
		env.CancelWorkflow()
	}, time.Hour)
	res := runToEnd(t, env, RunInput{Spec: testSpec(dir, "Agent"), Prompt: agentPrompt("calls=1 cmd=echo x >> c.txt", false)})
	if res.Subtype != agent.SubtypeInterrupted {
		t.Errorf("parent result = %+v", res)
	}
	evs := agentEvents(readEvents(t, env))
	if len(evs) != 2 || evs[1].Status != "killed" || evs[1].Result == nil || evs[1].Result.Subtype != agent.SubtypeInterrupted {
		t.Errorf("agent events = %+v, want the child killed", evs)
	}
	if _, err := os.Stat(filepath.Join(dir, "c.txt")); err == nil {
		t.Error("the child's call ran after the cancellation")
	}
}

// TestTaskStopBackgroundAgent: TaskStop on a background agent's task id
// cancels its child workflow; the parent is told it was killed.
func TestTaskStopBackgroundAgent(t *testing.T) {
	srv, p := fakeModel(t)
	dir := t.TempDir()
	var s testsuite.WorkflowTestSuite
	env := newEnv(&s)
	Register(env, testActivities(t, p))
	// The child waits for an answer nobody gives; the parent's second call
	// stops it.
	taskID := childID("default-test-workflow-id", "toolu_1")
	res := runToEnd(t, env, RunInput{Spec: testSpec(dir, "Agent"), Prompt: fakemodel.Script(
		fakemodel.Call{Name: "Agent", Input: map[string]any{"description": "waiter", "prompt": "calls=1 cmd=echo x >> w.txt", "run_in_background": true}},
		fakemodel.Call{Name: "TaskStop", Input: map[string]any{"task_id": taskID}},
	)})
	if res.Subtype != "success" {
		t.Fatalf("result = %+v", res)
	}
	reqs := srv.Requests()
	last := reqs[len(reqs)-1]
	all := ""
	for _, m := range last.Messages {
		for _, b := range m.Content {
			all += b.Text
			for _, c := range b.Content {
				all += c.Text
			}
		}
	}
	if !strings.Contains(all, "Stopped background agent") || !strings.Contains(all, "killed") {
		t.Errorf("the parent's last request does not show the stop and the kill: %q", all)
	}
	if _, err := os.Stat(filepath.Join(dir, "w.txt")); err == nil {
		t.Error("the stopped child's call ran")
	}
}

// TestCompaction: a run whose last call crossed the context threshold
// summarises the older turns (a model call with tool use off) and goes on
// from the summary; every call ran exactly once.
func TestCompaction(t *testing.T) {
	srv, p := fakeModel(t)
	dir := t.TempDir()
	var s testsuite.WorkflowTestSuite
	env := newEnv(&s)
	Register(env, testActivities(t, p))
	spec := testSpec(dir, "Bash", "Edit")
	spec.ContextWindow, spec.CompactThreshold, spec.KeepMessages = 1000, 0.6, 2
	res := runToEnd(t, env, RunInput{Spec: spec, Prompt: "calls=8 cmd=echo {i} >> n.txt"})
	if res.Subtype != "success" || res.Text != "done after 8" {
		t.Fatalf("result = %+v", res)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "n.txt"))
	if got := strings.Fields(string(b)); strings.Join(got, ",") != "1,2,3,4,5,6,7,8" {
		t.Errorf("n.txt = %v: every call must run exactly once", got)
	}
	compactions := 0
	for _, e := range readEvents(t, env).Events {
		if e.Type == EventCompact {
			compactions++
			if e.Compact.After >= e.Compact.Before {
				t.Errorf("compaction %+v did not shrink the conversation", e.Compact)
			}
		}
	}
	summaries := 0
	for _, r := range srv.Requests() {
		if string(r.ToolChoice) != "" && strings.Contains(string(r.ToolChoice), "none") {
			summaries++
		}
	}
	if compactions == 0 || summaries != compactions {
		t.Errorf("compactions = %d, summary requests = %d", compactions, summaries)
	}
	reqs := srv.Requests()
	first := reqs[len(reqs)-1].Messages[0].Content[0].Text
	if !strings.HasPrefix(first, agent.CompactSummaryPrefix) {
		t.Errorf("the last request starts with %q, want the summary", first)
	}
	if max := 1 + 2*3 + 2; len(reqs[len(reqs)-1].Messages) > max {
		t.Errorf("the last request has %d messages: the conversation was not kept short", len(reqs[len(reqs)-1].Messages))
	}
}

// TestResumeWorkflow: a run started from an earlier conversation sends it
// with the new prompt.
func TestResumeWorkflow(t *testing.T) {
	srv, p := fakeModel(t)
	dir := t.TempDir()
	var s testsuite.WorkflowTestSuite
	env := newEnv(&s)
	Register(env, testActivities(t, p))
	earlier := []llm.Message{llm.UserText("calls=0 the first prompt"), {Role: llm.RoleAssistant, Content: []llm.Block{llm.Text("done after 0")}}}
	env.ExecuteWorkflow(WorkflowName, RunInput{Spec: testSpec(dir), Prompt: "and now?",
		Resume: &Conversation{Session: "earlier-run", Messages: earlier, Done: true}})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || len(reqs[0].Messages) != 3 || reqs[0].Messages[2].Content[0].Text != "and now?" {
		t.Fatalf("requests = %+v", reqs)
	}
	v, err := env.QueryWorkflow(QueryConversation)
	if err != nil {
		t.Fatal(err)
	}
	var c Conversation
	if err := v.Get(&c); err != nil {
		t.Fatal(err)
	}
	if c.Session != "earlier-run" || len(c.Messages) != 4 || !c.Done {
		t.Errorf("conversation = %+v", c)
	}
}
