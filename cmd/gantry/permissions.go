package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gantry-dev/gantry/builtin"
	"github.com/gantry-dev/gantry/executor"
	"github.com/gantry-dev/gantry/permission"
	"github.com/gantry-dev/gantry/settings"
	"github.com/gantry-dev/gantry/tool"
)

// newPermissionsCmd is `gantry permissions …`.
func newPermissionsCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "permissions",
		Short: "Inspect permission decisions and rules",
	}
	cmd.AddCommand(newPermissionsCheckCmd(a))
	return cmd
}

type checkOutput struct {
	Tool     string              `json:"tool"`
	Mode     tool.Mode           `json:"mode"`
	WorkDir  string              `json:"cwd"`
	Trusted  bool                `json:"trusted"`
	Decision permission.Decision `json:"decision"`
	Ignored  map[string][]string `json:"ignored_untrusted,omitempty"`
	// Suggest are the allow rules that would approve the call (what a
	// prompt offers as "always allow"), for a call that asks.
	Suggest []string `json:"suggest,omitempty"`
}

func newPermissionsCheckCmd(a *app) *cobra.Command {
	var (
		mode                   string
		cwd                    string
		allow, deny, askRules  []string
		asJSON, trust, noFiles bool
		policy                 string
	)
	cmd := &cobra.Command{
		Use:   "check TOOL JSON",
		Short: "Print the permission decision for one tool call",
		Long: `Print the decision (allow, ask or deny) for one call of TOOL with input JSON,
the rule that decided and why, under the settings of the working directory
(user, project, local and managed policy files) plus the rules given as flags.

The input is first validated against the tool's schema exactly as a run
validates it (with the same coercions); an input a run would refuse is an
error here too.

A call that asks also shows the allow rules that would approve it (the
"always allow" choice of a prompt).

Exit status 0 means a decision was printed (whatever it is); 1 means the
input could not be decided (bad JSON, an input the tool's schema refuses,
bad rule, unknown mode).`,
		Example: `  gantry permissions check Bash '{"command":"git diff && rm -rf build"}' --allow 'Bash(git diff *)'
  gantry permissions check Read '{"file_path":"/etc/passwd"}' --json
  gantry permissions check Edit '{"file_path":"src/a.go","old_string":"a","new_string":"b"}' --permission-mode acceptEdits --cwd ./project`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, input := args[0], json.RawMessage(args[1])
			if !json.Valid(input) {
				return &exitError{code: 1, err: fmt.Errorf("input is not valid JSON: %s", args[1])}
			}
			dir := cwd
			if dir == "" {
				wd, err := os.Getwd()
				if err != nil {
					return err
				}
				dir = wd
			}
			dir, err := filepath.Abs(dir)
			if err != nil {
				return err
			}
			cfg := permission.Options{WorkDir: dir}
			out := checkOutput{Tool: name, WorkDir: dir}
			if !noFiles {
				var trusted *bool
				if trust {
					trusted = &trust
				}
				s, err := settings.Load(settings.Options{ProjectDir: dir, Getenv: a.getenv, UserHome: a.getenv("HOME"), PolicyPath: policy, Trusted: trusted})
				if err != nil {
					return &exitError{code: 1, err: err}
				}
				cfg = permission.ConfigFromSettings(s)
				out.Trusted = s.Trusted
				out.Ignored = s.Ignored()
			}
			cfg.Home = a.getenv("HOME")
			cfg.Rules = append(cfg.Rules, permission.RuleSet{Source: string(settings.ScopeCLI), Root: dir, Allow: allow, Deny: deny, Ask: askRules})
			if mode != "" {
				cfg.Mode = tool.Mode(mode)
			}
			e, err := permission.NewEngine(cfg)
			if err != nil {
				return &exitError{code: 1, err: err}
			}
			t := permissionTool(name)
			env := &tool.Env{WorkDir: dir, Mode: e.Mode()}
			if _, isDescriptor := t.(*descriptor); !isDescriptor {
				// The input a run would give the decision: validated
				// against the tool's schema (and coerced) as the executor
				// does, or refused as it would be.
				in, err := executor.ValidateInput(cmd.Context(), t, env, input)
				if err != nil {
					return &exitError{code: 1, err: fmt.Errorf("invalid input for %s (a run would refuse the call before any permission check): %w", name, err)}
				}
				input = in
			}
			req := &permission.Request{Tool: t, Name: name, Input: input, Env: env, Traits: tool.TraitsOf(t, input)}
			if pc, ok := t.(tool.PermissionChecker); ok {
				req.ToolCheck = pc.CheckPermission(cmd.Context(), env, input)
			}
			d, err := e.Decide(cmd.Context(), req)
			if err != nil {
				return &exitError{code: 1, err: err}
			}
			out.Mode, out.Decision = env.Mode, d
			if d.Behavior == tool.Ask {
				out.Suggest = e.Suggest(req)
			}
			w := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(w)
				enc.SetIndent("", "  ")
				return enc.Encode(out)
			}
			fmt.Fprintln(w, d.Behavior)
			if d.Rule != "" {
				fmt.Fprintf(w, "rule:   %s (%s)\n", d.Rule, d.Source)
			} else {
				fmt.Fprintf(w, "source: %s\n", d.Source)
			}
			fmt.Fprintf(w, "reason: %s\n", d.Reason)
			fmt.Fprintf(w, "mode:   %s\n", out.Mode)
			if len(out.Suggest) > 0 {
				fmt.Fprintf(w, "allow:  %s would approve it\n", strings.Join(out.Suggest, " "))
			}
			for path, what := range out.Ignored {
				fmt.Fprintf(w, "note:   %s is in an untrusted folder; ignored: %v\n", path, what)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&mode, "permission-mode", "", "permission mode: default, acceptEdits, plan, dontAsk, bypassPermissions (default: from settings)")
	f.StringVar(&mode, "mode", "", "same as --permission-mode")
	f.StringVar(&cwd, "cwd", "", "working directory (default: the current directory)")
	f.StringArrayVar(&allow, "allow", nil, "add an allow rule (repeatable)")
	f.StringArrayVar(&deny, "deny", nil, "add a deny rule (repeatable)")
	f.StringArrayVar(&askRules, "ask", nil, "add an ask rule (repeatable)")
	f.BoolVar(&asJSON, "json", false, "print the decision as JSON")
	f.BoolVar(&trust, "trust", false, "treat the working directory as trusted (its allow rules, mode and directories apply)")
	f.BoolVar(&noFiles, "no-settings", false, "ignore settings files; use only the flags")
	f.StringVar(&policy, "policy", "", "managed policy file (default "+settings.DefaultPolicyPath+"; - for none)")
	return cmd
}

// permissionTool returns the tool the check command decides for: the
// built-in of that name or alias (the permission layer knows it by what it
// declares: files, a command line, a URL), else a bare tool of that name (an
// MCP or user tool: rules by name, fail-closed traits).
func permissionTool(name string) tool.Tool {
	if tools, err := builtin.Tools(builtin.Options{}); err == nil {
		for _, t := range tools {
			for _, n := range t.Spec().Names() {
				if n == name {
					return t
				}
			}
		}
	}
	return &descriptor{spec: tool.Spec{Name: name}}
}

// descriptor is a tool that is only described, never called.
type descriptor struct {
	spec tool.Spec
}

func (d *descriptor) Spec() *tool.Spec { return &d.spec }

func (d *descriptor) Call(context.Context, *tool.Env, json.RawMessage) (*tool.Result, error) {
	return nil, fmt.Errorf("%s is a descriptor for permission checks and cannot run", d.spec.Name)
}
