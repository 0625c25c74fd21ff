package toolset_test

import (
	"context"
	"fmt"

	"github.com/gantry-dev/gantry/tool"
	"github.com/gantry-dev/gantry/toolset"
)

type readInput struct {
	FilePath string `json:"file_path" jsonschema:"The absolute path of the file"`
}

func ExampleNewPool() {
	ctx := context.Background()

	// Built-in tools are registered once, as factories.
	reg := toolset.NewRegistry()
	reg.MustRegister(toolset.Entry{Name: "Read", Factory: func(ctx context.Context, env *tool.Env) (tool.Tool, error) {
		return tool.NewText("Read", "Reads a file.", func(ctx context.Context, env *tool.Env, in readInput) (string, error) {
			return "contents of " + in.FilePath, nil
		}, tool.ReadOnly())
	}})
	reg.MustRegister(toolset.Entry{Name: "CronList", Tier: toolset.TierAdvanced, Factory: func(ctx context.Context, env *tool.Env) (tool.Tool, error) {
		return tool.NewNoInput("CronList", "Lists scheduled jobs.", func(ctx context.Context, env *tool.Env) (*tool.Result, error) {
			return tool.TextResult("no jobs"), nil
		}, tool.WithDefer(tool.Deferral{ShouldDefer: true, SearchHint: "list scheduled cron jobs"}))
	}})

	// Each session assembles its pool: built-ins, user tools, MCP tools.
	pool, err := toolset.NewPool(ctx, toolset.Options{
		Registry: reg,
		Env:      &tool.Env{WorkDir: "/work"},
		Defer:    true,
		Deny:     []string{"mcp__github__delete_*"},
	})
	if err != nil {
		panic(err)
	}
	issue := tool.Must(tool.NewNoInput("create_issue", "Creates an issue.", func(ctx context.Context, env *tool.Env) (*tool.Result, error) {
		return tool.TextResult("#1"), nil
	}))
	if err := pool.AddMCP("github", issue); err != nil {
		panic(err)
	}

	for _, s := range pool.Specs() {
		fmt.Println(s.Name)
	}
	res, _ := pool.Search("select:CronList", 0)
	fmt.Println(len(res.Tools), "loaded; now sent in full:", len(pool.Specs()), "tools")
	// Output:
	// Read
	// ToolSearch
	// mcp__github__create_issue
	// 1 loaded; now sent in full: 4 tools
}
