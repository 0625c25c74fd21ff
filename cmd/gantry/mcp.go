package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/gantry-dev/gantry/interaction"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/gantry-dev/gantry/mcpserve"
	"github.com/gantry-dev/gantry/mcptool"
	"github.com/gantry-dev/gantry/settings"
	"github.com/gantry-dev/gantry/toolset"
	"github.com/gantry-dev/gantry/workspace"
)

// newMCPCmd is `gantry mcp …`.
func newMCPCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Use MCP servers and serve Gantry's tools over MCP",
	}
	cmd.AddCommand(newMCPListCmd(a), newMCPServeCmd(a))
	return cmd
}

// projectFlags are the flags that find the project and its settings.
type projectFlags struct {
	cwd    string
	trust  bool
	policy string
}

func (p *projectFlags) add(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&p.cwd, "cwd", "", "working directory (default: the current directory)")
	f.BoolVar(&p.trust, "trust", false, "treat the working directory as trusted (its .mcp.json servers, rules and hooks apply) and approve its .mcp.json servers as they are")
	f.StringVar(&p.policy, "policy", "", "managed policy file (default "+settings.DefaultPolicyPath+"; - for none)")
}

func (p *projectFlags) load(a *app) (*settings.Settings, error) {
	dir := p.cwd
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, err
		}
		dir = wd
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	var trusted *bool
	if p.trust {
		trusted = &p.trust
	}
	return settings.Load(settings.Options{ProjectDir: dir, Getenv: a.getenv, UserHome: a.getenv("HOME"), PolicyPath: p.policy, Trusted: trusted})
}

func newMCPListCmd(a *app) *cobra.Command {
	var (
		pf      projectFlags
		configs []string
		asJSON  bool
	)
	cmd := &cobra.Command{
		Use:   "list",
		Short: "Connect to the configured MCP servers and list their status and tools",
		Long: `Connect to the MCP servers of the project's .mcp.json (only in a trusted
folder) and of every --mcp-config file, and print each server's status and
number of tools. Exit status 0 when the list was printed, whatever the
servers' states; 1 when the configuration is invalid.

A project server whose definition changed (or that was added) since the
user approved the folder's servers is not started: it is listed as
"unapproved" until approved again with --trust, which approves every
server of the project's .mcp.json as it is now.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := pf.load(a)
			if err != nil {
				return &exitError{code: 1, err: err}
			}
			cfg, err := mcptool.Load(mcptool.LoadOptions{Dir: s.ProjectDir, Trusted: s.Trusted, Files: configs, Getenv: a.getenv,
				Approve: mcptool.StoreApprover(mcpApprovals(a), pf.trust)})
			if err != nil {
				return &exitError{code: 1, err: err}
			}
			m, err := mcptool.NewManager(cfg, &mcptool.Options{Dir: s.ProjectDir, Getenv: a.getenv, MaxReconnects: -1,
				Client: &mcp.Implementation{Name: "gantry", Version: buildVersion()}})
			if err != nil {
				return &exitError{code: 1, err: err}
			}
			defer m.Close()
			_ = m.Start(cmd.Context()) // failures are in the statuses
			st := append(m.Servers(), cfg.HeldStatuses()...)
			slices.SortFunc(st, func(x, y mcptool.ServerStatus) int { return strings.Compare(x.Name, y.Name) })
			w := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(w)
				enc.SetIndent("", "  ")
				if st == nil {
					st = []mcptool.ServerStatus{}
				}
				return enc.Encode(st)
			}
			if len(st) == 0 {
				fmt.Fprintln(w, "No MCP servers configured.")
				if !s.Trusted {
					fmt.Fprintln(w, "note: the project's .mcp.json is read only in a trusted folder (--trust).")
				}
				return nil
			}
			tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tTYPE\tSTATUS\tTOOLS\tDETAIL")
			for _, x := range st {
				detail := x.Err
				if detail == "" && x.ServerName != "" {
					detail = strings.TrimSpace(x.ServerName + " " + x.ServerVersion)
				}
				for _, r := range x.Rejected { // tools left out: their input schema cannot be used
					detail = strings.TrimPrefix(detail+"; ", "; ") + r.Err
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", x.Name, x.Type, x.State, x.Tools, interaction.OneLine(detail, 100))
			}
			return tw.Flush()
		},
	}
	pf.add(cmd)
	cmd.Flags().StringArrayVar(&configs, "mcp-config", nil, "load MCP servers from this JSON file (repeatable)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the statuses as JSON")
	return cmd
}

func newMCPServeCmd(a *app) *cobra.Command {
	var (
		sf          safetyFlags
		httpAddr    string
		allowRemote bool
	)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve Gantry's built-in tools over MCP (stdio, or streamable HTTP with --http)",
		Long: `Serve Gantry's built-in tools to an MCP client. Every call runs through the
same pipeline as a model's: input validation, PreToolUse/PostToolUse hooks
(from settings of a trusted folder), and the permission decision of the mode
and rules in force. A call that needs approval is put to the MCP client's
user as a form (elicitation: allow once, or deny); when the client cannot
ask (no elicitation support) the call is denied. Over --http, streams are
resumable (Last-Event-ID).

--allowedTools limits the served tools to those listed and allows their
calls without asking; --disallowedTools removes tools (or, with a specifier
such as "Bash(rm *)", denies matching calls). By default the server speaks
MCP on stdin/stdout; --http ADDR serves streamable HTTP on a loopback
address (a non-loopback address needs --allow-remote).`,
		Example: `  gantry mcp serve --allowedTools Read,Glob,Grep
  gantry mcp serve --http 127.0.0.1:8765 --permission-mode acceptEdits`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			dir, err := sf.workDir()
			if err != nil {
				return &exitError{code: 2, err: err}
			}
			srv, cleanup, err := buildMCPServer(ctx, a, &sf, dir)
			if err != nil {
				return &exitError{code: 1, err: err}
			}
			defer cleanup()
			if httpAddr == "" {
				return srv.ServeStdio(ctx)
			}
			l, err := mcpserve.Listen(httpAddr, allowRemote)
			if err != nil {
				return &exitError{code: 1, err: err}
			}
			fmt.Fprintf(a.stderr, "gantry: serving %d tools over MCP at http://%s/mcp\n", len(srv.Tools()), l.Addr())
			return srv.ServeHTTP(ctx, l)
		},
	}
	f := cmd.Flags()
	f.StringVar(&sf.cwd, "cwd", "", "working directory (default: the current directory)")
	f.BoolVar(&sf.trust, "trust", false, "trust the working directory: its settings' rules and hooks apply")
	f.StringVar(&sf.policy, "policy", "", "managed policy file (default "+settings.DefaultPolicyPath+"; - for none)")
	f.StringVar(&httpAddr, "http", "", "serve streamable HTTP on this address (loopback, e.g. 127.0.0.1:8765) instead of stdio")
	f.BoolVar(&allowRemote, "allow-remote", false, "allow --http on a non-loopback address (exposes the tools to the network)")
	f.StringArrayVar(&sf.allowed, "allowedTools", nil, "serve only these tools and allow their calls (comma-separated or repeated; permission-rule syntax)")
	f.StringArrayVar(&sf.disallowed, "disallowedTools", nil, "remove these tools or deny matching calls (comma-separated or repeated)")
	f.StringVar(&sf.mode, "permission-mode", "", "permission mode: default, acceptEdits, plan, dontAsk, bypassPermissions (default: from settings)")
	return cmd
}

// buildMCPServer assembles the session of `gantry mcp serve` (no MCP
// servers of its own, no deferral: an MCP client decides what its model
// sees) and the server over its pool and executor. A non-empty
// --allowedTools limits the served tools to those it names.
func buildMCPServer(ctx context.Context, a *app, sf *safetyFlags, dir string) (*mcpserve.Server, func(), error) {
	ws, err := openWorkspace(ctx, a, sf, dir, func(o *workspace.Options) {
		o.NoMCP, o.NoAgentTool = true, true
		o.Pool = &toolset.Options{Allow: toolset.SplitNameLists(sf.allowed)}
		// Asks, questions and plans go to the calling client's user (form
		// elicitation); a client that cannot ask gets a denial that says so.
		o.Interaction = mcpserve.Elicitation()
	})
	if err != nil {
		return nil, nil, err
	}
	srv, err := mcpserve.New(ws.Pool().Tools(), ws.Executor(), ws.Session(),
		&mcpserve.Options{Name: "gantry", Version: buildVersion(), EventStore: mcp.NewMemoryEventStore(nil)})
	if err != nil {
		ws.Close()
		return nil, nil, err
	}
	return srv, func() { ws.Close() }, nil
}
