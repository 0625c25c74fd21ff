package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/gantry-dev/gantry/builtin"
	"github.com/gantry-dev/gantry/hook"
	"github.com/gantry-dev/gantry/permission"
	"github.com/gantry-dev/gantry/settings"
	"github.com/gantry-dev/gantry/tool"
	"github.com/gantry-dev/gantry/toolset"
)

// safety is the settings-driven safety layer of one CLI session: the
// permission engine, the hooks, the mode and the tools hidden by bare denies.
type safety struct {
	settings *settings.Settings
	engine   *permission.Engine
	hooks    *hook.Manager
	mode     tool.Mode
	deny     []string // bare denies, removed from the pool
}

// safetyFlags are the flags every command that runs tools shares.
type safetyFlags struct {
	cwd        string
	mode       string
	allowed    []string
	disallowed []string
	trust      bool
	noSettings bool
	policy     string // managed policy file ("" = default, "-" = none)
}

func (f *safetyFlags) workDir() (string, error) {
	dir := f.cwd
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", err
		}
		dir = wd
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() {
		return "", fmt.Errorf("--cwd %s is not a directory", dir)
	}
	return dir, nil
}

// splitRules splits flag values given as "A,B" or "A B" into rules, keeping
// commas and spaces inside parentheses ("Bash(git diff *)").
func splitRules(vals []string) []string {
	var out []string
	for _, v := range vals {
		depth, start := 0, 0
		for i, r := range v {
			switch {
			case r == '(':
				depth++
			case r == ')' && depth > 0:
				depth--
			case (r == ',' || r == ' ') && depth == 0:
				if s := strings.TrimSpace(v[start:i]); s != "" {
					out = append(out, s)
				}
				start = i + 1
			}
		}
		if s := strings.TrimSpace(v[start:]); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// loadSafety reads the settings scopes of dir (unless disabled), adds the
// flags' rules, and builds the permission engine and the hook manager.
func loadSafety(a *app, f *safetyFlags, dir string) (*safety, error) {
	s := &safety{}
	cfg := permission.Config{WorkDir: dir, Getenv: a.getenv}
	var hcfg hook.Config
	if !f.noSettings {
		var trusted *bool
		if f.trust {
			t := true
			trusted = &t
			if err := trustStore(a).Trust(dir); err != nil {
				return nil, fmt.Errorf("--trust: %w", err)
			}
		}
		st, err := settings.Load(settings.Options{ProjectDir: dir, Trusted: trusted, Getenv: a.getenv, UserHome: a.getenv("HOME"), PolicyPath: f.policy})
		if err != nil {
			return nil, err
		}
		s.settings = st
		cfg = permission.ConfigFromSettings(st)
		cfg.WorkDir = dir
		cfg.Getenv = a.getenv
		hcfg = hook.Config{Hooks: st.Hooks(), Env: st.Env()}
		s.mode = st.Mode()
	}
	allowed, disallowed := splitRules(f.allowed), splitRules(f.disallowed)
	for _, r := range append(append([]string(nil), allowed...), disallowed...) {
		if _, err := permission.ParseRule(r); err != nil {
			return nil, fmt.Errorf("bad tool rule %q: %w", r, err)
		}
	}
	if len(allowed) > 0 || len(disallowed) > 0 {
		cfg.Rules = append(cfg.Rules, permission.RuleSet{Source: "cli", Allow: allowed, Deny: disallowed})
	}
	if f.mode != "" {
		s.mode = tool.Mode(f.mode)
	}
	if s.mode == "" {
		s.mode = tool.ModeDefault
	}
	if !s.mode.Valid() {
		return nil, fmt.Errorf("unknown permission mode %q (want one of %v)", s.mode, tool.Modes())
	}
	if err := permission.CheckBypass(s.mode, os.Geteuid(), a.getenv); err != nil {
		return nil, err
	}
	cfg.Mode = s.mode
	eng, err := permission.NewEngine(cfg)
	if err != nil {
		return nil, err
	}
	s.engine = eng
	s.deny = eng.HiddenTools()
	if s.hooks, err = hook.NewManager(hcfg); err != nil {
		return nil, fmt.Errorf("hooks: %w", err)
	}
	return s, nil
}

func trustStore(a *app) *settings.TrustStore {
	home := settings.GantryHome(a.getenv, a.getenv("HOME"))
	return &settings.TrustStore{Path: filepath.Join(home, "trusted-folders.json")}
}

// deferMCPOver is the number of MCP tools above which they are sent by
// name only and loaded through ToolSearch.
const deferMCPOver = 20

// builtinPool returns the pool options of the built-in tools with the
// session's denies applied. Without MCP servers the MCP resource tools are
// left out.
func builtinPool(s *safety, withMCP bool) (toolset.Options, error) {
	reg, err := builtin.Registry(builtin.Options{})
	if err != nil {
		return toolset.Options{}, err
	}
	deny := append([]string(nil), s.deny...)
	if !withMCP {
		deny = append(deny, "ListMcpResources", "ReadMcpResource")
	}
	return toolset.Options{Registry: reg, Deny: deny, Defer: true, DeferMCPOver: deferMCPOver}, nil
}

// multiCloser closes every closer, joining the errors.
type multiCloser []io.Closer

func (m multiCloser) Close() error {
	var errs []error
	for _, c := range m {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}
