package serve_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/interaction"
	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/llm/anthropic"
	"github.com/gantry-dev/gantry/llm/llmtest"
	"github.com/gantry-dev/gantry/runqueue"
	"github.com/gantry-dev/gantry/serve"
	"github.com/gantry-dev/gantry/transcript"
	"github.com/gantry-dev/gantry/workspace"
)

// agentRunner runs the real agent against the fake model server, with no
// settings files and no MCP (the test's directories only).
func agentRunner(t testing.TB, srv *llmtest.Server) *serve.AgentRunner {
	home := t.TempDir()
	return &serve.AgentRunner{
		NewProvider: func(_ context.Context, model string) (llm.Provider, string, error) {
			if model == "" {
				model = "claude-sonnet-4-5"
			}
			return anthropic.New(anthropic.Options{BaseURL: srv.URL(), APIKey: "test-key"}), model, nil
		},
		Sessions: transcript.NewStore(home),
		Workspace: func(o *workspace.Options) {
			o.NoSettings, o.NoMCP, o.NoAgentFiles = true, true, true
			o.UserHome = home
			o.Getenv = func(k string) string {
				if k == "HOME" || k == "GANTRY_HOME" {
					return home
				}
				return ""
			}
		},
	}
}

// TestAgentRunAskAnswered: an API run of the real agent asks to run a
// command; the ask is answered through the API, the command runs, the run
// succeeds, and its events are the stream-json lines of gantry -p.
func TestAgentRunAskAnswered(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Script(
		llmtest.Reply{Content: []llm.Block{llm.ToolUse("b1", "Bash", json.RawMessage(`{"command":"touch made-by-agent"}`))}},
		llmtest.TextReply("done"),
	)
	f := start(t, serve.Options{Runner: agentRunner(t, srv)})
	ctx := context.Background()
	run, err := f.client.Start(ctx, runqueue.Request{Prompt: "make the file", Dir: f.dir})
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for ev, err := range f.client.Events(ctx, run.ID, 0) {
		if err != nil {
			t.Fatal(err)
		}
		var head struct {
			Type, Subtype string
		}
		json.Unmarshal(ev.Data, &head)
		kinds = append(kinds, strings.TrimSuffix(head.Type+"/"+head.Subtype, "/"))
		if ev.Type == "control_request" {
			var cr runqueue.ControlRequest
			json.Unmarshal(ev.Data, &cr)
			if cr.Request.Subtype != "can_use_tool" || cr.Request.ToolName != "Bash" {
				t.Fatalf("ask %s", ev.Data)
			}
			if err := f.client.Answer(ctx, run.ID, cr.RequestID, &interaction.PermissionAnswer{Choice: interaction.AllowOnce}); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The assistant's message and the ask it leads to are concurrent; the
	// rest is ordered.
	want := []string{"system/init", "assistant", "control_request", "system/ask_resolved", "user", "assistant", "result/success"}
	if got := slices.Sorted(slices.Values(kinds)); !slices.Equal(got, slices.Sorted(slices.Values(want))) {
		t.Fatalf("events %v, want %v in some order", kinds, want)
	}
	at := func(k string) int { return slices.Index(kinds, k) }
	if kinds[0] != "system/init" || kinds[len(kinds)-1] != "result/success" ||
		at("control_request") > at("system/ask_resolved") || at("system/ask_resolved") > at("user") {
		t.Fatalf("events out of order: %v", kinds)
	}
	if _, err := os.Stat(filepath.Join(f.dir, "made-by-agent")); err != nil {
		t.Fatal("the approved command did not run:", err)
	}
	got, err := f.client.Get(ctx, run.ID)
	if err != nil || got.Status != runqueue.StatusSucceeded || got.Result.Text != "done" || got.SessionID == "" {
		t.Fatalf("run %+v %v", got, err)
	}
}

// TestAgentRunCancelled: cancelling a run waiting on the model ends it.
func TestAgentRunCancelled(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Script(llmtest.Reply{Content: []llm.Block{llm.Text("late")}, HeaderDelay: 30 * time.Second})
	f := start(t, serve.Options{Runner: agentRunner(t, srv)})
	ctx := context.Background()
	run, err := f.client.Start(ctx, runqueue.Request{Prompt: "think slowly", Dir: f.dir})
	if err != nil {
		t.Fatal(err)
	}
	for ev, err := range f.client.Events(ctx, run.ID, 0) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == "system" {
			if err := f.client.Cancel(ctx, run.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	if got, _ := f.client.Get(ctx, run.ID); got.Status != runqueue.StatusCancelled {
		t.Fatalf("status %s", got.Status)
	}
}

// BenchmarkStartToFirstEvent: POST /v1/runs → the first SSE event (the
// run's system/init line) at the client, for the real agent against a
// zero-latency model server.
func BenchmarkStartToFirstEvent(b *testing.B) {
	srv := llmtest.NewServer(b, llmtest.WithResponder(func(llmtest.Request) (llmtest.Reply, bool) { return llmtest.TextReply("ok"), true }))
	benchFirstEvent(b, agentRunner(b, srv), "hello")
}
