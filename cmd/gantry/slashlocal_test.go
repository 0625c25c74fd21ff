package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/llm/llmtest"
)

// TestPrintBuiltinCommands: the built-in commands of package slash/local
// answer a `gantry -p` run without asking the model; /clear says it is not
// available in a one-prompt run; /init is a prompt for the model.
func TestPrintBuiltinCommands(t *testing.T) {
	srv := llmtest.NewServer(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "CLAUDE.md"), []byte("Use tabs.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cli := func(t *testing.T, prompt string) (int, map[string]any, string) {
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
		code := run(context.Background(), a, []string{"-p", prompt, "--cwd", dir, "--no-session-persistence",
			"--model", "claude-sonnet-4-5", "--output-format", "json"})
		var res map[string]any
		if err := json.Unmarshal([]byte(out.String()), &res); err != nil {
			t.Fatalf("%s: output %q (stderr %q): %v", prompt, out.String(), errb.String(), err)
		}
		return code, res, errb.String()
	}
	for _, tc := range []struct {
		prompt string
		code   int
		want   string
	}{
		{"/cost", 0, "Model calls: 0"},
		{"/context", 0, "Context: 0 of 200000 tokens"},
		{"/model", 0, "Model: claude-sonnet-4-5"},
		{"/permissions", 0, "Permission mode: default"},
		{"/agents", 0, "general-purpose"},
		{"/mcp", 0, "No MCP servers"},
		{"/memory", 0, filepath.Join(dir, "CLAUDE.md")},
		{"/clear", 1, "not available here"},
	} {
		t.Run(tc.prompt, func(t *testing.T) {
			code, res, stderr := cli(t, tc.prompt)
			text, _ := res["result"].(string)
			if res["is_error"] == true {
				b, _ := json.Marshal(res["errors"])
				text = string(b)
			}
			if code != tc.code || !strings.Contains(text, tc.want) {
				t.Errorf("exit %d, result %q (stderr %q); want exit %d and %q", code, text, stderr, tc.code, tc.want)
			}
		})
	}
	if n := len(srv.Requests()); n != 0 {
		t.Fatalf("the commands asked the model %d times", n)
	}
	srv.Script(llmtest.TextReply("written"))
	if code, res, _ := cli(t, "/init"); code != 0 || res["result"] != "written" {
		t.Fatalf("/init: exit %d, %v", code, res)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || !strings.Contains(reqs[0].Messages[len(reqs[0].Messages)-1].Content[0].Text, "create a CLAUDE.md") {
		t.Fatalf("/init sent %+v", reqs)
	}
}
