package executor

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/hook"
	"github.com/gantry-dev/gantry/permission"
	"github.com/gantry-dev/gantry/tool"
)

// Partial input and per-call instances.

type writeIn struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

// preparer is a stateful tool: one instance per call (tool.CallFactory)
// that watches the input stream (tool.PartialObserver) and must be
// released (tool.Releaser).
type preparer struct {
	spec tool.Spec

	mu        sync.Mutex
	instances []*prepCall
}

func newPreparer(t testing.TB) *preparer {
	schema, err := tool.InferSchema[writeIn]()
	if err != nil {
		t.Fatal(err)
	}
	return &preparer{spec: tool.Spec{Name: "Prep", Description: "Prepares while the input streams.", InputSchema: schema}}
}

func (p *preparer) Spec() *tool.Spec { return &p.spec }

func (p *preparer) Call(context.Context, *tool.Env, json.RawMessage) (*tool.Result, error) {
	return nil, fmt.Errorf("the shared instance must never run a call")
}

func (p *preparer) NewCall(id string) tool.Tool {
	c := &prepCall{parent: p, id: id}
	p.mu.Lock()
	p.instances = append(p.instances, c)
	p.mu.Unlock()
	return c
}

func (p *preparer) all() []*prepCall {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.instances)
}

type prepCall struct {
	parent *preparer
	id     string

	mu       sync.Mutex
	partials []json.RawMessage
	calls    []json.RawMessage
	released int
	bad      []string // contract violations seen
}

func (c *prepCall) Spec() *tool.Spec { return &tool.Spec{Name: "instance-spec-is-not-used"} }

func (c *prepCall) ObservePartial(ctx context.Context, env *tool.Env, partial json.RawMessage) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.calls) > 0 || c.released > 0 {
		c.bad = append(c.bad, "partial after the call or the release")
	}
	if env == nil || env.ToolUseID != c.id {
		c.bad = append(c.bad, "partial without the call's env")
	}
	var m map[string]any
	if err := json.Unmarshal(partial, &m); err != nil {
		c.bad = append(c.bad, fmt.Sprintf("partial %s is not a JSON object: %v", partial, err))
	}
	c.partials = append(c.partials, partial)
}

func (c *prepCall) Call(ctx context.Context, env *tool.Env, input json.RawMessage) (*tool.Result, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.released > 0 {
		c.bad = append(c.bad, "call after release")
	}
	c.calls = append(c.calls, input)
	return tool.TextResult(fmt.Sprintf("wrote after %d partials", len(c.partials))), nil
}

func (c *prepCall) Release() {
	c.mu.Lock()
	c.released++
	c.mu.Unlock()
}

func (c *prepCall) snapshot() (partials, calls []json.RawMessage, released int, bad []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.partials), slices.Clone(c.calls), c.released, slices.Clone(c.bad)
}

// TestPartialEveryByte streams a call split at every byte: the instance
// sees only valid partial objects, never runs on them, runs the complete
// call, and is released once after it.
func TestPartialEveryByte(t *testing.T) {
	full := `{"path":"docs/a \"b\".md","content":"héllo\nworld [1, {2}]"}`
	for _, interval := range []time.Duration{-1, time.Hour} {
		t.Run(fmt.Sprint(interval), func(t *testing.T) {
			p := newPreparer(t)
			r, err := NewMapResolver(p)
			if err != nil {
				t.Fatal(err)
			}
			e := New(r, Options{Decider: allowAll(), PartialInterval: interval})
			st := e.Stream(context.Background(), session())
			st.Partial("c1", "Prep", nil)
			for i := 1; i <= len(full); i++ {
				st.Partial("c1", "Prep", []byte(full[:i]))
				if ins := p.all(); len(ins) != 1 {
					t.Fatalf("after %d bytes: %d instances, want 1", i, len(ins))
				} else if _, calls, _, _ := ins[0].snapshot(); len(calls) > 0 {
					t.Fatalf("the tool ran on partial input (%d bytes)", i)
				}
			}
			st.Add(call("c1", "Prep", full))
			b := st.Wait()
			if got := b.Outcomes[0]; got.Kind != KindOK {
				t.Fatalf("outcome %s: %s", got.Kind, got.Result.TextContent())
			}
			ins := p.all()
			if len(ins) != 1 {
				t.Fatalf("%d instances, want 1", len(ins))
			}
			partials, calls, released, bad := ins[0].snapshot()
			if len(bad) > 0 {
				t.Fatalf("contract violations: %v", bad)
			}
			if len(calls) != 1 || string(calls[0]) != full {
				t.Fatalf("calls %q", calls)
			}
			if released != 1 {
				t.Fatalf("released %d times, want 1", released)
			}
			switch interval {
			case -1:
				// Every change is delivered, each a different object.
				if len(partials) < 10 {
					t.Fatalf("only %d partials", len(partials))
				}
				for i := 1; i < len(partials); i++ {
					if string(partials[i]) == string(partials[i-1]) {
						t.Fatalf("partial %d repeats %s", i, partials[i])
					}
				}
				if last := partials[len(partials)-1]; !strings.Contains(string(last), `"content":"héllo\nworld [1, {2}]"`) {
					t.Errorf("last partial %s", last)
				}
			default:
				if len(partials) != 1 {
					t.Fatalf("throttled to an hour: %d partials, want 1", len(partials))
				}
			}
		})
	}
}

// TestPartialThrottle delivers at most one partial per interval.
func TestPartialThrottle(t *testing.T) {
	p := newPreparer(t)
	r, _ := NewMapResolver(p)
	now := time.Unix(1000, 0)
	e := New(r, Options{Decider: allowAll(), PartialInterval: time.Second, Now: func() time.Time { return now }})
	st := e.Stream(context.Background(), session())
	st.Partial("c", "Prep", []byte(`{"path":"a`))  // delivered
	st.Partial("c", "Prep", []byte(`{"path":"ab`)) // too soon
	now = now.Add(time.Second)
	st.Partial("c", "Prep", []byte(`{"path":"abc`)) // delivered
	now = now.Add(time.Second)
	st.Partial("c", "Prep", []byte(`{"path":"abc"`)) // same repaired input: skipped
	st.Add(call("c", "Prep", `{"path":"abc","content":""}`))
	st.Wait()
	partials, _, _, _ := p.all()[0].snapshot()
	var got []string
	for _, x := range partials {
		got = append(got, string(x))
	}
	if want := []string{`{"path":"a"}`, `{"path":"abc"}`}; !slices.Equal(got, want) {
		t.Fatalf("partials %q, want %q", got, want)
	}
}

// TestPartialDropped: a call whose input streamed but that never arrives
// (the reply was discarded, or ended without it) is released and never
// runs; so is one that fails validation.
func TestPartialDropped(t *testing.T) {
	for _, end := range []string{"discard", "wait", "invalid"} {
		t.Run(end, func(t *testing.T) {
			p := newPreparer(t)
			r, _ := NewMapResolver(p)
			e := New(r, Options{Decider: allowAll(), PartialInterval: -1})
			st := e.Stream(context.Background(), session())
			st.Partial("c", "Prep", []byte(`{"path":"x","con`))
			switch end {
			case "discard":
				st.Discard()
			case "wait":
				st.Wait()
			case "invalid":
				st.Add(call("c", "Prep", `{"path":"x"}`))
				if o := st.Wait().Outcomes[0]; o.Kind != KindInvalidInput {
					t.Fatalf("kind %s", o.Kind)
				}
			}
			st.Partial("c", "Prep", []byte(`{"path":"x","content":"y"`)) // after the end: ignored
			ins := p.all()
			if len(ins) != 1 {
				t.Fatalf("%d instances", len(ins))
			}
			partials, calls, released, bad := ins[0].snapshot()
			if len(partials) != 1 || len(calls) != 0 || released != 1 || len(bad) > 0 {
				t.Fatalf("partials %d calls %d released %d bad %v", len(partials), len(calls), released, bad)
			}
		})
	}
}

// TestPerCallWithoutPartials: a per-call tool gets a fresh instance for
// each call of a batch even when nothing streamed.
func TestPerCallWithoutPartials(t *testing.T) {
	p := newPreparer(t)
	r, _ := NewMapResolver(p)
	e := New(r, Options{Decider: allowAll()})
	b := run(t, e, call("a", "Prep", `{"path":"a","content":""}`), call("b", "Prep", `{"path":"b","content":""}`))
	for _, o := range b.Outcomes {
		if o.Kind != KindOK {
			t.Fatalf("%s: %s %s", o.ID, o.Kind, o.Result.TextContent())
		}
	}
	ins := p.all()
	if len(ins) != 2 || ins[0].id != "a" || ins[1].id != "b" {
		t.Fatalf("instances %+v", ins)
	}
	for _, c := range ins {
		if _, calls, released, _ := c.snapshot(); len(calls) != 1 || released != 1 {
			t.Fatalf("instance %s: %d calls, released %d", c.id, len(calls), released)
		}
	}
}

// observer is a shared (not per-call) tool that watches partial input.
type observer struct {
	*tool.FuncTool
	mu   sync.Mutex
	seen []string
}

func (o *observer) ObservePartial(ctx context.Context, env *tool.Env, partial json.RawMessage) {
	o.mu.Lock()
	o.seen = append(o.seen, env.ToolUseID+" "+string(partial))
	o.mu.Unlock()
}

func TestPartialSharedObserver(t *testing.T) {
	ran := 0
	ft := tool.Must(tool.NewText("Obs", "Observes.", func(ctx context.Context, env *tool.Env, in writeIn) (string, error) {
		ran++
		return "ok", nil
	}))
	o := &observer{FuncTool: ft}
	r, _ := NewMapResolver(o)
	e := New(r, Options{Decider: allowAll(), PartialInterval: -1})
	st := e.Stream(context.Background(), session())
	st.Partial("1", "Obs", []byte(`{"path":"p`))
	st.Partial("2", "Obs", []byte(`{"path":"q`))
	st.Add(call("1", "Obs", `{"path":"p","content":""}`))
	st.Add(call("2", "Obs", `{"path":"q","content":""}`))
	st.Wait()
	if ran != 2 {
		t.Fatalf("ran %d", ran)
	}
	if want := []string{`1 {"path":"p"}`, `2 {"path":"q"}`}; !slices.Equal(o.seen, want) {
		t.Fatalf("seen %q", o.seen)
	}
}

// Backfill.

type openIn struct {
	Path string `json:"path"`
}

// TestBackfillObservable: hooks, permission rules and status events see
// the backfilled (absolute) path; the tool gets the model's relative one.
func TestBackfillObservable(t *testing.T) {
	var got []string
	open := tool.Must(tool.NewText("Open", "Opens a file.", func(ctx context.Context, env *tool.Env, in openIn) (string, error) {
		got = append(got, in.Path)
		return "opened " + in.Path, nil
	},
		tool.BackfillFunc(func(env *tool.Env, in *openIn) {
			if in.Path != "" && !filepath.IsAbs(in.Path) {
				in.Path = filepath.Join(env.WorkDir, in.Path)
			}
		}),
		tool.RuleMatchFunc(func(spec string, in openIn) bool { return spec == in.Path }),
	))
	r, _ := NewMapResolver(open)
	eng, err := permission.NewEngine(permission.Options{Mode: tool.ModeBypassPermissions, Rules: []permission.RuleSet{{Source: "project", Deny: []string{"Open(/w/secret.txt)"}}}})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var hookSaw []string
	hooks := hook.RunnerFunc(func(ctx context.Context, in *hook.Input) (*hook.Output, error) {
		mu.Lock()
		hookSaw = append(hookSaw, string(in.Event)+" "+string(in.ToolInput))
		mu.Unlock()
		if in.Event == hook.PreToolUse {
			// A hook that echoes what it saw rewrites nothing.
			return &hook.Output{UpdatedInput: in.ToolInput}, nil
		}
		return nil, nil
	})
	var log statusLog
	e := New(r, Options{Decider: eng, Hooks: hooks, Status: log.add})
	s := NewSharedEnv(&tool.Env{WorkDir: "/w", Mode: tool.ModeBypassPermissions})
	b, err := e.Run(context.Background(), s, []Call{call("ok", "Open", `{"path":"a.txt"}`), call("no", "Open", `{"path":"secret.txt"}`)})
	if err != nil {
		t.Fatal(err)
	}
	ok, no := b.Outcomes[0], b.Outcomes[1]
	if ok.Kind != KindOK || ok.Result.TextContent() != "opened a.txt" {
		t.Fatalf("ok: %s %s", ok.Kind, ok.Result.TextContent())
	}
	if string(ok.Input) != `{"path":"a.txt"}` || string(ok.Observable) != `{"path":"/w/a.txt"}` {
		t.Errorf("input %s observable %s", ok.Input, ok.Observable)
	}
	if no.Kind != KindDenied {
		t.Errorf("the deny rule on the absolute path did not apply: %s %s", no.Kind, no.Result.TextContent())
	}
	if !slices.Equal(got, []string{"a.txt"}) {
		t.Errorf("the tool got %q, want the model's relative path", got)
	}
	wantHooks := []string{
		`PreToolUse {"path":"/w/a.txt"}`, `PostToolUse {"path":"/w/a.txt"}`,
		`PreToolUse {"path":"/w/secret.txt"}`,
	}
	if !slices.Equal(hookSaw, wantHooks) {
		t.Errorf("hooks saw %q\nwant %q", hookSaw, wantHooks)
	}
	evs := log.all("ok")
	if last := evs[len(evs)-1]; string(last.Input) != `{"path":"/w/a.txt"}` {
		t.Errorf("final status input %s", last.Input)
	}
}

// TestBackfillHookRewrite: a hook's rewrite reaches the tool, and is
// backfilled again for the permission decision.
func TestBackfillHookRewrite(t *testing.T) {
	var got string
	open := tool.Must(tool.NewText("Open", "Opens a file.", func(ctx context.Context, env *tool.Env, in openIn) (string, error) {
		got = in.Path
		return "ok", nil
	}, tool.BackfillFunc(func(env *tool.Env, in *openIn) {
		if !filepath.IsAbs(in.Path) {
			in.Path = filepath.Join(env.WorkDir, in.Path)
		}
	})))
	r, _ := NewMapResolver(open)
	var permSaw string
	dec := permission.DeciderFunc(func(ctx context.Context, req *permission.Request) (permission.Decision, error) {
		permSaw = string(req.Input)
		return permission.Decision{Behavior: tool.Allow, Source: "test"}, nil
	})
	hooks := hook.RunnerFunc(func(ctx context.Context, in *hook.Input) (*hook.Output, error) {
		if in.Event == hook.PreToolUse {
			return &hook.Output{UpdatedInput: json.RawMessage(`{"path":"b.txt"}`)}, nil
		}
		return nil, nil
	})
	e := New(r, Options{Decider: dec, Hooks: hooks})
	o := run(t, e, call("1", "Open", `{"path":"a.txt"}`)).Outcomes[0]
	if o.Kind != KindOK || got != "b.txt" || permSaw != `{"path":"/w/b.txt"}` || string(o.Observable) != `{"path":"/w/b.txt"}` {
		t.Fatalf("kind %s, tool got %q, permission saw %s, observable %s", o.Kind, got, permSaw, o.Observable)
	}
}

// Deferred tools.

type deferredResolver struct {
	*MapResolver
	unloaded map[string]bool
}

func (d deferredResolver) Unloaded(name string) bool { return d.unloaded[name] }

func TestDeferredLoadHint(t *testing.T) {
	k := newKit(t)
	r := deferredResolver{MapResolver: k.resolver(t), unloaded: map[string]bool{"Echo": true}}
	e := New(r, Options{Decider: allowAll()})
	b := run(t, e, call("bad", "Echo", `{"txt":"x"}`), call("good", "Echo", `{"text":"x"}`))
	bad, good := b.Outcomes[0], b.Outcomes[1]
	if bad.Kind != KindInvalidInput || !strings.Contains(bad.Result.TextContent(), `ToolSearch with query "select:Echo"`) {
		t.Errorf("bad call: %s %s", bad.Kind, bad.Result.TextContent())
	}
	if good.Kind != KindOK {
		t.Errorf("a valid call of an unloaded deferred tool runs: %s %s", good.Kind, good.Result.TextContent())
	}
	e2 := New(k.resolver(t), Options{Decider: allowAll()})
	if o := run(t, e2, call("bad", "Echo", `{"txt":"x"}`)).Outcomes[0]; strings.Contains(o.Result.TextContent(), "ToolSearch") {
		t.Errorf("a tool that is not deferred gets no load hint: %s", o.Result.TextContent())
	}
}

// TestCheckedForBackfill: the files a decision checked under the
// observable (absolute) paths are found under the tool's own (relative)
// paths too, so a file tool uses the file that was checked.
func TestCheckedForBackfill(t *testing.T) {
	open := tool.Must(tool.NewText("Open", "Opens a file.", func(ctx context.Context, env *tool.Env, in openIn) (string, error) {
		return "", nil
	}, tool.AccessFunc(func(in openIn) (tool.Access, error) { return tool.Access{Reads: []string{in.Path}}, nil })))
	checked := map[string]string{"/w/l/a.txt": "/w/in/a.txt"}
	got := checkedFor(open, json.RawMessage(`{"path":"l/a.txt"}`), json.RawMessage(`{"path":"/w/l/a.txt"}`), checked)
	if got["l/a.txt"] != "/w/in/a.txt" || got["/w/l/a.txt"] != "/w/in/a.txt" || len(checked) != 1 {
		t.Fatalf("checked %v (decision's map %v must not change)", got, checked)
	}
	if got := checkedFor(open, json.RawMessage(`{"path":"a"}`), json.RawMessage(`{"path":"a"}`), checked); len(got) != 1 {
		t.Fatalf("same input: %v", got)
	}
}

// FuzzPartialStream streams an input cut into arbitrary chunks: every
// partial the tool sees is a JSON object, the tool never runs before the
// complete call, the instance that saw the partials runs the call, and it
// is released once.
func FuzzPartialStream(f *testing.F) {
	f.Add(`{"path":"a \"q\" \\ b","content":"x\ny [1,{2}] é"}`, []byte{1, 3, 7, 2})
	f.Add(`{"path":"","content":""}`, []byte{0, 0, 50})
	f.Add(`{ "content" : "{\"nested\":[true,null]}" , "path":"p" }`, []byte{9})
	f.Fuzz(func(t *testing.T, full string, cuts []byte) {
		var in writeIn
		if json.Unmarshal([]byte(full), &in) != nil || !json.Valid([]byte(full)) {
			return
		}
		p := newPreparer(t)
		r, _ := NewMapResolver(p)
		e := New(r, Options{Decider: allowAll(), PartialInterval: -1})
		st := e.Stream(context.Background(), session())
		n := 0
		for _, c := range cuts {
			n = min(n+int(c), len(full))
			st.Partial("f", "Prep", []byte(full[:n]))
		}
		st.Add(call("f", "Prep", full))
		o := st.Wait().Outcomes[0]
		ins := p.all()
		if o.Kind != KindOK && o.Kind != KindInvalidInput {
			t.Fatalf("kind %s: %s", o.Kind, o.Result.TextContent())
		}
		if len(ins) != 1 {
			t.Fatalf("%d instances", len(ins))
		}
		_, calls, released, bad := ins[0].snapshot()
		if len(bad) > 0 || released != 1 {
			t.Fatalf("bad %v released %d", bad, released)
		}
		if (o.Kind == KindOK) != (len(calls) == 1) {
			t.Fatalf("kind %s with %d calls", o.Kind, len(calls))
		}
	})
}

type panicky struct {
	*preparer
	panicNew bool
}

func (p *panicky) NewCall(id string) tool.Tool {
	if p.panicNew {
		panic("no instance")
	}
	return &panicCall{prepCall: p.preparer.NewCall(id).(*prepCall)}
}

type panicCall struct{ *prepCall }

func (c *panicCall) ObservePartial(context.Context, *tool.Env, json.RawMessage) {
	panic("observer bug")
}

// TestPartialPanics: a panicking observer costs its partials, not the
// stream or the call; a panicking factory fails the call as a tool bug.
func TestPartialPanics(t *testing.T) {
	for _, panicNew := range []bool{false, true} {
		p := &panicky{preparer: newPreparer(t), panicNew: panicNew}
		r, _ := NewMapResolver(p)
		e := New(r, Options{Decider: allowAll(), PartialInterval: -1})
		st := e.Stream(context.Background(), session())
		st.Partial("c", "Prep", []byte(`{"path":"a`))
		st.Partial("c", "Prep", []byte(`{"path":"ab`))
		st.Add(call("c", "Prep", `{"path":"ab","content":""}`))
		o := st.Wait().Outcomes[0]
		if panicNew {
			if o.Kind != KindInternal || !strings.Contains(o.Result.TextContent(), "made no instance") {
				t.Fatalf("factory panic: %s %s", o.Kind, o.Result.TextContent())
			}
			continue
		}
		if o.Kind != KindOK {
			t.Fatalf("observer panic: %s %s", o.Kind, o.Result.TextContent())
		}
		if _, calls, released, _ := p.all()[0].snapshot(); len(calls) != 1 || released != 1 {
			t.Fatalf("calls %d released %d", len(calls), released)
		}
	}
}
