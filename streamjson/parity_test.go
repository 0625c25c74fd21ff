package streamjson_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/llm/llmtest"
)

// TestAgentSDKParity runs testdata/sdk/parity.mjs, a program for the
// official Agent SDK, against gantry: structured output's result.result
// the tool_use_result shapes of Read, Edit and Bash as the program reads
// them, /compact, and the session helpers (listSessions, getSessionInfo,
// getSessionMessages) over a session and its resumption.
func TestAgentSDKParity(t *testing.T) {
	if testing.Short() {
		t.Skip("builds gantry and runs node")
	}
	node, sdkDir := agentSDK(t)
	bin := buildGantry(t)
	work := t.TempDir()
	for name, content := range map[string]string{"a.txt": "alpha\nbeta\n", "edit.txt": "one\ntwo\nthree\n"} {
		if err := os.WriteFile(filepath.Join(work, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	steps := map[string]int{}
	compacted := false
	var thinking []int // the thinking budgets of the control section's second turn
	srv := llmtest.NewServer(t, llmtest.WithResponder(func(req llmtest.Request) (llmtest.Reply, bool) {
		mu.Lock()
		defer mu.Unlock()
		if len(req.Messages) == 0 || len(req.Messages[0].Content) == 0 {
			return llmtest.Reply{}, false
		}
		first := ""
		for _, b := range req.Messages[0].Content {
			first += b.Text
		}
		switch {
		case strings.Contains(first, "structured:"):
			answer := `{"name":"Ada","year":1843}`
			if slices.Contains(req.ToolNames(), "StructuredOutput") && steps["s"] == 0 {
				steps["s"]++
				return llmtest.ToolReply(llmtest.ToolCall{ID: "so", Name: "StructuredOutput", Input: answer}), true
			}
			if req.OutputSchema != nil {
				return llmtest.TextReply(answer), true
			}
			return llmtest.TextReply("done"), true
		case strings.Contains(first, "compact:"):
			// Four reads, an answer, then the summary /compact asks for.
			i := steps["c"]
			steps["c"]++
			if i < 4 {
				return llmtest.ToolReply(llmtest.ToolCall{ID: fmt.Sprintf("c%d", i), Name: "Read", Input: `{"file_path":"a.txt","offset":1,"limit":` + fmt.Sprint(i+1) + `}`}), true
			}
			if i == 4 {
				return llmtest.TextReply("read them"), true
			}
			compacted = true
			return llmtest.TextReply("Summary: the files a.txt was read."), true
		case strings.Contains(first, "subtask:"):
			return llmtest.TextReply("three files"), true
		case strings.Contains(first, "agents:"):
			// The Agent call streams slowly after its block starts, so the
			// subagent can run while the reply still streams.
			if len(req.Messages) == 1 {
				return llmtest.Reply{Content: []llm.Block{llm.Text("Delegating."), llm.ToolUse("ag", "Agent",
					json.RawMessage(`{"description":"count the files","prompt":"subtask: count the files","subagent_type":"general-purpose"}`))}, ChunkSize: 8}, true
			}
			return llmtest.TextReply("done"), true
		case strings.Contains(first, "control:"):
			if len(req.Messages) > 1 {
				thinking = append(thinking, req.ThinkingBudget)
			}
			return llmtest.Reply{Content: []llm.Block{llm.Text("ok")}, Usage: llm.Usage{InputTokens: 120, OutputTokens: 30}}, true
		case strings.Contains(first, "sessions:"):
			return llmtest.TextReply("remembered"), true
		case strings.Contains(first, "tools:"):
			calls := []llmtest.ToolCall{
				{ID: "r", Name: "Read", Input: `{"file_path":"a.txt"}`},
				{ID: "r2", Name: "Read", Input: `{"file_path":"edit.txt"}`},
				{ID: "e", Name: "Edit", Input: `{"file_path":"edit.txt","old_string":"two","new_string":"TWO"}`},
				{ID: "b", Name: "Bash", Input: `{"command":"echo hi"}`},
			}
			i := steps["t"]
			steps["t"]++
			if i < len(calls) {
				return llmtest.ToolReply(calls[i]), true
			}
			return llmtest.TextReply("done"), true
		}
		return llmtest.Reply{}, false
	}))
	home := t.TempDir()
	stderr := sdkProgram{Name: "parity.mjs", Marker: "SDK-PARITY-OK", Node: node, SDKDir: sdkDir, Bin: bin, Work: work, Home: home, Srv: srv,
		Env: []string{"CLAUDE_CONFIG_DIR=" + filepath.Join(home, "claude-config"), "ORDER_RUNS=" + os.Getenv("GANTRY_ORDER_RUNS")},
	}.run(t)
	mu.Lock()
	defer mu.Unlock()
	if !compacted {
		t.Error("/compact did not ask the model for a summary")
	}
	if !slices.Equal(thinking, []int{2048}) {
		t.Errorf("thinking budgets after setMaxThinkingTokens(2048) = %v, want [2048]", thinking)
	}
	t.Logf("%s", stderr[max(0, strings.LastIndex(stderr, "order runs:")):])
}
