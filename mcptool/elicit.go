package mcptool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gantry-dev/gantry/hook"
	"github.com/gantry-dev/gantry/interaction"
)

// ElicitThrough returns an [ElicitFunc] that puts a server's elicitation
// request to a person through ch, as an [interaction.ElicitationRequest]
// (the server's name, its message, the form's schema or the URL to open),
// and returns the person's action and form content. When ch has nobody to
// ask ([interaction.ErrNobody]) the request is declined, as without an
// ElicitFunc; a cancelled ctx or another error is returned to the server
// as an error.
func ElicitThrough(ch interaction.Channel) ElicitFunc {
	return func(ctx context.Context, server string, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		req := &interaction.ElicitationRequest{Server: server, Message: p.Message, URL: p.URL}
		if p.RequestedSchema != nil {
			b, err := json.Marshal(p.RequestedSchema)
			if err != nil {
				return nil, fmt.Errorf("mcptool: elicitation schema: %w", err)
			}
			req.Schema = b
		}
		ans, err := interaction.Elicit(ctx, ch, req)
		switch {
		case errors.Is(err, interaction.ErrNobody):
			return &mcp.ElicitResult{Action: interaction.ElicitDecline}, nil
		case err != nil:
			return nil, err
		}
		res := &mcp.ElicitResult{Action: ans.Action}
		if ans.Action == interaction.ElicitAccept && req.URL == "" {
			res.Content = ans.Content
		}
		return res, nil
	}
}

// ElicitHooks returns an [ElicitFunc] that runs the Elicitation hooks
// before next (a hook's answer is final: the person is not asked) and the
// ElicitationResult hooks on the answer (a hook may replace it) before it
// goes back to the server. base fills the session's fields of each hook
// input (cwd, session, mode); nil leaves them empty. A hook that fails
// (crash, timeout) declines the request: fail closed. A nil next declines
// what no hook answered; a nil h is next.
func ElicitHooks(h hook.Runner, base func(*hook.Input), next ElicitFunc) ElicitFunc {
	if h == nil {
		return next
	}
	return func(ctx context.Context, server string, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		in := func(ev hook.Event) *hook.Input {
			in := &hook.Input{Event: ev, MCPServerName: server, Message: p.Message, URL: p.URL}
			if base != nil {
				base(in)
			}
			if p.RequestedSchema != nil {
				in.RequestedSchema, _ = json.Marshal(p.RequestedSchema)
			}
			return in
		}
		var res *mcp.ElicitResult
		out, err := h.Run(ctx, in(hook.Elicitation))
		switch {
		case err != nil:
			return &mcp.ElicitResult{Action: interaction.ElicitDecline}, nil
		case out != nil && out.Elicitation != nil:
			res = &mcp.ElicitResult{Action: out.Elicitation.Action, Content: out.Elicitation.Content}
		case next == nil:
			res = &mcp.ElicitResult{Action: interaction.ElicitDecline}
		default:
			if res, err = next(ctx, server, p); err != nil {
				return nil, err
			}
		}
		rin := in(hook.ElicitationResult)
		rin.Action, rin.Content = res.Action, res.Content
		out, err = h.Run(ctx, rin)
		switch {
		case err != nil:
			return &mcp.ElicitResult{Action: interaction.ElicitDecline}, nil
		case out != nil && out.Elicitation != nil:
			res = &mcp.ElicitResult{Action: out.Elicitation.Action, Content: out.Elicitation.Content}
		}
		if res.Action != interaction.ElicitAccept || p.URL != "" {
			res.Content = nil
		}
		return res, nil
	}
}
