package mcpserve

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gantry-dev/gantry/internal/outbuf"
	"github.com/gantry-dev/gantry/permission"
	"github.com/gantry-dev/gantry/tool"
)

// The answers of the approval form ([ElicitApproval]).
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

// ElicitApproval returns a [permission.CanUseTool] that answers a decision
// that came out as "ask" by asking the user of the MCP client that made
// the call, with a form elicitation ([Client.Elicit]): the message names
// the tool, describes the call in one line ([tool.Describe]) and says why
// it needs approval; the form has one field, [ApprovalField], "allow"
// (this call, once) or "deny" (the default).
//
// Only an accepted form whose answer is "allow" allows the call. Everything
// else denies it, with a reason the model can act on: the user chose deny,
// declined or dismissed the request; the client has no elicitation
// capability (or the call came over protocol 2026-07-28+, where a server
// cannot ask mid-call; [ErrUnsupported]); asking failed; or the call was
// not made through mcpserve. It never returns an error and never sets
// Interrupt (a served call has no run to stop).
//
// Use it with executor.WithCanUseTool in the executor given to [New]. The
// executor asks for one call at a time, so with several clients a pending
// question holds up the others' questions (not their calls that need
// none).
func ElicitApproval() permission.CanUseTool {
	return elicitApproval
}

func elicitApproval(ctx context.Context, req *permission.Request, suggested permission.Decision) (permission.Decision, error) {
	deny := func(reason string) (permission.Decision, error) {
		return permission.Decision{Behavior: tool.Deny, Reason: reason, Rule: suggested.Rule, Source: "callback"}, nil
	}
	c, ok := ClientFrom(ctx)
	if !ok {
		return deny(withWhy(suggested.Reason, "it needs approval and the call was not made by an MCP client that can be asked"))
	}
	res, err := c.Elicit(ctx, &mcp.ElicitParams{Message: ApprovalMessage(req, suggested), RequestedSchema: approvalSchema})
	switch {
	case errors.Is(err, errMRTR):
		return deny(withWhy(suggested.Reason, "it needs the user's approval and on this MCP protocol version (2026-07-28 or later) the server cannot ask the user during a call. "+
			"Do not retry it; ask the user to allow it in the server's configuration (for example gantry mcp serve --allowedTools), or do without it"))
	case errors.Is(err, ErrUnsupported):
		return deny(withWhy(suggested.Reason, "it needs the user's approval and this MCP client cannot ask its user (it does not support elicitation). "+
			"Do not retry it; ask the user to allow it in the server's configuration (for example gantry mcp serve --allowedTools), or do without it"))
	case ctx.Err() != nil:
		return deny("the call was cancelled while waiting for the user's approval")
	case err != nil:
		return deny(withWhy(suggested.Reason, fmt.Sprintf("asking the user for approval failed (%v). Do not retry it unless the user asks you to", err)))
	}
	switch res.Action {
	case "accept":
		if v, _ := res.Content[ApprovalField].(string); v == ApprovalAllow {
			return permission.Decision{Behavior: tool.Allow, Reason: "the user allowed this call once", Rule: suggested.Rule, Source: "callback"}, nil
		}
		return deny("the user denied this call. Do not retry it; ask the user how to proceed")
	case "decline":
		return deny("the user declined to approve this call. Do not retry it; ask the user how to proceed")
	default: // "cancel", or anything a client may invent
		return deny("the user dismissed the approval request without answering. Do not retry it unless the user asks you to")
	}
}

// withWhy joins why the call asked (if known) and why it was denied.
func withWhy(reason, denied string) string {
	if reason == "" {
		return "the call was denied: " + denied
	}
	return reason + "; " + denied
}

// maxApprovalLine bounds the one-line description of a call in an
// approval message (runes).
const maxApprovalLine = 300

// ApprovalMessage is the message of the approval form [ElicitApproval]
// sends: the tool, a one-line description of the call ([tool.Describe],
// at most 300 characters) and the reason of the decision that asked. Text
// that comes from the call is shown escaped (control and invisible
// characters as visible escapes), so it cannot reorder or hide what the
// person reads.
func ApprovalMessage(req *permission.Request, suggested permission.Decision) string {
	name := req.Name
	if name == "" && req.Tool != nil {
		name = req.Tool.Spec().Name
	}
	desc := name
	if req.Tool != nil {
		desc = tool.Describe(req.Tool, req.Input)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Allow Gantry to run %s?\n\n", oneLine(name, 64))
	fmt.Fprintf(&b, "Call: %s\n", oneLine(desc, maxApprovalLine))
	if suggested.Reason != "" {
		fmt.Fprintf(&b, "Needs approval because: %s\n", oneLine(suggested.Reason, maxApprovalLine))
	}
	if suggested.Rule != "" {
		fmt.Fprintf(&b, "Rule: %s\n", oneLine(suggested.Rule, 120))
	}
	b.WriteString("\nChoose allow to run this call once, or deny.")
	return b.String()
}

// oneLine escapes s for display, puts it on one line and cuts it to n
// runes.
func oneLine(s string, n int) string {
	s = outbuf.EscapeDisplay(s)
	s = strings.NewReplacer("\n", `\n`, "\t", " ").Replace(s)
	if r := []rune(s); len(r) > n {
		s = string(r[:n-1]) + "…"
	}
	return s
}
