package toolset

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gantry-dev/gantry/tool"
)

// deferPool is a pool of the 40 fixture built-ins with deferral on, plus
// MCP servers.
func deferPool(t testing.TB, opts Options) *Pool {
	t.Helper()
	opts.Registry = builtinRegistry()
	opts.Defer = true
	p := newPool(t, opts)
	if err := p.AddMCP("github", mcpTools("github", 6)...); err != nil {
		t.Fatal(err)
	}
	return p
}

func specNames(specs []*tool.Spec) []string {
	out := make([]string, len(specs))
	for i, s := range specs {
		out[i] = s.Name
	}
	return out
}

func TestDeferredToolsAreListedNotSent(t *testing.T) {
	p := deferPool(t, Options{})
	got := specNames(p.Specs())
	want := []string{"Agent", "Bash", "Edit", "ExitPlanMode", "Glob", "Grep", "Read", "Skill", "TaskOutput", "TaskStop", "TodoWrite", ToolSearchName, "Write"}
	for _, n := range mcpTools("github", 6) {
		want = append(want, "mcp__github__"+n.Spec().Name)
	}
	slices.Sort(want[len(want)-6:])
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("Specs (-want +got):\n%s", diff)
	}
	search := p.Specs()[slices.Index(got, ToolSearchName)]
	if !strings.Contains(search.Description, "\n- NotebookEdit: edit jupyter notebook cells ipynb\n") ||
		!strings.Contains(search.Description, "- TaskList: list all tasks in the task list") {
		t.Fatalf("ToolSearch listing:\n%s", search.Description)
	}
	if slices.ContainsFunc(strings.Split(search.Description, "\n"), func(l string) bool { return l == "- Read" || strings.HasPrefix(l, "- Read:") }) {
		t.Fatal("a tool sent in full is listed as deferred")
	}
	if p.DeferredListing() == "" || !strings.HasSuffix(search.Description, p.DeferredListing()) {
		t.Fatal("DeferredListing differs from the ToolSearch listing")
	}
	// Deferred tools still run when called by name (and by alias).
	if tl, ok := p.Lookup("NotebookEdit"); !ok || tl.Spec().Name != "NotebookEdit" {
		t.Fatal("Lookup of a deferred tool failed")
	}
	if len(p.Deferred()) != 28 || len(p.All()) != 40+6+1 {
		t.Fatalf("Deferred %d, All %d", len(p.Deferred()), len(p.All()))
	}
	if !slices.Contains(p.Names(), "NotebookEdit") || !slices.Contains(p.Names(), ToolSearchName) || !slices.Contains(p.Names(), "BashOutput") {
		t.Fatal("Names misses deferred tools, ToolSearch or aliases")
	}
}

func TestToolSearchSelectLoads(t *testing.T) {
	p := deferPool(t, Options{})
	ts, ok := p.Lookup(ToolSearchName)
	if !ok {
		t.Fatal("no ToolSearch")
	}
	if tool.TraitsOf(ts, nil) != tool.ReadOnlyTraits {
		t.Fatal("ToolSearch is not read-only")
	}
	res, err := ts.Call(context.Background(), &tool.Env{}, json.RawMessage(`{"query":"select:CronCreate, cronlist ,Nope,Read"}`))
	if err != nil || res.IsError {
		t.Fatalf("Call = %v, %v", res, err)
	}
	text := res.TextContent()
	for _, want := range []string{"Loaded 3 tool(s): CronCreate, CronList, Read.", `<function>{"name":"CronCreate","description":"Schedules a prompt`, `"parameters":{"type":"object","properties":{"cron":`, "No tool named: Nope."} {
		if !strings.Contains(text, want) {
			t.Errorf("result misses %q:\n%s", want, text)
		}
	}
	if diff := cmp.Diff([]string{"CronCreate", "CronList"}, p.Loaded()); diff != "" {
		t.Fatalf("Loaded (only deferred tools are loaded):\n%s", diff)
	}
	got := specNames(p.Specs())
	if !slices.Contains(got, "CronCreate") || !slices.Contains(got, "CronList") || slices.Contains(got, "CronDelete") {
		t.Fatalf("loaded tools not sent in full: %v", got)
	}
	if i, j := slices.Index(got, "CronCreate"), slices.Index(got, "Edit"); i > j {
		t.Fatal("a loaded tool is not in its place in the order")
	}
	if strings.Contains(p.DeferredListing(), "CronCreate") == false {
		t.Fatal("the listing must stay stable when tools load")
	}
	p.ResetLoaded()
	if slices.Contains(specNames(p.Specs()), "CronCreate") {
		t.Fatal("ResetLoaded")
	}
	bad, err := ts.Call(context.Background(), nil, json.RawMessage(`{"query":"  "}`))
	if err != nil || !bad.IsError {
		t.Fatalf("empty query: %v %v", bad, err)
	}
	if _, err := ts.Call(context.Background(), nil, json.RawMessage(`{"query":1}`)); err == nil {
		t.Fatal("undecodable input accepted")
	}
	if tool.Describe(ts, json.RawMessage(`{"query":"cron"}`)) != "Search tools: cron" {
		t.Fatal("DescribeCall")
	}
}

func TestToolSearchRanking(t *testing.T) {
	tests := []struct {
		query string
		max   int
		want  []string
	}{
		{"cron", 0, []string{"CronCreate", "CronDelete", "CronList"}},                      // name part; ties by name
		{"notebook", 0, []string{"NotebookEdit"}},                                          // name part
		{"jupyter", 0, []string{"NotebookEdit"}},                                           // hint word
		{"schedule", 0, []string{"CronCreate", "CronDelete", "CronList", "RemoteTrigger"}}, // hint word, then hint substring (scheduled)
		{"task list", 2, []string{"TaskList", "TaskCreate"}},                               // two terms add up
		{"+cron delete", 0, []string{"CronDelete", "CronCreate", "CronList"}},
		{"+nothing cron", 0, nil},
		{"LSP", 0, []string{"LSP"}}, // whole name, case-insensitive
		{"mcp__github", 3, []string{"mcp__github__create_issue", "mcp__github__delete_issue", "mcp__github__get_issue"}},
		{"mcp__github list", 0, []string{"mcp__github__list_issue"}},
		{"mcp__nope", 0, nil},
		{"zzzz", 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			p := deferPool(t, Options{DeferMCPOver: 2})
			res, err := p.Search(tt.query, tt.max)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, specNames(res.Tools), cmpEmpty); diff != "" {
				t.Fatalf("Search(%q) (-want +got):\n%s", tt.query, diff)
			}
			if len(tt.want) == 0 && !strings.Contains(res.Text(), "No deferred tool matched") {
				t.Fatalf("no-match text: %s", res.Text())
			}
		})
	}
}

func TestDeferralRules(t *testing.T) {
	alwaysMCP := tool.Must(tool.NewNoInput("pinned", "Pinned tool.", func(context.Context, *tool.Env) (*tool.Result, error) { return nil, nil },
		tool.WithDefer(tool.Deferral{AlwaysLoad: true})))
	alwaysDeferred := tool.Must(tool.NewNoInput("Both", "Defer and always load.", func(context.Context, *tool.Env) (*tool.Result, error) { return nil, nil },
		tool.WithDefer(tool.Deferral{AlwaysLoad: true, ShouldDefer: true})))
	t.Run("MCP threshold, AlwaysLoad wins", func(t *testing.T) {
		p := deferPool(t, Options{DeferMCPOver: 5, Tools: []tool.Tool{alwaysDeferred}})
		if err := p.AddMCP("pin", alwaysMCP); err != nil {
			t.Fatal(err)
		}
		got := specNames(p.Specs())
		if slices.ContainsFunc(got, func(n string) bool { return strings.HasPrefix(n, "mcp__github__") }) {
			t.Fatalf("7 MCP tools over a threshold of 5 are not deferred: %v", got)
		}
		if !slices.Contains(got, "mcp__pin__pinned") || !slices.Contains(got, "Both") {
			t.Fatalf("AlwaysLoad tools deferred: %v", got)
		}
	})
	t.Run("under the threshold", func(t *testing.T) {
		p := deferPool(t, Options{DeferMCPOver: 6})
		if !slices.Contains(specNames(p.Specs()), "mcp__github__create_issue") {
			t.Fatal("6 MCP tools with a threshold of 6 were deferred")
		}
	})
	t.Run("DeferNames", func(t *testing.T) {
		p := deferPool(t, Options{DeferNames: []string{"Bash", "mcp__github"}})
		got := specNames(p.Specs())
		if slices.Contains(got, "Bash") || slices.Contains(got, "mcp__github__create_issue") {
			t.Fatalf("DeferNames ignored: %v", got)
		}
	})
	t.Run("deferral off", func(t *testing.T) {
		p := newPool(t, Options{Registry: builtinRegistry()})
		if len(p.Specs()) != 40 || slices.Contains(specNames(p.Specs()), ToolSearchName) {
			t.Fatal("deferral off still defers")
		}
		if _, ok := p.Lookup(ToolSearchName); ok {
			t.Fatal("ToolSearch resolves with deferral off")
		}
		if p.DeferredListing() != "" {
			t.Fatal("listing with deferral off")
		}
	})
	t.Run("denying ToolSearch turns deferral off", func(t *testing.T) {
		p := deferPool(t, Options{Deny: []string{ToolSearchName}})
		if len(p.Specs()) != 46 {
			t.Fatalf("Specs = %d tools", len(p.Specs()))
		}
	})
	t.Run("restriction keeps ToolSearch while deferred tools remain", func(t *testing.T) {
		p := deferPool(t, Options{})
		pop := p.Push("Read", "Cron*")
		defer pop()
		if diff := cmp.Diff([]string{"Read", ToolSearchName}, specNames(p.Specs())); diff != "" {
			t.Fatal(diff)
		}
		pop2 := p.Push("Read")
		defer pop2()
		if diff := cmp.Diff([]string{"Read"}, specNames(p.Specs())); diff != "" {
			t.Fatal(diff)
		}
		if _, ok := p.Lookup(ToolSearchName); ok {
			t.Fatal("ToolSearch resolves with nothing deferred")
		}
	})
}

func TestLoadConcurrent(t *testing.T) {
	p := deferPool(t, Options{})
	deferred := p.Deferred()
	var wg sync.WaitGroup
	for i, d := range deferred {
		wg.Go(func() {
			if i%2 == 0 {
				if _, err := p.Search("select:"+d.Spec().Name, 0); err != nil {
					t.Error(err)
				}
			} else {
				p.Load(d.Spec().Name)
			}
			p.Specs()
		})
	}
	wg.Wait()
	if len(p.Loaded()) != len(deferred) {
		t.Fatalf("loaded %d of %d", len(p.Loaded()), len(deferred))
	}
	if len(p.Specs()) != 40+6+1 {
		t.Fatalf("after loading all: %d specs", len(p.Specs()))
	}
}

func TestNameParts(t *testing.T) {
	tests := map[string][]string{
		"WebFetch":                 {"web", "fetch"},
		"mcp__github__createIssue": {"mcp", "github", "create", "issue"},
		"LSP":                      {"lsp"},
		"HTTPServer":               {"http", "server"},
		"get-v2_thing":             {"get", "v2", "thing"},
		"":                         nil,
	}
	for in, want := range tests {
		if diff := cmp.Diff(want, nameParts(in), cmpEmpty); diff != "" {
			t.Errorf("nameParts(%q): %s", in, diff)
		}
	}
}
