package plugins

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestLoad(t *testing.T) {
	mk := func(files map[string]string) string {
		dir := t.TempDir()
		for name, content := range files {
			p := filepath.Join(dir, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	good := mk(map[string]string{
		ManifestPath:        `{"name":"tools","version":"1.2.0","description":"handy"}`,
		"commands/hello.md": "hi",
		"agents/helper.md":  "---\nname: helper\n---\nhelp",
		"hooks/hooks.json":  `{}`,
		"skills/x/SKILL.md": "---\nname: x\ndescription: x\n---\n",
	})
	p, err := Load(good)
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "tools" || p.Version != "1.2.0" || p.Description != "handy" || !filepath.IsAbs(p.Dir) {
		t.Errorf("plugin = %+v", p)
	}
	if got := p.Unloaded(); !slices.Equal(got, []string{"hooks"}) {
		t.Errorf("Unloaded = %v", got)
	}
	for name, tc := range map[string]struct {
		files map[string]string
		want  string
	}{
		"no manifest": {map[string]string{"commands/a.md": "a"}, "no .claude-plugin/plugin.json"},
		"not JSON":    {map[string]string{ManifestPath: "{"}, "plugin.json"},
		"bad name":    {map[string]string{ManifestPath: `{"name":"a b"}`}, "invalid name"},
		"no name":     {map[string]string{ManifestPath: `{}`}, "invalid name"},
	} {
		if _, err := Load(mk(tc.files)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", name, err, tc.want)
		}
	}
}

func TestNamespaced(t *testing.T) {
	p := &Plugin{Name: "tools", Dir: "/x"}
	if got := p.Namespaced("helper"); got != "tools:helper" {
		t.Errorf("Namespaced = %q", got)
	}
	if got := p.AgentsDir(); got != filepath.Join("/x", "agents") {
		t.Errorf("AgentsDir = %q", got)
	}
}
