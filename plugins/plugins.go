// Package plugins reads plugins as the reference agent lays them out: a
// directory with .claude-plugin/plugin.json (name, version, description)
// bundling commands/ (slash commands, namespaced "name:command"), agents/,
// skills/, hooks/hooks.json and .mcp.json.
//
// Gantry loads a plugin's commands, skills and agents (agent types named
// "plugin:agent"). Its hooks and MCP servers are not loaded yet:
// [Plugin.Unloaded] names those a plugin has, for the caller to say so
// (hooks and servers are repository code, to be run only once trusted and
// sandboxed like the project's own).
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

// ValidName reports whether name is a valid plugin name: 1-64 of
// letters, digits, '-', '_' and '.', starting with a letter or digit. It
// is the namespace of the plugin's commands and agents.
func ValidName(name string) bool { return validName().MatchString(name) }

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
	if !ValidName(m.Name) {
		return nil, fmt.Errorf("plugin %s: %s: invalid name %q (letters, digits, - _ ., at most 64)", dir, ManifestPath, m.Name)
	}
	return &Plugin{Name: m.Name, Version: m.Version, Description: m.Description, Dir: abs}, nil
}

// CommandsDir, SkillsDir and AgentsDir are the folders of the plugin's
// commands, skills and agent definitions.
func (p *Plugin) CommandsDir() string { return filepath.Join(p.Dir, "commands") }
func (p *Plugin) SkillsDir() string   { return filepath.Join(p.Dir, "skills") }
func (p *Plugin) AgentsDir() string   { return filepath.Join(p.Dir, "agents") }

// Namespaced returns name in the plugin's namespace: "plugin:name".
func (p *Plugin) Namespaced(name string) string { return p.Name + ":" + name }

// Unloaded names the parts of the plugin Gantry does not load yet that it
// has: "hooks", "MCP servers".
func (p *Plugin) Unloaded() []string {
	var out []string
	for _, part := range []struct{ path, name string }{
		{filepath.Join("hooks", "hooks.json"), "hooks"}, {".mcp.json", "MCP servers"},
	} {
		if _, err := os.Stat(filepath.Join(p.Dir, part.path)); err == nil {
			out = append(out, part.name)
		}
	}
	return out
}
