package mcptool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

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
