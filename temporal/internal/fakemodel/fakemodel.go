// Package fakemodel is the scripted model of the temporal module's tests
// and benchmarks: a responder for llmtest whose reply depends on the
// conversation, so that concurrent runs each get their own script.
package fakemodel

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/llm/anthropic"
	"github.com/gantry-dev/gantry/llm/llmtest"
)

// Respond answers a request from its conversation. The prompt (the first
// user message) says what the model does: "calls=N tool=NAME cmd=…" makes
// N tool calls, one per turn ("{i}" in cmd is replaced by the call's
// number; tool defaults to Bash, whose command is cmd, and Write writes
// "written\n" to the path cmd), then ends with "done after N".
func Respond(req llmtest.Request) (llmtest.Reply, bool) {
	prompt := ""
	if len(req.Messages) > 0 {
		for _, b := range req.Messages[0].Content {
			if b.Type == llm.TypeText {
				prompt += b.Text
			}
		}
	}
	var n int
	var name, cmd string
	for _, f := range strings.Fields(prompt) {
		switch {
		case strings.HasPrefix(f, "calls="):
			fmt.Sscan(strings.TrimPrefix(f, "calls="), &n)
		case strings.HasPrefix(f, "tool="):
			name = strings.TrimPrefix(f, "tool=")
		}
	}
	if i := strings.Index(prompt, "cmd="); i >= 0 {
		cmd = prompt[i+len("cmd="):]
	}
	if name == "" {
		name = "Bash"
	}
	done := len(req.ToolResults())
	if done >= n {
		return llmtest.TextReply(fmt.Sprintf("done after %d", done)), true
	}
	c := strings.ReplaceAll(cmd, "{i}", fmt.Sprint(done+1))
	var input []byte
	switch name {
	case "Bash":
		input, _ = json.Marshal(map[string]any{"command": c, "description": "step"})
	case "Write":
		input, _ = json.Marshal(map[string]any{"file_path": c, "content": "written\n"})
	default:
		input = []byte(c)
	}
	return llmtest.ToolReply(llmtest.ToolCall{ID: fmt.Sprintf("toolu_%d", done+1), Name: name, Input: string(input)}), true
}

// Start starts the fake model server with [Respond] for the test and
// returns it with an Anthropic provider pointed at it.
func Start(t testing.TB) (*llmtest.Server, llm.Provider) {
	srv := llmtest.NewServer(t, llmtest.WithResponder(Respond))
	return srv, anthropic.New(anthropic.WithBaseURL(srv.URL()), anthropic.WithAPIKey("test"), anthropic.WithModel("claude-test"))
}

// Getenv is a worker's environment for tests: home as HOME, a plain PATH,
// nothing else.
func Getenv(home string) func(string) string {
	return func(k string) string {
		switch k {
		case "HOME":
			return home
		case "PATH":
			return "/usr/local/bin:/usr/bin:/bin"
		}
		return ""
	}
}
