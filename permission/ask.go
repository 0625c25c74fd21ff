package permission

import (
	"context"
	"errors"
	"fmt"

	"github.com/gantry-dev/gantry/interaction"
	"github.com/gantry-dev/gantry/settings"
	"github.com/gantry-dev/gantry/tool"
)

// ResolveAsk turns a decision into a final one (Allow or Deny). It is the
// one place where an Ask is answered; the executor calls it for every
// decision, and so does anything else that runs calls.
//
//   - Allow and Deny are returned as they are.
//   - An Ask (or a Passthrough, which a final decision must not be) is
//     denied in dontAsk mode, denied with "nobody can approve" when answer
//     is nil, and otherwise answered by answer.
//   - answer must return Allow or Deny; anything else, an error (including
//     one wrapping [interaction.ErrNobody]; an [interaction.NobodyError]
//     gives its words) or a cancelled ctx is a deny whose reason says why.
//
// Source is "callback" unless answer set one; a deny always carries a
// reason the model can act on.
func ResolveAsk(ctx context.Context, req *Request, d Decision, answer CanUseTool) Decision {
	switch d.Behavior {
	case tool.Allow, tool.Deny:
		return d
	}
	d.Behavior = tool.Ask
	if req != nil && req.Env != nil && req.Env.Mode == tool.ModeDontAsk {
		return dontAsk(d)
	}
	if answer == nil {
		return nobody(d)
	}
	if ctx.Err() != nil {
		return Decision{Behavior: tool.Deny, Source: "callback", Rule: d.Rule, Reason: "cancelled while asking for permission"}
	}
	ans, err := answer(ctx, req, d)
	var why *interaction.NobodyError
	switch {
	case errors.As(err, &why):
		return Decision{Behavior: tool.Deny, Source: "default", Rule: d.Rule,
			Reason: orDefault(d.Reason, "this call needs approval") + "; " + why.Why}
	case errors.Is(err, interaction.ErrNobody):
		return nobody(d)
	case err != nil && ctx.Err() != nil:
		return Decision{Behavior: tool.Deny, Source: "callback", Rule: d.Rule, Reason: "cancelled while asking for permission"}
	case err != nil:
		return Decision{Behavior: tool.Deny, Source: "callback", Rule: d.Rule,
			Reason: fmt.Sprintf("asking for permission failed (%v)", err)}
	}
	if ans.Source == "" {
		ans.Source = "callback"
	}
	switch ans.Behavior {
	case tool.Allow:
		if ans.Checked == nil {
			// The files the asking decision checked are the files the
			// call uses (an updated input names its own paths, which the
			// tool then resolves itself: they are not keys here).
			ans.Checked = d.Checked
		}
	case tool.Deny:
		if ans.Reason == "" {
			ans.Reason = "denied by the user"
		}
	default:
		ans.Behavior = tool.Deny
		ans.Reason = orDefault(ans.Reason, "the permission callback gave no answer")
	}
	return ans
}

// dontAsk is the deny of an Ask in dontAsk mode.
func dontAsk(d Decision) Decision {
	d.Behavior = tool.Deny
	d.Source = "mode"
	d.Reason = orDefault(d.Reason, "this call needs approval") + "; the session does not ask for approval (dontAsk mode)"
	return d
}

// nobody is the deny of an Ask that nobody can answer.
func nobody(d Decision) Decision {
	return Decision{Behavior: tool.Deny, Source: "default", Rule: d.Rule,
		Reason: orDefault(d.Reason, "this call needs approval") + "; nobody can approve it in this session"}
}

// Updater is a [Decider] that takes rule updates: what "allow for this
// session" and "always allow" need. [*Engine] implements it.
type Updater interface {
	// Suggest returns the allow rules that would let this call (and ones
	// like it) run without asking.
	Suggest(req *Request) []string
	// Apply adds an update to the decider (and to a settings file unless
	// its destination is the session); nil paths mean the decider's own.
	Apply(u Update, paths map[settings.Scope]string) error
	// WritableScopes lists the scopes "always allow" may write to, the
	// default first.
	WritableScopes() []settings.Scope
}

var _ Updater = (*Engine)(nil)

// WritableScopes implements [Updater]: the local, project and user scopes
// that have a file in [Options.SettingsPaths], in that order.
func (e *Engine) WritableScopes() []settings.Scope {
	var out []settings.Scope
	for _, s := range []settings.Scope{settings.ScopeLocal, settings.ScopeProject, settings.ScopeUser} {
		if e.cfg.SettingsPaths[s] != "" {
			out = append(out, s)
		}
	}
	return out
}

// AskChannel returns the [CanUseTool] that asks a person through ch: it
// sends an [interaction.PermissionRequest] (the call, a one-line
// description, why it asks, the rules "always allow" would add and where
// they may be written) and turns the answer into a decision:
//
//   - AllowOnce allows the call;
//   - AllowSession adds the rules to up for the rest of the session, then
//     allows;
//   - AllowAlways writes the rules to the chosen settings file through up
//     (and adds them to the session), then allows;
//   - Deny denies with the person's message (and Interrupt).
//
// With a nil up (or no rules to add) the session and always choices are
// not offered and count as AllowOnce if given; a rule that cannot be saved
// still allows this call and says so in the reason. who labels the asking
// agent. An error from ch is returned as is (wrapped), so [ResolveAsk] can
// tell "nobody can answer" from a failure.
func AskChannel(ch interaction.Channel, up Updater, who interaction.Who) CanUseTool {
	return func(ctx context.Context, req *Request, suggested Decision) (Decision, error) {
		pr := &interaction.PermissionRequest{Who: who, Input: req.Input, Reason: suggested.Reason, Rule: suggested.Rule}
		pr.ToolName = req.Name
		if req.Tool != nil {
			if pr.ToolName == "" {
				pr.ToolName = req.Tool.Spec().Name
			}
			pr.Description = tool.Describe(req.Tool, req.Input)
		}
		if req.Env != nil {
			pr.ToolUseID, pr.Mode, pr.WorkDir = req.Env.ToolUseID, req.Env.Mode, req.Env.WorkDir
			if pr.SessionID == "" {
				pr.SessionID = req.Env.SessionID
			}
		}
		if up != nil && suggested.Source != "safety" {
			pr.Suggestions = up.Suggest(req)
			if len(pr.Suggestions) > 0 {
				pr.Scopes = up.WritableScopes()
			}
		}
		ans, err := interaction.AskPermission(ctx, ch, pr)
		if err != nil {
			return Decision{}, fmt.Errorf("permission: asking: %w", err)
		}
		if ans.Choice == interaction.Deny {
			return Decision{Behavior: tool.Deny, Source: "user", Rule: suggested.Rule, Interrupt: ans.Interrupt,
				Reason: orDefault(ans.Message, "the user denied this call")}, nil
		}
		d := Decision{Behavior: tool.Allow, Source: "user", UpdatedInput: ans.UpdatedInput, Reason: "the user allowed this call"}
		rules := ans.Rules
		if len(rules) == 0 {
			rules = pr.Suggestions
		}
		if up == nil || len(rules) == 0 || ans.Choice == interaction.AllowOnce {
			return d, nil
		}
		u := Update{Destination: ToSession, Kind: settings.Allow, Rules: rules}
		if ans.Choice == interaction.AllowAlways {
			scope := ans.Scope
			if scope == "" && len(pr.Scopes) > 0 {
				scope = pr.Scopes[0]
			}
			if scope != "" {
				u.Destination = Destination(scope)
			}
		}
		if err := up.Apply(u, nil); err != nil {
			d.Reason += fmt.Sprintf(" (its rule could not be saved: %v)", err)
			return d, nil
		}
		d.Reason = fmt.Sprintf("the user allowed this call and added %v (%s)", rules, u.Destination)
		return d, nil
	}
}
