package main

import (
	"bufio"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/llm/llmtest"
)

// TestPrintStreamJSONBackgroundCommand: in -p stream-json a background
// Bash command that ends during the run is announced by task_started
// (after the assistant message holding its call) and task_notification
// (failed, exit code 3), before the result.
func TestPrintStreamJSONBackgroundCommand(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Script(
		llmtest.ToolReply(llmtest.ToolCall{ID: "toolu_bg", Name: "Bash", Input: `{"command":"sleep 1; echo built; exit 3","run_in_background":true}`}),
		llmtest.ToolReply(llmtest.ToolCall{ID: "toolu_sl", Name: "Sleep", Input: `{"duration_seconds":30}`}),
		llmtest.TextReply("done"),
	)
	dir := t.TempDir()
	a, out, errb := testApp(t)
	base := a.getenv
	a.getenv = func(k string) string {
		switch k {
		case "ANTHROPIC_BASE_URL":
			return srv.URL()
		case "ANTHROPIC_API_KEY":
			return "test-key"
		}
		return base(k)
	}
	code := run(context.Background(), a, []string{"-p", "build", "--cwd", dir, "--no-session-persistence",
		"--model", "claude-sonnet-4-5", "--output-format", "stream-json", "--verbose", "--allowedTools", "Bash,Sleep"})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var order []string
	var started, note map[string]any
	sc := bufio.NewScanner(strings.NewReader(out.String()))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		key, _ := m["type"].(string)
		if st, ok := m["subtype"].(string); ok && key == "system" {
			key += "/" + st
		}
		order = append(order, key)
		switch key {
		case "system/task_started":
			started = m
		case "system/task_notification":
			note = m
		}
	}
	got := strings.Join(order, " ")
	if !strings.Contains(got, "assistant system/task_started") || !strings.HasSuffix(got, "result") ||
		strings.Index(got, "system/task_notification") < strings.Index(got, "system/task_started") {
		t.Fatalf("order: %s", got)
	}
	if started["tool_use_id"] != "toolu_bg" || started["description"] != "sleep 1; echo built; exit 3" ||
		note["task_id"] != started["task_id"] || note["status"] != "failed" || !strings.Contains(note["summary"].(string), "exit code 3") {
		t.Errorf("task_started %v\ntask_notification %v", started, note)
	}
}
