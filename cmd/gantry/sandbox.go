package main

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gantry-dev/gantry/sandbox"
	"github.com/gantry-dev/gantry/workspace"
)

// newSandboxCmd is `gantry sandbox …`.
func newSandboxCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sandbox",
		Short: "Inspect the OS sandbox of shell commands",
	}
	cmd.AddCommand(newSandboxStatusCmd(a))
	return cmd
}

type sandboxStatusOutput struct {
	sandbox.Status
	WorkDir          string   `json:"cwd"`
	AutoAllow        bool     `json:"auto_allow_bash"`
	AllowUnsandboxed bool     `json:"allow_unsandboxed_commands"`
	Writable         []string `json:"writable,omitempty"`
	ReadOnly         []string `json:"read_only,omitempty"`
	Protected        []string `json:"protected,omitempty"`
	Hidden           []string `json:"hidden,omitempty"`
}

func newSandboxStatusCmd(a *app) *cobra.Command {
	var (
		sf     safetyFlags
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Print which sandbox backend is active here and why",
		Long: `Print whether shell commands run in an OS sandbox under the settings of the
working directory, which backend contains them (bubblewrap, landlock or none)
and why the others are unavailable, how leftover processes are killed, the
network they get, and the paths they may write, may not change and cannot see.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, err := sf.workDir()
			if err != nil {
				return &exitError{code: 1, err: err}
			}
			ws, err := openWorkspace(cmd.Context(), a, &sf, dir, func(o *workspace.Options) { o.NoMCP = true })
			if err != nil {
				return &exitError{code: 1, err: err}
			}
			defer ws.Close()
			sb := ws.Sandbox()
			p := sb.Policy(dir, ws.Env().AdditionalDirs...)
			out := sandboxStatusOutput{Status: sb.Status(), WorkDir: dir, AutoAllow: sb.AutoAllow(), AllowUnsandboxed: sb.AllowUnsandboxed()}
			if sb.Contained() {
				out.Writable = existingPaths(append(slices.Clone(p.Write), p.TempDir))
				out.ReadOnly, out.Hidden = existingPaths(p.ReadOnly), existingPaths(p.Hide)
				out.Protected = existingPaths(sandbox.Protected(p.Write...))
			}
			if asJSON {
				enc := json.NewEncoder(a.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(out)
			}
			printSandboxStatus(a, out)
			return nil
		},
	}
	cmd.Flags().StringVar(&sf.cwd, "cwd", "", "working directory (default: the current directory)")
	cmd.Flags().BoolVar(&sf.trust, "trust", false, "trust the working directory (its project settings apply)")
	cmd.Flags().BoolVar(&sf.noSettings, "no-settings", false, "read no settings file")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func printSandboxStatus(a *app, s sandboxStatusOutput) {
	w := a.stdout
	switch {
	case !s.Enabled:
		fmt.Fprintln(w, "sandbox: off (enable it with \"sandbox\": {\"enabled\": true} in the settings)")
	case s.Contained():
		fmt.Fprintf(w, "sandbox: on, backend %s\n", s.Backend)
	default:
		fmt.Fprintln(w, "sandbox: ENABLED BUT NOT AVAILABLE: commands run without a sandbox; permission rules are tightened")
	}
	fmt.Fprintf(w, "why:      %s\n", s.Reason)
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range s.Unavailable {
			if !yield(k) {
				return
			}
		}
	}) {
		fmt.Fprintf(w, "  %s unavailable: %s\n", name, s.Unavailable[name])
	}
	fmt.Fprintf(w, "cleanup:  %s\n", s.Cleanup)
	fmt.Fprintf(w, "network:  %s\n", s.Network)
	fmt.Fprintf(w, "unix sockets: %s\n", s.UnixSockets)
	if !s.Contained() {
		return
	}
	fmt.Fprintf(w, "auto-allow sandboxed Bash: %v; dangerouslyDisableSandbox honoured (after asking): %v\n", s.AutoAllow, s.AllowUnsandboxed)
	guard := "existing ones are read-only mount points, new ones are moved to a quarantine directory after each command"
	if s.Backend == sandbox.BackendLandlock {
		guard = "checked after each command: new ones are moved to a quarantine directory, changed ones put back"
	}
	fmt.Fprintf(w, "protected names (%s): %s\n", guard, strings.Join(sandbox.ProtectedNames, " "))
	for _, l := range []struct {
		what  string
		paths []string
	}{{"writable", s.Writable}, {"read-only", s.ReadOnly}, {"protected", s.Protected}, {"hidden", s.Hidden}} {
		if l.what == "read-only" && s.Backend == sandbox.BackendLandlock && len(l.paths) > 0 {
			l.what = "read-only (not enforced by Landlock inside writable directories)"
		}
		if len(l.paths) > 0 {
			fmt.Fprintf(w, "%-10s %s\n", l.what+":", strings.Join(l.paths, ", "))
		}
	}
}

// existingPaths keeps the paths that exist (the sandbox skips the others).
func existingPaths(ps []string) []string {
	var out []string
	for _, p := range ps {
		if _, err := os.Lstat(p); err == nil {
			out = append(out, p)
		}
	}
	return out
}
