package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/gantry-dev/gantry/builtin/agenttool"
	"github.com/gantry-dev/gantry/toolset"
	"github.com/gantry-dev/gantry/workspace"
)

// agentsFlag is --agents: agent types given inline as JSON, keyed by name,
// in Claude Code's shape: {"reviewer": {"description": "…", "prompt": "…",
// "tools": ["Read"], "model": "…"}}.
type agentsFlag struct{ raw string }

func (f *agentsFlag) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.raw, "agents", "", `agent types as JSON: {"name": {"description": "…", "prompt": "…", "tools": […], "disallowedTools": […], "model": "…", "permissionMode": "…", "maxTurns": N}}`)
}

// definitions parses --agents.
func (f *agentsFlag) definitions() ([]agenttool.Definition, error) {
	if strings.TrimSpace(f.raw) == "" {
		return nil, nil
	}
	defs, err := agenttool.ParseJSON([]byte(f.raw), "cli")
	if err != nil {
		return nil, fmt.Errorf("--agents: %w", err)
	}
	return defs, nil
}

// newAgentsCmd is `gantry agents …`.
func newAgentsCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{Use: "agents", Short: "List the agent types the Agent tool can start"}
	cmd.AddCommand(newAgentsListCmd(a))
	return cmd
}

func newAgentsListCmd(a *app) *cobra.Command {
	var (
		sf     safetyFlags
		af     agentsFlag
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the agent types: built-in, user and project definition files, --agents",
		Long: `List the agent types (subagent_type values) of a session in the working
directory: the built-in general-purpose, Explore and Plan types, the
definition files of the user (~/.claude/agents, ~/.gantry/agents) and, in a
trusted folder, of the project (.claude/agents, .gantry/agents), and the
types given with --agents. A later source replaces an earlier type of the
same name.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, err := sf.workDir()
			if err != nil {
				return &exitError{code: 2, err: err}
			}
			defs, err := af.definitions()
			if err != nil {
				return &exitError{code: 2, err: err}
			}
			ws, err := openWorkspace(cmd.Context(), a, &sf, dir, func(o *workspace.Options) {
				o.NoMCP, o.Agents = true, defs
			})
			if err != nil {
				return &exitError{code: 1, err: err}
			}
			defer ws.Close()
			list := ws.Agents().List()
			if asJSON {
				enc := json.NewEncoder(a.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(list)
			}
			tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tSOURCE\tMODEL\tTOOLS\tDESCRIPTION")
			for _, d := range list {
				tools := "all"
				if len(d.Tools) > 0 {
					tools = strings.Join(offered(ws.Pool(), d.Tools), ",")
				}
				if len(d.DisallowedTools) > 0 {
					tools += " -" + strings.Join(d.DisallowedTools, ",-")
				}
				model := d.Model
				if model == "" {
					model = "inherit"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", d.Name, d.Source, model, oneLine(tools, 40), oneLine(d.Description, 70))
			}
			return tw.Flush()
		},
	}
	f := cmd.Flags()
	f.StringVar(&sf.cwd, "cwd", "", "working directory (default: the current directory)")
	f.BoolVar(&sf.trust, "trust", false, "trust the working directory (its project agent files apply)")
	f.BoolVar(&asJSON, "json", false, "print the definitions as JSON")
	af.add(cmd)
	return cmd
}

// offered keeps the tools of an agent type's list that the session offers
// (a type may name tools this build has not, or that settings hide: the
// subagent never gets those). MCP names stay: their servers start with a
// run, not here. A rule-like entry ("Bash(git diff *)") is kept when its
// tool is.
func offered(pool *toolset.Pool, tools []string) []string {
	var out []string
	for _, t := range tools {
		name, _, _ := strings.Cut(t, "(")
		if _, ok := pool.Lookup(name); ok || strings.HasPrefix(name, "mcp__") {
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		return []string{"(none offered)"}
	}
	return out
}
