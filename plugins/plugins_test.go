package plugins

import (
	"maps"
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

func TestInstalled(t *testing.T) {
	home := t.TempDir()
	if got, err := Installed(home); err != nil || len(got) != 0 {
		t.Fatalf("no record: %v, %v", got, err)
	}
	for name, tc := range map[string]struct {
		doc     string
		want    map[string]string
		wantErr string
	}{
		"v1": {doc: `{"version":1,"plugins":{"tools@m":{"version":"1.0.0","installPath":"/p/tools"}}}`,
			want: map[string]string{"tools@m": "/p/tools"}},
		"v2": {doc: `{"version":2,"plugins":{"tools@m":[{"scope":"user","installPath":"/p/tools/"}],"none@m":[]}}`,
			want: map[string]string{"tools@m": "/p/tools"}},
		"not JSON":  {doc: `{`, wantErr: "installed_plugins.json"},
		"bad entry": {doc: `{"plugins":{"x@m":3}}`, wantErr: "want an object"},
		"relative":  {doc: `{"plugins":{"x@m":{"installPath":"p/x"}}}`, wantErr: "not absolute"},
	} {
		p := filepath.Join(home, InstalledFile)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(tc.doc), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := Installed(home)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: err = %v, want %q", name, err, tc.wantErr)
			}
			continue
		}
		if err != nil || !maps.Equal(got, tc.want) {
			t.Errorf("%s: Installed = %v, %v, want %v", name, got, err, tc.want)
		}
	}
}

func FuzzParseInstalled(f *testing.F) {
	f.Add([]byte(`{"version":1,"plugins":{"tools@m":{"installPath":"/p/tools"}}}`))
	f.Add([]byte(`{"version":2,"plugins":{"tools@m":[{"installPath":"/p/tools"}]}}`))
	f.Add([]byte(`{"plugins":{"x":null}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := parseInstalled(b, "f")
		if err != nil {
			return
		}
		for k, v := range got {
			if !filepath.IsAbs(v) {
				t.Errorf("%q: %q is not absolute", k, v)
			}
		}
	})
}
