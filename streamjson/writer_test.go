package streamjson_test

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/agent"
	"github.com/gantry-dev/gantry/builtin/shell"
	"github.com/gantry-dev/gantry/executor"
	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/llm/llmtest"
	"github.com/gantry-dev/gantry/streamjson"
	"github.com/gantry-dev/gantry/tool"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// deterministic returns writer options with counted uuids and a clock
// that advances a second per reading.
func deterministic() streamjson.WriterOptions {
	n := 0
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return streamjson.WriterOptions{
		Model: "claude-sonnet-4-5",
		NewUUID: func() string {
			n++
			return fmt.Sprintf("00000000-0000-4000-8000-%012d", n)
		},
		Now: func() time.Time {
			now = now.Add(time.Second)
			return now
		},
		Info: func() streamjson.Info {
			return streamjson.Info{Version: "1.2.3", APIKeySource: "ANTHROPIC_API_KEY",
				MCPServers: []streamjson.MCPServer{{Name: "calc", Status: "connected"}}, Agents: []string{"general-purpose"}}
		},
	}
}

const session = "11111111-2222-4333-8444-555555555555"

// record runs events through a Writer and returns its messages as JSON
// objects.
func record(t *testing.T, opts streamjson.WriterOptions, events []agent.Event, res *agent.ResultEvent, runErr error) []map[string]any {
	t.Helper()
	var out []map[string]any
	w := streamjson.NewWriter(func(v any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			return err
		}
		out = append(out, m)
		return nil
	}, opts)
	w.Begin()
	for _, ev := range events {
		w.Event(ev)
	}
	w.Result(res, runErr)
	if err := w.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// aTurn is a turn with a reply of thinking, text and two tool calls (one
// allowed with a structured result, one denied), a subagent message,
// notices, a retry, a compaction and a mode change.
func aTurn() []agent.Event {
	use1 := llm.ToolUse("toolu_1", "Read", json.RawMessage(`{"file_path":"a.go"}`))
	use2 := llm.ToolUse("toolu_2", "Bash", json.RawMessage(`{"command":"rm -rf /"}`))
	use0 := llm.ToolUse("toolu_0", "Agent", json.RawMessage(`{"description":"look around","prompt":"look","subagent_type":"Explore"}`))
	reply := llm.AssistantMessage(llm.Thinking("let me look", "sig"), llm.Text("Reading."), use0, use1, use2)
	okRes := &tool.Result{Content: []tool.Content{tool.Text("package a")}, Structured: map[string]any{"lines": 1}}
	denied := &tool.Result{Content: []tool.Content{tool.Text("the user denied this call")}, IsError: true}
	img := &tool.Result{Content: []tool.Content{tool.Text("a picture"), tool.Image([]byte{1, 2, 3}, "image/png")}}
	return []agent.Event{
		&agent.InitEvent{SessionID: session, Model: "claude-sonnet-4-5", WorkDir: "/work", Tools: []string{"Read", "Bash"}, Mode: tool.ModeDefault},
		&agent.MessageEvent{UUID: "99999999-0000-4000-8000-000000000000", Checkpoint: "99999999-0000-4000-8000-000000000000", Message: llm.UserText("read a.go")},
		&agent.StreamEvent{Event: llm.Event{Type: llm.EventMessageStart, ID: "msg_1", Model: "claude-sonnet-4-5", Usage: llm.Usage{InputTokens: 10}}},
		&agent.StreamEvent{Event: llm.Event{Type: llm.EventThinkingDelta, Index: 0, Text: "let me look"}},
		&agent.StreamEvent{Event: llm.Event{Type: llm.EventThinkingDelta, Index: 0, Signature: "sig"}},
		&agent.StreamEvent{Event: llm.Event{Type: llm.EventTextDelta, Index: 1, Text: "Reading."}},
		&agent.StreamEvent{Event: llm.Event{Type: llm.EventToolUseStart, Index: 2, ID: "toolu_1", Name: "Read"}},
		&agent.StreamEvent{Event: llm.Event{Type: llm.EventToolUseDelta, Index: 2, Text: `{"file_path":"a.go"}`}},
		&agent.StreamEvent{Event: llm.Event{Type: llm.EventToolUseEnd, Index: 2, ID: "toolu_1", Name: "Read"}},
		&agent.StreamEvent{Event: llm.Event{Type: llm.EventMessageEnd, StopReason: llm.StopToolUse, Usage: llm.Usage{OutputTokens: 20}}},
		&agent.TextDelta{Text: "Reading."},
		&agent.MessageEvent{Message: reply, Reply: &agent.ReplyInfo{ID: "msg_1", Model: "claude-sonnet-4-5", StopReason: llm.StopToolUse,
			Usage: llm.Usage{InputTokens: 10, OutputTokens: 20, CacheReadInputTokens: 5, CacheCreationInputTokens: 7}}},
		&agent.SubagentEvent{ParentToolUseID: "toolu_0", AgentType: "Explore", Event: &agent.MessageEvent{
			Message: llm.AssistantMessage(llm.Text("child")), Reply: &agent.ReplyInfo{ID: "msg_c", Model: "claude-haiku-4-5", StopReason: llm.StopEndTurn}}},
		&agent.ToolStatus{},
		&agent.ToolResultEvent{Outcome: &executor.Outcome{ID: "toolu_0", Name: "Agent", Result: &tool.Result{Content: []tool.Content{tool.Text("looked")}}, Duration: 1500 * time.Millisecond}},
		&agent.ToolResultEvent{Outcome: &executor.Outcome{ID: "toolu_1", Name: "Read", Result: okRes}},
		&agent.ToolResultEvent{Outcome: &executor.Outcome{ID: "toolu_2", Name: "Bash", Input: json.RawMessage(`{"command":"rm -rf /"}`), Result: denied, Kind: executor.KindDenied}},
		&agent.ToolResultEvent{Outcome: &executor.Outcome{ID: "toolu_3", Name: "Screenshot", Result: img}},
		&agent.MessageEvent{UUID: "99999999-0000-4000-8000-000000000001", Message: llm.UserMessage(llm.ResultBlock("toolu_1", okRes), llm.ResultBlock("toolu_2", denied), llm.ResultBlock("toolu_3", img), llm.Text("a note a tool added"))},
		&agent.TurnEnd{Turn: 1, StopReason: llm.StopToolUse, Usage: llm.Usage{InputTokens: 10, OutputTokens: 20, CacheReadInputTokens: 5, CacheCreationInputTokens: 7}, CostUSD: 0.25},
		&agent.NoticeEvent{Text: "a hook says hi"},
		&agent.RetryEvent{Attempt: 1, Err: &llm.APIError{StatusCode: 529, Type: "overloaded_error"}},
		&agent.CompactEvent{Before: 40, After: 6, PromptTokens: 160000},
		&agent.ModeEvent{From: tool.ModeDefault, To: tool.ModePlan},
		&agent.MessageEvent{Message: llm.UserText("a reminder Gantry added")},
	}
}

func TestGolden(t *testing.T) {
	usage := llm.Usage{InputTokens: 10, OutputTokens: 20, CacheReadInputTokens: 5, CacheCreationInputTokens: 7}
	for _, tc := range []struct {
		name    string
		partial bool
		replay  bool
		res     *agent.ResultEvent
		err     error
	}{
		{"success", true, false, &agent.ResultEvent{Subtype: agent.SubtypeSuccess, Text: "done", SessionID: session, NumTurns: 1, Usage: usage, CostUSD: 0.25, StopReason: llm.StopEndTurn}, nil},
		{"structured", false, false, &agent.ResultEvent{Subtype: agent.SubtypeSuccess, Text: "", SessionID: session, NumTurns: 1, Structured: json.RawMessage(`{"name":"Ada"}`)}, nil},
		{"max_turns", false, true, &agent.ResultEvent{Subtype: agent.SubtypeMaxTurns, IsError: true, Text: "stopped after 1 turns (max turns)", SessionID: session, NumTurns: 1, Usage: usage}, nil},
		{"interrupted", false, false, &agent.ResultEvent{Subtype: agent.SubtypeInterrupted, IsError: true, Text: "interrupted", SessionID: session}, nil},
		{"provider_error", false, false, &agent.ResultEvent{Subtype: agent.SubtypeDuringExecution, IsError: true, Text: "agent: model request: boom", SessionID: session}, errors.New("agent: model request: boom")},
		{"no_result", false, false, nil, errors.New("the model provider is not configured")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := deterministic()
			opts.Partial = tc.partial
			opts.ReplayUser = tc.replay
			events := aTurn()
			if tc.res == nil {
				events = nil
			}
			msgs := record(t, opts, events, tc.res, tc.err)
			llmtest.Golden(t, "golden/"+tc.name+".json", msgs, *update)
		})
	}
}

// sdkShapes are the keys each message type has in the SDK's declarations
// (sdk.d.ts of @anthropic-ai/claude-agent-sdk 0.3.332): required keys
// must be present; a key outside required ∪ optional is an error unless
// it starts with gantry_.
var sdkShapes = map[string]struct{ required, optional []string }{
	"system/init": {
		required: []string{"type", "subtype", "apiKeySource", "claude_code_version", "cwd", "tools", "mcp_servers", "model",
			"permissionMode", "slash_commands", "output_style", "skills", "plugins", "uuid", "session_id"},
		optional: []string{"agents", "betas", "terminal_slash_commands", "plugin_errors", "fast_mode_state", "effort", "capabilities"},
	},
	"assistant": {
		required: []string{"type", "message", "parent_tool_use_id", "uuid", "session_id"},
		optional: []string{"error", "request_id", "user_message_uuid", "timestamp"},
	},
	"user": {
		required: []string{"type", "message", "parent_tool_use_id"},
		optional: []string{"isSynthetic", "tool_use_result", "priority", "timestamp", "uuid", "session_id"},
	},
	"stream_event": {
		required: []string{"type", "event", "parent_tool_use_id", "uuid", "session_id"},
		optional: []string{"ttft_ms"},
	},
	"result/success": {
		required: []string{"type", "subtype", "duration_ms", "duration_api_ms", "is_error", "num_turns", "result", "stop_reason",
			"total_cost_usd", "usage", "modelUsage", "permission_denials", "uuid", "session_id"},
		optional: []string{"structured_output", "terminal_reason"},
	},
	"result/error": {
		required: []string{"type", "subtype", "duration_ms", "duration_api_ms", "is_error", "num_turns", "stop_reason",
			"total_cost_usd", "usage", "modelUsage", "permission_denials", "errors", "uuid", "session_id"},
		optional: []string{"terminal_reason"},
	},
	"system/informational":    {required: []string{"type", "subtype", "content", "level", "uuid", "session_id"}},
	"system/compact_boundary": {required: []string{"type", "subtype", "compact_metadata", "uuid", "session_id"}},
	"system/api_retry": {
		required: []string{"type", "subtype", "attempt", "max_retries", "retry_delay_ms", "error_status", "error", "uuid", "session_id"},
	},
	"system/status": {required: []string{"type", "subtype", "status", "uuid", "session_id"}, optional: []string{"permissionMode", "compact_result", "compact_error"}},
	"system/permission_denied": {required: []string{"type", "subtype", "tool_name", "tool_use_id", "message", "uuid", "session_id"},
		optional: []string{"agent_id", "decision_reason_type", "decision_reason"}},
	"system/task_started": {required: []string{"type", "subtype", "task_id", "description", "uuid", "session_id"},
		optional: []string{"run_id", "tool_use_id", "subagent_type", "is_backgrounded", "spawn_depth", "parent_task_id", "task_type", "workflow_name", "prompt", "skip_transcript", "ambient"}},
	"system/task_notification": {required: []string{"type", "subtype", "task_id", "status", "output_file", "summary", "uuid", "session_id"},
		optional: []string{"run_id", "tool_use_id", "reason", "usage", "resource_links", "skip_transcript", "ambient"}},
}

// apiMessageKeys are the keys of a Messages API message (BetaMessage).
var apiMessageKeys = []string{"id", "type", "role", "model", "content", "stop_reason", "stop_sequence", "usage"}

func shapeKey(m map[string]any) string {
	typ, _ := m["type"].(string)
	sub, _ := m["subtype"].(string)
	switch typ {
	case "system":
		return typ + "/" + sub
	case "result":
		if sub == "success" {
			return "result/success"
		}
		return "result/error"
	}
	return typ
}

// TestShapes checks every message the golden runs produce against the
// SDK's declared shapes, so that a typed consumer sees what it expects.
func TestShapes(t *testing.T) {
	seen := map[string]bool{}
	check := func(msgs []map[string]any) {
		for _, m := range msgs {
			key := shapeKey(m)
			shape, ok := sdkShapes[key]
			if !ok {
				t.Errorf("message type %s is not an SDK message: %v", key, m)
				continue
			}
			seen[key] = true
			for _, k := range shape.required {
				if _, ok := m[k]; !ok {
					t.Errorf("%s lacks %q: %v", key, k, m)
				}
			}
			for k := range m {
				if !slices.Contains(shape.required, k) && !slices.Contains(shape.optional, k) && !strings.HasPrefix(k, "gantry_") {
					t.Errorf("%s has %q, which the SDK does not declare", key, k)
				}
			}
			if key == "assistant" {
				msg := m["message"].(map[string]any)
				var keys []string
				for k := range msg {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				want := slices.Clone(apiMessageKeys)
				sort.Strings(want)
				if !slices.Equal(keys, want) {
					t.Errorf("assistant message keys = %v, want %v", keys, want)
				}
				if c := msg["content"].([]any); len(c) != 1 {
					t.Errorf("assistant message has %d blocks, want one per message", len(c))
				}
			}
			if key == "user" {
				for _, b := range m["message"].(map[string]any)["content"].([]any) {
					blk := b.(map[string]any)
					if blk["type"] == "tool_result" {
						if _, ok := blk["is_error"]; !ok {
							t.Errorf("tool_result without is_error: %v", blk)
						}
						if _, ok := m["tool_use_result"]; !ok && m["parent_tool_use_id"] == nil {
							t.Errorf("a tool result message without tool_use_result: %v", m)
						}
					}
				}
			}
			if key == "result/success" || key == "result/error" {
				u := m["usage"].(map[string]any)
				for _, k := range []string{"input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"} {
					if _, ok := u[k]; !ok {
						t.Errorf("result usage lacks %s", k)
					}
				}
			}
		}
	}
	usage := llm.Usage{InputTokens: 1}
	opts := deterministic()
	opts.Partial = true
	check(record(t, opts, aTurn(), &agent.ResultEvent{Subtype: agent.SubtypeSuccess, Text: "ok", SessionID: session, Usage: usage}, nil))
	check(record(t, deterministic(), aTurn(), &agent.ResultEvent{Subtype: agent.SubtypeToolLoop, IsError: true, Text: "loop", SessionID: session}, nil))
	for key := range sdkShapes {
		if !seen[key] {
			t.Errorf("no golden run produced %s", key)
		}
	}
}

func TestMapSubtype(t *testing.T) {
	for _, tc := range []struct{ gantry, sub, terminal string }{
		{agent.SubtypeSuccess, "success", "completed"},
		{agent.SubtypeMaxTurns, "error_max_turns", "max_turns"},
		{agent.SubtypeMaxBudget, "error_max_budget_usd", "budget_exhausted"},
		{agent.SubtypeMaxStructuredRetries, "error_max_structured_output_retries", "structured_output_retry_exhausted"},
		{agent.SubtypeMaxTokens, "error_during_execution", "budget_exhausted"},
		{agent.SubtypeInterrupted, "error_during_execution", "aborted_streaming"},
		{agent.SubtypeBlocked, "error_during_execution", "hook_stopped"},
		{agent.SubtypeToolLoop, "error_during_execution", ""},
		{agent.SubtypeDuringExecution, "error_during_execution", "api_error"},
	} {
		sub, term := streamjson.MapSubtype(tc.gantry)
		if sub != tc.sub || term != tc.terminal {
			t.Errorf("MapSubtype(%s) = %s, %s; want %s, %s", tc.gantry, sub, term, tc.sub, tc.terminal)
		}
	}
}

// TestSubagentOrder: a subagent's messages never come before the
// assistant message holding its Agent call, whatever order the events
// arrive in (under streaming execution a subagent starts while its
// parent's reply still streams — the order 2 of 8 SDK runs saw).
func TestSubagentOrder(t *testing.T) {
	call := llm.ToolUse("toolu_a", "Agent", json.RawMessage(`{"description":"look","prompt":"look","subagent_type":"Explore"}`))
	child := func(text string) agent.Event {
		return &agent.SubagentEvent{ParentToolUseID: "toolu_a", AgentType: "Explore", Event: &agent.MessageEvent{
			Message: llm.AssistantMessage(llm.Text(text)), Reply: &agent.ReplyInfo{ID: "msg_c", Model: "claude-haiku-4-5"}}}
	}
	parent := &agent.MessageEvent{Message: llm.AssistantMessage(llm.Text("Delegating."), call), Reply: &agent.ReplyInfo{ID: "msg_p", StopReason: llm.StopToolUse}}
	orders := map[string][]agent.Event{
		"in order":            {parent, child("one"), child("two")},
		"child first":         {child("one"), parent, child("two")},
		"both children first": {child("one"), child("two"), parent},
	}
	for name, evs := range orders {
		t.Run(name, func(t *testing.T) {
			events := append([]agent.Event{&agent.InitEvent{SessionID: session, Model: "m"}}, evs...)
			out := record(t, deterministic(), events, &agent.ResultEvent{Subtype: agent.SubtypeSuccess, SessionID: session}, nil)
			var got []string
			for _, m := range out {
				if m["type"] != "assistant" {
					continue
				}
				msg := m["message"].(map[string]any)
				b := msg["content"].([]any)[0].(map[string]any)
				got = append(got, fmt.Sprint(b["type"], ":", b["text"], b["id"]))
			}
			want := []string{"text:Delegating.<nil>", "tool_use:<nil>toolu_a", "text:one<nil>", "text:two<nil>"}
			if !slices.Equal(got, want) {
				t.Errorf("order = %q, want %q", got, want)
			}
		})
	}
}

// TestTaskMessages: a background subagent's task_started says so, its
// Agent call's quick result writes no notification, and its own result
// later writes task_notification with its summary and usage.
func TestTaskMessages(t *testing.T) {
	call := llm.ToolUse("toolu_b", "Agent", json.RawMessage(`{"description":"watch","prompt":"watch it","subagent_type":"Explore","run_in_background":true}`))
	sub := func(ev agent.Event) agent.Event {
		return &agent.SubagentEvent{ParentToolUseID: "toolu_b", AgentID: "agent-1", AgentType: "Explore", Event: ev}
	}
	events := []agent.Event{
		&agent.InitEvent{SessionID: session, Model: "m"},
		&agent.MessageEvent{Message: llm.AssistantMessage(call), Reply: &agent.ReplyInfo{ID: "msg_p", StopReason: llm.StopToolUse}},
		&agent.ToolResultEvent{Outcome: &executor.Outcome{ID: "toolu_b", Name: "Agent", Result: &tool.Result{Content: []tool.Content{tool.Text("started in the background")}}}},
		sub(&agent.MessageEvent{Message: llm.AssistantMessage(llm.ToolUse("c1", "Read", json.RawMessage(`{}`))), Reply: &agent.ReplyInfo{ID: "msg_c"}}),
		sub(&agent.ResultEvent{Subtype: agent.SubtypeSuccess, Text: "all quiet", Usage: llm.Usage{InputTokens: 100, OutputTokens: 20}, Duration: 2 * time.Second}),
	}
	out := record(t, deterministic(), events, &agent.ResultEvent{Subtype: agent.SubtypeSuccess, SessionID: session}, nil)
	var started, notes []map[string]any
	for _, m := range out {
		switch m["subtype"] {
		case "task_started":
			started = append(started, m)
		case "task_notification":
			notes = append(notes, m)
		}
	}
	if len(started) != 1 || started[0]["is_backgrounded"] != true || started[0]["task_id"] != "agent-1" || started[0]["description"] != "watch" {
		t.Fatalf("task_started = %v", started)
	}
	if len(notes) != 1 {
		t.Fatalf("task_notification = %v, want one", notes)
	}
	n := notes[0]
	u, _ := n["usage"].(map[string]any)
	if n["status"] != "completed" || n["summary"] != "all quiet" || n["task_id"] != "agent-1" ||
		u["total_tokens"] != float64(120) || u["tool_uses"] != float64(1) || u["duration_ms"] != float64(2000) {
		t.Errorf("task_notification = %v", n)
	}
}

// TestJobMessages: a background Bash command's task_started follows the
// message holding its call; its task_notification says completed, failed
// or stopped with the output file, also when the command ended before its
// call's result was seen; a job of another kind and an unknown command's
// second end write nothing.
func TestJobMessages(t *testing.T) {
	code := func(n int) *int { return &n }
	tests := []struct {
		name        string
		endFirst    bool // JobEnded before the Bash result
		info        shell.JobInfo
		status, sum string
	}{
		{"completed", false, shell.JobInfo{Status: shell.TaskCompleted, ExitCode: code(0)}, "completed", `Background command "make" completed (exit code 0)`},
		{"failed before result", true, shell.JobInfo{Status: shell.TaskFailed, ExitCode: code(2)}, "failed", `Background command "make" failed (exit code 2)`},
		{"stopped", false, shell.JobInfo{Status: shell.TaskKilled, ExitCode: code(143), Note: "stopped"}, "stopped", `Background command "make" was stopped (stopped)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out []map[string]any
			w := streamjson.NewWriter(func(v any) error {
				b, _ := json.Marshal(v)
				var m map[string]any
				if err := json.Unmarshal(b, &m); err != nil {
					return err
				}
				out = append(out, m)
				return nil
			}, deterministic())
			info := tt.info
			info.ID, info.Kind, info.Command, info.OutputPath = "b1234", "shell", "make", "/tmp/task-b1234.txt"
			call := llm.ToolUse("toolu_bg", "Bash", json.RawMessage(`{"command":"make","run_in_background":true}`))
			w.Begin()
			w.Event(&agent.InitEvent{SessionID: session, Model: "m"})
			w.Event(&agent.MessageEvent{Message: llm.AssistantMessage(call), Reply: &agent.ReplyInfo{ID: "msg_1", StopReason: llm.StopToolUse}})
			w.JobEnded(shell.JobInfo{ID: "a1", Kind: "agent", Status: shell.TaskCompleted})
			if tt.endFirst {
				w.JobEnded(info)
			}
			w.Event(&agent.ToolResultEvent{Outcome: &executor.Outcome{ID: "toolu_bg", Name: "Bash", Input: call.Input,
				Result: &tool.Result{Content: []tool.Content{tool.Text("running")}, Structured: shell.BashOutput{TaskID: "b1234", OutputFile: info.OutputPath}}}})
			if !tt.endFirst {
				w.JobEnded(info)
			}
			w.JobEnded(info) // a second end of the same job is not announced again
			var got []map[string]any
			for _, m := range out {
				if st, _ := m["subtype"].(string); strings.HasPrefix(st, "task_") {
					got = append(got, m)
				}
			}
			if len(got) != 2 || got[0]["subtype"] != "task_started" || got[1]["subtype"] != "task_notification" {
				t.Fatalf("task messages = %v", got)
			}
			s, n := got[0], got[1]
			if s["task_id"] != "b1234" || s["tool_use_id"] != "toolu_bg" || s["description"] != "make" || s["task_type"] != "local_bash" ||
				s["is_backgrounded"] != true || s["session_id"] != session {
				t.Errorf("task_started = %v", s)
			}
			if n["task_id"] != "b1234" || n["tool_use_id"] != "toolu_bg" || n["status"] != tt.status || n["summary"] != tt.sum ||
				n["output_file"] != info.OutputPath || n["session_id"] != session {
				t.Errorf("task_notification = %v", n)
			}
			for _, m := range got {
				shape := sdkShapes[shapeKey(m)]
				for k := range m {
					if !slices.Contains(shape.required, k) && !slices.Contains(shape.optional, k) {
						t.Errorf("%s has %q, which the SDK does not declare", shapeKey(m), k)
					}
				}
			}
		})
	}
}
