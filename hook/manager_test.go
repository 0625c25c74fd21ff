package hook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/gantry-dev/gantry/sandbox"
	"github.com/gantry-dev/gantry/settings"
	"github.com/gantry-dev/gantry/tool"
)

func TestMain(m *testing.M) {
	sandbox.Main() // the test binary is the sandbox helper
	goleak.VerifyTestMain(m)
}

func script(t testing.TB, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func cmdHook(command string, timeout float64) settings.HookCommand {
	return settings.HookCommand{Type: "command", Command: command, Timeout: timeout}
}

func manager(t testing.TB, hooks map[string][]settings.HookMatcher, env map[string]string) *Manager {
	t.Helper()
	m, err := NewManager(Options{Hooks: hooks, Env: env})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func pre(t testing.TB, tool, command string) *Input {
	in, _ := json.Marshal(map[string]string{"command": command})
	return &Input{Event: PreToolUse, SessionID: "s1", CWD: t.TempDir(), ToolName: tool, ToolInput: in, ToolUseID: "tu1"}
}

func TestCommandHooks(t *testing.T) {
	one := func(matcher string, hs ...settings.HookCommand) map[string][]settings.HookMatcher {
		return map[string][]settings.HookMatcher{"PreToolUse": {{Matcher: matcher, Hooks: hs}}}
	}
	cases := []struct {
		name      string
		hooks     map[string][]settings.HookMatcher
		in        *Input
		wantNil   bool
		wantErr   bool
		decision  tool.Behavior
		block     bool
		reasonIn  string
		input     string
		ctxIn     string
		sysMsgIn  string
		stop      bool
		suppress  bool
		errTextIn string
	}{
		{name: "allow", hooks: one("Bash", cmdHook(script(t, "allow.sh"), 0)), in: pre(t, "Bash", "ls"), decision: tool.Allow, reasonIn: ""},
		{name: "matcher does not match", hooks: one("Edit|Write", cmdHook(script(t, "allow.sh"), 0)), in: pre(t, "Bash", "ls"), wantNil: true},
		{name: "matcher is anchored", hooks: one("Bas", cmdHook(script(t, "allow.sh"), 0)), in: pre(t, "Bash", "ls"), wantNil: true},
		{name: "star matches all", hooks: one("*", cmdHook(script(t, "allow.sh"), 0)), in: pre(t, "Read", "x"), decision: tool.Allow},
		{name: "mcp regex", hooks: one("mcp__gh__.*", cmdHook(script(t, "allow.sh"), 0)), in: pre(t, "mcp__gh__list", "x"), decision: tool.Allow},
		{name: "deny", hooks: one("", cmdHook(script(t, "deny.sh"), 0)), in: pre(t, "Bash", "curl x"), decision: tool.Deny, reasonIn: "no network"},
		{name: "deny hook silent", hooks: one("", cmdHook(script(t, "deny.sh"), 0)), in: pre(t, "Bash", "ls"), decision: tool.Passthrough},
		{name: "deny beats allow", hooks: one("", cmdHook(script(t, "allow.sh"), 0), cmdHook(script(t, "deny.sh"), 0)), in: pre(t, "Bash", "curl x"), decision: tool.Deny, reasonIn: "no network"},
		{name: "rewrite", hooks: one("", cmdHook(script(t, "rewrite.sh"), 0)), in: pre(t, "Bash", "rm -rf x"), input: `{"command":"echo safe"}`, ctxIn: "rewritten"},
		{name: "same rewrite twice is fine", hooks: one("", cmdHook(script(t, "rewrite.sh"), 0), cmdHook(script(t, "rewrite.sh"), 0)), in: pre(t, "Bash", "x"), input: `{"command":"echo safe"}`, ctxIn: "rewritten"},
		{name: "conflicting rewrites block", hooks: one("", cmdHook(script(t, "rewrite.sh"), 0), cmdHook("REWRITE_TO=other "+script(t, "rewrite.sh"), 0)), in: pre(t, "Bash", "x"), block: true, decision: tool.Deny, reasonIn: "disagree", ctxIn: "rewritten"},
		{name: "exit 2 blocks with stderr", hooks: one("", cmdHook(script(t, "exit2.sh"), 0)), in: pre(t, "Bash", "x"), block: true, decision: tool.Deny, reasonIn: "policy: this tool is blocked"},
		{name: "exit 1 is a warning", hooks: one("", cmdHook(script(t, "fail.sh"), 0)), in: pre(t, "Bash", "x"), sysMsgIn: "lint server unreachable"},
		{name: "exit 1 alongside allow", hooks: one("", cmdHook(script(t, "fail.sh"), 0), cmdHook(script(t, "allow.sh"), 0)), in: pre(t, "Bash", "x"), decision: tool.Allow, sysMsgIn: "exit 1"},
		{name: "cannot start blocks PreToolUse", hooks: one("", cmdHook(filepath.Join(t.TempDir(), "missing.sh"), 0)), in: pre(t, "Bash", "x"), wantErr: true, errTextIn: "could not start"},
		{name: "not executable blocks PreToolUse", hooks: one("", cmdHook(script(t, "../manager.go"), 0)), in: pre(t, "Bash", "x"), wantErr: true, errTextIn: "could not start"},
		{name: "bad JSON blocks PreToolUse", hooks: one("", cmdHook(script(t, "badjson.sh"), 0)), in: pre(t, "Bash", "x"), wantErr: true, errTextIn: "JSON"},
		{name: "cannot start is a warning elsewhere", hooks: map[string][]settings.HookMatcher{"PostToolUse": {{Hooks: []settings.HookCommand{cmdHook("/nonexistent/x", 0)}}}},
			in: &Input{Event: PostToolUse, ToolName: "Bash", CWD: t.TempDir()}, sysMsgIn: "could not start"},
		{name: "plain stdout is context for prompts", hooks: map[string][]settings.HookMatcher{"UserPromptSubmit": {{Hooks: []settings.HookCommand{cmdHook(script(t, "context.sh"), 0)}}}},
			in: &Input{Event: UserPromptSubmit, Prompt: "hi", CWD: t.TempDir()}, ctxIn: "branch: main"},
		{name: "plain stdout ignored for tools", hooks: one("", cmdHook(script(t, "context.sh"), 0)), in: pre(t, "Bash", "x")},
		{name: "continue false and env", hooks: map[string][]settings.HookMatcher{"Stop": {{Hooks: []settings.HookCommand{cmdHook(script(t, "stop.sh"), 0)}}}},
			in: &Input{Event: Stop, CWD: "/"}, stop: true, suppress: true, sysMsgIn: "project /"},
		{name: "session start matcher on source", hooks: map[string][]settings.HookMatcher{"SessionStart": {{Matcher: "resume", Hooks: []settings.HookCommand{cmdHook(script(t, "context.sh"), 0)}}}},
			in: &Input{Event: SessionStart, Source: "startup", CWD: t.TempDir()}, wantNil: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := manager(t, tc.hooks, nil)
			out, err := m.Run(context.Background(), tc.in)
			if tc.wantErr {
				if err == nil || !errors.Is(err, ErrNoVerdict) || !strings.Contains(err.Error(), tc.errTextIn) {
					t.Fatalf("err = %v, want ErrNoVerdict containing %q (out %+v)", err, tc.errTextIn, out)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantNil {
				if out != nil {
					t.Fatalf("out = %+v, want nil", out)
				}
				return
			}
			if out == nil {
				t.Fatal("no output")
			}
			if out.Decision != tc.decision || out.Block != tc.block {
				t.Errorf("decision %q block %v, want %q %v (%+v)", out.Decision, out.Block, tc.decision, tc.block, out)
			}
			if !strings.Contains(out.Reason, tc.reasonIn) {
				t.Errorf("reason %q, want %q", out.Reason, tc.reasonIn)
			}
			if tc.input != "" && !jsonEqual(out.UpdatedInput, json.RawMessage(tc.input)) || tc.input == "" && out.UpdatedInput != nil {
				t.Errorf("updated input %s, want %s", out.UpdatedInput, tc.input)
			}
			if !strings.Contains(out.AdditionalContext, tc.ctxIn) || tc.ctxIn == "" && out.AdditionalContext != "" {
				t.Errorf("context %q, want %q", out.AdditionalContext, tc.ctxIn)
			}
			if !strings.Contains(out.SystemMessage, tc.sysMsgIn) || tc.sysMsgIn == "" && out.SystemMessage != "" {
				t.Errorf("system message %q, want %q", out.SystemMessage, tc.sysMsgIn)
			}
			if (out.Continue != nil && !*out.Continue) != tc.stop || out.SuppressOutput != tc.suppress {
				t.Errorf("continue %v suppress %v", out.Continue, out.SuppressOutput)
			}
		})
	}
}

// TestTimeoutKillsProcessGroup: a hanging hook times out, the call is
// blocked (error), and its whole process group is gone.
func TestTimeoutKillsProcessGroup(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pids")
	m, err := NewManager(Options{
		Hooks: map[string][]settings.HookMatcher{"PreToolUse": {{Hooks: []settings.HookCommand{cmdHook(script(t, "hang.sh"), 0.5)}}}},
		Env:   map[string]string{"PIDFILE": pidfile},
	})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = m.Run(context.Background(), pre(t, "Bash", "x"))
	if !errors.Is(err, ErrNoVerdict) || !strings.Contains(err.Error(), "timed out") {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Fatalf("took %s", d)
	}
	b, err := os.ReadFile(pidfile)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range strings.Fields(string(b)) {
		pid, _ := strconv.Atoi(f)
		// The group was killed with SIGKILL; give the kernel a moment to
		// reap (the child is re-parented to init).
		deadline := time.Now().Add(10 * time.Second)
		for syscall.Kill(pid, 0) == nil && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if syscall.Kill(pid, 0) == nil {
			if st, err := os.ReadFile("/proc/" + f + "/stat"); err == nil && strings.Contains(string(st), ") Z ") {
				continue // a zombie awaiting its new parent: dead
			}
			t.Errorf("process %d survived the timeout", pid)
		}
	}
}

func TestCallbacks(t *testing.T) {
	m := manager(t, nil, nil)
	var calls atomic.Int32
	must(t, m.On(PreToolUse, "Edit|Write", func(ctx context.Context, in *Input) (*Output, error) {
		calls.Add(1)
		return &Output{Decision: tool.Ask, Reason: "review edits"}, nil
	}))
	must(t, m.On(PreToolUse, "", func(ctx context.Context, in *Input) (*Output, error) {
		calls.Add(1)
		return &Output{Decision: tool.Allow}, nil
	}))
	out, err := m.Run(context.Background(), &Input{Event: PreToolUse, ToolName: "Edit"})
	if err != nil || out.Decision != tool.Ask || out.Reason != "review edits" || calls.Load() != 2 {
		t.Fatalf("%+v %v calls=%d", out, err, calls.Load())
	}
	out, err = m.Run(context.Background(), &Input{Event: PreToolUse, ToolName: "Read"})
	if err != nil || out.Decision != tool.Allow {
		t.Fatalf("%+v %v", out, err)
	}
	// A panicking callback gives no verdict: the call is blocked.
	must(t, m.On(PreToolUse, "Bash", func(context.Context, *Input) (*Output, error) { panic("boom") }))
	if _, err := m.Run(context.Background(), &Input{Event: PreToolUse, ToolName: "Bash"}); !errors.Is(err, ErrNoVerdict) {
		t.Fatalf("panic: err = %v", err)
	}
	// Errors elsewhere are warnings.
	must(t, m.On(Notification, "", func(context.Context, *Input) (*Output, error) { return nil, errors.New("no desktop") }))
	out, err = m.Run(context.Background(), &Input{Event: Notification, Message: "hi"})
	if err != nil || !strings.Contains(out.SystemMessage, "no desktop") {
		t.Fatalf("%+v %v", out, err)
	}
	if err := m.On("Nope", "", func(context.Context, *Input) (*Output, error) { return nil, nil }); err == nil {
		t.Error("unknown event accepted")
	}
	if err := m.On(Stop, "(", func(context.Context, *Input) (*Output, error) { return nil, nil }); err == nil {
		t.Error("bad regexp accepted")
	}
	if !m.Has(Notification) || m.Has(PreCompact) {
		t.Error("Has")
	}
}

func TestParallel(t *testing.T) {
	// Four hooks meet at a barrier: each checks in, waits until all four
	// have, then reports done. Run one at a time, the first would wait
	// until its timeout and never report.
	dir := t.TempDir()
	in, done := filepath.Join(dir, "in"), filepath.Join(dir, "done")
	for _, d := range []string{in, done} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var hooks []settings.HookCommand
	for i := range 4 {
		hooks = append(hooks, cmdHook(fmt.Sprintf(
			`touch '%[1]s/%[3]d'; while [ "$(ls '%[1]s' | wc -l)" -lt 4 ]; do sleep 0.01; done; touch '%[2]s/%[3]d'`,
			in, done, i), 10))
	}
	m := manager(t, map[string][]settings.HookMatcher{"PostToolUse": {{Hooks: hooks}}}, nil)
	if _, err := m.Run(context.Background(), &Input{Event: PostToolUse, ToolName: "Bash"}); err != nil {
		t.Fatal(err)
	}
	if ents, err := os.ReadDir(done); err != nil || len(ents) != 4 {
		t.Fatalf("%d of 4 hooks passed the barrier (%v): not parallel", len(ents), err)
	}
}

func TestCancel(t *testing.T) {
	m := manager(t, map[string][]settings.HookMatcher{"PreToolUse": {{Hooks: []settings.HookCommand{cmdHook("sleep 30", 0)}}}}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	if _, err := m.Run(ctx, pre(t, "Bash", "x")); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
}

func TestNewManagerErrors(t *testing.T) {
	bad := []map[string][]settings.HookMatcher{
		{"PreToolUze": {{Hooks: []settings.HookCommand{cmdHook("true", 0)}}}},
		{"PreToolUse": {{Matcher: "(", Hooks: []settings.HookCommand{cmdHook("true", 0)}}}},
		{"PreToolUse": {{Hooks: []settings.HookCommand{{Type: "prompt", Command: "x"}}}}},
		{"PreToolUse": {{Hooks: []settings.HookCommand{{Type: "command"}}}}},
	}
	for _, h := range bad {
		if _, err := NewManager(Options{Hooks: h}); err == nil {
			t.Errorf("NewManager(%v) accepted", h)
		}
	}
}

func TestParseOutput(t *testing.T) {
	cases := []struct {
		event Event
		in    string
		want  Output
		err   bool
	}{
		{PreToolUse, ``, Output{}, false},
		{PreToolUse, `{"decision":"block","reason":"no"}`, Output{Block: true, Reason: "no", Decision: tool.Deny}, false},
		{PreToolUse, `{"decision":"approve"}`, Output{Decision: tool.Allow}, false},
		{PostToolUse, `{"decision":"block","reason":"fix lint"}`, Output{Block: true, Reason: "fix lint"}, false},
		{PreToolUse, `{"hookSpecificOutput":{"permissionDecision":"ask","permissionDecisionReason":"sure?"}}`, Output{Decision: tool.Ask, Reason: "sure?"}, false},
		{PermissionRequest, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"nope"}}}`, Output{Decision: tool.Deny, Reason: "nope"}, false},
		{PreToolUse, `{"hookSpecificOutput":{"permissionDecision":"maybe"}}`, Output{}, true},
		{PreToolUse, `{"hookSpecificOutput":{"hookEventName":"PostToolUse"}}`, Output{}, true},
		{PreToolUse, `{"hookSpecificOutput":{"updatedInput":"rm"}}`, Output{}, true},
		{PreToolUse, `{"decision":"perhaps"}`, Output{}, true},
		{PreToolUse, `{`, Output{}, true},
		{SessionStart, "hello", Output{AdditionalContext: "hello"}, false},
	}
	for _, c := range cases {
		got, err := ParseOutput(c.event, []byte(c.in))
		if c.err {
			if err == nil {
				t.Errorf("%s %s: accepted: %+v", c.event, c.in, got)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s %s: %v", c.event, c.in, err)
			continue
		}
		if got.Block != c.want.Block || got.Reason != c.want.Reason || got.Decision != c.want.Decision || got.AdditionalContext != c.want.AdditionalContext {
			t.Errorf("%s %s: %+v, want %+v", c.event, c.in, got, c.want)
		}
	}
}

func FuzzParseOutput(f *testing.F) {
	for _, s := range []string{`{"continue":false}`, `{"hookSpecificOutput":{"permissionDecision":"deny","updatedInput":{"a":1}}}`, `text`, `{"decision":"block"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out, err := ParseOutput(PreToolUse, []byte(s))
		if err != nil {
			return
		}
		switch out.Decision {
		case tool.Passthrough, tool.Allow, tool.Ask, tool.Deny:
		default:
			t.Fatalf("decision %q", out.Decision)
		}
		if out.Block && out.Decision != tool.Deny {
			t.Fatalf("block without deny: %+v", out)
		}
	})
}

func TestCombine(t *testing.T) {
	f := false
	out := Combine(PreToolUse, &Output{Decision: tool.Allow, AdditionalContext: "a"}, nil, &Output{Decision: tool.Ask, Reason: "r"}, &Output{Continue: &f, StopReason: "s"})
	if out.Decision != tool.Ask || out.Reason != "r" || out.AdditionalContext != "a" || out.Continue == nil || *out.Continue || out.StopReason != "s" {
		t.Fatalf("%+v", out)
	}
}

func BenchmarkRunCallbacks(b *testing.B) {
	m := manager(b, nil, nil)
	for range 4 {
		must(b, m.On(PreToolUse, "Bash|Edit", func(context.Context, *Input) (*Output, error) { return &Output{Decision: tool.Allow}, nil }))
	}
	in := &Input{Event: PreToolUse, ToolName: "Bash", ToolInput: json.RawMessage(`{"command":"ls"}`)}
	for b.Loop() {
		if _, err := m.Run(context.Background(), in); err != nil {
			b.Fatal(err)
		}
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestHookEnvironment: a command hook gets the allow-listed environment —
// never a credential, never an unlisted variable — plus what the user
// configured, but never Gantry's own provider keys.
func TestHookEnvironment(t *testing.T) {
	m, err := NewManager(Options{
		Hooks: map[string][]settings.HookMatcher{"UserPromptSubmit": {{Hooks: []settings.HookCommand{cmdHook("env", 0)}}}},
		Environ: []string{"PATH=" + os.Getenv("PATH"), "HOME=/home/h", "ANTHROPIC_API_KEY=sk-ant", "GITHUB_TOKEN=ghp",
			"UNLISTED=1", "BASH_ENV=/rc"},
		Env: map[string]string{"CONFIGURED": "yes", "OPENAI_API_KEY": "sk-oai"},
	})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	out, err := m.Run(context.Background(), &Input{Event: UserPromptSubmit, Prompt: "hi", CWD: dir})
	if err != nil || out == nil {
		t.Fatal(out, err)
	}
	env := out.AdditionalContext
	for _, want := range []string{"HOME=/home/h", "CONFIGURED=yes", "GANTRY_PROJECT_DIR=" + dir} {
		if !strings.Contains(env, want) {
			t.Errorf("%s missing from the hook's environment:\n%s", want, env)
		}
	}
	for _, gone := range []string{"sk-ant", "ghp", "UNLISTED", "sk-oai", "BASH_ENV"} {
		if strings.Contains(env, gone) {
			t.Errorf("%s reached the hook:\n%s", gone, env)
		}
	}
}

func TestHandles(t *testing.T) {
	pre := manager(t, nil, nil)
	must(t, pre.On(PreToolUse, "", func(context.Context, *Input) (*Output, error) { return nil, nil }))
	stop := manager(t, nil, nil)
	must(t, stop.On(Stop, "", func(context.Context, *Input) (*Output, error) { return nil, nil }))
	fn := RunnerFunc(func(context.Context, *Input) (*Output, error) { return nil, nil })
	for _, c := range []struct {
		name string
		r    Runner
		ev   Event
		want bool
	}{
		{"nil", nil, PreToolUse, false},
		{"func", fn, PostToolUse, true}, // no filter: it may run anything
		{"manager has", pre, PreToolUse, true},
		{"manager has not", pre, PostToolUse, false},
		{"empty manager", manager(t, nil, nil), PreToolUse, false},
		{"join", Join(pre, stop), Stop, true},
		{"join has not", Join(pre, stop), PostToolUse, false},
		{"join with func", Join(pre, fn), PostToolUse, true},
		{"join of one", Join(nil, pre), PostToolUse, false},
	} {
		if got := Handles(c.r, c.ev); got != c.want {
			t.Errorf("%s: Handles(%s) = %v", c.name, c.ev, got)
		}
	}
	// A hook registered later is seen.
	must(t, pre.On(PostToolUse, "Grep", func(context.Context, *Input) (*Output, error) { return nil, nil }))
	if !Handles(pre, PostToolUse) {
		t.Error("a hook added after the first check is not handled")
	}
}

func TestParseElicitationOutput(t *testing.T) {
	out, err := ParseOutput(Elicitation, []byte(`{"hookSpecificOutput":{"hookEventName":"Elicitation","action":"accept","content":{"name":"Bot"}}}`))
	if err != nil || out.Elicitation == nil || out.Elicitation.Action != "accept" || out.Elicitation.Content["name"] != "Bot" {
		t.Fatalf("%+v %v", out, err)
	}
	if _, err := ParseOutput(Elicitation, []byte(`{"hookSpecificOutput":{"action":"maybe"}}`)); err == nil {
		t.Error("unknown action accepted")
	}
	// Of several hooks the most refusing answer wins; a block declines.
	c := combine(Elicitation, []named{{out: &Output{Elicitation: &ElicitationAnswer{Action: "accept"}}}, {out: &Output{Elicitation: &ElicitationAnswer{Action: "cancel"}}}})
	if c.Elicitation.Action != "cancel" {
		t.Errorf("combined %+v", c.Elicitation)
	}
	c = combine(ElicitationResult, []named{{out: &Output{Elicitation: &ElicitationAnswer{Action: "accept"}}}, {out: &Output{Block: true}}})
	if c.Elicitation.Action != "decline" {
		t.Errorf("blocked %+v", c.Elicitation)
	}
	if s, ok := subject(&Input{Event: Elicitation, MCPServerName: "forms"}); !ok || s != "forms" {
		t.Errorf("subject %q %v", s, ok)
	}
}
