package toolset

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gantry-dev/gantry/tool"
)

// sessionTool is a prebuilt tool whose prompt names the session's
// directory: it describes the session, so no two sessions share its spec.
func sessionTool(t testing.TB, calls *atomic.Int32) tool.Tool {
	t.Helper()
	return tool.Must(tool.NewNoInput("Where", "Says where the session is.", func(context.Context, *tool.Env) (*tool.Result, error) {
		return tool.TextResult("here"), nil
	}, tool.SessionFunc(func(_ context.Context, env *tool.Env) (tool.SessionSpec, error) {
		calls.Add(1)
		return tool.SessionSpec{Prompt: "The session works in " + env.WorkDir + "."}, nil
	})))
}

// coreRegistry holds prebuilt tools (shared), one prebuilt tool that
// describes the session, and one tool with a factory (built per pool).
func coreRegistry(t testing.TB, described, built *atomic.Int32) *Registry {
	t.Helper()
	r := NewRegistry()
	for _, n := range []string{"Alpha", "Beta", "Gamma"} {
		if err := r.RegisterTool(simple(t, n, tool.WithAliases(strings.ToLower(n))), TierCore, ""); err != nil {
			t.Fatal(err)
		}
	}
	rare := simple(t, "Rare", tool.WithDefer(tool.Deferral{ShouldDefer: true, SearchHint: "rarely needed"}))
	if err := r.RegisterTool(rare, TierCore, ""); err != nil {
		t.Fatal(err)
	}
	if err := r.RegisterTool(sessionTool(t, described), TierCore, ""); err != nil {
		t.Fatal(err)
	}
	r.MustRegister(Entry{Name: "Fresh", Factory: func(_ context.Context, env *tool.Env) (tool.Tool, error) {
		built.Add(1)
		return simple(t, "Fresh"), nil
	}})
	return r
}

func TestCoreShared(t *testing.T) {
	var described, built atomic.Int32
	reg := coreRegistry(t, &described, &built)
	opts := Options{Registry: reg, Defer: true}
	a := newPool(t, Options{Registry: reg, Defer: true, Env: &tool.Env{WorkDir: "/a"}})
	b := newPool(t, Options{Registry: reg, Defer: true, Env: &tool.Env{WorkDir: "/b"}})
	if a.core != b.core {
		t.Fatal("pools of one registry and options have different cores")
	}
	if other := newPool(t, Options{Registry: reg, Deny: []string{"Beta"}}); other.core == a.core {
		t.Fatal("pools with other options share a core")
	}
	if err := a.Build(); err != nil {
		t.Fatal(err)
	}
	if err := b.Build(); err != nil {
		t.Fatal(err)
	}
	// The shared tools' frozen specs are one value; the session's are not.
	spec := func(p *Pool, name string) *tool.Spec {
		tl, ok := p.Lookup(name)
		if !ok {
			t.Fatalf("%s not found", name)
		}
		return tl.Spec()
	}
	if spec(a, "Alpha") != spec(b, "Alpha") {
		t.Error("Alpha's spec is not shared")
	}
	if got := spec(a, "Where").Prompt; !strings.Contains(got, "/a") {
		t.Errorf("a's Where prompt %q", got)
	}
	if got := spec(b, "Where").Prompt; !strings.Contains(got, "/b") {
		t.Errorf("b's Where prompt %q", got)
	}
	if n := described.Load(); n != 2 {
		t.Errorf("DescribeSession called %d times for 2 sessions", n)
	}
	if n := built.Load(); n != 2 {
		t.Errorf("factory called %d times for 2 sessions", n)
	}
	// A registration drops the cores: the next pool sees the new tool.
	reg.MustRegister(Entry{Name: "Late", Factory: factoryOf(simple(t, "Late"), nil)})
	c := newPool(t, opts)
	if c.core == a.core {
		t.Fatal("a registration kept the old core")
	}
	if _, ok := c.Lookup("Late"); !ok {
		t.Fatal("Late not in a pool assembled after its registration")
	}
	if _, ok := a.Lookup("Late"); ok {
		t.Fatal("Late appeared in a pool assembled before its registration")
	}
}

func TestCoreUserToolsPerPool(t *testing.T) {
	var described, built atomic.Int32
	reg := coreRegistry(t, &described, &built)
	// A user tool taking over Beta's alias and one replacing Gamma, in
	// one pool only.
	mine := simple(t, "Mine", tool.WithAliases("beta"))
	gamma := simple(t, "Gamma")
	a := newPool(t, Options{Registry: reg, Tools: []tool.Tool{mine, gamma}})
	b := newPool(t, Options{Registry: reg})
	if a.core != b.core {
		t.Fatal("user tools changed the core")
	}
	if tl, ok := a.Lookup("beta"); !ok || tl.Spec().Name != "Mine" {
		t.Fatalf("a: beta resolves to %v", tl)
	}
	if tl, ok := b.Lookup("beta"); !ok || tl.Spec().Name != "Beta" {
		t.Fatalf("b: beta resolves to %v", tl)
	}
	if tl, _ := a.Lookup("Gamma"); tl != gamma {
		t.Fatal("a's Gamma is not the user's")
	}
	if tl, _ := b.Lookup("Gamma"); tl == gamma {
		t.Fatal("b sees a's user tool")
	}
	if !slices.Equal(b.Names(), []string{"Alpha", "alpha", "Beta", "beta", "Fresh", "Gamma", "gamma", "Rare", "Where"}) {
		t.Fatalf("b's names %v", b.Names())
	}
}

// TestConcurrentSessions runs many sessions of one core at once, each
// changing its own state (restriction, loaded tools, MCP servers), and
// checks that no session sees another's. Run with -race.
func TestConcurrentSessions(t *testing.T) {
	var described, built atomic.Int32
	reg := coreRegistry(t, &described, &built)
	const n = 32
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- session(reg, i)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if d, b := described.Load(), built.Load(); d != n || b != n {
		t.Errorf("%d sessions: DescribeSession %d, factory %d times", n, d, b)
	}
}

func session(reg *Registry, i int) error {
	dir := fmt.Sprintf("/s%d", i)
	p, err := NewPool(context.Background(), Options{Registry: reg, Defer: true, Env: &tool.Env{WorkDir: dir}})
	if err != nil {
		return err
	}
	if err := p.Build(); err != nil {
		return err
	}
	server := fmt.Sprintf("srv%d", i)
	op := tool.Must(tool.NewNoInput(fmt.Sprintf("op%d", i), "An operation.", func(context.Context, *tool.Env) (*tool.Result, error) { return nil, nil }))
	if err := p.AddMCP(server, op); err != nil {
		return err
	}
	if i%2 == 0 {
		p.Load("Rare")
	}
	var pop func()
	if i%3 == 0 {
		pop = p.Push("Alpha", "mcp__"+server)
	}
	for range 20 {
		got := names(p.Tools())
		want := []string{"Alpha", "Beta", "Fresh", "Gamma"}
		if i%2 == 0 {
			want = append(want, "Rare")
		}
		want = append(want, ToolSearchName, "Where", MCPPrefix+server+"__op"+fmt.Sprint(i))
		if i%3 == 0 {
			want = []string{"Alpha", MCPPrefix + server + "__op" + fmt.Sprint(i)}
		}
		if !sameSet(got, want) {
			return fmt.Errorf("session %d sees %v, want %v", i, got, want)
		}
		w, ok := p.Lookup("Where")
		if i%3 == 0 {
			if ok {
				return fmt.Errorf("session %d: Where not restricted away", i)
			}
		} else if !ok || !strings.Contains(w.Spec().Prompt, dir+".") {
			return fmt.Errorf("session %d: Where's prompt is not its own: %v", i, w)
		}
		if _, ok := p.Lookup(fmt.Sprintf("mcp__srv%d__op%d", i+1, i+1)); ok {
			return fmt.Errorf("session %d sees another session's MCP tool", i)
		}
	}
	if pop != nil {
		pop()
	}
	if got := p.Loaded(); (i%2 == 0) != slices.Equal(got, []string{"Rare"}) {
		return fmt.Errorf("session %d: loaded %v", i, got)
	}
	return p.Err()
}

func sameSet(a, b []string) bool {
	return slices.Equal(slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b)))
}

// TestMCPChangeReplaces: an MCP server's new tool list replaces the old one
// in the pool (a changed schema included) and leaves other pools alone.
func TestMCPChangeReplaces(t *testing.T) {
	reg := NewRegistry()
	reg.RegisterTool(simple(t, "Alpha"), TierCore, "")
	a := newPool(t, Options{Registry: reg})
	b := newPool(t, Options{Registry: reg})
	v1 := tool.Must(tool.NewRaw("q", "Query v1.", json.RawMessage(`{"type":"object","properties":{"x":{"type":"string"}}}`),
		func(context.Context, *tool.Env, json.RawMessage) (*tool.Result, error) { return nil, nil }))
	v2 := tool.Must(tool.NewRaw("q", "Query v2.", json.RawMessage(`{"type":"object","properties":{"y":{"type":"number"}}}`),
		func(context.Context, *tool.Env, json.RawMessage) (*tool.Result, error) { return nil, nil }))
	for _, p := range []*Pool{a, b} {
		if err := p.AddMCP("db", v1); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.AddMCP("db", v2); err != nil {
		t.Fatal(err)
	}
	ta, _ := a.Lookup("mcp__db__q")
	tb, _ := b.Lookup("mcp__db__q")
	if ta.Spec().Description != "Query v2." || !strings.Contains(string(ta.Spec().InputSchema), `"y"`) {
		t.Fatalf("a's changed tool: %+v", ta.Spec())
	}
	if tb.Spec().Description != "Query v1." {
		t.Fatalf("b sees a's change: %+v", tb.Spec())
	}
	a.RemoveMCP("db")
	if _, ok := a.Lookup("mcp__db__q"); ok {
		t.Fatal("removed server's tool still in a")
	}
	if _, ok := b.Lookup("mcp__db__q"); !ok {
		t.Fatal("b lost its tool")
	}
	if a.core != b.core {
		t.Fatal("MCP changes touched the core")
	}
}

// TestSearchListingReused: while the deferred tools stay the same, every
// view carries the same ToolSearch spec; a change of them makes a new one.
func TestSearchListingReused(t *testing.T) {
	var described, built atomic.Int32
	p := newPool(t, Options{Registry: coreRegistry(t, &described, &built), Defer: true})
	search := func() *tool.Spec {
		t.Helper()
		for _, s := range p.Specs() {
			if s.Name == ToolSearchName {
				return s
			}
		}
		t.Fatal("no ToolSearch")
		return nil
	}
	first := search()
	if search() != first {
		t.Fatal("the same deferred tools gave a new ToolSearch spec")
	}
	rare := tool.Must(tool.NewNoInput("rare_op", "A rare operation.", func(context.Context, *tool.Env) (*tool.Result, error) { return nil, nil },
		tool.WithDefer(tool.Deferral{ShouldDefer: true, SearchHint: "seldom used"})))
	if err := p.AddMCP("srv", rare); err != nil {
		t.Fatal(err)
	}
	second := search()
	if second == first || !strings.Contains(second.Description, "mcp__srv__rare_op: seldom used") {
		t.Fatalf("listing after a new deferred tool: %q", second.Description)
	}
	p.RemoveMCP("srv")
	if third := search(); third == second || strings.Contains(third.Description, "rare_op") {
		t.Fatalf("listing after the server left: %q", third.Description)
	}
}
