//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/gantry-dev/gantry/llm/llmtest"
)

// TestHeadlessLanguageServerStart: a headless run in a Go project that
// reads and searches but edits nothing starts no language server (a gopls
// on PATH that records every start); a run that writes a Go file starts it
// (in the background: the check can fail).
func TestHeadlessLanguageServerStart(t *testing.T) {
	bin := gantryBinary(t)
	pathDir := t.TempDir()
	marker := filepath.Join(pathDir, "gopls-started")
	os.WriteFile(filepath.Join(pathDir, "gopls"), []byte("#!/bin/sh\necho $$ >> "+marker+"\nexec sleep 60\n"), 0o755)
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }

	for _, tc := range []struct {
		name  string
		calls []llmtest.ToolCall
		want  bool
	}{
		{name: "reads", calls: []llmtest.ToolCall{
			{ID: "t1", Name: "Read", Input: `{"file_path":"main.go"}`},
			{ID: "t2", Name: "Grep", Input: `{"pattern":"func"}`},
			{ID: "t3", Name: "Bash", Input: `{"command":"ls"}`},
		}},
		{name: "edit", want: true, calls: []llmtest.ToolCall{
			{ID: "t1", Name: "Write", Input: `{"file_path":"extra.go","content":"package main\n"}`},
			// Wait for the background start, so that the run does not end
			// before it (the marker is what this case checks).
			{ID: "t2", Name: "Bash", Input: `{"command":` + q("timeout 10 sh -c 'until [ -e "+marker+" ]; do sleep 0.05; done'") + `}`},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove(marker)
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module x\n\ngo 1.22\n"), 0o644)
			os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644)
			srv := llmtest.NewServer(t)
			var replies []llmtest.Reply
			for _, c := range tc.calls {
				replies = append(replies, llmtest.ToolReply(c))
			}
			srv.Script(append(replies, llmtest.TextReply("done"))...)
			home := filepath.Join(dir, ".home")
			cmd := exec.Command(bin, "-p", "go", "--allowedTools", "Read,Grep,Bash,Write", "--no-session-persistence")
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "PATH="+pathDir+":"+os.Getenv("PATH"), "ANTHROPIC_BASE_URL="+srv.URL(), "ANTHROPIC_API_KEY=k",
				"HOME="+home, "GANTRY_HOME="+filepath.Join(home, ".gantry"), "OPENAI_API_KEY=", "OPENAI_BASE_URL=")
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Run(); err != nil {
				t.Fatalf("gantry: %v\n%s", err, out.String())
			}
			_, err := os.Stat(marker)
			if started := err == nil; started != tc.want {
				t.Fatalf("language server started: %v, want %v\n%s", started, tc.want, out.String())
			}
		})
	}
}
