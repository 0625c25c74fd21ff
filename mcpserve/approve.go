package mcpserve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gantry-dev/gantry/interaction"
	"github.com/gantry-dev/gantry/internal/outbuf"
	"github.com/gantry-dev/gantry/tool"
)

// The answers of the approval form.
const (
	ApprovalAllow = "allow" // allow this call once
	ApprovalDeny  = "deny"
)

// ApprovalField is the property of the approval form that holds the
// answer, ApprovalAllow or ApprovalDeny.
const ApprovalField = "decision"

// approvalSchema is the form of an approval request: one required
// single-select string (an untitled enum, understood by every protocol
// version with elicitation), deny by default.
var approvalSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		ApprovalField: map[string]any{
			"type":        "string",
			"title":       "Allow this call?",
			"description": `"allow" runs this one call; "deny" refuses it.`,
			"enum":        []any{ApprovalAllow, ApprovalDeny},
			"default":     ApprovalDeny,
		},
	},
	"required": []any{ApprovalField},
}

// The answers of the plan form.
const (
	PlanApprove            = "approve"
	PlanApproveAcceptEdits = "approve_accept_edits"
	PlanKeepPlanning       = "keep_planning"
)

// Elicitation returns the [interaction.Channel] of a served session: every
// request goes to the user of the MCP client that made the call, as a form
// elicitation ([Client.Elicit]). Give it to the session's workspace (or
// agent) as its interaction channel.
//
//   - Permission: the message names the tool, describes the call in one
//     line and says why it asks ([ApprovalMessage]); the form has one field,
//     [ApprovalField], "allow" (this call, once) or "deny" (the default).
//     Only an accepted "allow" allows; a deny, a decline or a dismissal
//     denies with a reason the model can act on.
//   - Questions (AskUserQuestion): one field per question ("q1", "q2", …;
//     an enum of the option labels, a free text for multi-select and
//     "q1_other" for an answer in the user's own words).
//   - Plan approval (ExitPlanMode): the plan as the message; a field
//     "decision" ([PlanApprove], [PlanApproveAcceptEdits],
//     [PlanKeepPlanning]) and a "feedback" text.
//   - Elicitations of MCP servers Gantry uses are passed on to the client
//     (form mode), the server's name first in the message.
//   - Folder trust, URL elicitations: nobody to ask.
//
// When the call did not come from an MCP client, the client has no
// elicitation capability, or the call came over protocol 2026-07-28+ (where
// a server cannot ask mid-call), the request fails with an
// [interaction.NobodyError] that says so: the call is denied, the question
// unanswered, the plan stays a plan. Text from the call is shown escaped.
func Elicitation() interaction.Channel { return elicitChannel{} }

type elicitChannel struct{}

// nobodyWhy says why the client cannot be asked, or "" if it can.
func nobodyWhy(err error) string {
	switch {
	case errors.Is(err, errMRTR):
		return "it needs the user's answer and on this MCP protocol version (2026-07-28 or later) the server cannot ask the user during a call"
	case errors.Is(err, ErrUnsupported):
		return "it needs the user's answer and this MCP client cannot ask its user (it does not support elicitation)"
	}
	return ""
}

// permissionFix tells the model what to do about a call nobody can
// approve.
const permissionFix = ". Do not retry it; ask the user to allow it in the server's configuration (for example gantry mcp serve --allowedTools), or do without it"

// elicit sends one form and sorts out the errors; fix is added to the
// reason when nobody can be asked.
func elicit(ctx context.Context, p *mcp.ElicitParams, fix string) (*mcp.ElicitResult, error) {
	c, ok := ClientFrom(ctx)
	if !ok {
		return nil, &interaction.NobodyError{Why: "it needs the user's answer and the call was not made by an MCP client that can be asked" + fix}
	}
	res, err := c.Elicit(ctx, p)
	switch {
	case err == nil:
		return res, nil
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case nobodyWhy(err) != "":
		return nil, &interaction.NobodyError{Why: nobodyWhy(err) + fix}
	}
	return nil, fmt.Errorf("asking the user failed (%v). Do not retry it unless the user asks you to", err)
}

// Ask implements [interaction.Channel].
func (elicitChannel) Ask(ctx context.Context, req interaction.Request) (interaction.Answer, error) {
	switch r := req.(type) {
	case *interaction.PermissionRequest:
		return askPermission(ctx, r)
	case *interaction.QuestionRequest:
		return askQuestions(ctx, r)
	case *interaction.PlanRequest:
		return askPlan(ctx, r)
	case *interaction.ElicitationRequest:
		return forwardElicitation(ctx, r)
	case nil:
		return nil, errors.New("mcpserve: nil request")
	}
	return nil, &interaction.NobodyError{Why: fmt.Sprintf("an MCP client is not asked about %s", req.Kind())}
}

func askPermission(ctx context.Context, r *interaction.PermissionRequest) (interaction.Answer, error) {
	res, err := elicit(ctx, &mcp.ElicitParams{Message: ApprovalMessage(r), RequestedSchema: approvalSchema}, permissionFix)
	if err != nil {
		return nil, err
	}
	deny := func(msg string) (interaction.Answer, error) {
		return &interaction.PermissionAnswer{Choice: interaction.Deny, Message: msg}, nil
	}
	switch res.Action {
	case interaction.ElicitAccept:
		if v, _ := res.Content[ApprovalField].(string); v == ApprovalAllow {
			return &interaction.PermissionAnswer{Choice: interaction.AllowOnce}, nil
		}
		return deny("the user denied this call. Do not retry it; ask the user how to proceed")
	case interaction.ElicitDecline:
		return deny("the user declined to approve this call. Do not retry it; ask the user how to proceed")
	default: // "cancel", or anything a client may invent
		return deny("the user dismissed the approval request without answering. Do not retry it unless the user asks you to")
	}
}

func askQuestions(ctx context.Context, r *interaction.QuestionRequest) (interaction.Answer, error) {
	props := map[string]any{}
	var b strings.Builder
	b.WriteString("The assistant asks:\n")
	for i, q := range r.Questions {
		key := fmt.Sprintf("q%d", i+1)
		var labels []any
		for _, o := range q.Options {
			labels = append(labels, o.Label)
		}
		fmt.Fprintf(&b, "\n%s. [%s] %s\n", key, interaction.DisplayLine(q.Header, 40), interaction.DisplayLine(q.Question, maxApprovalLine))
		for _, o := range q.Options {
			fmt.Fprintf(&b, "   - %s: %s\n", interaction.DisplayLine(o.Label, 80), interaction.DisplayLine(o.Description, 200))
		}
		if q.MultiSelect {
			props[key] = map[string]any{"type": "string", "title": interaction.DisplayLine(q.Header, 40),
				"description": "One or more of the options, separated by commas"}
		} else {
			props[key] = map[string]any{"type": "string", "title": interaction.DisplayLine(q.Header, 40), "enum": labels}
		}
		props[key+"_other"] = map[string]any{"type": "string", "title": "Or your own answer to " + key}
	}
	res, err := elicit(ctx, &mcp.ElicitParams{Message: b.String(), RequestedSchema: map[string]any{"type": "object", "properties": props}}, "")
	if err != nil {
		return nil, err
	}
	if res.Action != interaction.ElicitAccept {
		return nil, &interaction.NobodyError{Why: "the user " + res.Action + "d the questions instead of answering them"}
	}
	ans := &interaction.QuestionAnswer{Answers: map[string]string{}}
	for i, q := range r.Questions {
		key := fmt.Sprintf("q%d", i+1)
		a, _ := res.Content[key+"_other"].(string)
		if strings.TrimSpace(a) == "" {
			a, _ = res.Content[key].(string)
		}
		if a = strings.TrimSpace(a); a != "" {
			ans.Answers[q.Question] = a
		}
	}
	return ans, nil
}

var planSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"decision": map[string]any{"type": "string", "title": "Carry out this plan?",
			"enum": []any{PlanApprove, PlanApproveAcceptEdits, PlanKeepPlanning}, "default": PlanKeepPlanning},
		"feedback": map[string]any{"type": "string", "title": "What should change (when you keep planning)"},
	},
	"required": []any{"decision"},
}

func askPlan(ctx context.Context, r *interaction.PlanRequest) (interaction.Answer, error) {
	msg := "The assistant presents a plan for your approval:\n\n" + outbuf.EscapeDisplay(r.Plan)
	res, err := elicit(ctx, &mcp.ElicitParams{Message: msg, RequestedSchema: planSchema}, "")
	if err != nil {
		return nil, err
	}
	if res.Action != interaction.ElicitAccept {
		return &interaction.PlanAnswer{Feedback: "The user " + res.Action + "d the plan without saying what to change."}, nil
	}
	fb, _ := res.Content["feedback"].(string)
	switch d, _ := res.Content["decision"].(string); d {
	case PlanApprove:
		return &interaction.PlanAnswer{Approved: true}, nil
	case PlanApproveAcceptEdits:
		return &interaction.PlanAnswer{Approved: true, Mode: tool.ModeAcceptEdits}, nil
	}
	return &interaction.PlanAnswer{Feedback: strings.TrimSpace(fb)}, nil
}

func forwardElicitation(ctx context.Context, r *interaction.ElicitationRequest) (interaction.Answer, error) {
	if r.URL != "" {
		return nil, &interaction.NobodyError{Why: "a URL elicitation of an MCP server cannot be passed on to the client"}
	}
	p := &mcp.ElicitParams{Message: fmt.Sprintf("[%s] %s", interaction.DisplayLine(r.Server, 64), r.Message)}
	if len(r.Schema) > 0 {
		p.RequestedSchema = json.RawMessage(r.Schema)
	}
	res, err := elicit(ctx, p, "")
	if err != nil {
		return nil, err
	}
	return &interaction.ElicitationAnswer{Action: res.Action, Content: res.Content}, nil
}

// maxApprovalLine bounds the one-line description of a call in an
// approval message (runes).
const maxApprovalLine = 300

// ApprovalMessage is the message of the approval form: the tool, a
// one-line description of the call (at most 300 characters) and why it
// asks. Text that comes from the call is shown escaped (control and
// invisible characters as visible escapes), so it cannot reorder or hide
// what the person reads.
func ApprovalMessage(r *interaction.PermissionRequest) string {
	desc := r.Description
	if desc == "" {
		desc = r.ToolName
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Allow Gantry to run %s?\n\n", interaction.DisplayLine(r.ToolName, 64))
	fmt.Fprintf(&b, "Call: %s\n", interaction.DisplayLine(desc, maxApprovalLine))
	if r.Reason != "" {
		fmt.Fprintf(&b, "Needs approval because: %s\n", interaction.DisplayLine(r.Reason, maxApprovalLine))
	}
	if r.Rule != "" {
		fmt.Fprintf(&b, "Rule: %s\n", interaction.DisplayLine(r.Rule, 120))
	}
	b.WriteString("\nChoose allow to run this call once, or deny.")
	return b.String()
}
