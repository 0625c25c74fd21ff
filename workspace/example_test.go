package workspace_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/gantry-dev/gantry/agent"
	"github.com/gantry-dev/gantry/executor"
	"github.com/gantry-dev/gantry/llm/anthropic"
	"github.com/gantry-dev/gantry/workspace"
)

// An SDK program gets the session `gantry -p` runs in: the settings of the
// folder, the permission engine, hooks, MCP servers and the built-in tools,
// then an agent over it.
func Example_agent() {
	ctx := context.Background()
	ws, err := workspace.Open(ctx, workspace.Options{Dir: ".", Mode: "acceptEdits"})
	if err != nil {
		log.Fatal(err)
	}
	ag, err := agent.New(ctx, agent.Options{Provider: anthropic.New(anthropic.Options{}), Workspace: ws})
	if err != nil {
		log.Fatal(err)
	}
	defer ag.Close()
	defer ws.Close()
	res, err := ag.Prompt(ctx, "Summarise README.md in one line.")
	fmt.Println(res.Text, err)
}

// One tool call through the workspace's pipeline (validation, hooks,
// permission decision), as `gantry tools call` does.
func ExampleWorkspace_Executor() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("hello\n"), 0o644)
	env := func(k string) string { return map[string]string{"HOME": dir}[k] }

	ctx := context.Background()
	ws, err := workspace.Open(ctx, workspace.Options{Dir: dir, Getenv: env, PolicyPath: "-"})
	if err != nil {
		log.Fatal(err)
	}
	defer ws.Close()
	in, _ := json.Marshal(map[string]string{"file_path": filepath.Join(dir, "notes.txt")})
	out, err := ws.Executor().RunOne(ctx, ws.Session(), executor.Call{ID: "1", Name: "Read", Input: in})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: %q\n", out.Decision.Behavior, out.Result.Content[0].Text)
	// Output: allow: "     1\thello\n"
}
