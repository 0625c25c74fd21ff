package permission

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/tool"
)

// fakeSandbox answers like *sandbox.Sandbox: contained unless unavailable;
// commands starting with "docker" are excluded.
type fakeSandbox struct {
	auto, unsandboxed, unavailable bool
}

func (f fakeSandbox) Runs(cmd string, disable bool) bool {
	if f.unavailable || (disable && f.unsandboxed) {
		return false
	}
	return !strings.HasPrefix(cmd, "docker")
}
func (f fakeSandbox) AutoAllow() bool        { return !f.unavailable && f.auto }
func (f fakeSandbox) AllowUnsandboxed() bool { return !f.unavailable && f.unsandboxed }
func (f fakeSandbox) Unavailable() bool      { return f.unavailable }

func TestSandboxRules(t *testing.T) {
	w := newWorld(t)
	bash := func(cmd string, disable bool) map[string]any {
		in := map[string]any{"command": cmd}
		if disable {
			in["dangerouslyDisableSandbox"] = true
		}
		return in
	}
	on := fakeSandbox{auto: true, unsandboxed: true}
	for _, tc := range []struct {
		name  string
		sb    ShellSandbox
		allow []string
		deny  []string
		cmd   string
		dis   bool
		mode  tool.Mode
		want  tool.Behavior
	}{
		// autoAllowBashIfSandboxed
		{"auto-allow", on, nil, nil, "make build && rm -rf out", false, "", tool.Allow},
		{"auto-allow off", fakeSandbox{unsandboxed: true}, nil, nil, "make build", false, "", tool.Ask},
		{"auto-allow: deny rule", on, nil, []string{"Bash(rm *)"}, "rm -rf out", false, "", tool.Deny},
		{"auto-allow: excluded runs outside", on, nil, nil, "docker run x", false, "", tool.Ask},
		{"auto-allow: reads outside ask", on, nil, nil, "cp ~/.ssh/id_rsa ./k", false, "", tool.Ask},
		{"auto-allow: plan stays read-only", on, nil, nil, "make build", false, tool.ModePlan, tool.Deny},
		{"auto-allow: safety checks stay", on, nil, nil, "rm -rf ~", false, "", tool.Ask},
		// dangerouslyDisableSandbox
		{"disable asks", on, nil, nil, "ls", true, "", tool.Ask},
		{"disable asks in acceptEdits", on, nil, nil, "touch x", true, tool.ModeAcceptEdits, tool.Ask},
		{"disable denied in dontAsk", on, nil, nil, "ls", true, tool.ModeDontAsk, tool.Deny},
		{"disable denied in plan", on, nil, nil, "ls", true, tool.ModePlan, tool.Deny},
		{"disable asks in bypass", on, nil, nil, "make build", true, tool.ModeBypassPermissions, tool.Ask},
		{"disable with allow rule in bypass", on, []string{"Bash(make *)"}, nil, "make build", true, tool.ModeBypassPermissions, tool.Allow},
		{"disable with allow rule", on, []string{"Bash(make *)"}, nil, "make build", true, "", tool.Allow},
		{"disable ignored when not honoured", fakeSandbox{auto: true}, nil, nil, "make build", true, "", tool.Allow},
		{"disable on an excluded command", on, nil, nil, "docker ps", true, "", tool.Ask},
		// enabled but unavailable: tightened
		{"unavailable: acceptEdits needs a rule", fakeSandbox{unavailable: true}, nil, nil, "touch x", false, tool.ModeAcceptEdits, tool.Ask},
		{"unavailable: bypass needs a rule", fakeSandbox{unavailable: true}, nil, nil, "make build", false, tool.ModeBypassPermissions, tool.Ask},
		{"unavailable: allow rule", fakeSandbox{unavailable: true}, []string{"Bash(make *)"}, nil, "make build", false, tool.ModeBypassPermissions, tool.Allow},
		{"unavailable: read-only runs", fakeSandbox{unavailable: true}, nil, nil, "ls src", false, tool.ModeAcceptEdits, tool.Allow},
		// no sandbox: the engine as before
		{"no sandbox", nil, nil, nil, "touch x", true, tool.ModeAcceptEdits, tool.Allow},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := NewEngine(Options{Home: w.home, Sandbox: tc.sb,
				Rules: []RuleSet{{Source: "project", Root: w.work, Allow: tc.allow, Deny: tc.deny}}})
			if err != nil {
				t.Fatal(err)
			}
			d := w.decide(t, e, call1{tool: "Bash", input: bash(tc.cmd, tc.dis), mode: tc.mode})
			if d.Behavior != tc.want {
				t.Errorf("%q: %s (%s), want %s", tc.cmd, d.Behavior, d.Reason, tc.want)
			}
		})
	}
}

func TestSandboxPaths(t *testing.T) {
	rules := []RuleSet{{Root: "/proj/root",
		Deny:  []string{"Read(~/.ssh/**)", "Read(./.env)", "Read(//etc/shadow)", "Read(*.pem)", "Read(~/.aws/*.json)", "Edit(/secrets/**)", "Bash(rm *)", "Read"},
		Allow: []string{"Edit(//opt/data/**)", "Edit(~/notes/todo.md)", "Edit(./build/*.o)", "Read(//x/**)", "Write(/out/**)"},
	}}
	hide, ro, write := SandboxPaths(rules, "/work", "/home/u")
	if want := []string{"/home/u/.ssh", "/work/.env", "/etc/shadow", "/home/u/.aws"}; !slices.Equal(hide, want) {
		t.Errorf("hide %q, want %q", hide, want)
	}
	if want := []string{filepath.Clean("/proj/root/secrets")}; !slices.Equal(ro, want) {
		t.Errorf("read-only %q, want %q", ro, want)
	}
	if want := []string{"/opt/data", "/home/u/notes/todo.md", "/proj/root/out"}; !slices.Equal(write, want) {
		t.Errorf("write %q, want %q", write, want)
	}
}
