package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/interaction"
	"github.com/gantry-dev/gantry/mcptool"
	"github.com/gantry-dev/gantry/settings"
)

// TestPromptApprover: at a terminal, servers held back by the approval
// check are shown and approved by "y".
func TestPromptApprover(t *testing.T) {
	const (
		v1 = `{"mcpServers":{"fs":{"command":"srv","args":["--root","."]},"web":{"url":"http://127.0.0.1:1/mcp","headers":{"Authorization":"Bearer ${TOKEN}"}}}}`
		v2 = `{"mcpServers":{"fs":{"command":"/tmp/evil\u001b[2J","args":["a b"],"env":{"SECRET":"${TOKEN}"}},"web":{"url":"http://127.0.0.1:1/mcp","headers":{"Authorization":"Bearer ${TOKEN}"}}}}`
	)
	getenv := func(k string) string {
		if k == "TOKEN" {
			return "s3cret"
		}
		return ""
	}
	for _, tc := range []struct {
		answer string
		start  string
		asked  bool
	}{
		{"y\n", "fs,web", true},
		{"YES\n", "fs,web", true},
		{"n\n", "web", true},
		{"", "web", true}, // end of input
		{"maybe\n", "web", true},
	} {
		t.Run(strings.TrimSpace(tc.answer), func(t *testing.T) {
			dir, home := t.TempDir(), t.TempDir()
			store := &settings.MCPApprovals{Path: filepath.Join(home, settings.MCPApprovalFile)}
			write := func(s string) {
				if err := os.WriteFile(filepath.Join(dir, mcptool.ProjectConfigFile), []byte(s), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			load := func(in string) (*mcptool.ConfigFile, string) {
				var out bytes.Buffer
				cfg, err := mcptool.Load(mcptool.LoadOptions{Dir: dir, Trusted: true, Getenv: getenv,
					Approve: promptApprover(context.Background(), store, interaction.NewTerminal(strings.NewReader(in), &out))})
				if err != nil {
					t.Fatal(err)
				}
				return cfg, out.String()
			}
			write(v1)
			if cfg, out := load("n\n"); strings.Join(cfg.Names(), ",") != "fs,web" || out != "" {
				t.Fatalf("first start (approves, asks nothing): %v %q", cfg.Names(), out)
			}
			write(v2)
			cfg, out := load(tc.answer)
			if got := strings.Join(cfg.Names(), ","); got != tc.start {
				t.Fatalf("started %s, want %s; prompt:\n%s", got, tc.start, out)
			}
			for _, want := range []string{"fs (changed): '/tmp/evil\\x1b[2J' 'a b' (env: SECRET)", "Approve and start them? [y/N]"} {
				if !strings.Contains(out, want) {
					t.Errorf("prompt lacks %q:\n%s", want, out)
				}
			}
			if strings.Contains(out, "s3cret") || strings.Contains(out, "\x1b") || strings.Contains(out, "web") {
				t.Errorf("prompt shows a secret, a raw escape or an approved server:\n%s", out)
			}
			// What was approved stays approved: no question the next time.
			cfg, out = load("")
			if got := strings.Join(cfg.Names(), ","); got != tc.start || (tc.start == "fs,web") != (out == "") {
				t.Fatalf("next start: %s %q", got, out)
			}
		})
	}
}
