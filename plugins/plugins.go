// Package plugins reads plugins as the reference agent lays them out: a
// directory with .claude-plugin/plugin.json (name, version, description)
// bundling commands/ (slash commands, namespaced "name:command"), agents/,
// skills/, hooks/hooks.json and .mcp.json.
//
// Gantry loads a plugin's commands and skills. Its agents, hooks and MCP
// servers are not loaded yet: [Plugin.Unloaded] names those a plugin has,
// for the caller to say so (hooks and servers are repository code, to be
// run only once trusted and sandboxed like the project's own).
package plugins

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sync"
)

// ManifestPath is where a plugin's manifest lives, relative to its
// directory.
const ManifestPath = ".claude-plugin/plugin.json"

// Plugin is one plugin directory.
type Plugin struct {
	// Name namespaces the plugin's commands ("name:command").
	Name, Version, Description string
	// Dir is the plugin's directory (absolute).
	Dir string
}

var validName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`) })

// Load reads the plugin in dir. A plugin without a manifest, or one that
// is not JSON or names no valid name, is an error.
func Load(dir string) (*Plugin, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(filepath.Join(abs, ManifestPath))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("plugin %s: no %s", dir, ManifestPath)
		}
		return nil, fmt.Errorf("plugin %s: %w", dir, err)
	}
	var m struct {
		Name        string `json:"name"`
		Version     string `json:"version"`
		Description string `json:"description"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("plugin %s: %s: %w", dir, ManifestPath, err)
	}
	if !validName().MatchString(m.Name) {
		return nil, fmt.Errorf("plugin %s: %s: invalid name %q (letters, digits, - _ ., at most 64)", dir, ManifestPath, m.Name)
	}
	return &Plugin{Name: m.Name, Version: m.Version, Description: m.Description, Dir: abs}, nil
}

// CommandsDir and SkillsDir are the folders of the plugin's commands and
// skills.
func (p *Plugin) CommandsDir() string { return filepath.Join(p.Dir, "commands") }
func (p *Plugin) SkillsDir() string   { return filepath.Join(p.Dir, "skills") }

// Unloaded names the parts of the plugin Gantry does not load yet that it
// has: "agents", "hooks", "MCP servers".
func (p *Plugin) Unloaded() []string {
	var out []string
	for _, part := range []struct{ path, name string }{
		{"agents", "agents"}, {filepath.Join("hooks", "hooks.json"), "hooks"}, {".mcp.json", "MCP servers"},
	} {
		if _, err := os.Stat(filepath.Join(p.Dir, part.path)); err == nil {
			out = append(out, part.name)
		}
	}
	return out
}
