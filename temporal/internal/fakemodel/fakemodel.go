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
// number; tool defaults to Bash, whose command is cmd, Write writes
// "written\n" to the path cmd, and any other tool takes cmd, as given, as
// its JSON input), then ends with "done after N". "per=K" makes K calls
// per turn (one assistant message with K tool uses). A prompt made by
// [Script] makes the script's calls.
//
// A compaction request (its last message asks for a summary) gets a
// summary that keeps the script: "base=K" plus the prompt, K being the
// calls made so far, which a conversation that starts with the summary
// counts on from. Every reply reports 100 input tokens per message sent
// and 10 output tokens, so that a small context window triggers
// compaction.
func Respond(req llmtest.Request) (llmtest.Reply, bool) {
	reply, ok := respond(req)
	reply.Usage = llm.Usage{InputTokens: 100 * len(req.Messages), OutputTokens: 10}
	return reply, ok
}

// CompactMarker is the start of the compaction request's prompt.
const CompactMarker = "Your conversation is about to be compacted"

func respond(req llmtest.Request) (llmtest.Reply, bool) {
	if len(req.Messages) == 0 {
		return llmtest.TextReply("no messages"), true
	}
	prompt := ""
	for _, b := range req.Messages[0].Content {
		if b.Type == llm.TypeText {
			prompt += b.Text
		}
	}
	if rest, ok := strings.CutPrefix(prompt, "script="); ok {
		return script(req, rest)
	}
	var n, base int
	per := 1
	var name, cmd string
	head := prompt
	if i := strings.Index(prompt, "cmd="); i >= 0 {
		head, cmd = prompt[:i], prompt[i+len("cmd="):]
	}
	for _, f := range strings.Fields(head) {
		switch {
		case strings.HasPrefix(f, "calls="):
			fmt.Sscan(strings.TrimPrefix(f, "calls="), &n)
		case strings.HasPrefix(f, "per="):
			fmt.Sscan(strings.TrimPrefix(f, "per="), &per)
		case strings.HasPrefix(f, "tool="):
			name = strings.TrimPrefix(f, "tool=")
		case strings.HasPrefix(f, "base="):
			fmt.Sscan(strings.TrimPrefix(f, "base="), &base)
		}
	}
	done := base + len(req.ToolResults())
	if last := req.Messages[len(req.Messages)-1]; len(last.Content) > 0 && strings.HasPrefix(last.Content[len(last.Content)-1].Text, CompactMarker) {
		summary := fmt.Sprintf("base=%d calls=%d per=%d", done, n, per)
		if name != "" {
			summary += " tool=" + name
		}
		if cmd != "" {
			summary += " cmd=" + cmd
		}
		return llmtest.TextReply(summary), true
	}
	if name == "" {
		name = "Bash"
	}
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
			input = []byte(cmd)
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
	return srv, anthropic.New(anthropic.Options{BaseURL: srv.URL(), APIKey: "test", Model: "claude-test"})
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
