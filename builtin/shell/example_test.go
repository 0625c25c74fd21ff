package shell_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/gantry-dev/gantry/builtin/shell"
	"github.com/gantry-dev/gantry/tool"
)

// A session owner provides the task manager and closes it at the end.
func ExampleTools() {
	tasks := shell.NewJobs()
	defer tasks.Close()
	env := &tool.Env{WorkDir: os.TempDir(), ToolResultsDir: os.TempDir(), Services: &tool.Services{}}
	tool.Provide(env.Services, tasks)

	tools := shell.Tools(shell.Options{})
	bash := tools[0]
	r, err := bash.Call(context.Background(), env, json.RawMessage(`{"command":"echo hello; exit 1"}`))
	if err != nil {
		panic(err)
	}
	fmt.Println(r.TextContent())
	fmt.Println("is_error:", r.IsError)
	// Output:
	// hello
	//
	// Exit code 1
	// is_error: true
}
