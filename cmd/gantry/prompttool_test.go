package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/llm/llmtest"
)

// buildPolicyServer compiles testdata/policyserver, a small MCP server
// answering permission asks by a CI policy.
func buildPolicyServer(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "policyserver")
	cmd := exec.Command("go", "build", "-o", bin, "./testdata/policyserver")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the policy server: %v\n%s", err, out)
	}
	return bin
}

// TestPermissionPromptTool: with --permission-prompt-tool an MCP tool
// answers what a person would: permission asks (allow by policy, deny with
// the policy's message), AskUserQuestion (answers filled in) and plan
// approval; the tool itself is hidden from the model.
func TestPermissionPromptTool(t *testing.T) {
	bin := buildPolicyServer(t)
	srv := llmtest.NewServer(t)
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "allowed"), 0o755); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(t.TempDir(), "policy.log")
	cfg := filepath.Join(t.TempDir(), "mcp.json")
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"policy": map[string]any{"command": bin, "env": map[string]string{"POLICY_LOG": logPath}}}})
	if err := os.WriteFile(cfg, b, 0o600); err != nil {
		t.Fatal(err)
	}
	write := func(id, path string) llmtest.ToolCall {
		in, _ := json.Marshal(map[string]string{"file_path": filepath.Join(dir, path), "content": "x"})
		return llmtest.ToolCall{ID: id, Name: "Write", Input: string(in)}
	}
	cli := func(t *testing.T, extra ...string) (int, string) {
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
		args := append([]string{"-p", "go", "--cwd", dir, "--mcp-config", cfg, "--no-session-persistence",
			"--permission-prompt-tool", "mcp__policy__approve", "--output-format", "json"}, extra...)
		code := run(context.Background(), a, args)
		return code, out.String() + errb.String()
	}

	t.Run("asks and questions", func(t *testing.T) {
		srv.Script(
			llmtest.ToolReply(write("ok", "allowed/a.txt")),
			llmtest.ToolReply(write("no", "other.txt")),
			llmtest.ToolReply(llmtest.ToolCall{ID: "sh", Name: "Bash", Input: `{"command":"touch made-by-bash"}`}),
			llmtest.ToolReply(llmtest.ToolCall{ID: "q", Name: "AskUserQuestion", Input: `{"questions":[{"question":"Which db?","header":"DB","multiSelect":false,"options":[{"label":"SQLite","description":"embedded"},{"label":"Postgres","description":"server"}]}]}`}),
			llmtest.TextReply("done"),
		)
		first := len(srv.Requests())
		// The policy denies calls: the run ends, with exit status 3.
		if code, out := cli(t); code != exitDenied {
			t.Fatalf("exit %d\n%s", code, out)
		}
		reqs := srv.Requests()[first:]
		if slices.Contains(reqs[0].ToolNames(), "mcp__policy__approve") {
			t.Error("the prompt tool is offered to the model")
		}
		results := map[string]string{}
		for _, r := range reqs {
			for _, blk := range r.ToolResults() {
				bb, _ := json.Marshal(blk)
				results[blk.ToolUseID] = string(bb)
			}
		}
		if _, err := os.Stat(filepath.Join(dir, "allowed", "a.txt")); err != nil {
			t.Errorf("allowed write: %v (%s)", err, results["ok"])
		}
		if _, err := os.Stat(filepath.Join(dir, "other.txt")); err == nil || !strings.Contains(results["no"], "writes only under ./allowed/") {
			t.Errorf("denied write ran or lacks the policy's message: %s", results["no"])
		}
		if _, err := os.Stat(filepath.Join(dir, "made-by-bash")); err == nil || !strings.Contains(results["sh"], "no shell commands") {
			t.Errorf("denied Bash ran or lacks the policy's message: %s", results["sh"])
		}
		if !strings.Contains(results["q"], `\"Which db?\" = \"SQLite\"`) {
			t.Errorf("question: %s", results["q"])
		}
		log, _ := os.ReadFile(logPath)
		for _, want := range []string{`"tool_name":"Write"`, `"tool_use_id":"ok"`, `"tool_name":"Bash"`, `"tool_name":"AskUserQuestion"`} {
			if !strings.Contains(string(log), want) {
				t.Errorf("the policy server was not asked %s:\n%s", want, log)
			}
		}
	})

	t.Run("plan approval", func(t *testing.T) {
		srv.Script(
			llmtest.ToolReply(write("early", "allowed/early.txt")),
			llmtest.ToolReply(llmtest.ToolCall{ID: "exit", Name: "ExitPlanMode", Input: `{"plan":"write allowed/b.txt"}`}),
			llmtest.ToolReply(write("after", "allowed/b.txt")),
			llmtest.TextReply("done"),
		)
		if code, out := cli(t, "--permission-mode", "plan"); code != exitDenied { // the early write was denied
			t.Fatalf("exit %d\n%s", code, out)
		}
		if _, err := os.Stat(filepath.Join(dir, "allowed", "early.txt")); err == nil {
			t.Error("a write ran in plan mode")
		}
		if _, err := os.Stat(filepath.Join(dir, "allowed", "b.txt")); err != nil {
			t.Errorf("the write after the approved plan did not run: %v", err)
		}
		if log, _ := os.ReadFile(logPath); !strings.Contains(string(log), `"tool_name":"ExitPlanMode","input":{"plan":"write allowed/b.txt"}`) {
			t.Errorf("the plan was not put to the policy server:\n%s", log)
		}
	})

	t.Run("unknown prompt tool", func(t *testing.T) {
		if code, out := cli(t, "--permission-prompt-tool", "mcp__policy__nope"); code != 2 || !strings.Contains(out, "no such MCP tool") {
			t.Errorf("exit %d: %s", code, out)
		}
	})
}
