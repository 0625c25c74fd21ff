package executor

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gantry-dev/gantry/hook"
	"github.com/gantry-dev/gantry/permission"
	"github.com/gantry-dev/gantry/tool"
)

func TestUnknownToolSuggestsClosest(t *testing.T) {
	k := newKit(t)
	e := New(k.resolver(t), Options{Decider: allowAll()})
	tests := []struct {
		name, want, notWant string
	}{
		{"Slep", `"Sleep"`, ""},
		{"echo", `"Echo"`, ""},
		{"sleep_tool", `"Sleep"`, ""},
		{"Zzzzzzzzzzzz", "Available tools:", "Did you mean"},
	}
	for _, tc := range tests {
		b := run(t, e, call("u1", tc.name, `{}`))
		o := b.Outcomes[0]
		if o.Kind != KindUnknownTool || !o.Result.IsError {
			t.Errorf("%s: kind %q is_error %v", tc.name, o.Kind, o.Result.IsError)
		}
		if !strings.Contains(text(o), tc.want) {
			t.Errorf("%s: %q does not contain %q", tc.name, text(o), tc.want)
		}
		if tc.notWant != "" && strings.Contains(text(o), tc.notWant) {
			t.Errorf("%s: %q contains %q", tc.name, text(o), tc.notWant)
		}
	}
	if got := e.Stats().Snapshot().UnknownTools; got != 4 {
		t.Errorf("UnknownTools = %d, want 4", got)
	}
}

func TestAliasResolves(t *testing.T) {
	k := newKit(t)
	e := New(k.resolver(t), Options{Decider: allowAll()})
	o := run(t, e, call("a", "Say", `{"text":"hi"}`)).Outcomes[0]
	if o.Kind != KindOK || o.Tool != "Echo" || o.Name != "Say" {
		t.Fatalf("outcome %+v: %s", o, text(o))
	}
}

func TestValidationReportsAllErrors(t *testing.T) {
	k := newKit(t)
	e := New(k.resolver(t), Options{Decider: allowAll()})
	o := run(t, e, call("v", "Echo", `{"flag":"maybe","count":1.5,"opts":{"level":"x"},"tags":[1]}`)).Outcomes[0]
	if o.Kind != KindInvalidInput || !o.Result.IsError {
		t.Fatalf("kind %q: %s", o.Kind, text(o))
	}
	msg := text(o)
	for _, want := range []string{"/flag", "/count", "/opts", "deep", "/opts/level", "/tags/0", "text", "want boolean", "want integer", "want string"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
	var ie *InputError
	if !errors.As(o.Err, &ie) || len(ie.Fields) < 6 {
		t.Fatalf("want an InputError with every field, got %#v", o.Err)
	}
}

func TestValidationNotJSON(t *testing.T) {
	k := newKit(t)
	e := New(k.resolver(t), Options{Decider: allowAll()})
	for _, in := range []string{`{"text":`, `[1,2]`, `42`} {
		o := run(t, e, call("n", "Echo", in)).Outcomes[0]
		if o.Kind != KindInvalidInput || !strings.Contains(text(o), "not a JSON object") {
			t.Errorf("%s: kind %q: %s", in, o.Kind, text(o))
		}
	}
}

func TestCoercion(t *testing.T) {
	k := newKit(t)
	e := New(k.resolver(t), Options{Decider: allowAll()})
	tests := []struct {
		name, in, want string
		coerced        bool
	}{
		{"valid untouched", `{"text":"true","count":3}`, `{"text":"true","count":3}`, false},
		{"bool strings", `{"text":"a","flag":"true"}`, `{"text":"a","flag":true}`, true},
		{"false string", `{"text":"a","flag":"false"}`, `{"text":"a","flag":false}`, true},
		{"integer string", `{"text":"a","count":"42"}`, `{"text":"a","count":42}`, true},
		{"number string", `{"text":"a","ratio":" -1.5e3 "}`, `{"text":"a","ratio":-1.5e3}`, true},
		{"object as string", `{"text":"a","opts":"{\"deep\":true}"}`, `{"text":"a","opts":{"deep":true}}`, true},
		{"array as string", `{"text":"a","tags":"[\"x\",\"y\"]"}`, `{"text":"a","tags":["x","y"]}`, true},
		{"nested coercion", `{"text":"a","opts":"{\"deep\":\"true\",\"level\":\"2\"}"}`, `{"text":"a","opts":{"deep":true,"level":2}}`, true},
		{"map values", `{"text":"a","meta":{"k":"7"}}`, `{"text":"a","meta":{"k":7}}`, true},
		{"null optional dropped", `{"text":"a","limit":null,"opts":null}`, `{"text":"a"}`, true},
		{"whole input as string", `"{\"text\":\"a\"}"`, `{"text":"a"}`, true},
		{"big integer kept exact", `{"text":"a","count":"9007199254740993"}`, `{"text":"a","count":9007199254740993}`, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := run(t, e, call("c", "Echo", tc.in)).Outcomes[0]
			if o.Kind != KindOK {
				t.Fatalf("kind %q: %s", o.Kind, text(o))
			}
			if o.Coerced != tc.coerced {
				t.Errorf("Coerced = %v", o.Coerced)
			}
			if !jsonEqual(t, o.Input, tc.want) {
				t.Errorf("input %s, want %s", o.Input, tc.want)
			}
		})
	}
	bad := []struct{ name, in, field string }{
		{"not a boolean word", `{"text":"a","flag":"yes"}`, "/flag"},
		{"fraction for integer", `{"text":"a","count":"1.5"}`, "/count"},
		{"hex is not a number", `{"text":"a","count":"0x10"}`, "/count"},
		{"null for required", `{"text":null}`, "/text"},
		{"broken object string", `{"text":"a","opts":"{deep"}`, "/opts"},
		{"string where string wanted is fine, but number for string is not coerced", `{"text":5}`, "/text"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			o := run(t, e, call("c", "Echo", tc.in)).Outcomes[0]
			if o.Kind != KindInvalidInput || !strings.Contains(text(o), tc.field) {
				t.Fatalf("kind %q: %s", o.Kind, text(o))
			}
		})
	}
}

func jsonEqual(t testing.TB, got json.RawMessage, want string) bool {
	t.Helper()
	var a, b any
	da := json.NewDecoder(strings.NewReader(string(got)))
	da.UseNumber()
	db := json.NewDecoder(strings.NewReader(want))
	db.UseNumber()
	if err := da.Decode(&a); err != nil {
		t.Fatalf("bad JSON %s: %v", got, err)
	}
	if err := db.Decode(&b); err != nil {
		t.Fatalf("bad JSON %s: %v", want, err)
	}
	ja, _ := json.Marshal(normalizeNumbers(a))
	jb, _ := json.Marshal(normalizeNumbers(b))
	return string(ja) == string(jb)
}

func normalizeNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if f, err := x.Float64(); err == nil && x.String() != "9007199254740993" {
			return f
		}
		return x.String()
	case map[string]any:
		for k, vv := range x {
			x[k] = normalizeNumbers(vv)
		}
	case []any:
		for i, vv := range x {
			x[i] = normalizeNumbers(vv)
		}
	}
	return v
}

func TestToolInputValidator(t *testing.T) {
	k := newKit(t)
	e := New(k.resolver(t), Options{Decider: allowAll()})
	o := run(t, e, call("x", "Checked", `{"text":"bad thing"}`)).Outcomes[0]
	if o.Kind != KindInvalidInput || !strings.Contains(text(o), "must not start with bad") {
		t.Fatalf("kind %q: %s", o.Kind, text(o))
	}
}

func TestPreToolUseHooks(t *testing.T) {
	k := newKit(t)
	tests := []struct {
		name     string
		out      *hook.Output
		err      error
		kind     Kind
		contains string
		input    string
	}{
		{"rewrite validated and used", &hook.Output{UpdatedInput: json.RawMessage(`{"text":"rewritten","count":"3"}`)}, nil, KindOK, `"text":"rewritten","count":3`, `{"text":"rewritten","count":3}`},
		{"invalid rewrite rejected", &hook.Output{UpdatedInput: json.RawMessage(`{"count":"x"}`)}, nil, KindInvalidInput, "rewrote its input into an invalid one", ""},
		{"block", &hook.Output{Block: true, Reason: "no echo on Fridays"}, nil, KindBlocked, "no echo on Fridays", ""},
		{"runner error blocks", nil, errors.New("hook crashed"), KindBlocked, "could not give a verdict", ""},
		{"context added", &hook.Output{AdditionalContext: "remember the milk"}, nil, KindOK, "remember the milk", ""},
		{"stop", &hook.Output{Continue: new(bool), StopReason: "enough"}, nil, KindBlocked, "enough", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var post int
			runner := hook.RunnerFunc(func(ctx context.Context, in *hook.Input) (*hook.Output, error) {
				if in.Event != hook.PreToolUse {
					post++
					return nil, nil
				}
				if in.ToolName != "Echo" || in.ToolUseID != "h" || in.CWD != "/w" || in.SessionID != "s1" {
					t.Errorf("hook input %+v", in)
				}
				return tc.out, tc.err
			})
			e := New(k.resolver(t), Options{Decider: allowAll(), Hooks: runner})
			b := run(t, e, call("h", "Echo", `{"text":"orig"}`))
			o := b.Outcomes[0]
			if o.Kind != tc.kind || !strings.Contains(text(o), tc.contains) {
				t.Fatalf("kind %q: %s", o.Kind, text(o))
			}
			if tc.input != "" && !jsonEqual(t, o.Input, tc.input) {
				t.Errorf("input %s, want %s", o.Input, tc.input)
			}
			if (tc.kind == KindOK) != (post == 1) {
				t.Errorf("post hooks ran %d times", post)
			}
			if tc.name == "stop" && (!b.Stop || b.StopReason != "enough") {
				t.Errorf("batch Stop %v %q", b.Stop, b.StopReason)
			}
		})
	}
}

func TestPreToolUseVerdictReachesDecider(t *testing.T) {
	k := newKit(t)
	var got *permission.Request
	d := permission.DeciderFunc(func(ctx context.Context, req *permission.Request) (permission.Decision, error) {
		got = req
		return permission.Decision{Behavior: tool.Allow}, nil
	})
	runner := hook.RunnerFunc(func(ctx context.Context, in *hook.Input) (*hook.Output, error) {
		return &hook.Output{Decision: tool.Ask, Reason: "hook wants a look"}, nil
	})
	e := New(k.resolver(t), Options{Decider: d, Hooks: runner})
	run(t, e, call("p", "Checked", `{"text":"secret"}`))
	if got == nil || got.HookVerdict != tool.Ask || got.HookReason != "hook wants a look" ||
		got.ToolCheck.Behavior != tool.Deny || !got.Traits.ReadOnly || got.Env.ToolUseID != "p" || got.Name != "Checked" {
		t.Fatalf("request %+v", got)
	}
}

func TestPostToolUseHooks(t *testing.T) {
	k := newKit(t)
	var events []hook.Event
	runner := hook.RunnerFunc(func(ctx context.Context, in *hook.Input) (*hook.Output, error) {
		events = append(events, in.Event)
		switch {
		case in.Event == hook.PostToolUse && in.ToolName == "Echo":
			if !strings.Contains(string(in.ToolResponse), "hi") {
				t.Errorf("tool_response %s", in.ToolResponse)
			}
			return &hook.Output{ReplaceResult: tool.TextResult("replaced"), AdditionalContext: "ctx after"}, nil
		case in.Event == hook.PostToolUseFailure:
			if !strings.Contains(in.Error, "exit status 1") {
				t.Errorf("error %q", in.Error)
			}
			return &hook.Output{AdditionalContext: "failure noted"}, nil
		}
		return nil, nil
	})
	e := New(k.resolver(t), Options{Decider: allowAll(), Hooks: runner})
	b := run(t, e, call("1", "Echo", `{"text":"hi"}`), call("2", "Store", `{"ms":0}`), call("3", "Fail", `{"ms":0}`))
	if got := text(b.Outcomes[0]); got != "replaced\nctx after" {
		t.Errorf("replaced result %q", got)
	}
	if got := text(b.Outcomes[2]); !strings.Contains(got, "exit status 1") || !strings.Contains(got, "failure noted") || !b.Outcomes[2].Result.IsError {
		t.Errorf("failure result %q", got)
	}
	want := []hook.Event{hook.PreToolUse, hook.PostToolUse, hook.PreToolUse, hook.PostToolUse, hook.PreToolUse, hook.PostToolUseFailure}
	if strings.Join(evs(events), ",") != strings.Join(evs(want), ",") {
		t.Errorf("events %v, want %v", events, want)
	}
}

// filterRunner is a hook runner that handles only some events.
type filterRunner struct {
	handles map[hook.Event]bool
	mu      sync.Mutex
	ran     []hook.Event
}

func (f *filterRunner) Handles(ev hook.Event) bool { return f.handles[ev] }

func (f *filterRunner) Run(ctx context.Context, in *hook.Input) (*hook.Output, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ran = append(f.ran, in.Event)
	return nil, nil
}

// TestHookEventFilter: a runner that has no hook for an event (a
// hook.EventFilter) is not run for it, so the executor does not encode the
// result for PostToolUse; a joined runner runs for the union of events.
func TestHookEventFilter(t *testing.T) {
	k := newKit(t)
	for _, c := range []struct {
		name    string
		handles []hook.Event
		want    string
	}{
		{"none", nil, ""},
		{"pre", []hook.Event{hook.PreToolUse}, "PreToolUse,PreToolUse"},
		{"post", []hook.Event{hook.PostToolUse}, "PostToolUse"},
		{"failure", []hook.Event{hook.PostToolUseFailure}, "PostToolUseFailure"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := &filterRunner{handles: map[hook.Event]bool{}}
			for _, ev := range c.handles {
				f.handles[ev] = true
			}
			e := New(k.resolver(t), Options{Decider: allowAll(), Hooks: f})
			run(t, e, call("1", "Echo", `{"text":"hi"}`))
			run(t, e, call("2", "Fail", `{"ms":0}`))
			if got := strings.Join(evs(f.ran), ","); got != c.want {
				t.Errorf("ran for %q, want %q", got, c.want)
			}
		})
	}
	pre := &filterRunner{handles: map[hook.Event]bool{hook.PreToolUse: true}}
	post := &filterRunner{handles: map[hook.Event]bool{hook.PostToolUse: true}}
	e := New(k.resolver(t), Options{Decider: allowAll(), Hooks: hook.Join(pre, post)})
	run(t, e, call("1", "Echo", `{"text":"hi"}`))
	if got := strings.Join(evs(append(pre.ran, post.ran...)), ","); got != "PreToolUse,PostToolUse,PreToolUse,PostToolUse" {
		t.Errorf("joined runners ran for %q", got)
	}
}

func evs(e []hook.Event) []string {
	s := make([]string, len(e))
	for i, x := range e {
		s[i] = string(x)
	}
	return s
}

func TestPermission(t *testing.T) {
	k := newKit(t)
	denyWith := func(reason string, interrupt bool) permission.Decider {
		return permission.DeciderFunc(func(ctx context.Context, req *permission.Request) (permission.Decision, error) {
			return permission.Decision{Behavior: tool.Deny, Reason: reason, Interrupt: interrupt, Rule: "Store(*)"}, nil
		})
	}
	ask := permission.DeciderFunc(func(ctx context.Context, req *permission.Request) (permission.Decision, error) {
		return permission.Decision{Behavior: tool.Ask, Reason: "writes need approval"}, nil
	})
	tests := []struct {
		name     string
		opts     Options
		mode     tool.Mode
		c        Call
		kind     Kind
		contains string
		stop     bool
	}{
		{"deny message reaches the model", Options{Decider: denyWith("not in this repo", false)}, "", call("1", "Store", `{"id":"a","ms":0}`), KindDenied, "not in this repo (rule Store(*))", false},
		{"deny with interrupt stops", Options{Decider: denyWith("user said stop", true)}, "", call("1", "Store", `{"id":"a","ms":0}`), KindDenied, "do not continue", true},
		{"decider error denies", Options{Decider: permission.DeciderFunc(func(context.Context, *permission.Request) (permission.Decision, error) {
			return permission.Decision{}, errors.New("rules unreadable")
		})}, "", call("1", "Noop", `{}`), KindDenied, "rules unreadable", false},
		{"ask without asker denies", Options{Decider: ask}, "", call("1", "Store", `{"id":"a","ms":0}`), KindDenied, "nobody can approve it", false},
		{"passthrough is ask", Options{Decider: permission.DeciderFunc(func(context.Context, *permission.Request) (permission.Decision, error) {
			return permission.Decision{}, nil
		})}, "", call("1", "Noop", `{}`), KindDenied, "nobody can approve", false},
		{"dontAsk never asks", Options{Decider: ask, CanUseTool: func(context.Context, *permission.Request, permission.Decision) (permission.Decision, error) {
			t.Error("asked in dontAsk")
			return permission.Decision{Behavior: tool.Allow}, nil
		}}, tool.ModeDontAsk, call("1", "Store", `{"id":"a","ms":0}`), KindDenied, "dontAsk", false},
		{"callback allows with updated input", Options{Decider: ask, CanUseTool: func(ctx context.Context, req *permission.Request, s permission.Decision) (permission.Decision, error) {
			if s.Reason != "writes need approval" || req.Name != "Store" {
				t.Errorf("callback got %+v %+v", req, s)
			}
			return permission.Decision{Behavior: tool.Allow, UpdatedInput: json.RawMessage(`{"id":"b","ms":"0"}`)}, nil
		}}, "", call("1", "Store", `{"id":"a","ms":0}`), KindOK, "wrote b", false},
		{"callback invalid updated input", Options{Decider: ask, CanUseTool: func(ctx context.Context, req *permission.Request, s permission.Decision) (permission.Decision, error) {
			return permission.Decision{Behavior: tool.Allow, UpdatedInput: json.RawMessage(`{"ms":"soon"}`)}, nil
		}}, "", call("1", "Store", `{"id":"a","ms":0}`), KindInvalidInput, "/ms", false},
		{"callback denies with interrupt", Options{Decider: ask, CanUseTool: func(ctx context.Context, req *permission.Request, s permission.Decision) (permission.Decision, error) {
			return permission.Decision{Behavior: tool.Deny, Reason: "no", Interrupt: true}, nil
		}}, "", call("1", "Store", `{"id":"a","ms":0}`), KindDenied, "stopped the run", true},
		{"callback error denies", Options{Decider: ask, CanUseTool: func(ctx context.Context, req *permission.Request, s permission.Decision) (permission.Decision, error) {
			return permission.Decision{}, errors.New("terminal gone")
		}}, "", call("1", "Store", `{"id":"a","ms":0}`), KindDenied, "terminal gone", false},
		// The default decider: a permission.Engine with no rules.
		{"default: read-only allowed", Options{}, "", call("1", "Noop", `{}`), KindOK, "ok", false},
		{"default: write asks, nobody to ask", Options{}, "", call("1", "Store", `{"id":"a","ms":0}`), KindDenied, "nobody can approve", false},
		{"default: tool deny", Options{}, tool.ModeBypassPermissions, call("1", "Checked", `{"text":"secret"}`), KindDenied, "secrets are off limits", false},
		{"default: bypass allows writes", Options{}, tool.ModeBypassPermissions, call("1", "Store", `{"id":"a","ms":0}`), KindOK, "wrote a", false},
		{"default: plan denies writes", Options{}, tool.ModePlan, call("1", "Store", `{"id":"a","ms":0}`), KindDenied, "plan mode", false},
		{"default: plan allows reads", Options{}, tool.ModePlan, call("1", "Noop", `{}`), KindOK, "ok", false},
		{"default: dontAsk denies writes", Options{}, tool.ModeDontAsk, call("1", "Store", `{"id":"a","ms":0}`), KindDenied, "dontAsk", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := New(k.resolver(t), tc.opts)
			env := &tool.Env{WorkDir: "/w", Mode: tc.mode}
			b, err := e.Run(context.Background(), NewSharedEnv(env), []Call{tc.c})
			if err != nil {
				t.Fatal(err)
			}
			o := b.Outcomes[0]
			if o.Kind != tc.kind || !strings.Contains(text(o), tc.contains) {
				t.Fatalf("kind %q: %s", o.Kind, text(o))
			}
			if b.Stop != tc.stop || o.Stop != tc.stop {
				t.Errorf("stop %v/%v, want %v", b.Stop, o.Stop, tc.stop)
			}
			if tc.kind == KindDenied && (o.Decision == nil || o.Decision.Behavior != tool.Deny) {
				t.Errorf("decision %+v", o.Decision)
			}
		})
	}
}

// TestTimeouts runs each case in a synctest bubble: the deadlines and the
// tools' sleeps run on the fake clock, and the durations in the results
// are exact.
func TestTimeouts(t *testing.T) {
	tests := []struct {
		name     string
		opts     Options
		c        Call
		kind     Kind
		contains string
	}{
		{"spec default applies", Options{}, call("1", "Timed", `{"ms":0}`), KindOK, "deadline in 1m0s"},
		{"per-call override", Options{}, call("1", "Timed", `{"ms":0,"id":"2m"}`), KindOK, "deadline in 2m0s"},
		{"override capped by MaxTimeout", Options{}, call("1", "Timed", `{"ms":0,"id":"1h"}`), KindOK, "deadline in 3m0s"},
		{"global cap", Options{TimeoutCap: 30 * time.Second}, call("1", "Timed", `{"ms":0,"id":"2m"}`), KindOK, "deadline in 30s"},
		{"deadline hits", Options{DefaultTimeout: 20 * time.Millisecond}, call("1", "Sleep", `{"ms":5000}`), KindTimeout, "timed out after 20ms"},
		{"ignores cancel: abandoned", Options{DefaultTimeout: 10 * time.Millisecond, AbandonAfter: 10 * time.Millisecond}, call("1", "Stubborn", `{"ms":300}`), KindTimeout, "abandoned"},
		{"slow to cancel: waited for", Options{DefaultTimeout: 10 * time.Millisecond}, call("1", "SlowCancel", `{"ms":50}`), KindTimeout, "timed out after 10ms"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				k := newKit(t)
				xo := tc.opts
				xo.Decider = allowAll()
				e := New(k.resolver(t), xo)
				o := run(t, e, tc.c).Outcomes[0]
				if o.Kind != tc.kind || !strings.Contains(text(o), tc.contains) {
					t.Fatalf("kind %q: %s", o.Kind, text(o))
				}
				if tc.c.Name == "Stubborn" {
					// The abandoned call returns when its sleep ends on the
					// fake clock; the bubble may end only after it.
					time.Sleep(time.Second)
					synctest.Wait()
					if k.ignored.Load() != 1 {
						t.Fatal("the abandoned call did not return when its sleep ended")
					}
				}
			})
		})
	}
}

func TestPanicRecovered(t *testing.T) {
	k := newKit(t)
	e := New(k.resolver(t), Options{Decider: allowAll()})
	b := run(t, e, call("1", "Boom", `{}`), call("2", "Noop", `{}`))
	o := b.Outcomes[0]
	if o.Kind != KindPanic || !strings.Contains(text(o), "kaboom 42") || strings.Contains(text(o), "goroutine") {
		t.Fatalf("kind %q: %s", o.Kind, text(o))
	}
	if b.Outcomes[1].Kind != KindOK {
		t.Errorf("the loop must go on: %s", text(b.Outcomes[1]))
	}
}

func TestResultBudget(t *testing.T) {
	k := newKit(t)
	dir := t.TempDir()
	e := New(k.resolver(t), Options{Decider: allowAll()})
	s := NewSharedEnv(&tool.Env{WorkDir: "/w", ToolResultsDir: filepath.Join(dir, "results")})
	b, err := e.Run(context.Background(), s, []Call{
		call("toolu_01/../x", "Huge", `{"ms":100000}`),
		call("small", "Huge", `{"ms":100}`),
		call("pic", "Picture", `{}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	o := b.Outcomes[0]
	if o.ResultPath == "" || filepath.Dir(o.ResultPath) != filepath.Join(dir, "results") || strings.Contains(filepath.Base(o.ResultPath), "/") {
		t.Fatalf("result path %q", o.ResultPath)
	}
	full, err := os.ReadFile(o.ResultPath)
	if err != nil {
		t.Fatal(err)
	}
	if len(full) < 100000 || !strings.HasPrefix(string(full), "line \nline x\n") {
		t.Errorf("saved file has %d bytes", len(full))
	}
	msg := text(o)
	preview, note, ok := strings.Cut(msg, "\n\n[Output too large")
	if !ok || len(preview) > DefaultPreviewChars || len(preview) < DefaultPreviewChars/2 || !strings.HasPrefix(string(full), preview+"\n") {
		t.Errorf("preview of %d chars not cut at a line boundary", len(preview))
	}
	for _, want := range []string{o.ResultPath, "Read tool", "offset/limit", "characters"} {
		if !strings.Contains(note, want) {
			t.Errorf("note lacks %q: %s", want, note)
		}
	}
	if b.Outcomes[1].ResultPath != "" || len(text(b.Outcomes[1])) < 100 {
		t.Errorf("small result was budgeted")
	}
	pic := b.Outcomes[2].Result
	if len(pic.Content) != 2 || pic.Content[1].Type != tool.TypeImage || string(pic.Content[1].Data) != "\x01\x02\x03" || tool.TextLen(pic.Content) > 3000 {
		t.Errorf("image result %+v", pic.Content)
	}
}

func TestPreviewCutsAtLine(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"aaaa\nbbbb\ncccc", 12, "aaaa\nbbbb"},
		{"no newline at all here", 5, "no ne"},
		{"héllo wörld", 4, "héll"},
		{"x\nyyyyyyyyyyyy", 10, "x\nyyyyyyyy"},
	}
	for _, tc := range tests {
		if got := previewOf(tc.in, tc.n); got != tc.want {
			t.Errorf("previewOf(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

func TestResultFileName(t *testing.T) {
	for in, want := range map[string]string{
		"toolu_01ABC":   "toolu_01ABC.txt",
		"../../etc/pwd": "______etc_pwd.txt",
		"":              "result.txt",
		"a/b":           "a_b.txt",
	} {
		if got := resultFileName(in); got != want {
			t.Errorf("resultFileName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestStatusEvents(t *testing.T) {
	k := newKit(t)
	var log statusLog
	e := New(k.resolver(t), Options{Decider: allowAll(), Status: log.add})
	run(t, e, call("p", "Progress", `{}`), call("bad", "Echo", `{}`))
	got := log.phases("p")
	want := []tool.Phase{tool.PhaseWait, tool.PhaseWait, tool.PhaseDoing, tool.PhaseDoing, tool.PhaseSuccess}
	if !equalPhases(got, want) {
		t.Fatalf("phases %v, want %v", got, want)
	}
	evs := log.all("p")
	if evs[3].Progress == nil || evs[3].Progress.Message != "half" || evs[3].Start.IsZero() {
		t.Errorf("progress event %+v", evs[3])
	}
	last := evs[4]
	if last.Result == nil || last.Result.TextContent() != "done" || last.Description != "Progress" || last.Start.IsZero() || last.End.IsZero() {
		t.Errorf("final event %+v", last)
	}
	if got := log.phases("bad"); !equalPhases(got, []tool.Phase{tool.PhaseWait, tool.PhaseError}) {
		t.Errorf("invalid call phases %v", got)
	}
}

func equalPhases(a, b []tool.Phase) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestBadSchemaTool(t *testing.T) {
	bad := &rawTool{spec: tool.Spec{Name: "Bad", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"nope"}}}`)}}
	r, _ := NewMapResolver(bad)
	e := New(r, Options{Decider: allowAll()})
	o := run(t, e, call("1", "Bad", `{}`)).Outcomes[0]
	if o.Kind != KindInternal || !strings.Contains(text(o), "cannot be used") {
		t.Fatalf("kind %q: %s", o.Kind, text(o))
	}
}

// rawTool is a Tool implementing nothing optional; Spec returns a fresh
// pointer on every call (allowed by the contract).
type rawTool struct {
	spec tool.Spec
	fn   func(ctx context.Context, in json.RawMessage) (*tool.Result, error)
}

func (r *rawTool) Spec() *tool.Spec { s := r.spec; return &s }
func (r *rawTool) Call(ctx context.Context, env *tool.Env, in json.RawMessage) (*tool.Result, error) {
	if r.fn == nil {
		return nil, nil
	}
	return r.fn(ctx, in)
}

func TestNilResultAndFailClosedTraits(t *testing.T) {
	rt := &rawTool{spec: tool.Spec{Name: "Raw", InputSchema: tool.EmptyObjectSchema}}
	r, _ := NewMapResolver(rt)
	e := New(r, Options{Decider: allowAll()})
	o := run(t, e, call("1", "Raw", ``)).Outcomes[0]
	if o.Kind != KindOK || text(o) != "(no output)" || o.Traits.ConcurrencySafe || !o.Traits.Destructive() {
		t.Fatalf("outcome %+v %s", o, text(o))
	}
	if string(o.Input) != "{}" {
		t.Errorf("empty input became %q", o.Input)
	}
}

// TestDenialsAsGiven: with Options.DenialsAsGiven, the reason of a denial
// by a person, a program or a hook, and a PreToolUse hook's block reason,
// are the whole result text; rules, modes and reasonless denials keep
// Gantry's wording, as does everything without the option.
func TestDenialsAsGiven(t *testing.T) {
	k := newKit(t)
	ask := permission.DeciderFunc(func(ctx context.Context, req *permission.Request) (permission.Decision, error) {
		return permission.Decision{Behavior: tool.Ask}, nil
	})
	rule := permission.DeciderFunc(func(ctx context.Context, req *permission.Request) (permission.Decision, error) {
		return permission.Decision{Behavior: tool.Deny, Reason: "not here", Rule: "Store(*)", Source: "project"}, nil
	})
	callback := func(source, reason string) permission.CanUseTool {
		return func(context.Context, *permission.Request, permission.Decision) (permission.Decision, error) {
			return permission.Decision{Behavior: tool.Deny, Source: source, Reason: reason}, nil
		}
	}
	block := hook.RunnerFunc(func(ctx context.Context, in *hook.Input) (*hook.Output, error) {
		if in.Event != hook.PreToolUse {
			return nil, nil
		}
		return &hook.Output{Block: true, Reason: "writes are blocked by the hook"}, nil
	})
	tests := []struct {
		name  string
		opts  Options
		exact string // "" = Gantry's wording
	}{
		{"program's deny", Options{Decider: ask, CanUseTool: callback("user", "no Store here"), DenialsAsGiven: true}, "no Store here"},
		{"callback's deny", Options{Decider: ask, CanUseTool: callback("callback", "not today"), DenialsAsGiven: true}, "not today"},
		{"hook's block", Options{Decider: allowAll(), Hooks: block, DenialsAsGiven: true}, "writes are blocked by the hook"},
		{"rule keeps the wording", Options{Decider: rule, DenialsAsGiven: true}, ""},
		{"mode keeps the wording", Options{DenialsAsGiven: true}, ""}, // the default engine: nobody can approve
		{"off: program's deny worded", Options{Decider: ask, CanUseTool: callback("user", "no Store here")}, ""},
		{"off: hook's block worded", Options{Decider: allowAll(), Hooks: block}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := New(k.resolver(t), tc.opts)
			b := run(t, e, call("1", "Store", `{"id":"a","ms":0}`))
			o := b.Outcomes[0]
			if o.Kind != KindDenied && o.Kind != KindBlocked {
				t.Fatalf("kind %q: %s", o.Kind, text(o))
			}
			got := text(o)
			if tc.exact != "" {
				if got != tc.exact {
					t.Errorf("text %q, want %q", got, tc.exact)
				}
				return
			}
			if !strings.HasPrefix(got, "Permission to use Store was denied") && !strings.HasPrefix(got, "The call to Store was blocked by a PreToolUse hook: ") {
				t.Errorf("text %q is not Gantry's wording", got)
			}
		})
	}
}
