package config

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/tool/tooltest"

	"github.com/gantry-dev/gantry/tool"
)

func setup(t *testing.T) (tool.Tool, *tool.Env, string, string) {
	t.Helper()
	home := t.TempDir()
	project := t.TempDir()
	opts := Options{Getenv: func(string) string { return "" }, UserHome: home, GantryHome: filepath.Join(home, ".gantry"), PolicyPath: "-"}
	return New(opts), &tool.Env{WorkDir: project}, filepath.Join(home, ".gantry", "settings.json"), project
}

func TestGetSet(t *testing.T) {
	tl, env, userFile, project := setup(t)
	// A user file with keys Config does not know: they survive.
	os.MkdirAll(filepath.Dir(userFile), 0o700)
	os.WriteFile(userFile, []byte(`{"permissions": {"allow": ["Bash(ls *)"]}, "custom": {"x": 1}}`), 0o600)
	steps := []struct {
		in   map[string]any
		want string
		err  bool
	}{
		{map[string]any{"setting": "model"}, `model = "" (from the default)`, false},
		{map[string]any{"setting": "model", "value": "claude-sonnet-4-5"}, `Set model = "claude-sonnet-4-5" in the user settings`, false},
		{map[string]any{"setting": "model"}, `model = "claude-sonnet-4-5" (from the user settings)`, false},
		{map[string]any{"setting": "model", "value": "x; rm -rf /"}, "model must be a model id", true},
		{map[string]any{"setting": "lspDiagnostics", "value": false, "scope": "local"}, "Set lspDiagnostics = false in the local settings", false},
		{map[string]any{"setting": "lspDiagnostics"}, "lspDiagnostics = false (from the local settings)", false},
		{map[string]any{"setting": "lspDiagnostics", "value": "maybe"}, "want true or false", true},
		{map[string]any{"setting": "lspDiagnostics", "value": true}, "The local settings win over it: the effective value is false.", false},
		{map[string]any{"setting": "permissions.defaultMode", "value": "plan", "scope": "project"}, `Set permissions.defaultMode = "plan" in the project settings`, false},
		{map[string]any{"setting": "permissions.defaultMode", "value": "bypassPermissions"}, "a person sets more permissive modes", true},
		{map[string]any{"setting": "permissions.defaultMode", "value": "acceptEdits"}, "a person sets more permissive modes", true},
		{map[string]any{"setting": "model", "value": "m", "scope": "policy"}, "unknown scope", true},
	}
	for i, s := range steps {
		r := tooltest.Call(t, tl, env, s.in)
		got, isErr := r.TextContent(), r.IsError
		if isErr != s.err || !strings.Contains(got, s.want) {
			t.Fatalf("step %d %v: got (error %v) %s\nwant %q", i, s.in, isErr, got, s.want)
		}
	}
	var doc map[string]any
	b, _ := os.ReadFile(userFile)
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc["model"] != "claude-sonnet-4-5" || doc["custom"] == nil || doc["permissions"].(map[string]any)["allow"] == nil {
		t.Fatalf("user settings = %s", b)
	}
	b, _ = os.ReadFile(filepath.Join(project, ".gantry", "settings.json"))
	if !strings.Contains(string(b), `"defaultMode": "plan"`) {
		t.Fatalf("project settings = %s", b)
	}
}

// Config refuses every key outside its allow-list, whatever the value, and
// writes nothing.
func TestProtectedKeys(t *testing.T) {
	tl, env, userFile, project := setup(t)
	for _, key := range []string{
		"permissions", "permissions.allow", "permissions.deny", "permissions.ask", "permissions.additionalDirectories",
		"hooks", "hooks.PreToolUse", "env", "env.PATH", "sandbox", "sandbox.enabled", "lspServers", "lspServers.go",
		"mcpServers", "enableAllProjectMcpServers", "apiKeyHelper", "Model", " model2", "", "../model",
	} {
		for _, v := range []any{nil, "x", true, []string{"Bash"}, map[string]any{"command": "sh"}} {
			in := map[string]any{"setting": key}
			if v != nil {
				in["value"] = v
			}
			r := tooltest.Call(t, tl, env, in)
			got, isErr := r.TextContent(), r.IsError
			if !isErr || !(strings.Contains(got, "cannot be changed with Config") || strings.Contains(got, "is not a setting Config can")) {
				t.Errorf("%q = %v: got (error %v) %s", key, v, isErr, got)
			}
		}
	}
	for _, p := range []string{userFile, filepath.Join(project, ".gantry", "settings.json"), filepath.Join(project, ".gantry", "settings.local.json")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s was written", p)
		}
	}
}

func TestTraits(t *testing.T) {
	tl, _, _, _ := setup(t)
	get, _ := json.Marshal(map[string]any{"setting": "model"})
	set, _ := json.Marshal(map[string]any{"setting": "model", "value": "m"})
	if !tool.TraitsOf(tl, get).ReadOnly || tool.TraitsOf(tl, set).ReadOnly {
		t.Fatal("get must be read-only and set not")
	}
}
