package itest

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/runqueue"
	"github.com/gantry-dev/gantry/temporal/durable"
)

// agentPrompt is a parent's script: one Agent call whose subagent runs
// childPrompt.
func agentPrompt(childPrompt string, background bool) string {
	in, _ := json.Marshal(map[string]any{"description": "sub task", "prompt": childPrompt, "run_in_background": background})
	return "calls=1 tool=Agent cmd=" + string(in)
}

func childOf(parent string) string { return parent + "-agent-toolu_1" }

func events(t *testing.T, c *cluster, id string) *durable.EventsPage {
	t.Helper()
	page, err := durable.Events(context.Background(), c.c, id, 0)
	if err != nil {
		t.Fatal(err)
	}
	return page
}

// TestSubagentChildWorkflow: an Agent call whose subagent makes tool calls
// runs as a child workflow (on either of two workers) and its reply is the
// call's result.
func TestSubagentChildWorkflow(t *testing.T) {
	c := newCluster(t)
	c.worker()
	c.worker()
	dir := t.TempDir()
	id := c.start(testSpec(dir, "Bash", "Edit", "Agent"), agentPrompt("calls=3 cmd=echo {i} >> sub.txt", false))
	res := c.wait(id, 2*time.Minute)
	if res.Subtype != "success" || res.Text != "done after 1" {
		t.Fatalf("result = %+v", res)
	}
	if got := strings.Join(lines(t, filepath.Join(dir, "sub.txt")), ","); got != "1,2,3" {
		t.Errorf("sub.txt = %s: the child's calls must run once each, in order", got)
	}
	child := c.wait(childOf(id), time.Minute)
	if child.Subtype != "success" || child.Text != "done after 3" || child.NumTurns != 4 {
		t.Errorf("child result = %+v", child)
	}
	var result string
	var statuses []string
	for _, e := range events(t, c, id).Events {
		if e.Type == durable.EventAgent {
			statuses = append(statuses, e.Agent.Status)
		}
		if e.Type == durable.EventMessage && e.Message.Role == llm.RoleUser {
			for _, b := range e.Message.Content {
				if b.ToolUseID == "toolu_1" {
					result = b.Content[0].Text
				}
			}
		}
	}
	if strings.Join(statuses, ",") != "running,completed" || result != "done after 3" {
		t.Errorf("agent statuses %v, the Agent call's result %q", statuses, result)
	}
	d, err := c.c.DescribeWorkflowExecution(context.Background(), childOf(id), "")
	if err != nil {
		t.Fatal(err)
	}
	if p := d.GetWorkflowExecutionInfo().GetParentExecution(); p.GetWorkflowId() != id {
		t.Errorf("the child's parent = %v, want %s", p, id)
	}
}

// TestBackgroundAgentNotifiesParent: a background agent's completion
// reaches its parent, which gives the model the notification.
func TestBackgroundAgentNotifiesParent(t *testing.T) {
	c := newCluster(t)
	c.worker()
	dir := t.TempDir()
	id := c.start(testSpec(dir, "Bash", "Edit", "Agent"), agentPrompt("calls=2 cmd=echo {i} >> bg.txt", true))
	res := c.wait(id, 2*time.Minute)
	if res.Subtype != "success" {
		t.Fatalf("result = %+v", res)
	}
	if got := strings.Join(lines(t, filepath.Join(dir, "bg.txt")), ","); got != "1,2" {
		t.Errorf("bg.txt = %s", got)
	}
	var note string
	for _, e := range events(t, c, id).Events {
		if e.Type == durable.EventMessage && e.Message.Role == llm.RoleUser {
			if t := e.Message.Text(); strings.Contains(t, "<task-notification>") {
				note = t
			}
		}
	}
	if !strings.Contains(note, childOf(id)) || !strings.Contains(note, "completed") || !strings.Contains(note, "done after 2") {
		t.Errorf("notification = %q", note)
	}
}

// TestCancelCascades: cancelling a run cancels its subagent's child
// workflow, here waiting for an answer; both end interrupted.
func TestCancelCascades(t *testing.T) {
	c := newCluster(t)
	c.worker()
	dir := t.TempDir()
	id := c.start(testSpec(dir, "Agent"), agentPrompt("calls=1 cmd=echo x >> never.txt", false))
	ask := waitAsk(t, c, id)
	if ask.Agent != childOf(id) {
		t.Fatalf("pending ask %+v, want the child's, shown by the parent", ask)
	}
	if err := durable.Cancel(context.Background(), c.c, id); err != nil {
		t.Fatal(err)
	}
	if res := c.wait(id, time.Minute); res.Subtype != "interrupted" {
		t.Errorf("parent result = %+v", res)
	}
	if res := c.wait(childOf(id), time.Minute); res.Subtype != "interrupted" {
		t.Errorf("child result = %+v", res)
	}
	if got, _ := filepath.Glob(filepath.Join(dir, "never.txt")); len(got) != 0 {
		t.Error("the child's call ran")
	}
}

// TestChildAskAnsweredByChildRunID: a child's ask can also be answered on
// the child's own run; the parent stops listing it.
func TestChildAskAnsweredByChildRunID(t *testing.T) {
	c := newCluster(t)
	c.worker()
	dir := t.TempDir()
	id := c.start(testSpec(dir, "Agent"), agentPrompt("calls=1 cmd=echo yes >> a.txt", false))
	ask := waitAsk(t, c, id)
	own := strings.TrimPrefix(ask.ID, ask.Agent+"/")
	if err := durable.Answer(context.Background(), c.c, ask.Agent, own, []byte(`{"choice":"allow_once"}`)); err != nil {
		t.Fatal(err)
	}
	if res := c.wait(id, time.Minute); res.Subtype != "success" {
		t.Fatalf("result = %+v", res)
	}
	if got := strings.Join(lines(t, filepath.Join(dir, "a.txt")), ","); got != "yes" {
		t.Errorf("a.txt = %s", got)
	}
	if page := events(t, c, id); len(page.Pending) != 0 {
		t.Errorf("the parent still lists %+v", page.Pending)
	}
}

// TestResume: the engine continues an ended run's conversation in a new
// run of the same session; the model gets the earlier messages and the new
// prompt.
func TestResume(t *testing.T) {
	c := newCluster(t)
	c.worker()
	srv := c.model
	dir := t.TempDir()
	e := durable.NewEngine(c.c, durable.EngineOptions{TaskQueue: c.queue})
	ctx := context.Background()
	first, err := e.Start(ctx, runqueue.Request{Prompt: "calls=1 cmd=echo once >> r.txt", Dir: dir, Options: runqueue.Options{Allow: []string{"Bash", "Edit"}}})
	if err != nil {
		t.Fatal(err)
	}
	c.wait(first.ID, time.Minute)
	before := len(srv.Requests())
	second, err := e.Start(ctx, runqueue.Request{Prompt: "and then?", Dir: dir, Options: runqueue.Options{Resume: first.ID}})
	if err != nil {
		t.Fatal(err)
	}
	if second.ID == first.ID || second.SessionID != first.ID {
		t.Errorf("resumed run %s, session %s; want a new run of session %s", second.ID, second.SessionID, first.ID)
	}
	if res := c.wait(second.ID, time.Minute); res.Subtype != "success" || res.Text != "done after 1" {
		t.Fatalf("result = %+v", res)
	}
	reqs := srv.Requests()[before:]
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	msgs := reqs[0].Messages
	if len(msgs) != 5 || msgs[4].Content[0].Text != "and then?" || !strings.HasPrefix(msgs[0].Content[0].Text, "calls=1") {
		t.Errorf("the resumed run sent %d messages: %+v", len(msgs), msgs)
	}
	if got := strings.Join(lines(t, filepath.Join(dir, "r.txt")), ","); got != "once" {
		t.Errorf("r.txt = %s: the first run's call ran again", got)
	}
	// A run that has not ended cannot be resumed; an unknown one is not found.
	running := c.start(testSpec(t.TempDir()), "calls=1 cmd=echo wait >> w.txt")
	waitAsk(t, c, running)
	if _, err := e.Start(ctx, runqueue.Request{Prompt: "x", Dir: dir, Options: runqueue.Options{Resume: running}}); err == nil || !strings.Contains(err.Error(), "still runs") {
		t.Errorf("resuming a running run: %v", err)
	}
	if _, err := e.Start(ctx, runqueue.Request{Prompt: "x", Dir: dir, Options: runqueue.Options{Resume: "no-such-run"}}); err == nil {
		t.Error("resuming an unknown run succeeded")
	}
	d, err := c.c.DescribeWorkflowExecution(ctx, running, "")
	if err != nil || d.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		t.Errorf("the waiting run: %v %v", d, err)
	}
}
