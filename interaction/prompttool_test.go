package interaction

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/tool"
)

// policyTool is a permission prompt tool answering with fixed text, and
// recording what it was asked.
func policyTool(t *testing.T, answer string, isErr bool, seen *[]PromptInput) func() (tool.Tool, error) {
	tl := tool.Must(tool.NewRaw("mcp__policy__approve", "approves", json.RawMessage(`{"type":"object"}`),
		func(_ context.Context, _ *tool.Env, raw json.RawMessage) (*tool.Result, error) {
			var in PromptInput
			if err := json.Unmarshal(raw, &in); err != nil {
				t.Errorf("input %s: %v", raw, err)
			}
			*seen = append(*seen, in)
			r := tool.TextResult(answer)
			r.IsError = isErr
			return r, nil
		}))
	return func() (tool.Tool, error) { return tl, nil }
}

// TestPromptToolGetsWholeCommand: the permission prompt tool is asked with
// the call's exact input — the whole command, not a description of it.
func TestPromptToolGetsWholeCommand(t *testing.T) {
	cmd := "sh greet.sh | tee out.txt && " + strings.Repeat("echo more; ", 100)
	in, _ := json.Marshal(map[string]string{"command": cmd, "description": "Run greet.sh"})
	var seen []PromptInput
	pt := &PromptTool{Tool: policyTool(t, `{"behavior":"deny","message":"no"}`, false, &seen)}
	if _, err := pt.Ask(context.Background(), &PermissionRequest{ToolName: "Bash", Input: in, Description: "Run greet.sh"}); err != nil {
		t.Fatal(err)
	}
	var got struct{ Command string }
	if len(seen) != 1 || json.Unmarshal(seen[0].Input, &got) != nil || got.Command != cmd {
		t.Errorf("the prompt tool saw %+v, want the whole command", seen)
	}
}

func TestPromptTool(t *testing.T) {
	ctx := context.Background()
	perm := &PermissionRequest{ToolName: "Bash", Input: json.RawMessage(`{"command":"ls"}`), ToolUseID: "toolu_1"}
	questions := &QuestionRequest{Questions: []Question{{Question: "Which?", Header: "H", Options: []Option{{Label: "a"}, {Label: "b"}}}}}
	cases := []struct {
		name     string
		req      Request
		answer   string
		isErr    bool
		want     Answer
		wantErr  string
		nobody   bool
		wantTool string
	}{
		{name: "allow", req: perm, answer: `{"behavior":"allow","updatedInput":{"command":"ls"}}`, want: &PermissionAnswer{Choice: AllowOnce}, wantTool: "Bash"},
		{name: "allow with a new input", req: perm, answer: ` {"behavior":"allow","updatedInput":{"command":"ls -la"}}` + "\n", want: &PermissionAnswer{Choice: AllowOnce, UpdatedInput: json.RawMessage(`{"command":"ls -la"}`)}},
		{name: "allow, no input", req: perm, answer: `{"behavior":"allow"}`, want: &PermissionAnswer{Choice: AllowOnce}},
		{name: "deny", req: perm, answer: `{"behavior":"deny","message":"no shell in CI"}`, want: &PermissionAnswer{Choice: Deny, Message: "no shell in CI"}},
		{name: "deny interrupt", req: perm, answer: `{"behavior":"deny","message":"stop","interrupt":true}`, want: &PermissionAnswer{Choice: Deny, Message: "stop", Interrupt: true}},
		{name: "unknown behavior", req: perm, answer: `{"behavior":"maybe"}`, wantErr: "maybe"},
		{name: "not JSON", req: perm, answer: `sure, go ahead`, wantErr: "not a JSON object"},
		{name: "trailing text", req: perm, answer: `{"behavior":"allow"} and more`, wantErr: "after its JSON"},
		{name: "updatedInput not an object", req: perm, answer: `{"behavior":"allow","updatedInput":"rm -rf /"}`, wantErr: "not an object"},
		{name: "tool error result", req: perm, answer: `boom`, isErr: true, wantErr: "failed: boom"},
		{name: "questions answered", req: questions, answer: `{"behavior":"allow","updatedInput":{"questions":[],"answers":{"Which?":"b"}}}`,
			want: &QuestionAnswer{Answers: map[string]string{"Which?": "b"}}, wantTool: "AskUserQuestion"},
		{name: "questions not answered", req: questions, answer: `{"behavior":"allow","updatedInput":{"questions":[]}}`, nobody: true},
		{name: "questions denied", req: questions, answer: `{"behavior":"deny","message":"no humans here"}`, nobody: true},
		{name: "plan approved", req: &PlanRequest{Plan: "p"}, answer: `{"behavior":"allow"}`, want: &PlanAnswer{Approved: true}, wantTool: "ExitPlanMode"},
		{name: "plan rejected", req: &PlanRequest{Plan: "p"}, answer: `{"behavior":"deny","message":"too big"}`, want: &PlanAnswer{Feedback: "too big"}},
		{name: "trust", req: &TrustRequest{Dir: "/x"}, answer: `{"behavior":"allow"}`, nobody: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var seen []PromptInput
			p := &PromptTool{Tool: policyTool(t, tc.answer, tc.isErr, &seen)}
			got, err := p.Ask(ctx, tc.req)
			switch {
			case tc.nobody:
				if !errors.Is(err, ErrNobody) {
					t.Fatalf("err %v, want ErrNobody", err)
				}
				return
			case tc.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || errors.Is(err, ErrNobody) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("answer %#v, want %#v", got, tc.want)
			}
			if tc.wantTool != "" && (len(seen) != 1 || seen[0].ToolName != tc.wantTool) {
				t.Errorf("tool saw %+v", seen)
			}
		})
	}
	// The input is the reference agent's shape.
	var seen []PromptInput
	p := &PromptTool{Tool: policyTool(t, `{"behavior":"allow"}`, false, &seen)}
	if _, err := AskPermission(ctx, p, perm); err != nil {
		t.Fatal(err)
	}
	if got := seen[0]; got.ToolName != "Bash" || got.ToolUseID != "toolu_1" || string(got.Input) != `{"command":"ls"}` {
		t.Errorf("input %+v", got)
	}
	// A tool that cannot be found is an error.
	p = &PromptTool{Tool: func() (tool.Tool, error) { return nil, errors.New("no such tool") }}
	if _, err := p.Ask(ctx, perm); err == nil || !strings.Contains(err.Error(), "no such tool") {
		t.Errorf("missing tool: %v", err)
	}
}

func FuzzParsePromptOutput(f *testing.F) {
	for _, s := range []string{`{"behavior":"allow","updatedInput":{"a":1}}`, `{"behavior":"deny","message":"m"}`, `{"behavior":"allow","updatedInput":null}`,
		`{"behavior":"allow","updatedInput":[1]}`, `{}`, `null`, `{"behavior":"allow"}{}`, "  {\"behavior\":\"deny\"}\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		out, err := ParsePromptOutput(text)
		if err != nil {
			return
		}
		if out.Behavior != "allow" && out.Behavior != "deny" {
			t.Fatalf("accepted behavior %q", out.Behavior)
		}
		if len(out.UpdatedInput) > 0 && !isObject(out.UpdatedInput) {
			t.Fatalf("accepted updatedInput %s", out.UpdatedInput)
		}
	})
}
