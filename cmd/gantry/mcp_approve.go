package main

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"

	"github.com/gantry-dev/gantry/interaction"
	"github.com/gantry-dev/gantry/mcptool"
	"github.com/gantry-dev/gantry/settings"
)

// mcpApprovals is the record of approved project MCP servers under the
// Gantry home.
func mcpApprovals(a *app) *settings.MCPApprovals {
	home := settings.GantryHome(a.getenv, a.getenv("HOME"))
	return &settings.MCPApprovals{Path: filepath.Join(home, settings.MCPApprovalFile)}
}

// promptApprover is mcptool.StoreApprover that, when servers would be held
// back, asks through ch (an interaction.TrustRequest with Servers: what
// runs or is reached, escaped; env and header values are not shown, they
// may hold secrets) whether to approve them. A yes records the
// fingerprints of every server of the file, exactly as shown, and starts
// them; a no, nobody to ask or a cancelled ctx leaves them held. The CLI
// uses it with its terminal channel.
func promptApprover(ctx context.Context, store mcptool.ApprovalStore, ch interaction.Channel) mcptool.Approver {
	check := mcptool.StoreApprover(store, false)
	return func(dir string, servers map[string]mcptool.ServerConfig) (map[string]mcptool.Approval, error) {
		verdicts, err := check(dir, servers)
		if err != nil {
			return nil, err
		}
		var held []string
		for _, name := range slices.Sorted(maps.Keys(servers)) {
			if verdicts[name] != mcptool.Approved {
				held = append(held, name)
			}
		}
		if len(held) == 0 {
			return verdicts, nil
		}
		req := &interaction.TrustRequest{Dir: filepath.Join(dir, mcptool.ProjectConfigFile)}
		for _, name := range held {
			v := verdicts[name]
			if v == "" {
				v = mcptool.ApprovalNew
			}
			req.Servers = append(req.Servers, fmt.Sprintf("%s (%s): %s", name, v, servers[name].Describe()))
		}
		ans, err := interaction.AskTrust(ctx, ch, req)
		if err != nil || !ans.Trust {
			return verdicts, nil // held; nobody to ask or a failed read is a no
		}
		fps := make(map[string]string, len(servers))
		all := make(map[string]mcptool.Approval, len(servers))
		for name, sc := range servers {
			fps[name] = sc.Fingerprint
			all[name] = mcptool.Approved
		}
		if err := store.SetApprovals(dir, fps); err != nil {
			return nil, fmt.Errorf("recording MCP server approvals: %w", err)
		}
		return all, nil
	}
}
