package plan

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/interaction"
	"github.com/gantry-dev/gantry/tool"
)

func TestEnterPlanMode(t *testing.T) {
	for _, mode := range []tool.Mode{tool.ModeDefault, tool.ModeAcceptEdits, tool.ModeBypassPermissions} {
		env := &tool.Env{Mode: mode}
		r, err := NewEnter().Call(context.Background(), env, json.RawMessage(`{}`))
		if err != nil || r.ContextModifier == nil {
			t.Fatalf("%s: %v %v", mode, r, err)
		}
		if env.Mode != mode {
			t.Fatal("the call changed the environment itself")
		}
		r.ContextModifier(env)
		if env.Mode != tool.ModePlan || env.PrePlanMode != mode {
			t.Errorf("after %s: mode %s, before %s", mode, env.Mode, env.PrePlanMode)
		}
	}
	r, _ := NewEnter().Call(context.Background(), &tool.Env{Mode: tool.ModePlan}, json.RawMessage(`{}`))
	if r.ContextModifier != nil || !strings.Contains(r.TextContent(), "already in plan mode") {
		t.Errorf("in plan mode: %s", r.TextContent())
	}
}

func TestExitPlanMode(t *testing.T) {
	answer := func(a *interaction.PlanAnswer) *tool.Services {
		return tool.Provide(&tool.Services{}, interaction.Channel(interaction.Funcs{Plan: func(context.Context, *interaction.PlanRequest) (*interaction.PlanAnswer, error) {
			return a, nil
		}}))
	}
	cases := []struct {
		name     string
		pre      tool.Mode
		answer   *interaction.PlanAnswer
		wantMode tool.Mode
		wantErr  bool
	}{
		{"back to the mode before", tool.ModeAcceptEdits, &interaction.PlanAnswer{Approved: true}, tool.ModeAcceptEdits, false},
		{"started in plan: default", "", &interaction.PlanAnswer{Approved: true}, tool.ModeDefault, false},
		{"chosen acceptEdits", tool.ModeDefault, &interaction.PlanAnswer{Approved: true, Mode: tool.ModeAcceptEdits}, tool.ModeAcceptEdits, false},
		{"no escalation to bypass", tool.ModeDefault, &interaction.PlanAnswer{Approved: true, Mode: tool.ModeBypassPermissions}, tool.ModePlan, true},
		{"back to bypass it had", tool.ModeBypassPermissions, &interaction.PlanAnswer{Approved: true}, tool.ModeBypassPermissions, false},
		{"rejected", tool.ModeDefault, &interaction.PlanAnswer{Feedback: "more tests"}, tool.ModePlan, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			env := &tool.Env{Mode: tool.ModePlan, PrePlanMode: tc.pre, SessionDir: dir, Services: answer(tc.answer)}
			r, err := NewExit().Call(context.Background(), env, json.RawMessage(`{"plan":"do it","extra":1}`))
			if tc.wantErr {
				if err == nil {
					t.Fatalf("want an error, got %s", r.TextContent())
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.ContextModifier != nil {
				r.ContextModifier(env)
			}
			if env.Mode != tc.wantMode {
				t.Errorf("mode %s, want %s (%s)", env.Mode, tc.wantMode, r.TextContent())
			}
			if b, err := os.ReadFile(filepath.Join(dir, FileName)); err != nil || string(b) != "do it\n" {
				t.Errorf("plan file %q %v", b, err)
			}
		})
	}
	// Outside plan mode and without a plan the input is refused.
	v := NewExit().(tool.InputValidator)
	if err := v.ValidateInput(context.Background(), &tool.Env{Mode: tool.ModeDefault}, json.RawMessage(`{"plan":"p"}`)); err == nil {
		t.Error("accepted outside plan mode")
	}
	if err := v.ValidateInput(context.Background(), &tool.Env{Mode: tool.ModePlan}, json.RawMessage(`{}`)); err == nil {
		t.Error("accepted an empty plan")
	}
}
