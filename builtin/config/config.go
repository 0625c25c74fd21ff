// Package config holds the built-in Config tool: the model reads and
// changes a short allow-list of Gantry settings (the default model, the
// language-server diagnostics switch, a permission mode no more permissive
// than default). Permission rules, hooks, environment, sandbox, MCP and
// language-server commands are never settable here: only a person changes
// them, by editing the settings files.
package config

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/gantry-dev/gantry/settings"
	"github.com/gantry-dev/gantry/tool"
)

// Key is one setting the Config tool may read and write.
type Key struct {
	// Name is the settings key ("model", "permissions.defaultMode").
	Name string
	// Description says what it does (shown to the model).
	Description string
	// Parse checks and converts a value the model gave; it returns the
	// JSON value to store.
	Parse func(v any) (any, error)
	// Get returns the effective value and the scope it comes from.
	Get func(s *settings.Settings) (any, settings.Scope)
}

// modelName is compiled on first use, not at init; the length bound (128)
// is checked apart, since a counted repetition compiles to nested groups.
var modelName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:/@-]*$`) })

// Keys is the allow-list: every key the Config tool knows. Nothing else is
// settable.
var Keys = []Key{
	{
		Name:        "model",
		Description: "the default model of new sessions (a model id, e.g. claude-sonnet-4-5); the --model flag and GANTRY_MODEL win over it",
		Parse: func(v any) (any, error) {
			s, ok := v.(string)
			if !ok || len(s) > 128 || !modelName().MatchString(s) {
				return nil, errors.New("model must be a model id (letters, digits, . _ : / @ -)")
			}
			return s, nil
		},
		Get: func(s *settings.Settings) (any, settings.Scope) {
			m, sc := s.Model()
			return m, sc
		},
	},
	{
		Name:        "lspDiagnostics",
		Description: "whether Write and Edit report the errors a language server finds after a change (true/false)",
		Parse:       parseBool,
		Get: func(s *settings.Settings) (any, settings.Scope) {
			on, sc := s.LSPDiagnostics()
			return on, sc
		},
	},
	{
		Name:        "permissions.defaultMode",
		Description: `the permission mode new sessions start in: "default", "plan" or "dontAsk" (modes that allow more, like acceptEdits or bypassPermissions, are set by a person)`,
		Parse: func(v any) (any, error) {
			s, _ := v.(string)
			switch tool.Mode(s) {
			case tool.ModeDefault, tool.ModePlan, tool.ModeDontAsk:
				return s, nil
			}
			return nil, fmt.Errorf("permissions.defaultMode can be set to default, plan or dontAsk here, not %v; a person sets more permissive modes in the settings file", v)
		},
		Get: func(s *settings.Settings) (any, settings.Scope) {
			for _, src := range s.Sources {
				if m := src.File.Permissions.DefaultMode; m != "" {
					return string(m), src.Scope
				}
			}
			return string(tool.ModeDefault), ""
		},
	},
}

func parseBool(v any) (any, error) {
	switch b := v.(type) {
	case bool:
		return b, nil
	case string:
		switch strings.ToLower(b) {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
	}
	return nil, fmt.Errorf("want true or false, not %v", v)
}

// protected explains why a known settings key is not settable.
func protected(name string) (string, bool) {
	switch {
	case name == "permissions" || strings.HasPrefix(name, "permissions."):
		return "permission rules and directories decide what runs unattended", true
	case name == "hooks" || strings.HasPrefix(name, "hooks."):
		return "hooks run commands", true
	case name == "env" || strings.HasPrefix(name, "env."):
		return "env reaches every command and hook", true
	case name == "sandbox" || strings.HasPrefix(name, "sandbox."):
		return "the sandbox contains what tools run", true
	case name == "lspServers" || strings.HasPrefix(name, "lspServers."):
		return "language servers are commands", true
	case strings.HasPrefix(strings.ToLower(name), "mcp"), name == "enabledMcpjsonServers", name == "enableAllProjectMcpServers":
		return "MCP servers are commands and network peers", true
	case strings.Contains(strings.ToLower(name), "apikey"), strings.Contains(strings.ToLower(name), "token"):
		return "credentials", true
	}
	return "", false
}

func lookup(name string) (Key, bool) {
	i := slices.IndexFunc(Keys, func(k Key) bool { return k.Name == name })
	if i < 0 {
		return Key{}, false
	}
	return Keys[i], true
}

// Options configure the Config tool. The zero value reads the environment
// for the homes.
type Options struct {
	// Getenv reads the environment (default os.Getenv); UserHome and
	// GantryHome override $HOME and $GANTRY_HOME.
	Getenv               func(string) string
	UserHome, GantryHome string
	// PolicyPath is the managed policy file read for effective values
	// (default settings.DefaultPolicyPath; "-" for none).
	PolicyPath string
}

func (o Options) settingsOptions(project string) settings.Options {
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	return settings.Options{ProjectDir: project, Getenv: getenv, UserHome: o.UserHome, GantryHome: o.GantryHome, PolicyPath: o.PolicyPath}
}

// Input is the input of the Config tool.
type Input struct {
	Setting string `json:"setting" jsonschema:"The setting key, e.g. \"model\""`
	Value   any    `json:"value,omitempty" jsonschema:"The new value; omit it to read the setting"`
	Scope   string `json:"scope,omitempty" enum:"user,project,local" jsonschema:"Where to write: user (default; all your projects), project (.gantry/settings.json, shared) or local (.gantry/settings.local.json, this checkout)"`
}

func description() string {
	var b strings.Builder
	b.WriteString("Reads or changes a Gantry setting. Omit value to read (the effective value and where it comes from); give value to write it to a settings file (default scope: user). Only these settings can be changed here:")
	for _, k := range Keys {
		fmt.Fprintf(&b, "\n- %s: %s", k.Name, k.Description)
	}
	b.WriteString("\nPermission rules, hooks, env, sandbox, MCP and language-server settings are changed only by a person, in the settings files.")
	return b.String()
}

// New returns the Config tool. Reading is read-only; writing is not (the
// permission layer asks for it by default).
func New(opts Options) tool.Tool {
	return tool.Must(tool.New("Config", description(),
		func(ctx context.Context, env *tool.Env, in Input) (*tool.Result, error) {
			if env == nil || env.WorkDir == "" {
				return nil, errors.New("config: the session has no working directory")
			}
			k, err := check(in)
			if err != nil {
				return nil, err
			}
			so := opts.settingsOptions(env.WorkDir)
			if in.Value == nil {
				st, err := settings.Load(so)
				if err != nil {
					return nil, err
				}
				v, sc := k.Get(st)
				from := "the default"
				if sc != "" {
					from = "the " + string(sc) + " settings"
				}
				return tool.TextResult(fmt.Sprintf("%s = %v (from %s)", k.Name, show(v), from)), nil
			}
			val, err := k.Parse(in.Value)
			if err != nil {
				return nil, err
			}
			scope := settings.Scope(in.Scope)
			if scope == "" {
				scope = settings.ScopeUser
			}
			paths, err := settings.Paths(so)
			if err != nil {
				return nil, err
			}
			path := paths[scope]
			if err := settings.SetKey(path, k.Name, val); err != nil {
				return nil, err
			}
			msg := fmt.Sprintf("Set %s = %v in the %s settings (%s).", k.Name, show(val), scope, path)
			if st, err := settings.Load(so); err == nil {
				if eff, sc := k.Get(st); sc != "" && sc != scope {
					msg += fmt.Sprintf(" The %s settings win over it: the effective value is %v.", sc, show(eff))
				}
			}
			return tool.TextResult(msg), nil
		},
		tool.TraitsFunc(func(in Input) tool.Traits {
			if in.Value == nil {
				return tool.ReadOnlyTraits
			}
			return tool.Traits{NonDestructive: true}
		}),
		tool.ValidateFunc(func(_ context.Context, _ *tool.Env, in Input) error {
			_, err := check(in)
			return err
		}),
		tool.DescribeFunc(func(in Input) string {
			if in.Value == nil {
				return "Config get " + in.Setting
			}
			return fmt.Sprintf("Config set %s = %v", in.Setting, show(in.Value))
		}),
		tool.WithDefer(tool.Deferral{ShouldDefer: true, SearchHint: "read or change gantry settings model mode"}),
	))
}

// check resolves the key and refuses the ones only a person may change.
func check(in Input) (Key, error) {
	name := strings.TrimSpace(in.Setting)
	k, ok := lookup(name)
	if !ok {
		if why, ok := protected(name); ok {
			return Key{}, fmt.Errorf("%s cannot be changed with Config: %s, so only a person changes it, in the settings file", name, why)
		}
		var names []string
		for _, k := range Keys {
			names = append(names, k.Name)
		}
		return Key{}, fmt.Errorf("%q is not a setting Config can read or change; these can: %s", name, strings.Join(names, ", "))
	}
	switch in.Scope {
	case "", "user", "project", "local":
	default:
		return Key{}, fmt.Errorf("unknown scope %q (want user, project or local)", in.Scope)
	}
	return k, nil
}

func show(v any) string {
	if s, ok := v.(string); ok {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprint(v)
}
