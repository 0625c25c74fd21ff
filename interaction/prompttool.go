package interaction

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/gantry-dev/gantry/tool"
)

// PromptTool is a [Channel] that lets a tool — normally an MCP server's, as
// named by the CLI's --permission-prompt-tool mcp__server__tool — answer in
// place of a person, so that CI can approve by policy. The shapes are the
// reference agent's:
//
//	input:  {"tool_name": "Bash", "input": {...}, "tool_use_id": "toolu_…"}
//	output: a text result holding {"behavior": "allow", "updatedInput": {...}}
//	        or {"behavior": "deny", "message": "why", "interrupt": false}
//
// Permission requests map directly (allow → [AllowOnce], with updatedInput
// replacing the input when given; deny → [Deny] with the message). A
// question is sent as a call of AskUserQuestion ({"questions": […]}); an
// allow whose updatedInput carries "answers" answers it. A plan is sent as
// a call of ExitPlanMode ({"plan": "…"}); allow approves it, deny rejects it
// with the message as feedback. Elicitations and folder trust, and a
// question the tool does not answer, have nobody to ask ([ErrNobody]).
//
// A tool that fails, returns an error result or an answer of another shape
// is an error (the call is then denied, saying why).
type PromptTool struct {
	// Tool returns the tool to call; it is looked up for every request
	// (MCP tools come and go with their server). Required.
	Tool func() (tool.Tool, error)
	// Env is the environment of the tool's calls (nil = an empty one).
	Env *tool.Env
}

// PromptInput is the input of a permission prompt tool.
type PromptInput struct {
	ToolName  string          `json:"tool_name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
}

// PromptOutput is the answer of a permission prompt tool, the JSON text of
// its result.
type PromptOutput struct {
	// Behavior is "allow" or "deny".
	Behavior string `json:"behavior"`
	// UpdatedInput, with allow, replaces the call's input.
	UpdatedInput json.RawMessage `json:"updatedInput,omitempty"`
	// Message, with deny, tells the model why.
	Message string `json:"message,omitempty"`
	// Interrupt, with deny, stops the run.
	Interrupt bool `json:"interrupt,omitempty"`
}

// ParsePromptOutput reads a permission prompt tool's answer: one JSON
// object (surrounding white space allowed) with behavior "allow" or "deny".
func ParsePromptOutput(text string) (PromptOutput, error) {
	var out PromptOutput
	dec := json.NewDecoder(bytes.NewReader([]byte(text)))
	if err := dec.Decode(&out); err != nil {
		return out, fmt.Errorf("interaction: the permission prompt tool's answer is not a JSON object: %w", err)
	}
	if dec.More() {
		return out, errors.New("interaction: the permission prompt tool's answer has text after its JSON object")
	}
	switch out.Behavior {
	case "allow":
		if string(bytes.TrimSpace(out.UpdatedInput)) == "null" {
			out.UpdatedInput = nil
		}
		if len(out.UpdatedInput) > 0 && !isObject(out.UpdatedInput) {
			return out, errors.New("interaction: the permission prompt tool's updatedInput is not an object")
		}
	case "deny":
	default:
		return out, fmt.Errorf("interaction: the permission prompt tool answered behavior %q (want allow or deny)", out.Behavior)
	}
	return out, nil
}

func isObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{' && json.Valid(raw)
}

// Ask implements [Channel].
func (p *PromptTool) Ask(ctx context.Context, req Request) (Answer, error) {
	switch r := req.(type) {
	case *PermissionRequest:
		out, err := p.call(ctx, PromptInput{ToolName: r.ToolName, Input: r.Input, ToolUseID: r.ToolUseID})
		if err != nil {
			return nil, err
		}
		if out.Behavior == "deny" {
			return &PermissionAnswer{Choice: Deny, Message: out.Message, Interrupt: out.Interrupt}, nil
		}
		a := &PermissionAnswer{Choice: AllowOnce}
		if len(out.UpdatedInput) > 0 && !bytes.Equal(bytes.TrimSpace(out.UpdatedInput), bytes.TrimSpace(r.Input)) {
			a.UpdatedInput = out.UpdatedInput
		}
		return a, nil
	case *QuestionRequest:
		in, _ := json.Marshal(map[string]any{"questions": r.Questions})
		out, err := p.call(ctx, PromptInput{ToolName: "AskUserQuestion", Input: in, ToolUseID: r.ToolUseID})
		if err != nil {
			return nil, err
		}
		var filled struct {
			Answers map[string]string `json:"answers"`
		}
		if out.Behavior == "allow" && len(out.UpdatedInput) > 0 {
			if err := json.Unmarshal(out.UpdatedInput, &filled); err != nil {
				return nil, fmt.Errorf("interaction: the permission prompt tool's answers: %w", err)
			}
		}
		if len(filled.Answers) == 0 {
			why := "it gave no answers"
			if out.Behavior == "deny" && out.Message != "" {
				why = out.Message
			}
			return nil, fmt.Errorf("%w: the permission prompt tool did not answer the questions (%s)", ErrNobody, why)
		}
		return &QuestionAnswer{Answers: filled.Answers}, nil
	case *PlanRequest:
		in, _ := json.Marshal(map[string]string{"plan": r.Plan})
		out, err := p.call(ctx, PromptInput{ToolName: "ExitPlanMode", Input: in, ToolUseID: r.ToolUseID})
		if err != nil {
			return nil, err
		}
		if out.Behavior == "deny" {
			return &PlanAnswer{Feedback: out.Message}, nil
		}
		return &PlanAnswer{Approved: true}, nil
	case nil:
		return nil, errors.New("interaction: nil request")
	}
	return nil, fmt.Errorf("%w (%s: a permission prompt tool answers only permissions, questions and plans)", ErrNobody, req.Kind())
}

func (p *PromptTool) call(ctx context.Context, in PromptInput) (PromptOutput, error) {
	if p.Tool == nil {
		return PromptOutput{}, errors.New("interaction: PromptTool has no tool")
	}
	t, err := p.Tool()
	if err != nil {
		return PromptOutput{}, fmt.Errorf("interaction: permission prompt tool: %w", err)
	}
	if len(in.Input) == 0 {
		in.Input = json.RawMessage(`{}`)
	}
	raw, err := json.Marshal(in)
	if err != nil {
		return PromptOutput{}, fmt.Errorf("interaction: permission prompt tool input: %w", err)
	}
	env := p.Env.Clone()
	env.ToolUseID = in.ToolUseID
	res, err := t.Call(ctx, env, raw)
	if err != nil {
		return PromptOutput{}, fmt.Errorf("interaction: permission prompt tool %s: %w", t.Spec().Name, err)
	}
	if res == nil {
		return PromptOutput{}, fmt.Errorf("interaction: permission prompt tool %s returned nothing", t.Spec().Name)
	}
	if res.IsError {
		return PromptOutput{}, fmt.Errorf("interaction: permission prompt tool %s failed: %s", t.Spec().Name, DisplayLine(res.TextContent(), 300))
	}
	return ParsePromptOutput(res.TextContent())
}
