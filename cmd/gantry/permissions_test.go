package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/permission"
	"github.com/gantry-dev/gantry/tool"
)

func runCheck(t *testing.T, home string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	env := map[string]string{"HOME": home, "GANTRY_HOME": filepath.Join(home, ".gantry")}
	a := &app{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(k string) string { return env[k] }}
	code := run(context.Background(), a, append([]string{"permissions", "check"}, args...))
	return out.String(), errb.String(), code
}

func TestPermissionsCheck(t *testing.T) {
	home := t.TempDir()
	proj := filepath.Join(home, "proj")
	if err := os.MkdirAll(filepath.Join(proj, ".gantry"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(proj, ".gantry", "settings.json"), []byte(`{"permissions":{"deny":["Bash(curl *)"],"allow":["Bash(make *)"]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	common := []string{"--cwd", proj, "--policy", "-"}
	cases := []struct {
		name     string
		args     []string
		want     tool.Behavior
		contains string
		code     int
	}{
		{name: "compound asks", args: []string{"Bash", `{"command":"git diff && rm -rf build"}`, "--allow", "Bash(git diff *)"}, want: tool.Ask, contains: "rm -rf build"},
		{name: "cli allow", args: []string{"Bash", `{"command":"npm test"}`, "--allow", "Bash(npm test)"}, want: tool.Allow, contains: "Bash(npm test) (cli)"},
		{name: "project deny", args: []string{"Bash", `{"command":"curl x.io"}`}, want: tool.Deny, contains: "(project)"},
		{name: "untrusted allow ignored", args: []string{"Bash", `{"command":"make all"}`}, want: tool.Ask, contains: "untrusted"},
		{name: "trusted allow", args: []string{"Bash", `{"command":"make all"}`, "--trust"}, want: tool.Allow},
		{name: "read-only bash", args: []string{"Bash", `{"command":"ls -la | wc -l"}`}, want: tool.Allow},
		{name: "read inside", args: []string{"Read", `{"file_path":"x.go"}`}, want: tool.Allow},
		{name: "read outside", args: []string{"Read", `{"file_path":"/etc/passwd"}`}, want: tool.Ask},
		{name: "plan", args: []string{"Edit", `{"file_path":"x.go","old_string":"a","new_string":"b"}`, "--mode", "plan"}, want: tool.Deny},
		{name: "dontAsk", args: []string{"Edit", `{"file_path":"x.go","old_string":"a","new_string":"b"}`, "--permission-mode", "dontAsk"}, want: tool.Deny},
		{name: "acceptEdits through --permission-mode", args: []string{"Edit", `{"file_path":"x.go","old_string":"a","new_string":"b"}`, "--permission-mode", "acceptEdits"}, want: tool.Allow},
		{name: "cli deny", args: []string{"WebFetch", `{"url":"https://x.io","prompt":"p"}`, "--deny", "WebFetch(domain:x.io)"}, want: tool.Deny},
		{name: "input coerced as a run would", args: []string{"Bash", `{"command":"ls","timeout":"5000"}`}, want: tool.Allow},
		{name: "missing required field", args: []string{"Edit", `{"file_path":"x.go"}`}, code: 1},
		{name: "wrong type", args: []string{"Bash", `{"command":"ls","timeout":"soon"}`}, code: 1},
		{name: "tool's own validation", args: []string{"Read", `{"file_path":""}`}, code: 1},
		{name: "bad json", args: []string{"Bash", `{`}, code: 1},
		{name: "bad rule", args: []string{"Bash", `{}`, "--allow", "Bash("}, code: 1},
		{name: "bad mode", args: []string{"Bash", `{}`, "--mode", "yolo"}, code: 1},
		{name: "ask names the rule that would approve", args: []string{"Bash", `{"command":"npm run build"}`}, want: tool.Ask, contains: "allow:  Bash(npm run *) would approve it"},
		{name: "script written during the run", args: []string{"Bash", `{"command":"sh fresh.sh"}`, "--no-settings", "--allow", "Bash(sh *)"}, want: tool.Ask, contains: "changed during this run"},
		{name: "script the line writes", args: []string{"Bash", `{"command":"echo x > fresh.sh && sh fresh.sh"}`, "--no-settings", "--allow", "Bash(sh fresh.sh)", "--allow", "Bash(echo *)", "--permission-mode", "acceptEdits"}, want: tool.Ask, contains: "the line writes the script"},
	}
	if err := os.WriteFile(filepath.Join(proj, "fresh.sh"), []byte("echo hi\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := runCheck(t, home, append(tc.args, common...)...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d (stdout %q stderr %q)", code, tc.code, out, errOut)
			}
			if code != 0 {
				return
			}
			if first := strings.SplitN(out, "\n", 2)[0]; first != string(tc.want) {
				t.Errorf("decision %q, want %q:\n%s", first, tc.want, out)
			}
			if !strings.Contains(out, tc.contains) {
				t.Errorf("output does not contain %q:\n%s", tc.contains, out)
			}
			// The same through --json.
			jout, _, _ := runCheck(t, home, append(append(tc.args, common...), "--json")...)
			var got struct {
				Decision permission.Decision `json:"decision"`
			}
			if err := json.Unmarshal([]byte(jout), &got); err != nil || got.Decision.Behavior != tc.want || got.Decision.Reason == "" {
				t.Errorf("json: %v %s", err, jout)
			}
		})
	}
}
