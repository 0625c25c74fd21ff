package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"

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
// back, shows them (what runs or is reached, escaped; env and header
// values are not shown, they may hold secrets) on out and asks on in
// whether to approve them. "y" or "yes" records the fingerprints of every
// server of the file, exactly as shown, and starts them; anything else,
// end of input or a cancelled ctx leaves them held. The CLI calls it only
// when stdin and stderr are terminals.
func promptApprover(ctx context.Context, store mcptool.ApprovalStore, in io.Reader, out io.Writer) mcptool.Approver {
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
		fmt.Fprintf(out, "The MCP servers of %s changed since you approved them:\n", mcptool.EscapeDisplay(filepath.Join(dir, mcptool.ProjectConfigFile)))
		for _, name := range held {
			v := verdicts[name]
			if v == "" {
				v = mcptool.ApprovalNew
			}
			fmt.Fprintf(out, "  %s (%s): %s\n", name, v, servers[name].Describe())
		}
		fmt.Fprint(out, "Approve and start them? [y/N] ")
		ok, err := settings.ReadYes(ctx, in)
		if err != nil || !ok {
			fmt.Fprintln(out)
			return verdicts, nil // held; a failed read is a no
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
