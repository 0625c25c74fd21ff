package builtin

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/gantry-dev/gantry/builtin/memory"
	"github.com/gantry-dev/gantry/builtin/shell"
	"github.com/gantry-dev/gantry/builtin/web"
	"github.com/gantry-dev/gantry/tool"
	"github.com/gantry-dev/gantry/toolset"
)

func TestRegistryHoldsEveryBuiltin(t *testing.T) {
	r, err := Registry(Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"AskUserQuestion", "Bash", "Edit", "EnterPlanMode", "EnterWorktree", "ExitPlanMode", "ExitWorktree", "Glob", "Grep", "LSP", "ListMcpResources", "NotebookEdit", "Read", "ReadMcpResource", "SendMessage", "TaskCreate", "TaskGet", "TaskList", "TaskOutput", "TaskStop", "TaskUpdate", "TeamCreate", "TeamDelete", "TodoWrite", "WebFetch", "Write"}
	want = append(want, "Skill", "Config")                                       // the specialist tools
	want = append(want, "CronCreate", "CronDelete", "CronList", "RemoteTrigger") // scheduling
	want = append(want, "Sleep", "PushNotification")                             // waiting, telling the person
	slices.Sort(want)
	got := entryNames(t, r)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("builtins = %v, want %v", got, want)
	}
	// Aliases of the shell tools resolve through a pool.
	p, err := toolset.NewPool(context.Background(), toolset.Options{Registry: r, Env: &tool.Env{WorkDir: t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	for alias, name := range map[string]string{"BashOutput": "TaskOutput", "KillShell": "TaskStop", "AgentOutput": "TaskOutput"} {
		tl, ok := p.Lookup(alias)
		if !ok || tl.Spec().Name != name {
			t.Errorf("alias %s does not resolve to %s", alias, name)
		}
	}
	// Every input schema is an object schema the validator accepts.
	for _, tl := range p.All() {
		if err := tool.CheckSchema(tl.Spec().InputSchema); err != nil {
			t.Errorf("%s: %v", tl.Spec().Name, err)
		}
		var s map[string]any
		json.Unmarshal(tl.Spec().InputSchema, &s)
		if s["type"] != "object" {
			t.Errorf("%s schema type %v", tl.Spec().Name, s["type"])
		}
	}
}

// entryNames returns the names of r's entries, checking each one's tier.
func entryNames(t *testing.T, r *toolset.Registry) []string {
	t.Helper()
	var names []string
	for _, e := range r.Entries() {
		names = append(names, e.Name)
		if e.Tier != Tier(e.Name) {
			t.Errorf("%s tier %v", e.Name, e.Tier)
		}
	}
	return names
}

func TestCoreTierPool(t *testing.T) {
	r, err := Registry(Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := toolset.NewPool(context.Background(), toolset.Options{Registry: r, MaxTier: toolset.TierCore, Env: &tool.Env{WorkDir: t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range p.Specs() {
		names = append(names, s.Name)
	}
	if !slices.Equal(names, []string{"Bash", "Edit", "Glob", "Grep", "Read", "WebFetch", "Write"}) {
		t.Fatalf("core pool %v", names)
	}
}

func TestSessionServicesCloseKillsTasks(t *testing.T) {
	var s tool.Services
	c := SessionServices(&s)
	env := &tool.Env{WorkDir: t.TempDir(), Services: &s, ToolResultsDir: t.TempDir(), Files: tool.NewFileCache(0)}
	bash := shell.NewBash(shell.Options{})
	res, err := bash.Call(context.Background(), env, json.RawMessage(`{"command":"sleep 30","run_in_background":true}`))
	if err != nil || res.IsError {
		t.Fatalf("background start: %v %+v", err, res)
	}
	tasks, err := tool.Use[*shell.Jobs](env)
	if err != nil {
		t.Fatal(err)
	}
	if l := tasks.List(); len(l) != 1 || l[0].Status != shell.TaskRunning {
		t.Fatalf("tasks before close: %+v", l)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if l := tasks.List(); len(l) != 1 || l[0].Status == shell.TaskRunning {
		t.Fatalf("task still running after close: %+v", l)
	}
}

func TestMemoryIsOptIn(t *testing.T) {
	has := func(opts Options) bool {
		tools, err := Tools(opts)
		if err != nil {
			t.Fatal(err)
		}
		return slices.ContainsFunc(tools, func(tl tool.Tool) bool { return tl.Spec().Name == "memory" })
	}
	if has(Options{}) {
		t.Error("memory tool present without Options.Memory")
	}
	if !has(Options{Memory: &memory.Options{}}) {
		t.Error("memory tool missing with Options.Memory")
	}
}

type nopSearch struct{}

func (nopSearch) Name() string { return "nop" }
func (nopSearch) Search(context.Context, web.SearchQuery) ([]web.SearchResult, error) {
	return nil, nil
}

// TestCatalogNames checks the catalog's names against the tools each group
// builds (with every optional tool on): a name or alias missing from the
// catalog would make Options.Only miss the tool.
func TestCatalogNames(t *testing.T) {
	o := Options{Memory: &memory.Options{Dir: t.TempDir()}, Web: web.Options{Search: nopSearch{}}}
	seen := map[string]bool{}
	for _, g := range catalog {
		tools, err := g.build(o)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, tl := range tools {
			got = append(got, tl.Spec().Names()...)
		}
		if !slices.Equal(got, g.names) {
			t.Errorf("group %v builds %v", g.names, got)
		}
		for _, n := range got {
			if !Known(n) {
				t.Errorf("%s not Known", n)
			}
			if seen[n] {
				t.Errorf("%s in two groups", n)
			}
			seen[n] = true
		}
	}
}

func TestRegistryOnly(t *testing.T) {
	for _, c := range []struct {
		only []string
		want []string
	}{
		{[]string{"Grep"}, []string{"Grep"}},
		{[]string{"Read"}, []string{"Read"}},
		{[]string{"Edit", "Glob"}, []string{"Edit", "Glob"}},
		{[]string{"BashOutput"}, []string{"TaskOutput"}}, // an alias
		{[]string{"Skill"}, []string{"Skill"}},
		{[]string{"WebSearch"}, nil}, // no search backend: not built
		{[]string{"NoSuchTool"}, nil},
		{[]string{}, nil},
	} {
		r, err := Registry(Options{Only: c.only})
		if err != nil {
			t.Fatal(err)
		}
		if got := entryNames(t, r); !slices.Equal(got, c.want) {
			t.Errorf("Only %v: registry %v, want %v", c.only, got, c.want)
		}
		for _, n := range c.only {
			if Known(n) != (n != "NoSuchTool") {
				t.Errorf("Known(%s) = %v", n, Known(n))
			}
		}
	}
	// The same tool as in a full registry: name, aliases, schema.
	full, err := Registry(Options{})
	if err != nil {
		t.Fatal(err)
	}
	only, err := Registry(Options{Only: []string{"KillShell"}})
	if err != nil {
		t.Fatal(err)
	}
	env := &tool.Env{WorkDir: t.TempDir()}
	pf, err := toolset.NewPool(context.Background(), toolset.Options{Registry: full, Env: env})
	if err != nil {
		t.Fatal(err)
	}
	po, err := toolset.NewPool(context.Background(), toolset.Options{Registry: only, Env: env})
	if err != nil {
		t.Fatal(err)
	}
	a, ok1 := pf.Lookup("KillShell")
	b, ok2 := po.Lookup("KillShell")
	if !ok1 || !ok2 {
		t.Fatalf("lookup: %v %v", ok1, ok2)
	}
	sa, sb := a.Spec(), b.Spec()
	if sa.Name != sb.Name || !slices.Equal(sa.Aliases, sb.Aliases) || string(sa.InputSchema) != string(sb.InputSchema) || sa.Description != sb.Description {
		t.Errorf("spec differs: %+v vs %+v", sa, sb)
	}
	if len(po.All()) != 1 {
		t.Errorf("pool of Only holds %d tools", len(po.All()))
	}
}
