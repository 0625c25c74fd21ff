package streamjson_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	program := filepath.Join("testdata", "sdk", "bgtask.mjs")
	if _, err := os.ReadFile(program); err != nil { // read here so that go test's cache sees its changes
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, node, program)
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + home, "GANTRY_HOME=" + filepath.Join(home, ".gantry"),
		"GANTRY_BIN=" + bin, "SDK_DIR=" + sdkDir, "WORK_DIR=" + work,
		"ANTHROPIC_BASE_URL=" + srv.URL(), "ANTHROPIC_API_KEY=test-key",
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil || !strings.Contains(stdout.String(), "SDK-BGTASK-OK") {
		t.Fatalf("the SDK program failed: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	t.Logf("%s", stderr.String())
}
