package grep

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRipgrepEnvironment: ripgrep runs with the allow-listed environment,
// so credentials and RIPGREP_CONFIG_PATH in Gantry's environment never
// reach it. A stand-in rg records the environment it was given.
func TestRipgrepEnvironment(t *testing.T) {
	dir := t.TempDir()
	envOut := filepath.Join(dir, "env.txt")
	fake := filepath.Join(dir, "rg")
	script := "#!/bin/sh\nenv > " + envOut + "\nexit 1\n" // exit 1: no matches
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(dir, "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("RIPGREP_CONFIG_PATH", filepath.Join(dir, "rgrc"))
	t.Setenv("ANTHROPIC_API_KEY", "sk-test-secret")
	t.Setenv("GANTRY_TEST_UNLISTED", "x")
	t.Setenv("LANG", "C.UTF-8")
	_, err := Search(context.Background(), &Query{Pattern: "needle", Root: src, Mode: ModeFiles},
		Options{Engine: EngineRipgrep, RipgrepPath: fake})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(envOut)
	if err != nil {
		t.Fatalf("stand-in rg did not run: %v", err)
	}
	env := string(b)
	for _, bad := range []string{"RIPGREP_CONFIG_PATH=", "ANTHROPIC_API_KEY=", "GANTRY_TEST_UNLISTED="} {
		if strings.Contains(env, bad) {
			t.Errorf("ripgrep received %s…", bad)
		}
	}
	if !strings.Contains(env, "LANG=C.UTF-8") {
		t.Errorf("ripgrep lost LANG; env:\n%s", env)
	}
}
