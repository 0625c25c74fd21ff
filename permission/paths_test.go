package permission

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/interaction"
	"github.com/gantry-dev/gantry/settings"
	"github.com/gantry-dev/gantry/tool"
)

func TestFileRules(t *testing.T) {
	w := newWorld(t)
	// Symlinks: ./key → ~/.ssh/id_rsa; ./out → a directory outside.
	if err := os.WriteFile(filepath.Join(w.home, ".ssh", "id_rsa"), []byte("k"), 0o600); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(w.root, "elsewhere")
	evil := filepath.Join(w.root, "home", "u", "project_evil")
	for _, d := range []string{outside, evil} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	must(t, os.Symlink(filepath.Join(w.home, ".ssh", "id_rsa"), filepath.Join(w.work, "key")))
	must(t, os.Symlink(outside, filepath.Join(w.work, "out")))
	must(t, os.WriteFile(filepath.Join(w.work, "src", "a.go"), []byte("package a"), 0o644))

	R := func(p string) call1 { return call1{tool: "Read", input: file(p)} }
	E := func(p string, mode tool.Mode) call1 {
		return call1{tool: "Edit", input: map[string]any{"file_path": p, "old_string": "a", "new_string": "b"}, mode: mode}
	}
	runCases(t, w, []decisionCase{
		{name: "read inside runs", call: R("src/a.go"), want: tool.Allow},
		{name: "read absolute inside runs", call: R(filepath.Join(w.work, "src", "a.go")), want: tool.Allow},
		{name: "case 20 sibling with common prefix is outside", call: R(filepath.Join(evil, "s")), want: tool.Ask},
		{name: "case 21 traversal normalised", call: R("src/../../../etc/passwd"), want: tool.Ask},
		{name: "case 22 symlink deny on target", allow: []string{"Read(./**)"}, deny: []string{"Read(~/.ssh/**)"}, call: R("key"), want: tool.Deny},
		{name: "symlink allow needs target too", allow: []string{"Read(./**)"}, call: R("key"), want: tool.Ask},
		{name: "case 23 acceptEdits write through symlink outside", call: E("out/x.txt", tool.ModeAcceptEdits), want: tool.Ask},
		{name: "acceptEdits inside", call: E("src/a.go", tool.ModeAcceptEdits), want: tool.Allow},
		{name: "default edit asks", call: E("src/a.go", ""), want: tool.Ask},
		{name: "edit allow rule", allow: []string{"Edit(/src/**)"}, call: E("src/a.go", ""), want: tool.Allow, wantRule: "Edit(/src/**)"},
		{name: "edit allow rule covers Write", allow: []string{"Edit(./src/**)"}, call: call1{tool: "Write", input: map[string]any{"file_path": "src/b.go", "content": "x"}}, want: tool.Allow},
		{name: "edit allow rule covers NotebookEdit", allow: []string{"Edit(*.ipynb)"}, call: call1{tool: "NotebookEdit", input: map[string]any{"notebook_path": "src/n.ipynb", "new_source": "x"}}, want: tool.Allow},
		{name: "read deny blocks edit", deny: []string{"Read(./secrets/**)"}, call: E("secrets/k", tool.ModeAcceptEdits), want: tool.Deny},
		{name: "bare name at any depth", deny: []string{"Read(.env)"}, call: R("src/deep/.env"), want: tool.Deny},
		{name: "anchored relative path", deny: []string{"Read(./.env)"}, call: R("src/.env"), want: tool.Allow},
		{name: "absolute rule", deny: []string{"Read(//etc/**)"}, call: R("/etc/hosts"), want: tool.Deny},
		{name: "home rule", allow: []string{"Read(~/notes/**)"}, call: R(filepath.Join(w.home, "notes", "n.md")), want: tool.Allow},
		{name: "directory rule covers contents", deny: []string{"Read(./src)"}, call: R("src/a.go"), want: tool.Deny},
		{name: "glob tool path", deny: []string{"Glob(//etc)"}, call: call1{tool: "Glob", input: map[string]any{"pattern": "*", "path": "/etc"}}, want: tool.Deny},
		{name: "grep without path searches cwd", call: call1{tool: "Grep", input: map[string]any{"pattern": "x"}}, want: tool.Allow},
		{name: "case 24 NUL byte", call: R("src/a\x00.go"), want: tool.Deny, wantReasonIn: "NUL"},
		{name: "case 24 NUL byte in command", call: call1{tool: "Bash", input: bash("cat a\x00b")}, want: tool.Deny, wantReasonIn: "NUL"},
		{name: "case 25 git hooks", allow: []string{"Edit(**)"}, call: E(".git/hooks/pre-commit", ""), want: tool.Ask},
		{name: "case 25 vscode", allow: []string{"Edit(**)"}, call: E(".vscode/settings.json", tool.ModeAcceptEdits), want: tool.Ask},
		{name: "case 25 mcp.json", allow: []string{"Edit(**)"}, call: E(".mcp.json", tool.ModeAcceptEdits), want: tool.Ask},
		{name: "protected shell rc", allow: []string{"Edit"}, call: E(filepath.Join(w.home, ".zshrc"), ""), want: tool.Ask},
		{name: "protected gantry settings", call: E(".gantry/settings.json", tool.ModeAcceptEdits), want: tool.Ask},
		{name: "a worktree's own files are not protected", call: E(".gantry/worktrees/fix-1a2b3c/main.go", tool.ModeAcceptEdits), want: tool.Allow},
		{name: "a worktree's .git is protected", call: E(".gantry/worktrees/fix-1a2b3c/.git", tool.ModeAcceptEdits), want: tool.Ask},
		{name: "a worktree's settings are protected", call: E(".gantry/worktrees/fix-1a2b3c/.gantry/settings.json", tool.ModeAcceptEdits), want: tool.Ask},
		{name: "worktree metadata is protected", call: E(".gantry/worktrees/.fix-1a2b3c.json", tool.ModeAcceptEdits), want: tool.Ask},
		{name: "the worktrees directory is protected", call: E(".gantry/worktrees/.gitignore", tool.ModeAcceptEdits), want: tool.Ask},
		{name: "protected in bypass allowed", call: E(".git/config", tool.ModeBypassPermissions), want: tool.Allow},
		{name: "reading protected is fine", call: R(".git/config"), want: tool.Allow},
		{name: "plan denies edit", call: E("src/a.go", tool.ModePlan), want: tool.Deny},
		{name: "plan allows read", call: call1{tool: "Read", input: file("src/a.go"), mode: tool.ModePlan}, want: tool.Allow},
		{name: "ask rule on path", ask: []string{"Edit(./src/**)"}, call: E("src/a.go", tool.ModeAcceptEdits), want: tool.Ask},
		{name: "case 26 model passes / as directory", call: call1{tool: "Glob", input: map[string]any{"pattern": "**/*", "path": "/"}}, want: tool.Ask},
		{name: "case 26 grep at root", call: call1{tool: "Grep", input: map[string]any{"pattern": "x", "path": "/"}}, want: tool.Ask},
		{name: "glob absolute pattern reaches out", call: call1{tool: "Glob", input: map[string]any{"pattern": "/etc/**/*.conf"}}, want: tool.Ask},
		{name: "glob parent pattern reaches out", call: call1{tool: "Glob", input: map[string]any{"pattern": "../../**/id_rsa"}}, want: tool.Ask},
		{name: "glob relative pattern fine", call: call1{tool: "Glob", input: map[string]any{"pattern": "src/**/*.go"}}, want: tool.Allow},
		{name: "glob pattern denied path", deny: []string{"Read(~/.ssh/**)"}, call: call1{tool: "Glob", input: map[string]any{"pattern": "~/.ssh/*"}}, want: tool.Deny},
		{name: "bare Read deny does not block edits", deny: []string{"Read"}, call: E("src/a.go", tool.ModeAcceptEdits), want: tool.Allow},
		{name: "bare Edit deny blocks Write", deny: []string{"Edit"}, call: call1{tool: "Write", input: map[string]any{"file_path": "src/b.go", "content": "x"}, mode: tool.ModeAcceptEdits}, want: tool.Deny},
		{name: "hook allow does not beat protected path", call: call1{tool: "Edit", input: file(".git/config"), hook: tool.Allow}, want: tool.Ask},
		{name: "hook allow approves ordinary edit", call: call1{tool: "Edit", input: file("src/a.go"), hook: tool.Allow}, want: tool.Allow},
		{name: "hook ask", allow: []string{"Edit"}, call: call1{tool: "Edit", input: file("src/a.go"), hook: tool.Ask}, want: tool.Ask},
		{name: "edit missing path", call: call1{tool: "Edit", input: map[string]any{}}, want: tool.Deny},
	})
}

func TestOtherTools(t *testing.T) {
	w := newWorld(t)
	F := func(u string) call1 { return call1{tool: "WebFetch", input: map[string]any{"url": u, "prompt": "p"}} }
	runCases(t, w, []decisionCase{
		{name: "domain exact", allow: []string{"WebFetch(domain:docs.x.io)"}, call: F("https://docs.x.io/a"), want: tool.Allow},
		{name: "domain case and trailing dot", allow: []string{"WebFetch(domain:Docs.X.io.)"}, call: F("https://DOCS.x.io./a"), want: tool.Allow},
		{name: "domain other host", allow: []string{"WebFetch(domain:x.io)"}, call: F("https://evil.io/?x.io"), want: tool.Ask},
		{name: "wildcard subdomains only", allow: []string{"WebFetch(domain:*.x.io)"}, call: F("https://x.io/"), want: tool.Ask},
		{name: "wildcard subdomain", allow: []string{"WebFetch(domain:*.x.io)"}, call: F("https://a.b.x.io/"), want: tool.Allow},
		{name: "suffix is not subdomain", allow: []string{"WebFetch(domain:*.x.io)"}, call: F("https://evilx.io/"), want: tool.Ask},
		{name: "domain deny", deny: []string{"WebFetch(domain:evil.io)"}, allow: []string{"WebFetch"}, call: F("https://evil.io/"), want: tool.Deny},
		{name: "read-only fetch of an unknown host asks", call: call1{tool: "WebFetch", input: map[string]any{"url": "https://x.io/", "prompt": "p"}, traits: tool.ReadOnlyTraits}, want: tool.Ask},
		{name: "read-only fetch allowed by its rule", allow: []string{"WebFetch(domain:x.io)"}, call: call1{tool: "WebFetch", input: map[string]any{"url": "https://x.io/", "prompt": "p"}, traits: tool.ReadOnlyTraits}, want: tool.Allow},
		{name: "read-only fetch in plan mode asks", call: call1{tool: "WebFetch", input: map[string]any{"url": "https://x.io/", "prompt": "p"}, traits: tool.ReadOnlyTraits, mode: tool.ModePlan}, want: tool.Ask},
		{name: "read-only web search asks", call: call1{tool: "WebSearch", input: map[string]any{"query": "go"}, traits: tool.ReadOnlyTraits}, want: tool.Ask},
		{name: "web search rule", allow: []string{"WebSearch"}, call: call1{tool: "WebSearch", input: map[string]any{"query": "go"}, traits: tool.ReadOnlyTraits}, want: tool.Allow},
		{name: "preapproved host (tool allow)", call: call1{tool: "WebFetch", input: map[string]any{"url": "https://go.dev/", "prompt": "p"}, traits: tool.ReadOnlyTraits, check: tool.Allow}, want: tool.Allow},
		{name: "preapproved host under a deny rule", deny: []string{"WebFetch(domain:go.dev)"}, call: call1{tool: "WebFetch", input: map[string]any{"url": "https://go.dev/", "prompt": "p"}, traits: tool.ReadOnlyTraits, check: tool.Allow}, want: tool.Deny},
		{name: "mcp server rule", allow: []string{"mcp__gh"}, call: call1{tool: "mcp__gh__list_issues", input: map[string]any{}}, want: tool.Allow},
		{name: "mcp server star rule", allow: []string{"mcp__gh__*"}, call: call1{tool: "mcp__gh__list_issues", input: map[string]any{}}, want: tool.Allow},
		{name: "mcp other server", allow: []string{"mcp__gh"}, call: call1{tool: "mcp__ghx__list", input: map[string]any{}}, want: tool.Ask},
		{name: "case 35 mcp readOnlyHint not approved", call: call1{tool: "mcp__gh__list", input: map[string]any{}, traits: tool.ReadOnlyTraits}, want: tool.Ask},
		{name: "read-only native tool runs", call: call1{tool: "TaskList", input: map[string]any{}, traits: tool.ReadOnlyTraits}, want: tool.Allow},
		{name: "param rule", allow: []string{"Agent(subagent_type:Explore)"}, call: call1{tool: "Agent", input: map[string]any{"prompt": "p", "subagent_type": "Explore"}}, want: tool.Allow},
		{name: "param rule other value", allow: []string{"Agent(subagent_type:Explore)"}, call: call1{tool: "Agent", input: map[string]any{"prompt": "p", "subagent_type": "general"}}, want: tool.Ask},
		{name: "param deny with wildcard", deny: []string{"Skill(skill:danger-*)"}, allow: []string{"Skill"}, call: call1{tool: "Skill", input: map[string]any{"skill": "danger-zone"}}, want: tool.Deny},
		{name: "planning tool allowed in plan", call: call1{tool: "ExitPlanMode", input: map[string]any{}, mode: tool.ModePlan, traits: tool.Traits{Planning: true}}, want: tool.Allow},
		{name: "planning tool asks outside plan", call: call1{tool: "TodoWrite", input: map[string]any{}, traits: tool.Traits{Planning: true}}, want: tool.Ask},
		{name: "planning name without the trait denied in plan", call: call1{tool: "ExitPlanMode", input: map[string]any{}, mode: tool.ModePlan}, want: tool.Deny},
		{name: "unimplemented planning name denied in plan", call: call1{tool: "TaskCreate", input: map[string]any{}, mode: tool.ModePlan}, want: tool.Deny},
		{name: "mcp tool claiming planning denied in plan", call: call1{tool: "mcp__x__plan", input: map[string]any{}, mode: tool.ModePlan, traits: tool.Traits{Planning: true}}, want: tool.Deny},
		{name: "read-only tool allowed in plan", call: call1{tool: "ToolSearch", input: map[string]any{}, mode: tool.ModePlan, traits: tool.ReadOnlyTraits}, want: tool.Allow},
		{name: "unknown tool asks", call: call1{tool: "Deploy", input: map[string]any{}}, want: tool.Ask},
		{name: "unknown tool denied in plan", call: call1{tool: "Deploy", input: map[string]any{}, mode: tool.ModePlan}, want: tool.Deny},
	})
}

func TestRuleMatcherTool(t *testing.T) {
	w := newWorld(t)
	type in struct {
		Target string `json:"target"`
	}
	deploy := tool.Must(tool.New("Deploy", "deploys", func(ctx context.Context, env *tool.Env, x in) (*tool.Result, error) { return nil, nil },
		tool.RuleMatchFunc(func(spec string, x in) bool {
			return spec == "env:"+x.Target || spec == "staging-only" && x.Target == "staging"
		})))
	e := w.engine(t, []string{"Deploy(staging-only)"}, []string{"Deploy(env:prod)"}, nil)
	for target, want := range map[string]tool.Behavior{"staging": tool.Allow, "prod": tool.Deny, "dev": tool.Ask} {
		raw, _ := json.Marshal(in{Target: target})
		d, err := e.Decide(context.Background(), &Request{Tool: deploy, Name: "Deploy", Input: raw, Env: &tool.Env{WorkDir: w.work}})
		if err != nil {
			t.Fatal(err)
		}
		if d.Behavior != want {
			t.Errorf("%s: %s, want %s (%s)", target, d.Behavior, want, d.Reason)
		}
	}
}

func TestHidden(t *testing.T) {
	w := newWorld(t)
	e := w.engine(t, []string{"Read"}, []string{"WebFetch", "Bash(*)", "mcp__evil__*", "Edit(./x)"}, nil)
	for name, want := range map[string]bool{"WebFetch": true, "Bash": true, "mcp__evil__run": true, "Edit": false, "Read": false, "mcp__good__x": false} {
		if got := e.Hidden(name); got != want {
			t.Errorf("Hidden(%s) = %v, want %v", name, got, want)
		}
	}
	if got, want := e.HiddenTools(), []string{"Bash", "WebFetch", "mcp__evil"}; !slices.Equal(got, want) {
		t.Errorf("HiddenTools = %v, want %v", got, want)
	}
}

func TestResolveAsk(t *testing.T) {
	w := newWorld(t)
	var got Decision
	cases := []struct {
		name   string
		answer Decision
		err    error
		want   Decision
	}{
		{name: "allow with updated input", answer: Decision{Behavior: tool.Allow, UpdatedInput: json.RawMessage(`{"command":"ls"}`)}, want: Decision{Behavior: tool.Allow, Source: "callback", UpdatedInput: json.RawMessage(`{"command":"ls"}`)}},
		{name: "deny with message", answer: Decision{Behavior: tool.Deny, Reason: "not now"}, want: Decision{Behavior: tool.Deny, Source: "callback", Reason: "not now"}},
		{name: "interrupt", answer: Decision{Behavior: tool.Deny, Interrupt: true}, want: Decision{Behavior: tool.Deny, Source: "callback", Reason: "denied by the user", Interrupt: true}},
		{name: "bad answer", answer: Decision{Behavior: tool.Ask}, want: Decision{Behavior: tool.Deny, Source: "callback", Reason: "the permission callback gave no answer"}},
		{name: "callback error", err: errors.New("tty gone"), want: Decision{Behavior: tool.Deny, Source: "callback", Reason: "asking for permission failed (tty gone)"}},
		{name: "nobody", err: fmt.Errorf("x: %w", interaction.ErrNobody), want: Decision{Behavior: tool.Deny, Source: "default", Reason: "; nobody can approve it in this session"}},
	}
	e, err := NewEngine(Options{Home: w.home})
	must(t, err)
	req := &Request{Tool: named("Bash"), Input: json.RawMessage(`{"command":"npm i"}`), Env: &tool.Env{WorkDir: w.work}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, err := e.Decide(context.Background(), req)
			must(t, err)
			if d.Behavior != tool.Ask {
				t.Fatalf("engine decided %+v, want ask", d)
			}
			d = ResolveAsk(context.Background(), req, d, func(ctx context.Context, req *Request, s Decision) (Decision, error) {
				got = s
				return tc.answer, tc.err
			})
			if got.Behavior != tool.Ask || got.Reason == "" {
				t.Errorf("callback saw %+v, want an ask with a reason", got)
			}
			if d.Behavior != tc.want.Behavior || !strings.HasSuffix(d.Reason, tc.want.Reason) || d.Source != tc.want.Source || d.Interrupt != tc.want.Interrupt || string(d.UpdatedInput) != string(tc.want.UpdatedInput) {
				t.Errorf("decision %+v, want %+v", d, tc.want)
			}
		})
	}
	// No callback: nobody can approve.
	if d := ResolveAsk(context.Background(), req, Decision{Behavior: tool.Ask, Reason: "why"}, nil); d.Behavior != tool.Deny || !strings.Contains(d.Reason, "nobody can approve") {
		t.Errorf("no callback: %+v", d)
	}
	// Final decisions pass through untouched.
	for _, b := range []tool.Behavior{tool.Allow, tool.Deny} {
		if d := ResolveAsk(context.Background(), req, Decision{Behavior: b, Reason: "r"}, nil); d.Behavior != b || d.Reason != "r" {
			t.Errorf("%s: %+v", b, d)
		}
	}
	// dontAsk never calls back (the engine already denies, and so does
	// ResolveAsk for an ask from elsewhere).
	called := false
	cb := func(context.Context, *Request, Decision) (Decision, error) {
		called = true
		return Decision{Behavior: tool.Allow}, nil
	}
	dreq := &Request{Tool: named("Bash"), Input: json.RawMessage(`{"command":"npm i"}`), Env: &tool.Env{WorkDir: w.work, Mode: tool.ModeDontAsk}}
	d, err := e.Decide(context.Background(), dreq)
	if err != nil || d.Behavior != tool.Deny {
		t.Errorf("dontAsk engine: %+v %v", d, err)
	}
	if d := ResolveAsk(context.Background(), dreq, Decision{Behavior: tool.Ask}, cb); d.Behavior != tool.Deny || called {
		t.Errorf("dontAsk: %+v called=%v", d, called)
	}
	// A cancelled context denies without calling back.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if d := ResolveAsk(ctx, req, Decision{Behavior: tool.Ask}, cb); d.Behavior != tool.Deny || called {
		t.Errorf("cancelled: %+v called=%v", d, called)
	}
}

func TestApplyUpdates(t *testing.T) {
	w := newWorld(t)
	paths := map[settings.Scope]string{
		settings.ScopeLocal: filepath.Join(w.work, ".gantry", "settings.local.json"),
		settings.ScopeUser:  filepath.Join(w.home, ".gantry", "settings.json"),
	}
	must(t, os.MkdirAll(filepath.Dir(paths[settings.ScopeLocal]), 0o755))
	must(t, os.WriteFile(paths[settings.ScopeLocal], []byte(`{"model":"x","permissions":{"allow":["Bash(ls)"]}}`), 0o644))
	e := w.engine(t, nil, nil, nil)
	c := call1{tool: "Bash", input: bash("npm test")}
	if d := w.decide(t, e, c); d.Behavior != tool.Ask {
		t.Fatalf("before: %+v", d)
	}
	must(t, e.Apply(Update{Destination: ToSession, Kind: settings.Allow, Rules: []string{"Bash(npm test)"}}, nil))
	if d := w.decide(t, e, c); d.Behavior != tool.Allow || d.Source != "session" {
		t.Fatalf("after session update: %+v", d)
	}
	must(t, e.Apply(Update{Destination: ToLocal, Kind: settings.Deny, Rules: []string{"Bash(npm test)"}, Mode: tool.ModePlan}, paths))
	if d := w.decide(t, e, c); d.Behavior != tool.Deny || d.Source != "local" {
		t.Fatalf("after local deny: %+v", d)
	}
	f, err := settings.ReadFile(paths[settings.ScopeLocal])
	must(t, err)
	if !slices.Equal(f.Permissions.Deny, []string{"Bash(npm test)"}) || !slices.Equal(f.Permissions.Allow, []string{"Bash(ls)"}) || f.Permissions.DefaultMode != tool.ModePlan {
		t.Errorf("file = %+v", f.Permissions)
	}
	raw, _ := os.ReadFile(paths[settings.ScopeLocal])
	var doc map[string]any
	must(t, json.Unmarshal(raw, &doc))
	if doc["model"] != "x" {
		t.Errorf("unknown key lost: %s", raw)
	}
	if e.Mode() != tool.ModePlan {
		t.Errorf("mode = %s", e.Mode())
	}
	if err := e.Apply(Update{Destination: ToSession, Kind: settings.Allow, Rules: []string{"Bash(("}}, nil); err == nil {
		t.Error("bad rule accepted")
	}
	if err := e.Apply(Update{Destination: ToProject, Kind: settings.Allow, Rules: []string{"Read"}}, paths); err == nil {
		t.Error("missing path accepted")
	}
	// Additional directory for the session.
	other := filepath.Join(w.root, "shared")
	must(t, os.MkdirAll(other, 0o755))
	r := call1{tool: "Read", input: file(filepath.Join(other, "x"))}
	e2 := w.engine(t, nil, nil, nil)
	if d := w.decide(t, e2, r); d.Behavior != tool.Ask {
		t.Fatalf("outside before: %+v", d)
	}
	must(t, e2.Apply(Update{Destination: ToSession, Directories: []string{other}}, nil))
	if d := w.decide(t, e2, r); d.Behavior != tool.Allow {
		t.Fatalf("after add dir: %+v", d)
	}
}

func TestCheckBypass(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	cases := []struct {
		mode tool.Mode
		uid  int
		env  func(string) string
		ok   bool
	}{
		{tool.ModeBypassPermissions, 0, env(), false},
		{tool.ModeBypassPermissions, 0, env("IS_SANDBOX", "1"), true},
		{tool.ModeBypassPermissions, 0, env("GANTRY_ALLOW_ROOT", "1"), true},
		{tool.ModeBypassPermissions, 0, env("IS_SANDBOX", "true"), false},
		{tool.ModeBypassPermissions, 1000, env(), true},
		{tool.ModeDefault, 0, env(), true},
	}
	for _, c := range cases {
		err := CheckBypass(c.mode, c.uid, c.env)
		if (err == nil) != c.ok || err != nil && !errors.Is(err, ErrRootBypass) {
			t.Errorf("CheckBypass(%s, %d) = %v, want ok=%v", c.mode, c.uid, err, c.ok)
		}
	}
}

func TestBadRulesAreErrors(t *testing.T) {
	_, err := NewEngine(Options{Rules: []RuleSet{{Source: "user", Deny: []string{"Bash(rm *"}}}})
	if !errors.Is(err, ErrBadRule) {
		t.Fatalf("err = %v", err)
	}
}

func TestDecideErrors(t *testing.T) {
	e, _ := NewEngine(Options{})
	for _, req := range []*Request{nil, {Tool: named("Read")}, {Tool: named("Read"), Env: &tool.Env{WorkDir: "rel"}}, {Env: &tool.Env{WorkDir: "/"}}, {Tool: named("Read"), Env: &tool.Env{WorkDir: "/", Mode: "yolo"}}} {
		if _, err := e.Decide(context.Background(), req); err == nil {
			t.Errorf("Decide(%+v) succeeded", req)
		}
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
