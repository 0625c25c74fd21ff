package streamjson

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/gantry-dev/gantry/hook"
	"github.com/gantry-dev/gantry/interaction"
	"github.com/gantry-dev/gantry/settings"
	"github.com/gantry-dev/gantry/tool"
)

// PermissionChannel is an [interaction.Channel] that asks the SDK: every
// request becomes a can_use_tool control request, answered by the SDK
// program's canUseTool callback (the CLI's --permission-prompt-tool
// stdio). Permission requests carry the call and Gantry's suggested allow
// rules (permission_suggestions); questions go as a call of
// AskUserQuestion and plans as a call of ExitPlanMode, as the reference
// agent sends them. Elicitations and folder trust have nobody to ask.
type PermissionChannel struct {
	Conn *Conn
	// SetMode, if set, applies a setMode permission update of an answer.
	SetMode func(tool.Mode) error
}

// canUseTool is the can_use_tool request.
type canUseTool struct {
	Subtype     string             `json:"subtype"`
	ToolName    string             `json:"tool_name"`
	Input       json.RawMessage    `json:"input"`
	Suggestions []PermissionUpdate `json:"permission_suggestions,omitempty"`
	Reason      string             `json:"decision_reason,omitempty"`
	ToolUseID   string             `json:"tool_use_id"`
	Description string             `json:"description,omitempty"`
	AgentID     string             `json:"agent_id,omitempty"`
}

// PermissionUpdate is a permission change an answer may ask for (the
// SDK's PermissionUpdate). Gantry applies addRules with behavior allow
// (to the session or a settings file) and setMode.
type PermissionUpdate struct {
	Type        string      `json:"type"`
	Rules       []RuleValue `json:"rules,omitempty"`
	Behavior    string      `json:"behavior,omitempty"`
	Mode        tool.Mode   `json:"mode,omitempty"`
	Destination string      `json:"destination"`
	Directories []string    `json:"directories,omitempty"`
}

// RuleValue is a rule of a [PermissionUpdate]: Bash with "npm run *" is
// the rule Bash(npm run *).
type RuleValue struct {
	ToolName    string `json:"toolName"`
	RuleContent string `json:"ruleContent,omitempty"`
}

func (r RuleValue) String() string {
	if r.RuleContent == "" {
		return r.ToolName
	}
	return r.ToolName + "(" + r.RuleContent + ")"
}

// ruleValue parses a Gantry rule ("Bash(npm run *)").
func ruleValue(rule string) RuleValue {
	if i := strings.IndexByte(rule, '('); i > 0 && strings.HasSuffix(rule, ")") {
		return RuleValue{ToolName: rule[:i], RuleContent: rule[i+1 : len(rule)-1]}
	}
	return RuleValue{ToolName: rule}
}

// PermissionResult is the SDK's answer to can_use_tool.
type PermissionResult struct {
	Behavior           string             `json:"behavior"`
	UpdatedInput       json.RawMessage    `json:"updatedInput,omitempty"`
	UpdatedPermissions []PermissionUpdate `json:"updatedPermissions,omitempty"`
	Message            string             `json:"message,omitempty"`
	Interrupt          bool               `json:"interrupt,omitempty"`
}

// destinations maps the SDK's destinations to Gantry's settings scopes.
var destinations = map[string]settings.Scope{
	"userSettings": settings.ScopeUser, "projectSettings": settings.ScopeProject, "localSettings": settings.ScopeLocal,
}

func (p *PermissionChannel) ask(ctx context.Context, req canUseTool) (PermissionResult, error) {
	req.Subtype = "can_use_tool"
	if len(bytes.TrimSpace(req.Input)) == 0 {
		req.Input = json.RawMessage(`{}`)
	}
	raw, err := p.Conn.Request(ctx, req)
	if err != nil {
		return PermissionResult{}, err
	}
	var res PermissionResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return res, fmt.Errorf("streamjson: the can_use_tool answer is not a permission result: %w", err)
	}
	if string(bytes.TrimSpace(res.UpdatedInput)) == "null" {
		res.UpdatedInput = nil
	}
	switch res.Behavior {
	case "allow", "deny":
	default:
		return res, fmt.Errorf("streamjson: the can_use_tool answer has behavior %q (want allow or deny)", res.Behavior)
	}
	return res, nil
}

// Ask implements [interaction.Channel].
func (p *PermissionChannel) Ask(ctx context.Context, req interaction.Request) (interaction.Answer, error) {
	switch r := req.(type) {
	case *interaction.PermissionRequest:
		q := canUseTool{ToolName: r.ToolName, Input: r.Input, Reason: r.Reason, ToolUseID: r.ToolUseID, Description: r.Description, AgentID: r.Agent}
		if len(r.Suggestions) > 0 {
			u := PermissionUpdate{Type: "addRules", Behavior: "allow", Destination: "session"}
			for _, s := range r.Suggestions {
				u.Rules = append(u.Rules, ruleValue(s))
			}
			q.Suggestions = []PermissionUpdate{u}
		}
		res, err := p.ask(ctx, q)
		if err != nil {
			return nil, err
		}
		if res.Behavior == "deny" {
			return &interaction.PermissionAnswer{Choice: interaction.Deny, Message: res.Message, Interrupt: res.Interrupt}, nil
		}
		a := &interaction.PermissionAnswer{Choice: interaction.AllowOnce}
		if len(res.UpdatedInput) > 0 && !jsonEqual(res.UpdatedInput, r.Input) {
			a.UpdatedInput = res.UpdatedInput
		}
		for _, u := range res.UpdatedPermissions {
			switch {
			case u.Type == "addRules" && u.Behavior == "allow" && len(u.Rules) > 0:
				for _, rv := range u.Rules {
					a.Rules = append(a.Rules, rv.String())
				}
				if scope, ok := destinations[u.Destination]; ok {
					a.Choice, a.Scope = interaction.AllowAlways, scope
				} else if a.Choice == interaction.AllowOnce {
					a.Choice = interaction.AllowSession
				}
			case u.Type == "setMode" && p.SetMode != nil:
				if err := p.SetMode(u.Mode); err != nil {
					return nil, err
				}
			}
		}
		return a, nil
	case *interaction.QuestionRequest:
		in, _ := json.Marshal(map[string]any{"questions": r.Questions})
		res, err := p.ask(ctx, canUseTool{ToolName: "AskUserQuestion", Input: in, ToolUseID: r.ToolUseID, AgentID: r.Agent})
		if err != nil {
			return nil, err
		}
		var filled struct {
			Answers map[string]string `json:"answers"`
		}
		if res.Behavior == "allow" && len(res.UpdatedInput) > 0 {
			if err := json.Unmarshal(res.UpdatedInput, &filled); err != nil {
				return nil, fmt.Errorf("streamjson: the answers to AskUserQuestion: %w", err)
			}
		}
		if len(filled.Answers) == 0 {
			why := "canUseTool gave no answers"
			if res.Behavior == "deny" && res.Message != "" {
				why = res.Message
			}
			return nil, &interaction.NobodyError{Why: why}
		}
		return &interaction.QuestionAnswer{Answers: filled.Answers}, nil
	case *interaction.PlanRequest:
		in, _ := json.Marshal(map[string]string{"plan": r.Plan})
		res, err := p.ask(ctx, canUseTool{ToolName: "ExitPlanMode", Input: in, ToolUseID: r.ToolUseID, AgentID: r.Agent})
		if err != nil {
			return nil, err
		}
		if res.Behavior == "deny" {
			return &interaction.PlanAnswer{Feedback: res.Message}, nil
		}
		return &interaction.PlanAnswer{Approved: true}, nil
	case nil:
		return nil, fmt.Errorf("streamjson: nil request")
	}
	return nil, &interaction.NobodyError{Why: fmt.Sprintf("the SDK's canUseTool answers permissions, questions and plans, not %s requests", req.Kind())}
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

// HookMatcher is one entry of initialize's hooks: the callbacks the SDK
// program registered for an event, for tool names matching Matcher.
type HookMatcher struct {
	Matcher         string   `json:"matcher,omitempty"`
	HookCallbackIDs []string `json:"hookCallbackIds"`
	// Timeout is in seconds (0 = the hook package's default).
	Timeout float64 `json:"timeout,omitempty"`
}

// hookCallback is the hook_callback request.
type hookCallback struct {
	Subtype    string      `json:"subtype"`
	CallbackID string      `json:"callback_id"`
	Input      *hook.Input `json:"input"`
	ToolUseID  string      `json:"tool_use_id,omitempty"`
}

// Hooks returns a hook runner that calls the SDK program's hook callbacks
// through hook_callback control requests: each registration of hooks (by
// event name) becomes a Go callback of a [hook.Manager]. The callback's
// answer is the JSON a command hook prints ({"decision": "block"},
// hookSpecificOutput, …; {"async": true} says nothing). Events Gantry does
// not have are returned in skipped. A callback that fails or times out
// counts as a hook without a verdict (a PreToolUse call is then blocked).
func Hooks(conn *Conn, hooks map[string][]HookMatcher) (r hook.Runner, skipped []string, err error) {
	m, err := hook.NewManager(hook.Options{})
	if err != nil {
		return nil, nil, err
	}
	n := 0
	for name, matchers := range hooks {
		ev := hook.Event(name)
		if !ev.Valid() {
			skipped = append(skipped, name)
			continue
		}
		for _, hm := range matchers {
			for _, id := range hm.HookCallbackIDs {
				cb := callback(conn, ev, id, time.Duration(hm.Timeout*float64(time.Second)))
				if err := m.On(ev, hm.Matcher, cb); err != nil {
					return nil, nil, fmt.Errorf("streamjson: hook %s %q: %w", name, hm.Matcher, err)
				}
				n++
			}
		}
	}
	if n == 0 {
		return nil, skipped, nil
	}
	return m, skipped, nil
}

func callback(conn *Conn, ev hook.Event, id string, timeout time.Duration) hook.Callback {
	return func(ctx context.Context, in *hook.Input) (*hook.Output, error) {
		if timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, timeout)
			defer cancel()
		}
		raw, err := conn.Request(ctx, hookCallback{Subtype: "hook_callback", CallbackID: id, Input: in, ToolUseID: in.ToolUseID})
		if err != nil {
			return nil, err
		}
		var async struct {
			Async bool `json:"async"`
		}
		if json.Unmarshal(raw, &async) == nil && async.Async {
			return nil, nil
		}
		return hook.ParseOutput(ev, raw)
	}
}
