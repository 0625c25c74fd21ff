package streamjson_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/llm/llmtest"
)

// TestAgentSDKCommands runs testdata/sdk/commands.mjs: a project command
// with arguments and allowed-tools expanded into the prompt (in a trusted
// folder only), a namespaced and a user command listed in system/init and
// supportedCommands().
func TestAgentSDKCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("builds gantry and runs node")
	}
	node, sdkDir := agentSDK(t)
	bin := buildGantry(t)
	work, untrusted, home, plugin := t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()
	greet := "---\ndescription: Greet someone by name\n" +
		"argument-hint: [name] [greeting]\nallowed-tools: Read, Grep\n---\nSay $2 to $1 and read a.txt.\n"
	for name, content := range map[string]string{
		filepath.Join(untrusted, ".claude", "commands", "greet.md"):            greet,
		filepath.Join(work, "a.txt"):                                           "alpha\n",
		filepath.Join(work, ".claude", "commands", "greet.md"):                 greet,
		filepath.Join(work, ".claude", "commands", "frontend", "component.md"): "Make the component $ARGUMENTS.\n",
		filepath.Join(work, ".claude", "commands", "status.md"):                "---\nallowed-tools: Bash, Read\n---\nTag: !`echo tagged-$1`\nSee @a.txt please.\n",
		filepath.Join(work, ".claude", "commands", "fetch.md"):                 "Fetched: !`curl -s https://example.invalid/x`\n",
		filepath.Join(plugin, ".claude-plugin", "plugin.json"):                 `{"name":"tools","version":"1.0.0"}`,
		filepath.Join(plugin, "commands", "hello.md"):                          "---\ndescription: greets from the plugin\n---\nPlugin says hi to $1.\n",
		filepath.Join(home, ".claude", "commands", "hello.md"):                 "---\ndescription: say hello\n---\nHello.\n",
		filepath.Join(plugin, "agents", "helper.md"):                           "---\ndescription: helps from the plugin\n---\nYou help.\n",
	} {
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	srv := llmtest.NewServer(t)
	srv.Script(llmtest.TextReply("greeted"), llmtest.TextReply("plain"), llmtest.TextReply("status seen"), llmtest.TextReply("plugged"))
	sdkProgram{Name: "commands.mjs", Marker: "SDK-COMMANDS-OK", Node: node, SDKDir: sdkDir, Bin: bin, Work: work, Home: home, Srv: srv,
		Env: []string{"UNTRUSTED_DIR=" + untrusted, "PLUGIN_DIR=" + plugin},
	}.run(t)
	reqs := srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("model requests = %d, want 4 (/fetch fails before asking the model)", len(reqs))
	}

	first := func(r llmtest.Request) string {
		var s string
		for _, b := range r.Messages[len(r.Messages)-1].Content {
			s += b.Text
		}
		return s
	}
	if got := first(reqs[0]); !strings.Contains(got, "Say good morning to Ada and read a.txt.") || strings.Contains(got, "/greet") {
		t.Errorf("the command's prompt = %q", got)
	}
	names := reqs[0].ToolNames()
	if !slices.Contains(names, "Read") || slices.Contains(names, "Bash") || slices.Contains(names, "Write") {
		t.Errorf("the command's tools = %v, want its allowed-tools (Read, Grep) only", names)
	}
	if got := first(reqs[1]); !strings.Contains(got, "/greet Ada") {
		t.Errorf("untrusted /greet reached the model as %q", got)
	}
	if got := first(reqs[2]); !strings.Contains(got, "Tag: tagged-x\n") || !strings.Contains(got, "<file path=\"a.txt\">") || !strings.Contains(got, "alpha") {
		t.Errorf("/status's prompt = %q, want the echo's output and a.txt's content", got)
	}
	if got := first(reqs[3]); !strings.Contains(got, "Plugin says hi to Ada.") {
		t.Errorf("the plugin command's prompt = %q", got)
	}
	var desc string
	for _, tl := range reqs[3].Tools {
		if tl.Name == "Agent" {
			desc = tl.Description
		}
	}
	if !strings.Contains(desc, "tools:helper") || !strings.Contains(desc, "helps from the plugin") {
		t.Errorf("the Agent tool's description = %q, want the plugin's agent tools:helper", desc)
	}
	if names := reqs[1].ToolNames(); !slices.Contains(names, "Bash") {
		t.Errorf("the untrusted run's tools = %v", names)
	}
}

// TestAgentSDKBuiltins runs testdata/sdk/builtins.mjs: /cost, /context,
// /model and /clear in one streaming session of the real SDK, answered by
// Gantry without the model; the model sees the new model after /model and
// an empty conversation after /clear; supportedModels() is the fake
// server's model list.
func TestAgentSDKBuiltins(t *testing.T) {
	if testing.Short() {
		t.Skip("builds gantry and runs node")
	}
	node, sdkDir := agentSDK(t)
	bin := buildGantry(t)
	work, home := t.TempDir(), t.TempDir()
	srv := llmtest.NewServer(t)
	reply := func(text string) llmtest.Reply {
		r := llmtest.TextReply(text)
		r.Usage = llm.Usage{InputTokens: 100, OutputTokens: 20}
		return r
	}
	srv.Script(reply("one"), reply("two"), reply("three"))
	srv.SetModels(llm.ModelInfo{ID: "claude-sonnet-4-5", DisplayName: "Claude Sonnet 4.5"}, llm.ModelInfo{ID: "claude-haiku-4-5", DisplayName: "Claude Haiku 4.5"})
	sdkProgram{Name: "builtins.mjs", Marker: "SDK-BUILTINS-OK", Node: node, SDKDir: sdkDir, Bin: bin, Work: work, Home: home, Srv: srv}.run(t)
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("model requests = %d, want 3 (the commands do not ask the model)", len(reqs))
	}
	if reqs[0].Model != "claude-sonnet-4-5" || reqs[1].Model != "claude-haiku-4-5" {
		t.Errorf("models = %q, %q; want /model to switch to claude-haiku-4-5", reqs[0].Model, reqs[1].Model)
	}
	if n := len(reqs[1].Messages); n != 3 {
		t.Errorf("the second question went with %d messages, want 3", n)
	}
	if n := len(reqs[2].Messages); n != 1 {
		t.Errorf("after /clear the model got %d messages, want 1", n)
	}
}
