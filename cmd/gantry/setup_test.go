package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestSplitRules(t *testing.T) {
	tests := []struct {
		in   []string
		want []string
	}{
		{[]string{"Read,Glob"}, []string{"Read", "Glob"}},
		{[]string{"Read Glob", "Bash(git diff *)"}, []string{"Read", "Glob", "Bash(git diff *)"}},
		{[]string{"Bash(echo a,b),Read"}, []string{"Bash(echo a,b)", "Read"}},
		{[]string{"Bash(npm run test:*) , WebFetch(domain:x.io)"}, []string{"Bash(npm run test:*)", "WebFetch(domain:x.io)"}},
		{[]string{"", " , "}, nil},
		{[]string{"Bash(unclosed"}, []string{"Bash(unclosed"}},
	}
	for _, tt := range tests {
		if got := splitRules(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("splitRules(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

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
