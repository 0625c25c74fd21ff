package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every command that runs tools shares one safety setup: `mcp serve` refuses
// bypass as root and rejects unknown modes and bad rules like `-p` does.
func TestServeSharesSafetyChecks(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the bypass check concerns root")
	}
	home := t.TempDir()
	env := map[string]string{"HOME": home, "GANTRY_HOME": filepath.Join(home, ".gantry")}
	for _, args := range [][]string{
		{"mcp", "serve", "--permission-mode", "bypassPermissions", "--policy", "-", "--cwd", home},
		{"mcp", "serve", "--permission-mode", "yolo", "--policy", "-", "--cwd", home},
		{"mcp", "serve", "--allowedTools", "Bash(", "--policy", "-", "--cwd", home},
		{"tools", "call", "Glob", `{"pattern":"*"}`, "--permission-mode", "bypassPermissions", "--cwd", home},
	} {
		var out, errb bytes.Buffer
		a := &app{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(k string) string { return env[k] }}
		if code := run(context.Background(), a, args); code == 0 {
			t.Errorf("%v: exit 0, stderr %q", args, errb.String())
		}
	}
}
