package hook_test

import (
	"context"
	"fmt"

	"github.com/gantry-dev/gantry/hook"
	"github.com/gantry-dev/gantry/settings"
	"github.com/gantry-dev/gantry/tool"
)

func ExampleManager() {
	m, err := hook.NewManager(hook.Options{Hooks: map[string][]settings.HookMatcher{
		"PreToolUse": {{Matcher: "Bash", Hooks: []settings.HookCommand{{
			Type:    "command",
			Command: `grep -q '"rm ' && { echo "no rm, please" >&2; exit 2; } || exit 0`,
		}}}},
	}})
	if err != nil {
		panic(err)
	}
	// A Go callback that asks before any edit.
	_ = m.On(hook.PreToolUse, "Edit|Write", func(ctx context.Context, in *hook.Input) (*hook.Output, error) {
		return &hook.Output{Decision: tool.Ask, Reason: "edits are reviewed"}, nil
	})
	for _, in := range []*hook.Input{
		{Event: hook.PreToolUse, ToolName: "Bash", ToolInput: []byte(`{"command":"rm -rf build"}`)},
		{Event: hook.PreToolUse, ToolName: "Bash", ToolInput: []byte(`{"command":"ls"}`)},
		{Event: hook.PreToolUse, ToolName: "Edit", ToolInput: []byte(`{"file_path":"a.go"}`)},
		{Event: hook.PreToolUse, ToolName: "Read", ToolInput: []byte(`{"file_path":"a.go"}`)},
	} {
		out, err := m.Run(context.Background(), in)
		if out == nil {
			fmt.Println(in.ToolName, "no hooks", err)
			continue
		}
		fmt.Printf("%s block=%v decision=%q reason=%q\n", in.ToolName, out.Block, out.Decision, out.Reason)
	}
	// Output:
	// Bash block=true decision="deny" reason="no rm, please"
	// Bash block=false decision="" reason=""
	// Edit block=false decision="ask" reason="edits are reviewed"
	// Read no hooks <nil>
}
