package executor

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/permission"
	"github.com/gantry-dev/gantry/tool"
)

// TestEnvCanUseTool: a tool that starts sub-work asks the session's
// permission decision through tool.Env.CanUseTool before it acts — rules,
// mode, the tool's own check and the ask callback — and learns which
// model message asked for it.
func TestEnvCanUseTool(t *testing.T) {
	type subIn struct {
		Tool  string         `json:"tool"`
		Input map[string]any `json:"input"`
	}
	var seen []string
	runner := tool.Must(tool.NewText("Runner", "Runs another tool.", func(ctx context.Context, env *tool.Env, in subIn) (string, error) {
		if env.CanUseTool == nil {
			return "", nil
		}
		raw, _ := json.Marshal(in.Input)
		r, err := env.CanUseTool(ctx, in.Tool, raw)
		if err != nil {
			return "", err
		}
		seen = append(seen, env.MessageID)
		return string(r.Behavior) + ": " + r.Reason + " " + string(r.UpdatedInput), nil
	}, tool.WithTraits(tool.ReadOnlyTraits)))
	type pathIn struct {
		Path string `json:"path"`
	}
	writer := tool.Must(tool.NewText("Writer", "Writes.", func(context.Context, *tool.Env, pathIn) (string, error) { return "", nil }))
	reader := tool.Must(tool.NewText("Reader", "Reads.", func(context.Context, *tool.Env, pathIn) (string, error) { return "", nil }, tool.ReadOnly()))
	res, err := NewMapResolver(runner, writer, reader)
	if err != nil {
		t.Fatal(err)
	}
	var asked []string
	ex := New(res, Options{CanUseTool: func(_ context.Context, req *permission.Request, d permission.Decision) (permission.Decision, error) {
		asked = append(asked, req.Name+" "+string(req.Input))
		if strings.Contains(string(req.Input), "ok") {
			return permission.Decision{Behavior: tool.Allow, UpdatedInput: json.RawMessage(`{"path":"ok2"}`)}, nil
		}
		return permission.Decision{Behavior: tool.Deny, Reason: "the user said no"}, nil
	}})
	sess := NewSharedEnv(&tool.Env{WorkDir: t.TempDir(), Mode: tool.ModeDefault})
	cases := []struct{ in, want string }{
		{`{"tool":"Reader","input":{"path":"a"}}`, "allow: "},
		{`{"tool":"Writer","input":{"path":"ok"}}`, `allow:  {"path":"ok2"}`},
		{`{"tool":"Writer","input":{"path":"no"}}`, "deny: Permission to use Writer was denied: the user said no"},
		{`{"tool":"Writer","input":{"path":3}}`, "deny: invalid input for Writer"},
		{`{"tool":"Nope","input":{}}`, "deny: "},
	}
	for _, tc := range cases {
		o, err := ex.RunOne(context.Background(), sess, Call{ID: "c1", Name: "Runner", Input: json.RawMessage(tc.in), MessageID: "msg_7"})
		if err != nil {
			t.Fatal(err)
		}
		if got := o.Result.TextContent(); !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s: %q, want prefix %q", tc.in, got, tc.want)
		}
	}
	if len(asked) != 2 || asked[0] != `Writer {"path":"ok"}` {
		t.Errorf("asked %q", asked)
	}
	if len(seen) != len(cases) || seen[0] != "msg_7" {
		t.Errorf("message ids %q", seen)
	}
}
