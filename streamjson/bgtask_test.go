package streamjson_test

import (
	"testing"

	"github.com/gantry-dev/gantry/llm/llmtest"
)

// TestAgentSDKBackgroundCommand runs testdata/sdk/bgtask.mjs: a Bash
// command the model runs in the background is announced to the real SDK
// by system/task_started (after the assistant message holding the call)
// and system/task_notification (failed, its exit code, its output file).
func TestAgentSDKBackgroundCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("builds gantry and runs node")
	}
	node, sdkDir := agentSDK(t)
	bin := buildGantry(t)
	work, home := t.TempDir(), t.TempDir()
	srv := llmtest.NewServer(t)
	srv.Script(
		llmtest.ToolReply(llmtest.ToolCall{ID: "toolu_bg", Name: "Bash", Input: `{"command":"echo built; exit 3","run_in_background":true}`}),
		llmtest.TextReply("it runs"),
	)
	stderr := sdkProgram{Name: "bgtask.mjs", Marker: "SDK-BGTASK-OK", Node: node, SDKDir: sdkDir, Bin: bin, Work: work, Home: home, Srv: srv}.run(t)
	t.Logf("%s", stderr)
}
