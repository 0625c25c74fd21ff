package crontool_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/agent"
	"github.com/gantry-dev/gantry/builtin/crontool"
	"github.com/gantry-dev/gantry/cron"
	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/llm/anthropic"
	"github.com/gantry-dev/gantry/llm/llmtest"
	"github.com/gantry-dev/gantry/tool"
	"github.com/gantry-dev/gantry/toolset"
	"github.com/gantry-dev/gantry/workspace"
)

// TestSessionJobFiresBetweenTurns: a session-only job created with
// CronCreate fires between the turns of its session, as a user message
// with its prompt — after the tool calls of the turn in which it became
// due, never in the middle of them.
func TestSessionJobFiresBetweenTurns(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 6, 1, 12, 1, 0, 0, time.Local)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	// wait is a tool that moves the clock 10 minutes on.
	wait := tool.Must(tool.NewNoInput("wait", "Waits ten minutes.", func(context.Context, *tool.Env) (*tool.Result, error) {
		mu.Lock()
		now = now.Add(10 * time.Minute)
		mu.Unlock()
		return tool.TextResult("waited"), nil
	}, tool.WithTraits(tool.ReadOnlyTraits)))
	services := &tool.Services{}
	sess := cron.NewSessionJobs(clock)
	tool.Provide(services, sess)

	srv := llmtest.NewServer(t)
	srv.Script(
		llmtest.Reply{Content: []llm.Block{llm.ToolUse("c1", "CronCreate", json.RawMessage(`{"cron":"*/5 * * * *","prompt":"check the build"}`))}},
		llmtest.Reply{Content: []llm.Block{llm.ToolUse("w1", "wait", json.RawMessage(`{}`))}},
		llmtest.TextReply("the build is green"),
	)
	p := anthropic.New(anthropic.Options{BaseURL: srv.URL(), APIKey: "test-key"})
	ws, err := workspace.Open(context.Background(), workspace.Options{
		Dir: t.TempDir(), NoSettings: true, Services: services, NoAgentTool: true, NoAgentFiles: true,
		Pool: &toolset.Options{Registry: toolset.NewRegistry(), Tools: append(crontool.Tools(), wait)},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	ag, err := agent.New(context.Background(), agent.Options{Provider: p, Model: "claude-sonnet-4-5", Workspace: ws, NoEnvFacts: true, NoMemoryFiles: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ag.Close()
	res, err := ag.Prompt(context.Background(), "watch the build every five minutes")
	if err != nil || res.IsError {
		t.Fatal(res, err)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	// The second request (after CronCreate) has no fire: the job is due at
	// 12:05. The third (after wait moved the clock to 12:11) carries it.
	if strings.Contains(string(reqs[1].Body), "check the build\"") && strings.Contains(string(reqs[1].Body), "fired") {
		t.Fatal("the job fired before it was due")
	}
	last := string(reqs[2].Body)
	if !strings.Contains(last, "Scheduled task") || !strings.Contains(last, `check the build`) {
		t.Fatalf("the fire is not in the next turn: %s", last)
	}
	// Fired once for the two missed fires (12:05, 12:10); the next is 12:15.
	if jobs := sess.List(); len(jobs) != 1 || jobs[0].NextScheduled.Minute() != 15 {
		t.Fatalf("jobs after the fire %+v", jobs)
	}
}
