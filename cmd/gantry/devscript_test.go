package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/llm/llmenv"
)

// TestDevScriptNoProvider: on a fresh clone without a model provider,
// scripts/dev run says so at once — before it installs or builds
// anything (go, apt-get and sudo here only record that they were called).
func TestDevScriptNoProvider(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	fake, calls := t.TempDir(), filepath.Join(t.TempDir(), "calls")
	for _, name := range []string{"go", "apt-get", "sudo", "npm"} {
		script := "#!/bin/sh\necho " + name + " \"$@\" >> " + calls + "\n"
		if err := os.WriteFile(filepath.Join(fake, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"-p", "hi"}, {}, {"chat"}, {"--model", "x", "-p", "hi"}} {
		cmd := exec.Command(bash, append([]string{"../../scripts/dev", "run"}, args...)...)
		cmd.Env = []string{"PATH=" + fake + ":/usr/bin:/bin", "HOME=" + t.TempDir()}
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 {
			t.Errorf("scripts/dev run %q: %v, want exit 1\n%s", args, err, out)
		}
		for _, want := range []string{"no model provider is configured", "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL"} {
			if !strings.Contains(string(out), want) {
				t.Errorf("scripts/dev run %q says %q, want %q", args, out, want)
			}
		}
	}
	// A command that needs no model goes on to set-up and the build.
	cmd := exec.Command(bash, "../../scripts/dev", "run", "tools", "list")
	cmd.Env = []string{"PATH=" + fake + ":/usr/bin:/bin", "HOME=" + t.TempDir()}
	cmd.CombinedOutput() // the fake go builds nothing: the exec fails
	b, _ := os.ReadFile(calls)
	if !strings.Contains(string(b), "go build") {
		t.Errorf("scripts/dev run tools list did not build; calls:\n%s", b)
	}
	if strings.Contains(string(b), "gopls") {
		t.Errorf("scripts/dev run installs gopls; calls:\n%s", b)
	}
	os.Remove(calls)
}

// TestDevScriptAgrees keeps scripts/dev's two lists honest: the
// environment variables it checks are those gantry reads to choose a
// provider, and the subcommands it runs without a model are gantry's.
func TestDevScriptAgrees(t *testing.T) {
	b, err := os.ReadFile("../../scripts/dev")
	if err != nil {
		t.Fatal(err)
	}
	script := string(b)
	var read []string
	_, _, err = llmenv.Provider("", "", func(k string) string { read = append(read, k); return "" })
	if !errors.Is(err, llmenv.ErrNoProvider) {
		t.Fatalf("llmenv with an empty environment: %v", err)
	}
	for _, k := range read {
		if !strings.Contains(script, "${"+k+":-}") {
			t.Errorf("scripts/dev does not check %s, which chooses a provider", k)
		}
	}
	m := regexp.MustCompile(`(?m)^\s+(version\|[a-z|]+)\) return 1 ;;`).FindStringSubmatch(script)
	if m == nil {
		t.Fatal("scripts/dev: the list of subcommands that need no model is not found")
	}
	root := newRootCmd(&app{getenv: func(string) string { return "" }})
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	for _, name := range strings.Split(m[1], "|") {
		if c, _, err := root.Find([]string{name}); err != nil || c == root {
			t.Errorf("scripts/dev names %q, which is not a gantry subcommand", name)
		}
	}
}
