package permission

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/gantry-dev/gantry/settings"
	"github.com/gantry-dev/gantry/tool"
)

// ErrRootBypass is returned by [CheckBypass] when bypassPermissions is
// requested by the root user outside a sandbox.
var ErrRootBypass = errors.New("permission: bypassPermissions refuses to run as root; set IS_SANDBOX=1 (or GANTRY_ALLOW_ROOT=1) inside a sandbox")

// CheckBypass reports whether mode may be used by a process with effective
// user id euid: bypassPermissions as root (euid 0) needs IS_SANDBOX=1 or
// GANTRY_ALLOW_ROOT=1 in the environment, looked up with getenv. The CLI
// calls it with os.Geteuid() and os.Getenv before a run.
func CheckBypass(mode tool.Mode, euid int, getenv func(string) string) error {
	if mode != tool.ModeBypassPermissions || euid != 0 {
		return nil
	}
	if getenv != nil && (getenv("IS_SANDBOX") == "1" || getenv("GANTRY_ALLOW_ROOT") == "1") {
		return nil
	}
	return ErrRootBypass
}

// RuleSets returns the rules of every settings source, one [RuleSet] per
// file, with the file's root for "/" rules.
func RuleSets(s *settings.Settings) []RuleSet {
	var out []RuleSet
	for _, src := range s.Sources {
		p := src.File.Permissions
		out = append(out, RuleSet{Source: string(src.Scope), Root: src.Root, Allow: p.Allow, Deny: p.Deny, Ask: p.Ask})
	}
	return out
}

// ConfigFromSettings returns a Config with the rules, default mode and
// additional directories of s (directories are relative to their file's
// root). Set the other fields (Getenv, SettingsPaths, …) on the result.
func ConfigFromSettings(s *settings.Settings) Options {
	cfg := Options{Mode: s.Mode(), Rules: RuleSets(s), WorkDir: s.ProjectDir}
	for _, src := range s.Sources {
		for _, d := range src.File.Permissions.AdditionalDirectories {
			if !filepath.IsAbs(d) && d != "~" && !hasTildePrefix(d) {
				d = filepath.Join(src.Root, d)
			}
			cfg.AdditionalDirs = append(cfg.AdditionalDirs, d)
		}
	}
	return cfg
}

func hasTildePrefix(s string) bool { return len(s) >= 2 && s[0] == '~' && s[1] == '/' }

// Destination is where a permission [Update] is kept.
type Destination string

const (
	// ToSession keeps the update in memory for this Engine only.
	ToSession Destination = "session"
	// ToUser, ToProject and ToLocal write the update to that scope's
	// settings file (atomically) and apply it to the Engine at once.
	ToUser    Destination = "user"
	ToProject Destination = "project"
	ToLocal   Destination = "local"
)

// Update is a permission change: rules to add, a new default mode,
// directories to add. "Always allow this" is an Update with Kind allow.
type Update struct {
	Destination Destination
	// Kind is the rule list Rules go to (allow, deny, ask).
	Kind  settings.RuleKind
	Rules []string
	// Mode, if set, becomes the engine's default mode (and the file's
	// permissions.defaultMode). The session's current mode lives in its
	// Env; the agent changes that.
	Mode tool.Mode
	// Directories are added to the additional working directories.
	Directories []string
}

// Apply applies u: rules are parsed first (a bad rule changes nothing),
// then written to the destination's settings file (paths from
// settings.Paths) unless the destination is the session, then added to the
// engine. Nil paths mean [Options.SettingsPaths].
func (e *Engine) Apply(u Update, paths map[settings.Scope]string) error {
	if paths == nil {
		paths = e.cfg.SettingsPaths
	}
	var parsed []rule
	b := tool.Behavior(u.Kind)
	if len(u.Rules) > 0 {
		switch u.Kind {
		case settings.Allow, settings.Deny, settings.Ask:
		default:
			return fmt.Errorf("permission: unknown rule kind %q", u.Kind)
		}
	}
	src := string(u.Destination)
	root := ""
	if u.Destination != ToSession {
		path, ok := paths[settings.Scope(u.Destination)]
		if !ok || path == "" {
			return fmt.Errorf("permission: no settings file for destination %q", u.Destination)
		}
		if u.Destination != ToUser {
			root = filepath.Dir(filepath.Dir(path))
		}
	}
	for _, raw := range u.Rules {
		r, err := ParseRule(raw)
		if err != nil {
			return err
		}
		parsed = append(parsed, newRule(r, raw, b, src, root))
	}
	if u.Mode != "" && !u.Mode.Valid() {
		return fmt.Errorf("permission: unknown mode %q", u.Mode)
	}
	switch u.Destination {
	case ToSession:
	case ToUser, ToProject, ToLocal:
		// A trusted folder's configuration is pinned by its trust; a change
		// the person made through Gantry keeps it trusted.
		var ts *settings.TrustStore
		if u.Destination != ToUser && e.cfg.GantryHome != "" && e.cfg.WorkDir != "" {
			ts = &settings.TrustStore{Path: filepath.Join(e.cfg.GantryHome, settings.TrustFile)}
			if ok, err := ts.IsTrusted(e.cfg.WorkDir); err != nil || !ok {
				ts = nil
			}
		}
		err := settings.Update(paths[settings.Scope(u.Destination)], settings.Change{
			Kind: u.Kind, AddRules: u.Rules, Mode: u.Mode, AddDirectories: u.Directories,
		})
		if err != nil {
			return fmt.Errorf("permission: %w", err)
		}
		if ts != nil {
			if err := ts.Trust(e.cfg.WorkDir); err != nil {
				return fmt.Errorf("permission: %w", err)
			}
		}
	default:
		return fmt.Errorf("permission: unknown destination %q", u.Destination)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	// Copy on write: calls in flight keep the slice they read.
	e.rules = append(append([]rule(nil), e.rules...), parsed...)
	e.addDirs = append(append([]string(nil), e.addDirs...), u.Directories...)
	if u.Mode != "" {
		e.mode = u.Mode
	}
	return nil
}
