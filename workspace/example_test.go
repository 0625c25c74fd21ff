package workspace_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"

	"github.com/gantry-dev/gantry/agent"
	"github.com/gantry-dev/gantry/executor"
	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/llm/anthropic"
	"github.com/gantry-dev/gantry/workspace"
)

// An SDK program gets the session `gantry -p` runs in (openCLISession):
// the folder's settings, permission engine, hooks, MCP servers and
// built-in tools; the durable store, the transcript and the checkpoints
// under $GANTRY_HOME; the reminders between turns. TestCLISession runs it
// against the fake API server.
func Example_agent() {
	ctx := context.Background()
	ag, err := openCLISession(ctx, ".", anthropic.New(anthropic.Options{}))
	if err != nil {
		log.Fatal(err)
	}
	defer ag.Close() // closes the workspace too
	res, err := ag.Prompt(ctx, "Summarise README.md in one line.")
	fmt.Println(res.Text, err)
}

// openCLISession is the CLI's session in dir over provider p.
func openCLISession(ctx context.Context, dir string, p llm.Provider) (*agent.Agent, error) {
	ws, err := workspace.Open(ctx, workspace.Options{Dir: dir, Persist: true})
	if err != nil {
		return nil, err
	}
	return agent.New(ctx, agent.Options{Provider: p, Workspace: ws, Closers: []io.Closer{ws}})
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
