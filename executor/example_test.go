package executor_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/gantry-dev/gantry/executor"
	"github.com/gantry-dev/gantry/permission"
	"github.com/gantry-dev/gantry/tool"
)

type writeIn struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

// writer runs one instance per call (tool.CallFactory): the instance
// watches the input stream (tool.PartialObserver) to get ready for its
// call, and is released when the call ends (tool.Releaser).
type writer struct{ *tool.FuncTool }

func (w writer) NewCall(id string) tool.Tool { return &writeCall{FuncTool: w.FuncTool, id: id} }

type writeCall struct {
	*tool.FuncTool
	id      string
	preview string
}

// ObservePartial sees valid JSON objects only, and never runs the tool.
func (c *writeCall) ObservePartial(ctx context.Context, env *tool.Env, partial json.RawMessage) {
	var in writeIn
	if json.Unmarshal(partial, &in) == nil && in.Path != "" && in.Path != c.preview {
		c.preview = in.Path
		fmt.Printf("%s: about to write %q\n", c.id, in.Path)
	}
}

func (c *writeCall) Call(ctx context.Context, env *tool.Env, input json.RawMessage) (*tool.Result, error) {
	var in writeIn
	if err := json.Unmarshal(input, &in); err != nil {
		return nil, err
	}
	return tool.TextResult(fmt.Sprintf("wrote %d bytes to %s (prepared for %s)", len(in.Content), in.Path, c.preview)), nil
}

func (c *writeCall) Release() { fmt.Printf("%s: released\n", c.id) }

func allow() permission.Decider {
	return permission.DeciderFunc(func(context.Context, *permission.Request) (permission.Decision, error) {
		return permission.Decision{Behavior: tool.Allow}, nil
	})
}

func ExampleStream_Partial() {
	w := writer{tool.Must(tool.NewText("Write", "Writes a file.", func(context.Context, *tool.Env, writeIn) (string, error) {
		return "", fmt.Errorf("runs per call")
	}))}
	r, _ := executor.NewMapResolver(w)
	e := executor.New(r, executor.Options{Decider: allow(), PartialInterval: -1})
	st := e.Stream(context.Background(), executor.NewSharedEnv(&tool.Env{WorkDir: "/w"}))

	// The agent loop hands every input delta over while the model streams.
	full := `{"path":"notes.txt","content":"hello"}`
	st.Partial("toolu_1", "Write", nil)
	for _, n := range []int{11, 20, 30, len(full)} {
		st.Partial("toolu_1", "Write", []byte(full[:n]))
	}
	st.Add(executor.Call{ID: "toolu_1", Name: "Write", Input: json.RawMessage(full)})
	b := st.Wait()
	fmt.Println(b.Outcomes[0].Result.TextContent())
	// Output:
	// toolu_1: about to write "no"
	// toolu_1: about to write "notes.txt"
	// toolu_1: released
	// wrote 5 bytes to notes.txt (prepared for notes.txt)
}
