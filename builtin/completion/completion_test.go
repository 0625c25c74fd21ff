package completion

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/tool"
)

func TestTools(t *testing.T) {
	byName := map[string]tool.Tool{}
	for _, tl := range Tools() {
		byName[tl.Spec().Name] = tl
	}
	cases := []struct {
		name, input string
		wantErr     string
		want        any
	}{
		{AttemptCompletionName, `{"result":" done \n"}`, "", Completed{Result: "done"}},
		{AttemptCompletionName, `{"result":"done","command":"open index.html"}`, "", Completed{Result: "done", Command: "open index.html"}},
		{AttemptCompletionName, `{"result":"   "}`, "result is empty", nil},
		{NewTaskName, `{"context":"goal: x"}`, "", Handoff{Context: "goal: x"}},
		{NewTaskName, `{"context":""}`, "context is empty", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name+" "+tc.input, func(t *testing.T) {
			tl := byName[tc.name]
			if tl == nil {
				t.Fatalf("no tool %s", tc.name)
			}
			env := &tool.Env{}
			in := json.RawMessage(tc.input)
			if v, ok := tl.(tool.InputValidator); ok {
				err := v.ValidateInput(context.Background(), env, in)
				if tc.wantErr != "" {
					if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
						t.Fatalf("validation error %v, want %q", err, tc.wantErr)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
			} else if tc.wantErr != "" {
				t.Fatal("the tool does not validate its input")
			}
			res, err := tl.Call(context.Background(), env, in)
			if err != nil || res.IsError || res.Structured != tc.want {
				t.Fatalf("res %+v err %v, want structured %+v", res, err, tc.want)
			}
			if pc, ok := tl.(tool.PermissionChecker); !ok || pc.CheckPermission(context.Background(), env, in).Behavior != tool.Allow {
				t.Fatal("a control tool must allow itself")
			}
			if tr := tl.Spec().Traits; !tr.Planning || !tr.NonDestructive {
				t.Fatalf("traits %+v: control tools run in plan mode and destroy nothing", tr)
			}
		})
	}
}

// TestAddKeepsTheCallersTool: a caller's attempt_completion replaces the
// built-in one (no duplicate name), new_task is still added.
func TestAddKeepsTheCallersTool(t *testing.T) {
	mine := tool.Must(tool.NewText(AttemptCompletionName, "Mine.", func(context.Context, *tool.Env, struct{}) (string, error) { return "ok", nil }))
	other := tool.Must(tool.NewText("Other", "x", func(context.Context, *tool.Env, struct{}) (string, error) { return "", nil }))
	in := []tool.Tool{other, mine}
	got := Add(in)
	var names []string
	for _, tl := range got {
		names = append(names, tl.Spec().Name)
	}
	if strings.Join(names, ",") != "Other,attempt_completion,new_task" || got[1] != mine {
		t.Fatalf("tools %v", names)
	}
	if len(in) != 2 {
		t.Fatalf("the caller's slice changed: %d", len(in))
	}
	if n := len(Add(nil)); n != 2 {
		t.Fatalf("Add(nil) gave %d tools", n)
	}
}
