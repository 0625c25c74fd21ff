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
// "written\n" to the path cmd; any other tool takes cmd as its JSON
// input), then ends with "done after N". "per=K" makes K calls per turn
// (one assistant message with K tool uses).
func Respond(req llmtest.Request) (llmtest.Reply, bool) {
	prompt := ""
	if len(req.Messages) > 0 {
		for _, b := range req.Messages[0].Content {
			if b.Type == llm.TypeText {
				prompt += b.Text
			}
		}
	}
	if rest, ok := strings.CutPrefix(prompt, "script="); ok {
		return script(req, rest)
	}
	var n int
	per := 1
	var name, cmd string
	for _, f := range strings.Fields(prompt) {
		switch {
		case strings.HasPrefix(f, "calls="):
			fmt.Sscan(strings.TrimPrefix(f, "calls="), &n)
		case strings.HasPrefix(f, "per="):
			fmt.Sscan(strings.TrimPrefix(f, "per="), &per)
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
	var calls []llmtest.ToolCall
	for i := done + 1; i <= n && i <= done+max(per, 1); i++ {
		c := strings.ReplaceAll(cmd, "{i}", fmt.Sprint(i))
		var input []byte
		switch name {
		case "Bash":
			input, _ = json.Marshal(map[string]any{"command": c, "description": "step"})
		case "Write":
			input, _ = json.Marshal(map[string]any{"file_path": c, "content": "written\n"})
		default:
			input = []byte(c)
		}
		calls = append(calls, llmtest.ToolCall{ID: fmt.Sprintf("toolu_%d", i), Name: name, Input: string(input)})
	}
	return llmtest.ToolReply(calls...), true
}

// Call is one tool call of a script.
type Call struct {
	Name  string         `json:"name"`
	Input map[string]any `json:"input"`
}

// Script is the prompt that makes the model make the calls, one per turn,
// then end with "done after N".
func Script(calls ...Call) string {
	b, _ := json.Marshal(calls)
	return "script=" + string(b)
}

func script(req llmtest.Request, js string) (llmtest.Reply, bool) {
	var calls []Call
	if err := json.Unmarshal([]byte(js), &calls); err != nil {
		return llmtest.TextReply("bad script: " + err.Error()), true
	}
	done := len(req.ToolResults())
	if done >= len(calls) {
		return llmtest.TextReply(fmt.Sprintf("done after %d", done)), true
	}
	input, _ := json.Marshal(calls[done].Input)
	return llmtest.ToolReply(llmtest.ToolCall{ID: fmt.Sprintf("toolu_%d", done+1), Name: calls[done].Name, Input: string(input)}), true
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
