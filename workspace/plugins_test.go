package workspace_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/plugins"
	"github.com/gantry-dev/gantry/workspace"
)

func writeFiles(t *testing.T, files map[string]string) {
	t.Helper()
	for name, content := range files {
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPlugins: a plugin named in Options and one settings enable (found
// through the installed-plugins record) both load, their agents named
// "plugin:agent"; an enabled plugin that is not installed, a plugin's bad
// agent and its hooks are warned about; a project's enabledPlugins need
// trust.
func TestPlugins(t *testing.T) {
	home, named, installed, project := t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()
	writeFiles(t, map[string]string{
		filepath.Join(named, plugins.ManifestPath):         `{"name":"tools"}`,
		filepath.Join(named, "agents", "helper.md"):        "---\ndescription: helps\n---\nYou help.\n",
		filepath.Join(named, "agents", "broken.md"):        "---\ndescription: broken\n---\n",
		filepath.Join(named, "hooks", "hooks.json"):        `{}`,
		filepath.Join(installed, plugins.ManifestPath):     `{"name":"review"}`,
		filepath.Join(installed, "agents", "critic.md"):    "---\ndescription: criticises\n---\nYou criticise.\n",
		filepath.Join(home, plugins.InstalledFile):         `{"version":2,"plugins":{"review@market":[{"scope":"user","installPath":"` + installed + `"}]}}`,
		filepath.Join(home, ".claude", "settings.json"):    `{"enabledPlugins":{"gone@market":true,"off@market":false}}`,
		filepath.Join(project, ".claude", "settings.json"): `{"enabledPlugins":{"review@market":true}}`,
	})
	getenv := func(k string) string {
		return map[string]string{"HOME": home, "GANTRY_HOME": filepath.Join(home, ".gantry")}[k]
	}
	for _, trusted := range []bool{false, true} {
		var warnings []string
		ws, err := workspace.Open(context.Background(), workspace.Options{
			Dir: project, Getenv: getenv, PolicyPath: "-", NoMCP: true, Trusted: trusted,
			PluginDirs: []string{named, named},
			Warn:       func(s string) { warnings = append(warnings, s) },
		})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, p := range ws.Plugins() {
			names = append(names, p.Name)
		}
		want := []string{"tools"}
		if trusted {
			want = append(want, "review")
		}
		if !slices.Equal(names, want) {
			t.Errorf("trusted=%v: plugins %v, want %v", trusted, names, want)
		}
		agents := ws.Agents().Names()
		if !slices.Contains(agents, "tools:helper") || slices.Contains(agents, "helper") || slices.Contains(agents, "tools:broken") {
			t.Errorf("trusted=%v: agents %v, want tools:helper and not the broken one", trusted, agents)
		}
		if got := slices.Contains(agents, "review:critic"); got != trusted {
			t.Errorf("trusted=%v: review:critic loaded = %v", trusted, got)
		}
		all := strings.Join(warnings, "\n")
		for _, w := range []string{"gone@market: enabled in settings but not installed", "broken.md", "plugin tools: its hooks are not loaded"} {
			if !strings.Contains(all, w) {
				t.Errorf("trusted=%v: warnings %q, want %q", trusted, all, w)
			}
		}
		if strings.Contains(all, "off@market") {
			t.Errorf("trusted=%v: a disabled plugin warned about: %q", trusted, all)
		}
		ws.Close()
	}
}
