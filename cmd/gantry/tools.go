package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/gantry-dev/gantry/builtin"
	"github.com/gantry-dev/gantry/builtin/agenttool"
	"github.com/gantry-dev/gantry/builtin/completion"
	"github.com/gantry-dev/gantry/builtin/memory"
	"github.com/gantry-dev/gantry/builtin/skill"
	"github.com/gantry-dev/gantry/builtin/web"
	"github.com/gantry-dev/gantry/executor"
	"github.com/gantry-dev/gantry/llm/anthropic"
	"github.com/gantry-dev/gantry/llm/openai"
	"github.com/gantry-dev/gantry/tool"
	"github.com/gantry-dev/gantry/toolset"
	"github.com/gantry-dev/gantry/workspace"
)

// newToolsCmd is `gantry tools …`: list, show and call the built-in tools,
// offline.
func newToolsCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{Use: "tools", Short: "List, describe and call the built-in tools"}
	cmd.AddCommand(newToolsListCmd(a), newToolsSchemaCmd(a), newToolsCallCmd(a))
	return cmd
}

// builtinTools returns every tool a session can offer, in name order:
// the built-ins (also those that need a setting, a backend or a service to
// be offered: WebSearch, memory, the team tools, PushNotification), Skill,
// Agent, attempt_completion and new_task, and ToolSearch. [toolNeeds] says
// what each needs.
func builtinTools(ctx context.Context, dir string) ([]tool.Tool, error) {
	tools, err := builtin.Tools(builtin.Options{
		Web:    web.Options{Search: listingSearch{}},
		Memory: &memory.Options{},
	})
	if err != nil {
		return nil, err
	}
	cat, err := agenttool.NewCatalog(agenttool.Builtins()...)
	if err != nil {
		return nil, err
	}
	tools = append(tools, skill.New(nil, skill.Options{}), agenttool.New(cat))
	tools = append(tools, completion.Tools()...)
	reg, err := builtin.Registry(builtin.Options{Only: []string{"Read"}})
	if err != nil {
		return nil, err
	}
	p, err := toolset.NewPool(ctx, toolset.Options{Registry: reg, Tools: tools, Env: &tool.Env{WorkDir: dir}, Defer: true})
	if err != nil {
		return nil, err
	}
	if st := p.SearchTool(); st != nil {
		tools = append(tools, st)
	}
	slices.SortStableFunc(tools, func(x, y tool.Tool) int { return strings.Compare(x.Spec().Name, y.Spec().Name) })
	return tools, nil
}

// listingSearch describes WebSearch for `gantry tools list` and `tools
// schema`, which show its definition without a search backend; nothing
// calls it (`tools call` opens a real session).
type listingSearch struct{}

func (listingSearch) Name() string { return "none" }
func (listingSearch) Search(context.Context, web.SearchQuery) ([]web.SearchResult, error) {
	return nil, errors.New("no search backend is configured")
}

// toolNeeds says what a session needs to offer a tool; a tool not listed
// is always offered (where its program is installed: bash, gopls).
var toolNeeds = map[string]string{
	"Agent":              "a model provider (the session's); not with --no-agent-tool or in subagents of a type without it",
	"Skill":              "skills: .gantry/skills, ~/.gantry/skills or skill.Options",
	"WebSearch":          "a search backend: BRAVE_SEARCH_API_KEY, TAVILY_API_KEY, SEARXNG_URL or GANTRY_WEB_SEARCH, or the Anthropic provider's server tool",
	"memory":             "the memory setting (builtin.Options.Memory)",
	"TeamCreate":         "a team runner (the CLI's sessions) or membership of a team",
	"TeamDelete":         "a team runner (the CLI's sessions) or membership of a team",
	"SendMessage":        "a team runner (the CLI's sessions) or membership of a team",
	"attempt_completion": "--completion-tools (agent.Options.CompletionTools)",
	"new_task":           "--completion-tools (agent.Options.CompletionTools)",
	"ToolSearch":         "a deferred tool in the pool (the default)",
	"ListMcpResources":   "an MCP server configured",
	"ReadMcpResource":    "an MCP server configured",
	"PushNotification":   "a front end that delivers notifications: the terminal UI, a terminal, gantry serve (--notify-webhook)",
	"LSP":                "a language server: gopls on PATH, or lsp settings",
	"Bash":               "bash on PATH",
	"RemoteTrigger":      "a gantry serve to talk to",
	"CronCreate":         "a session scheduler, or the durable store for durable jobs",
	"CronDelete":         "a session scheduler, or the durable store for durable jobs",
	"CronList":           "a session scheduler, or the durable store for durable jobs",
}

func newToolsListCmd(a *app) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List every tool a session can offer: name, tier, read-only, description, what it needs to be offered",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			wd, _ := os.Getwd()
			tools, err := builtinTools(cmd.Context(), wd)
			if err != nil {
				return err
			}
			type row struct {
				Name        string   `json:"name"`
				Aliases     []string `json:"aliases,omitempty"`
				Tier        string   `json:"tier"`
				ReadOnly    bool     `json:"read_only"`
				Description string   `json:"description"`
				Needs       string   `json:"needs,omitempty"`
			}
			var rows []row
			for _, t := range tools {
				s := t.Spec()
				rows = append(rows, row{s.Name, s.Aliases, builtin.Tier(s.Name).String(), s.Traits.ReadOnly, firstLine(s.Description), toolNeeds[s.Name]})
			}
			if asJSON {
				enc := json.NewEncoder(a.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(rows)
			}
			tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tTIER\tREAD-ONLY\tDESCRIPTION\tNEEDS")
			for _, r := range rows {
				ro := "no"
				if r.ReadOnly {
					ro = "yes"
				}
				needs := r.Needs
				if needs == "" {
					needs = "-"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Name, r.Tier, ro, oneLine(r.Description, 60), needs)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func newToolsSchemaCmd(a *app) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "schema NAME",
		Short: "Print a tool's definition as sent to a model (anthropic, openai, mcp) or its input JSON Schema (json)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			wd, _ := os.Getwd()
			tools, err := builtinTools(cmd.Context(), wd)
			if err != nil {
				return err
			}
			i := slices.IndexFunc(tools, func(t tool.Tool) bool { return slices.Contains(t.Spec().Names(), args[0]) })
			if i < 0 {
				return &exitError{code: 1, err: fmt.Errorf("no built-in tool %q (see gantry tools list)", args[0])}
			}
			spec := tools[i].Spec()
			var v any
			switch format {
			case "json":
				v = spec.InputSchema
			case "anthropic":
				v = anthropic.ToolParam(spec)
			case "openai":
				v = openai.ToolParam(spec)
			case "mcp":
				v = toolset.MCPTool(spec)
			default:
				return &exitError{code: 2, err: fmt.Errorf("unknown --format %q (want anthropic, openai, mcp or json)", format)}
			}
			b, err := json.MarshalIndent(v, "", "  ")
			if err != nil {
				return err
			}
			fmt.Fprintln(a.stdout, string(b))
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "anthropic", "anthropic, openai, mcp or json (the input schema)")
	return cmd
}

// callOutput is `gantry tools call --json`.
type callOutput struct {
	Content  []tool.Content `json:"content"`
	IsError  bool           `json:"is_error"`
	Display  []tool.Content `json:"display,omitempty"`
	Kind     string         `json:"kind,omitempty"`
	Decision any            `json:"decision,omitempty"`
}

func newToolsCallCmd(a *app) *cobra.Command {
	var (
		f      safetyFlags
		wf     webFlags
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "call NAME JSON",
		Short: "Run one tool call through the full pipeline (validation, hooks, permissions) and print its result",
		Long: `Run one call of the built-in tool NAME with input JSON through the executor:
schema validation (with coercion), the tool's checks, hooks and the permission
decision of --permission-mode and the settings. Nobody is asked: a call whose
decision is "ask" is denied (use --allowedTools or --permission-mode).

Prints the model's view of the result, or with --json an object with content,
is_error and display. Exit status 1 when the result is an error.`,
		Example: `  gantry tools call Glob '{"pattern":"**/*.go"}'
  gantry tools call Bash '{"command":"go version"}' --allowedTools 'Bash(go version)'
  gantry tools call Write '{"file_path":"/tmp/x.txt","content":"hi"}' --permission-mode acceptEdits --cwd /tmp
  gantry tools call WebFetch '{"url":"http://127.0.0.1:8080/","prompt":"summarise"}' --web-allow loopback --allowedTools 'WebFetch(domain:127.0.0.1)'`,
		Args:        cobra.ExactArgs(2),
		Annotations: map[string]string{cpuBound: "yes"},
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			dir, err := f.workDir()
			if err != nil {
				return &exitError{code: 2, err: err}
			}
			// Offline: no MCP servers, no deferral (every tool is callable
			// by name); only the called tool is built (any other name gets
			// the executor's answer listing the tools there are).
			webOpts, err := wf.options(a, nil, "")
			if err != nil {
				return err
			}
			ws, err := openWorkspace(ctx, a, &f, dir, func(o *workspace.Options) {
				o.Builtin.Web = webOpts
				o.NoMCP, o.NoAgentTool = true, true
				if builtin.Known(args[0]) {
					o.Builtin.Only = []string{args[0]}
				}
				o.Pool = &toolset.Options{}
			})
			if err != nil {
				return &exitError{code: 1, err: err}
			}
			defer ws.Close()
			o, err := ws.Executor().RunOne(ctx, ws.Session(), executor.Call{ID: "cli_call", Name: args[0], Input: json.RawMessage(args[1])})
			if err != nil {
				return err
			}
			if asJSON {
				out := callOutput{Content: o.Result.Content, IsError: o.Result.IsError, Display: o.Result.Display, Kind: string(o.Kind)}
				if o.Decision != nil {
					out.Decision = o.Decision
				}
				enc := json.NewEncoder(a.stdout)
				enc.SetIndent("", "  ")
				if err := enc.Encode(out); err != nil {
					return err
				}
			} else if o.Kind == executor.KindDenied || o.Kind == executor.KindBlocked {
				// For the person at the command line, not the model's
				// "do not retry" text.
				fmt.Fprintln(a.stdout, strings.TrimPrefix(denialLine("", o), "gantry: "))
				if o.Kind == executor.KindDenied && (o.Decision == nil || o.Decision.Rule == "") {
					fmt.Fprintf(a.stdout, "Nobody is asked here: allow the call with --allowedTools (a rule, e.g. %q) or another --permission-mode; gantry permissions check %s '…' shows what decides.\n",
						exampleRule(o.Name), o.Name)
				}
			} else {
				text := blocksText(o.Result.Content)
				if !strings.HasSuffix(text, "\n") {
					text += "\n"
				}
				fmt.Fprint(a.stdout, text)
			}
			if o.Result.IsError {
				return &exitError{code: 1, err: fmt.Errorf("")}
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.mode, "permission-mode", "", "permission mode: default, acceptEdits, plan, dontAsk, bypassPermissions")
	fl.StringArrayVar(&f.allowed, "allowedTools", nil, "permission allow rules")
	fl.StringArrayVar(&f.disallowed, "disallowedTools", nil, "permission deny rules")
	fl.StringVar(&f.cwd, "cwd", "", "working directory (default: the current directory)")
	fl.BoolVar(&f.trust, "trust", false, "trust the working directory's settings")
	fl.BoolVar(&f.noSettings, "no-settings", false, "ignore settings files")
	fl.BoolVar(&asJSON, "json", false, "print a JSON object: content, is_error, display")
	wf.add(fl, false)
	return cmd
}

// blocksText renders result blocks for a terminal: text as is, other kinds
// as a one-line note (their bytes are in the --json output).
func blocksText(blocks []tool.Content) string {
	parts := make([]string, len(blocks))
	for i, c := range blocks {
		parts[i] = c.AsText()
	}
	return strings.Join(parts, "\n")
}

// exampleRule is an example allow rule for a tool, for the advice of a
// denied call.
func exampleRule(name string) string {
	switch name {
	case "Bash":
		return "Bash(go version)"
	case "Edit", "Write", "NotebookEdit":
		return name + "(./src/**)"
	case "WebFetch":
		return "WebFetch(domain:example.com)"
	}
	return name
}
