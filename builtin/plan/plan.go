// Package plan holds the built-in tools EnterPlanMode and ExitPlanMode.
//
// EnterPlanMode switches the session to plan mode, where only read-only and
// planning calls run (by their traits; see package permission).
// ExitPlanMode saves the plan to plan.md in the session directory
// ([tool.Env.SessionDir]) and asks a person to approve it through the
// session's interaction channel (tool.Use[interaction.Channel]):
//
//   - approved: the session returns to the mode it had before
//     EnterPlanMode (default when it started in plan mode), or to the mode
//     the person chose (acceptEdits to let the edits run);
//   - rejected: the person's feedback is the result and the session stays in
//     plan mode;
//   - nobody to ask (a headless run): the result says so, the session stays
//     in plan mode, and the model is told to give the plan as its answer.
//
// Both tools change the mode only through [tool.Result.ContextModifier],
// which the executor applies to the session after the call, in the model's
// order. Their traits are Planning (allowed in plan mode) and not
// concurrency-safe (so the modifier is applied).
package plan

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gantry-dev/gantry/interaction"
	"github.com/gantry-dev/gantry/tool"
)

// Names of the tools.
const (
	EnterName = "EnterPlanMode"
	ExitName  = "ExitPlanMode"
)

// FileName is the name of the plan file in the session directory.
const FileName = "plan.md"

// Tools returns EnterPlanMode and ExitPlanMode.
func Tools() []tool.Tool { return []tool.Tool{NewEnter(), NewExit()} }

const enterDescription = `Switch to plan mode to explore the code and design an approach before changing anything.

Use it for non-trivial work: a feature touching several files, a change with more than one reasonable approach, anything where the user should agree on the approach first. In plan mode only read-only tools (Read, Glob, Grep, read-only shell commands, …) and planning tools run; edits and commands that change things are refused. When the plan is ready, present it with ExitPlanMode for the user's approval.`

const enteredText = `Entered plan mode. Explore the code with read-only tools and design the approach; do not edit files or run commands that change anything (they are refused in plan mode). Ask the user with AskUserQuestion if a choice is theirs to make. When the plan is ready, call ExitPlanMode with the plan for the user's approval.`

// NewEnter returns EnterPlanMode. It takes no input.
func NewEnter() tool.Tool {
	return tool.Must(tool.NewNoInput(EnterName, enterDescription,
		func(_ context.Context, env *tool.Env) (*tool.Result, error) {
			if env.Mode == tool.ModePlan {
				return tool.TextResult("The session is already in plan mode. When the plan is ready, call ExitPlanMode with it."), nil
			}
			r := tool.TextResult(enteredText)
			r.ContextModifier = func(e *tool.Env) {
				if e.Mode != tool.ModePlan {
					e.PrePlanMode, e.Mode = e.Mode, tool.ModePlan
				}
			}
			return r, nil
		},
		tool.WithTraits(tool.Traits{ReadOnly: true, NonDestructive: true, Planning: true}),
		tool.WithAnnotations(tool.Annotations{Title: "Enter plan mode", ReadOnlyHint: true, DestructiveHint: new(bool), OpenWorldHint: new(bool)}),
	))
}

// ExitInput is ExitPlanMode's input. Other properties are allowed and
// ignored.
type ExitInput struct {
	// Plan is the plan to present, in Markdown.
	Plan string `json:"plan,omitempty"`
}

var exitSchema = json.RawMessage(`{"type":"object","properties":{"plan":{"type":"string","description":"The plan to present to the user for approval, in Markdown: the approach, the files to change and how, and how to verify the result."}},"additionalProperties":true}`)

const exitDescription = `Present your plan to the user for approval and leave plan mode.

Call it in plan mode once the plan is complete, with the plan in "plan" (Markdown: the approach, the files to change and how, how to verify). If the user approves, the session leaves plan mode and you carry the plan out; if they reject it, their feedback is the result and you stay in plan mode to revise it. Do not use it for research-only tasks; answer those directly.`

// NewExit returns ExitPlanMode.
func NewExit() tool.Tool {
	return tool.Must(tool.NewRaw(ExitName, exitDescription, exitSchema,
		func(ctx context.Context, env *tool.Env, raw json.RawMessage) (*tool.Result, error) {
			var in ExitInput
			if err := json.Unmarshal(raw, &in); err != nil {
				return nil, fmt.Errorf("invalid input: %w", err)
			}
			return exit(ctx, env, in)
		},
		tool.WithTraits(tool.Traits{NonDestructive: true, Planning: true}),
		tool.WithAnnotations(tool.Annotations{Title: "Present the plan", DestructiveHint: new(bool), OpenWorldHint: new(bool)}),
		tool.ValidateFunc(func(_ context.Context, env *tool.Env, in ExitInput) error {
			if env.Mode != tool.ModePlan {
				return fmt.Errorf("the session is not in plan mode (mode %s); there is no plan to present. Go on with the task", env.Mode)
			}
			if strings.TrimSpace(in.Plan) == "" {
				return errors.New(`give the plan to present in "plan"`)
			}
			return nil
		}),
		tool.DescribeFunc(func(in ExitInput) string { return "Present the plan for approval" }),
	))
}

// returnMode is the mode an approved plan returns to by default.
func returnMode(env *tool.Env) tool.Mode {
	if env.PrePlanMode != "" && env.PrePlanMode != tool.ModePlan {
		return env.PrePlanMode
	}
	return tool.ModeDefault
}

func exit(ctx context.Context, env *tool.Env, in ExitInput) (*tool.Result, error) {
	back := returnMode(env)
	file, saveErr := save(env, in.Plan)
	saved := ""
	switch {
	case file != "":
		saved = " The plan is saved at " + file + "."
	case saveErr != nil:
		saved = fmt.Sprintf(" (The plan could not be saved: %v.)", saveErr)
	}
	ch, err := tool.Use[interaction.Channel](env)
	if err != nil {
		ch = interaction.Nobody
	}
	ans, err := interaction.ApprovePlan(ctx, ch, &interaction.PlanRequest{
		Who: interaction.Who{SessionID: env.SessionID}, ToolUseID: env.ToolUseID,
		Plan: in.Plan, PlanFile: file, ReturnMode: back,
	})
	switch {
	case errors.Is(err, interaction.ErrNobody):
		why := "no one is there to ask"
		var ne *interaction.NobodyError
		if errors.As(err, &ne) {
			why = ne.Why
		}
		r := tool.TextResult("Nobody can approve the plan in this session (" + why + "), so the session stays in plan mode and nothing may be changed." +
			saved + " End your turn with the plan as your answer so the user can review it.")
		r.Structured = ExitResult{Approved: false, Mode: tool.ModePlan, PlanFile: file, Unanswered: true}
		return r, nil
	case err != nil:
		return nil, fmt.Errorf("asking for approval of the plan: %w", err)
	}
	if !ans.Approved {
		fb := strings.TrimSpace(ans.Feedback)
		text := "The user did not approve the plan; the session stays in plan mode."
		if fb != "" {
			text += " Their feedback:\n\n" + fb + "\n\nRevise the plan accordingly and present it again with ExitPlanMode."
		} else {
			text += " They gave no reason: ask them what to change (AskUserQuestion) before presenting it again."
		}
		r := tool.TextResult(text + saved)
		r.Structured = ExitResult{Approved: false, Mode: tool.ModePlan, PlanFile: file, Feedback: fb}
		return r, nil
	}
	mode := ans.Mode
	if mode == "" {
		mode = back
	}
	if !allowedReturn(mode, back) {
		return nil, fmt.Errorf("the approval chose mode %q, which leaving plan mode cannot switch to (want %s, %s or %s)", mode, back, tool.ModeDefault, tool.ModeAcceptEdits)
	}
	r := tool.TextResult(fmt.Sprintf("The user approved the plan. The session left plan mode (now %s); carry out the plan.%s", mode, saved))
	r.Structured = ExitResult{Approved: true, Mode: mode, PlanFile: file}
	r.ContextModifier = func(e *tool.Env) {
		if e.Mode == tool.ModePlan {
			e.Mode, e.PrePlanMode = mode, ""
		}
	}
	return r, nil
}

// allowedReturn reports whether an approved plan may switch to mode: the
// mode the session had before, default, or acceptEdits. A person cannot
// escalate to bypassPermissions here (that needs the checks made when a
// session starts), nor "approve" into plan mode.
func allowedReturn(mode, back tool.Mode) bool {
	return mode == back || mode == tool.ModeDefault || mode == tool.ModeAcceptEdits
}

// ExitResult is ExitPlanMode's structured result.
type ExitResult struct {
	Approved bool      `json:"approved"`
	Mode     tool.Mode `json:"mode"`
	PlanFile string    `json:"plan_file,omitempty"`
	Feedback string    `json:"feedback,omitempty"`
	// Unanswered is true when nobody could be asked.
	Unanswered bool `json:"unanswered,omitempty"`
}

// save writes the plan to the session directory; "" without one.
func save(env *tool.Env, plan string) (string, error) {
	if env.SessionDir == "" {
		return "", nil
	}
	if err := os.MkdirAll(env.SessionDir, 0o700); err != nil {
		return "", err
	}
	path := filepath.Join(env.SessionDir, FileName)
	tmp, err := os.CreateTemp(env.SessionDir, "."+FileName+".tmp*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.WriteString(strings.TrimRight(plan, "\n") + "\n"); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return "", err
	}
	return path, nil
}
