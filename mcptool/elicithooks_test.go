package mcptool

import (
	"context"
	"errors"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gantry-dev/gantry/hook"
)

func TestElicitHooks(t *testing.T) {
	params := &mcp.ElicitParams{Message: "Your name?", RequestedSchema: map[string]any{"type": "object"}}
	person := func(asked *int) ElicitFunc {
		return func(context.Context, string, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			*asked++
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
		}
	}
	cases := []struct {
		name      string
		hooks     func(in *hook.Input) (*hook.Output, error)
		wantAsked int
		want      string
	}{
		{"no answer: the person is asked", func(*hook.Input) (*hook.Output, error) { return nil, nil }, 1, "accept Ada"},
		{"a hook answers", func(in *hook.Input) (*hook.Output, error) {
			if in.Event == hook.Elicitation {
				return &hook.Output{Elicitation: &hook.ElicitationAnswer{Action: "accept", Content: map[string]any{"name": "Bot"}}}, nil
			}
			return nil, nil
		}, 0, "accept Bot"},
		{"the result is replaced", func(in *hook.Input) (*hook.Output, error) {
			if in.Event == hook.ElicitationResult && in.Action == "accept" && in.Content["name"] == "Ada" {
				return &hook.Output{Elicitation: &hook.ElicitationAnswer{Action: "decline"}}, nil
			}
			return nil, nil
		}, 1, "decline <nil>"},
		{"a failing hook declines", func(*hook.Input) (*hook.Output, error) { return nil, errors.New("crashed") }, 0, "decline <nil>"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var seen []*hook.Input
			asked := 0
			h := hook.RunnerFunc(func(_ context.Context, in *hook.Input) (*hook.Output, error) {
				seen = append(seen, in)
				return tc.hooks(in)
			})
			f := ElicitHooks(h, func(in *hook.Input) { in.CWD = "/p" }, person(&asked))
			res, err := f(context.Background(), "forms", params)
			if err != nil {
				t.Fatal(err)
			}
			got := res.Action + " "
			if res.Content != nil {
				got += res.Content["name"].(string)
			} else {
				got += "<nil>"
			}
			if got != tc.want || asked != tc.wantAsked {
				t.Fatalf("got %q asked %d, want %q asked %d", got, asked, tc.want, tc.wantAsked)
			}
			in := seen[0]
			if in.Event != hook.Elicitation || in.MCPServerName != "forms" || in.Message != "Your name?" || in.CWD != "/p" || string(in.RequestedSchema) != `{"type":"object"}` {
				t.Errorf("input %+v", in)
			}
		})
	}
}
