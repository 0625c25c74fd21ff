package toolset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gantry-dev/gantry/tool"
)

func simple(t testing.TB, name string, opts ...tool.Option) tool.Tool {
	t.Helper()
	tl, err := tool.NewNoInput(name, "The "+name+" tool.", func(context.Context, *tool.Env) (*tool.Result, error) {
		return tool.TextResult(name), nil
	}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

func factoryOf(tl tool.Tool, counter *atomic.Int32) Factory {
	return func(context.Context, *tool.Env) (tool.Tool, error) {
		if counter != nil {
			counter.Add(1)
		}
		return tl, nil
	}
}

func names(ts []tool.Tool) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Spec().Name
	}
	return out
}

func newPool(t testing.TB, opts Options) *Pool {
	t.Helper()
	p, err := NewPool(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRegistryRegister(t *testing.T) {
	ok := func(string) Factory { return factoryOf(nil, nil) }
	tests := []struct {
		name    string
		entries []Entry
		wantErr string
		dup     bool
	}{
		{"two tools", []Entry{{Name: "A", Factory: ok("A")}, {Name: "B", Aliases: []string{"Bee"}, Factory: ok("B")}}, "", false},
		{"duplicate name", []Entry{{Name: "A", Factory: ok("A")}, {Name: "A", Factory: ok("A")}}, `"A" is already a name of "A"`, true},
		{"alias clashes with name", []Entry{{Name: "A", Factory: ok("A")}, {Name: "B", Aliases: []string{"A"}, Factory: ok("B")}}, `"A" is already a name of "A"`, true},
		{"name clashes with alias", []Entry{{Name: "B", Aliases: []string{"A"}, Factory: ok("B")}, {Name: "A", Factory: ok("A")}}, `"A" is already a name of "B"`, true},
		{"alias clashes with alias", []Entry{{Name: "B", Aliases: []string{"X"}, Factory: ok("B")}, {Name: "C", Aliases: []string{"X"}, Factory: ok("C")}}, `"X" is already a name of "B"`, true},
		{"alias repeats name", []Entry{{Name: "A", Aliases: []string{"A"}, Factory: ok("A")}}, "listed twice", true},
		{"invalid name", []Entry{{Name: "a b", Factory: ok("a b")}}, "invalid name", false},
		{"empty name", []Entry{{Name: "", Factory: ok("")}}, "invalid name", false},
		{"invalid alias", []Entry{{Name: "A", Aliases: []string{"a.b"}, Factory: ok("A")}}, `invalid name "a.b"`, false},
		{"name too long", []Entry{{Name: strings.Repeat("x", 65), Factory: ok("")}}, "invalid name", false},
		{"nil factory", []Entry{{Name: "A"}}, "nil factory", false},
		{"bad tier", []Entry{{Name: "A", Tier: 9, Factory: ok("A")}}, "unknown tier", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewRegistry()
			var err error
			for _, e := range tt.entries {
				if err = r.Register(e); err != nil {
					break
				}
			}
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Register: %v", err)
				}
				if r.Len() != len(tt.entries) {
					t.Fatalf("Len = %d", r.Len())
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Register error = %v, want %q", err, tt.wantErr)
			}
			if errors.Is(err, ErrDuplicate) != tt.dup {
				t.Fatalf("errors.Is(ErrDuplicate) = %v, want %v", !tt.dup, tt.dup)
			}
		})
	}
}

func TestRegistryRegisterToolAndLookup(t *testing.T) {
	var r Registry // zero value is usable
	a := simple(t, "Agent", tool.WithAliases("Task"))
	if err := r.RegisterTool(a, TierAdvanced, "agents"); err != nil {
		t.Fatal(err)
	}
	if err := r.RegisterTool(simple(t, "Task"), TierCore, ""); !errors.Is(err, ErrDuplicate) {
		t.Fatalf("alias clash: %v", err)
	}
	if err := r.RegisterTool(nil, TierCore, ""); err == nil {
		t.Fatal("nil tool registered")
	}
	e, ok := r.Lookup("Task")
	if !ok || e.Name != "Agent" || e.Tier != TierAdvanced || e.Gate != "agents" {
		t.Fatalf("Lookup(Task) = %+v, %v", e, ok)
	}
	got, err := e.Factory(context.Background(), &tool.Env{})
	if err != nil || got != a {
		t.Fatalf("factory = %v, %v", got, err)
	}
	r.MustRegister(Entry{Name: "Bash", Factory: factoryOf(simple(t, "Bash"), nil)})
	var ns []string
	for _, e := range r.Entries() {
		ns = append(ns, e.Name)
	}
	if diff := cmp.Diff([]string{"Agent", "Bash"}, ns); diff != "" {
		t.Fatal(diff)
	}
	if TierCore.String() != "core" || TierSpecialist.String() != "specialist" || Tier(7).String() != "Tier(7)" {
		t.Fatal("Tier.String")
	}
}

func TestLazyBuildOncePerPool(t *testing.T) {
	var builtA, builtB, builtGated atomic.Int32
	var gotEnv atomic.Pointer[tool.Env]
	r := NewRegistry()
	r.MustRegister(Entry{Name: "A", Factory: func(ctx context.Context, env *tool.Env) (tool.Tool, error) {
		builtA.Add(1)
		gotEnv.Store(env)
		return simple(t, "A"), nil
	}})
	r.MustRegister(Entry{Name: "B", Factory: factoryOf(simple(t, "B"), &builtB)})
	r.MustRegister(Entry{Name: "G", Gate: "experimental", Factory: factoryOf(simple(t, "G"), &builtGated)})
	env := &tool.Env{SessionID: "s1"}
	p := newPool(t, Options{Registry: r, Env: env})
	if builtA.Load()+builtB.Load() != 0 {
		t.Fatal("NewPool called factories")
	}
	if _, ok := p.Lookup("A"); !ok {
		t.Fatal("Lookup(A) failed")
	}
	if builtA.Load() != 1 || builtB.Load() != 0 {
		t.Fatalf("Lookup built A=%d B=%d, want only A", builtA.Load(), builtB.Load())
	}
	if gotEnv.Load() != env {
		t.Fatal("factory did not get the session's env")
	}
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			p.Tools()
			p.Lookup("B")
		})
	}
	wg.Wait()
	if builtA.Load() != 1 || builtB.Load() != 1 {
		t.Fatalf("factories ran A=%d B=%d times, want once each", builtA.Load(), builtB.Load())
	}
	if builtGated.Load() != 0 {
		t.Fatal("a gated-off tool was built")
	}
	// A second pool builds its own tools.
	newPool(t, Options{Registry: r}).Tools()
	if builtA.Load() != 2 {
		t.Fatalf("second pool: A built %d times, want 2", builtA.Load())
	}
}

func TestFactoryErrors(t *testing.T) {
	r := NewRegistry()
	r.MustRegister(Entry{Name: "Fails", Factory: func(context.Context, *tool.Env) (tool.Tool, error) {
		return nil, errors.New("no git")
	}})
	r.MustRegister(Entry{Name: "Nil", Factory: func(context.Context, *tool.Env) (tool.Tool, error) { return nil, nil }})
	r.MustRegister(Entry{Name: "Renamed", Factory: factoryOf(simple(t, "Other"), nil)})
	r.MustRegister(Entry{Name: "Undeclared", Factory: factoryOf(simple(t, "Undeclared", tool.WithAliases("Old")), nil)})
	r.MustRegister(Entry{Name: "Good", Factory: factoryOf(simple(t, "Good"), nil)})
	r.MustRegister(Entry{Name: "BadSchema", Factory: factoryOf(&plainTool{spec: tool.Spec{Name: "BadSchema", Description: "x",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integr"}}}`)}}, nil)})
	p := newPool(t, Options{Registry: r})
	if p.Err() != nil {
		t.Fatalf("Err before building = %v", p.Err())
	}
	err := p.Build()
	for _, want := range []string{"no git", `"Nil": factory returned no tool`, `built a tool named "Other"`, `alias "Old" is not declared`,
		`tool "BadSchema": bad input schema: type "integr" is not a JSON Schema type`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Build error %v does not mention %q", err, want)
		}
	}
	if diff := cmp.Diff([]string{"Good"}, names(p.Tools())); diff != "" {
		t.Fatal(diff)
	}
	if _, ok := p.Lookup("Fails"); ok {
		t.Fatal("a tool whose factory failed resolved")
	}
}

func TestPrecedenceUserReplacesBuiltin(t *testing.T) {
	r := NewRegistry()
	builtinRead := simple(t, "Read")
	r.MustRegister(Entry{Name: "Read", Factory: factoryOf(builtinRead, nil)})
	r.MustRegister(Entry{Name: "Agent", Aliases: []string{"Task"}, Factory: factoryOf(simple(t, "Agent", tool.WithAliases("Task")), nil)})
	r.MustRegister(Entry{Name: "Bash", Factory: factoryOf(simple(t, "Bash"), nil)})
	userRead := simple(t, "Read")
	userTask := simple(t, "Task")
	p := newPool(t, Options{Registry: r, Tools: []tool.Tool{userTask, userRead}})
	if diff := cmp.Diff([]string{"Agent", "Bash", "Read", "Task"}, names(p.Tools())); diff != "" {
		t.Fatalf("order (-want +got):\n%s", diff)
	}
	if got, _ := p.Lookup("Read"); got != userRead {
		t.Fatal("Lookup(Read) is not the user tool")
	}
	if got, _ := p.Lookup("Task"); got != userTask {
		t.Fatal("the user tool did not take over the alias Task")
	}
	for _, tl := range p.Tools() {
		if tl == builtinRead {
			t.Fatal("the replaced built-in is still seen by the model")
		}
	}
	if diff := cmp.Diff([]string{"Agent", "Bash", "Read", "Task"}, p.Names()); diff != "" {
		t.Fatalf("Names (-want +got):\n%s", diff)
	}
}

func TestNewPoolErrors(t *testing.T) {
	r := NewRegistry()
	r.MustRegister(Entry{Name: "Bash", Factory: factoryOf(simple(t, "Bash"), nil)})
	bad := &plainTool{spec: tool.Spec{Name: "bad name", Description: "x", InputSchema: tool.EmptyObjectSchema}}
	handWritten := func(schema string) tool.Tool {
		return &plainTool{spec: tool.Spec{Name: "Calendar", Description: "x", InputSchema: json.RawMessage(schema)}}
	}
	tests := []struct {
		name    string
		opts    Options
		wantErr string
	}{
		{"user alias shadows a built-in name", Options{Registry: r, Tools: []tool.Tool{simple(t, "Shell", tool.WithAliases("Bash"))}}, "is the name of a built-in"},
		{"two user tools with one name", Options{Tools: []tool.Tool{simple(t, "X"), simple(t, "X")}}, "already a name of user tool"},
		{"user alias clashes with user name", Options{Tools: []tool.Tool{simple(t, "X"), simple(t, "Y", tool.WithAliases("X"))}}, "already a name"},
		{"invalid user name", Options{Tools: []tool.Tool{bad}}, "invalid name"},
		{"reserved name", Options{Tools: []tool.Tool{simple(t, ToolSearchName)}}, "reserved"},
		{"nil user tool", Options{Tools: []tool.Tool{nil}}, "nil user tool"},
		{"bad max tier", Options{MaxTier: 7}, "unknown max tier"},
		{"hand-written tool with a bad schema", Options{Tools: []tool.Tool{handWritten(`{"type":"object","properties":{"at":{"type":"strin"}}}`)}},
			`user tool "Calendar": bad input schema: type "strin"`},
		{"hand-written tool with a remote $ref", Options{Tools: []tool.Tool{handWritten(`{"type":"object","properties":{"at":{"$ref":"https://example.com/t.json"}}}`)}},
			`user tool "Calendar": bad input schema: $ref "https://example.com/t.json" points outside the schema`},
		{"hand-written tool without a schema", Options{Tools: []tool.Tool{handWritten(``)}}, `user tool "Calendar": bad input schema: empty`},
		{"hand-written tool with a string schema", Options{Tools: []tool.Tool{handWritten(`{"type":"string"}`)}}, `user tool "Calendar": bad input schema: the top-level type must be "object"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewPool(context.Background(), tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("NewPool error = %v, want %q", err, tt.wantErr)
			}
		})
	}
	reg := NewRegistry()
	reg.MustRegister(Entry{Name: ToolSearchName, Factory: factoryOf(nil, nil)})
	if _, err := NewPool(context.Background(), Options{Registry: reg}); err == nil || !strings.Contains(err.Error(), "reserved") {
		t.Fatalf("built-in ToolSearch: %v", err)
	}
}

// plainTool implements only tool.Tool (no optional capabilities).
type plainTool struct{ spec tool.Spec }

func (p *plainTool) Spec() *tool.Spec { return &p.spec }
func (p *plainTool) Call(context.Context, *tool.Env, json.RawMessage) (*tool.Result, error) {
	return tool.TextResult(p.spec.Name), nil
}

// richTool implements every optional capability with recognisable answers.
type richTool struct{ plainTool }

func (richTool) Traits(json.RawMessage) tool.Traits { return tool.ReadOnlyTraits }
func (richTool) ValidateInput(context.Context, *tool.Env, json.RawMessage) error {
	return errors.New("rich validation")
}
func (richTool) CheckPermission(context.Context, *tool.Env, json.RawMessage) tool.PermissionResult {
	return tool.PermissionResult{Behavior: tool.Deny, Reason: "rich"}
}
func (richTool) DescribeCall(json.RawMessage) string        { return "rich call" }
func (richTool) MatchRule(s string, _ json.RawMessage) bool { return s == "yes" }
func (richTool) CallTimeout(json.RawMessage) time.Duration  { return time.Second }
func (richTool) Enabled(context.Context, *tool.Env) bool    { return true }

func TestMCPToolsKeepCapabilities(t *testing.T) {
	rich := &richTool{plainTool{spec: tool.Spec{Name: "query", Description: "Run a query", InputSchema: tool.EmptyObjectSchema}}}
	plain := &plainTool{spec: tool.Spec{Name: "plain", Description: "Plain", InputSchema: tool.EmptyObjectSchema}}
	p := newPool(t, Options{})
	if err := p.AddMCP("db", rich, plain); err != nil {
		t.Fatal(err)
	}
	got, ok := p.Lookup("mcp__db__query")
	if !ok {
		t.Fatal("mcp__db__query not found")
	}
	ctx := context.Background()
	if got.Spec().Name != "mcp__db__query" || rich.Spec().Name != "query" {
		t.Fatal("renaming changed the original spec or did not rename")
	}
	if tool.TraitsOf(got, nil) != tool.ReadOnlyTraits || tool.Describe(got, nil) != "rich call" {
		t.Fatal("traits or description lost")
	}
	if err := got.(tool.InputValidator).ValidateInput(ctx, nil, nil); err == nil || err.Error() != "rich validation" {
		t.Fatal("validation lost")
	}
	if got.(tool.PermissionChecker).CheckPermission(ctx, nil, nil).Behavior != tool.Deny {
		t.Fatal("permission lost")
	}
	if !got.(tool.RuleMatcher).MatchRule("yes", nil) || got.(tool.Timeouter).CallTimeout(nil) != time.Second {
		t.Fatal("rule match or timeout lost")
	}
	if got.(interface{ Unwrap() tool.Tool }).Unwrap() != rich {
		t.Fatal("Unwrap")
	}
	res, err := got.Call(ctx, nil, nil)
	if err != nil || res.TextContent() != "query" {
		t.Fatalf("Call = %v, %v", res, err)
	}
	pl, _ := p.Lookup("mcp__db__plain")
	if tool.TraitsOf(pl, nil) != (tool.Traits{}) || tool.Describe(pl, nil) != "mcp__db__plain" || !tool.IsEnabled(ctx, pl, nil) {
		t.Fatal("neutral defaults of a plain MCP tool")
	}
	if pl.(tool.PermissionChecker).CheckPermission(ctx, nil, nil).Behavior != tool.Passthrough ||
		pl.(tool.InputValidator).ValidateInput(ctx, nil, nil) != nil || pl.(tool.RuleMatcher).MatchRule("x", nil) || pl.(tool.Timeouter).CallTimeout(nil) != 0 {
		t.Fatal("neutral defaults of a plain MCP tool")
	}
}

func TestAddMCPNaming(t *testing.T) {
	p := newPool(t, Options{Tools: []tool.Tool{simple(t, "mcp__x__taken")}})
	long := strings.Repeat("very_long_tool_name_", 5)
	ts := []tool.Tool{
		simple(t, "b_tool"), simple(t, "a_tool"),
		&plainTool{spec: tool.Spec{Name: "a.tool", Description: "dot", InputSchema: tool.EmptyObjectSchema}}, // sanitises to a_tool
		&plainTool{spec: tool.Spec{Name: long + "1", Description: "l1", InputSchema: tool.EmptyObjectSchema}},
		&plainTool{spec: tool.Spec{Name: long + "2", Description: "l2", InputSchema: tool.EmptyObjectSchema}},
		simple(t, "mcp__my_srv__prefixed"),
	}
	if err := p.AddMCP("my.srv", ts...); err != nil {
		t.Fatal(err)
	}
	got := p.Names()
	seen := map[string]bool{}
	for _, n := range got {
		if !tool.ValidName(n) {
			t.Errorf("invalid name %q", n)
		}
		if seen[n] {
			t.Errorf("duplicate name %q", n)
		}
		seen[n] = true
	}
	for _, want := range []string{"mcp__my_srv__a_tool", "mcp__my_srv__b_tool", "mcp__my_srv__prefixed"} {
		if !seen[want] {
			t.Errorf("missing %q in %v", want, got)
		}
	}
	if len(got) != 7 {
		t.Fatalf("names = %v", got)
	}
	// Deterministic regardless of the order tools come in.
	p2 := newPool(t, Options{Tools: []tool.Tool{simple(t, "mcp__x__taken")}})
	rev := slices.Clone(ts)
	slices.Reverse(rev)
	if err := p2.AddMCP("my.srv", rev...); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(got, p2.Names()); diff != "" {
		t.Fatalf("names depend on input order:\n%s", diff)
	}
	if err := p.AddMCP("x", simple(t, "taken")); !errors.Is(err, ErrDuplicate) {
		t.Fatalf("clash with user tool: %v", err)
	}
	if err := p.AddMCP("a__b", simple(t, "t")); !errors.Is(err, ErrBadServerName) {
		t.Fatalf("server with __: %v", err)
	}
	if err := p.AddMCP("", simple(t, "t")); !errors.Is(err, ErrBadServerName) {
		t.Fatalf("empty server: %v", err)
	}
	// Replacing and removing a server.
	if err := p.AddMCP("my.srv", simple(t, "only")); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"mcp__x__taken", "mcp__my_srv__only"}, p.Names()); diff != "" {
		t.Fatal(diff)
	}
	p.RemoveMCP("my.srv")
	if diff := cmp.Diff([]string{"mcp__x__taken"}, p.Names()); diff != "" {
		t.Fatal(diff)
	}
}

func TestMCPName(t *testing.T) {
	long := strings.Repeat("x", 80)
	tests := []struct {
		server, tool, want string
		err                bool
	}{
		{"github", "create_issue", "mcp__github__create_issue", false},
		{"my server", "do.it", "mcp__my_server__do_it", false},
		{"github", "mcp__github__create_issue", "mcp__github__create_issue", false},
		{"a__b", "t", "", true},
		{"a_", "b", "", true}, // mcp__a___b would be ambiguous
		{"ü", "t", "", true},
		{strings.Repeat("s", 41), "t", "", true},
		{"s", "_t", "mcp__s___t", false},
		{"", "t", "", true},
		{"s", "", "", true},
	}
	for _, tt := range tests {
		got, err := MCPName(tt.server, tt.tool)
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("MCPName(%q, %q) = %q, %v; want %q, err %v", tt.server, tt.tool, got, err, tt.want, tt.err)
		}
	}
	a, _ := MCPName("s", long+"a")
	b, _ := MCPName("s", long+"b")
	if len(a) != 64 || len(b) != 64 || a == b || !tool.ValidName(a) {
		t.Fatalf("long names: %q %q", a, b)
	}
	if again, _ := MCPName("s", long+"a"); again != a {
		t.Fatal("shortening is not deterministic")
	}
	if s, n, ok := SplitMCPName("mcp__github__create_issue"); !ok || s != "github" || n != "create_issue" {
		t.Fatalf("SplitMCPName = %q %q %v", s, n, ok)
	}
	for _, bad := range []string{"Read", "mcp__github", "mcp____x"} {
		if _, _, ok := SplitMCPName(bad); ok {
			t.Errorf("SplitMCPName(%q) ok", bad)
		}
	}
}

// filterPool builds a pool with tiers, gates, user and MCP tools.
func filterPool(t *testing.T, opts Options) *Pool {
	t.Helper()
	r := NewRegistry()
	r.MustRegister(Entry{Name: "Read", Tier: TierCore, Factory: factoryOf(simple(t, "Read"), nil)})
	r.MustRegister(Entry{Name: "Bash", Tier: TierCore, Aliases: []string{"Shell"}, Factory: factoryOf(simple(t, "Bash", tool.WithAliases("Shell")), nil)})
	r.MustRegister(Entry{Name: "WebFetch", Tier: TierAdvanced, Factory: factoryOf(simple(t, "WebFetch"), nil)})
	r.MustRegister(Entry{Name: "LSP", Tier: TierSpecialist, Factory: factoryOf(simple(t, "LSP"), nil)})
	r.MustRegister(Entry{Name: "Cron", Tier: TierAdvanced, Gate: "cron", Factory: factoryOf(simple(t, "Cron"), nil)})
	r.MustRegister(Entry{Name: "Off", Factory: factoryOf(simple(t, "Off", tool.EnabledFunc(func(context.Context, *tool.Env) bool { return false })), nil)})
	opts.Registry = r
	opts.Tools = []tool.Tool{simple(t, "Mine")}
	p := newPool(t, opts)
	if err := p.AddMCP("github", simple(t, "create_issue"), simple(t, "list_issues")); err != nil {
		t.Fatal(err)
	}
	if err := p.AddMCP("slack", simple(t, "send")); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestFilters(t *testing.T) {
	all := []string{"Bash", "LSP", "Read", "WebFetch", "Mine", "mcp__github__create_issue", "mcp__github__list_issues", "mcp__slack__send"}
	tests := []struct {
		name string
		opts Options
		want []string
	}{
		{"defaults: all tiers, gates off, disabled out", Options{}, all},
		{"core only", Options{MaxTier: TierCore}, []string{"Bash", "Read", "Mine", "mcp__github__create_issue", "mcp__github__list_issues", "mcp__slack__send"}},
		{"gate on", Options{MaxTier: TierAdvanced, Features: []string{"cron"}}, []string{"Bash", "Cron", "Read", "WebFetch", "Mine", "mcp__github__create_issue", "mcp__github__list_issues", "mcp__slack__send"}},
		{"deny a built-in", Options{Deny: []string{"Bash"}}, slices.DeleteFunc(slices.Clone(all), func(s string) bool { return s == "Bash" })},
		{"deny by alias", Options{Deny: []string{"Shell"}}, slices.DeleteFunc(slices.Clone(all), func(s string) bool { return s == "Bash" })},
		{"deny with a specifier keeps the tool", Options{Deny: []string{"Bash(rm:*)"}}, all},
		{"deny a whole server", Options{Deny: []string{"mcp__github"}}, []string{"Bash", "LSP", "Read", "WebFetch", "Mine", "mcp__slack__send"}},
		{"deny a server glob", Options{Deny: []string{"mcp__github__*"}}, []string{"Bash", "LSP", "Read", "WebFetch", "Mine", "mcp__slack__send"}},
		{"deny one MCP tool", Options{Deny: []string{"mcp__github__create_issue"}}, []string{"Bash", "LSP", "Read", "WebFetch", "Mine", "mcp__github__list_issues", "mcp__slack__send"}},
		{"deny a user tool", Options{Deny: []string{"Mine"}}, []string{"Bash", "LSP", "Read", "WebFetch", "mcp__github__create_issue", "mcp__github__list_issues", "mcp__slack__send"}},
		{"allow list", Options{Allow: []string{"Read", "Bash(git:*)", "mcp__slack"}}, []string{"Bash", "Read", "mcp__slack__send"}},
		{"allow glob", Options{Allow: []string{"*_issue*"}}, []string{"mcp__github__create_issue", "mcp__github__list_issues"}},
		{"deny wins over allow", Options{Allow: []string{"Read", "Bash"}, Deny: []string{"Read"}}, []string{"Bash"}},
		{"allow nothing known", Options{Allow: []string{"Nope"}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filterPool(t, tt.opts)
			got := names(p.Tools())
			if diff := cmp.Diff(tt.want, got, cmpEmpty); diff != "" {
				t.Fatalf("Tools (-want +got):\n%s", diff)
			}
			for _, n := range []string{"Read", "Bash", "Shell", "WebFetch", "LSP", "Cron", "Off", "Mine", "mcp__github__create_issue", "mcp__slack__send", "Nope"} {
				_, ok := p.Lookup(n)
				want := slices.Contains(tt.want, n) || n == "Shell" && slices.Contains(tt.want, "Bash")
				if ok != want {
					t.Errorf("Lookup(%q) = %v, want %v", n, ok, want)
				}
			}
		})
	}
}

var cmpEmpty = cmp.Comparer(func(a, b []string) bool { return slices.Equal(a, b) })

func TestRestrictionStack(t *testing.T) {
	p := filterPool(t, Options{})
	pop1 := p.Push("Read", "Bash", "mcp__github")
	if diff := cmp.Diff([]string{"Bash", "Read", "mcp__github__create_issue", "mcp__github__list_issues"}, names(p.Tools())); diff != "" {
		t.Fatal(diff)
	}
	pop2 := p.Push("Read", "mcp__github__list_*", "WebFetch") // WebFetch is outside the first layer
	if diff := cmp.Diff([]string{"Read", "mcp__github__list_issues"}, names(p.Tools())); diff != "" {
		t.Fatalf("nested push does not intersect:\n%s", diff)
	}
	if _, ok := p.Lookup("Bash"); ok {
		t.Fatal("Lookup found a tool outside the restriction")
	}
	if p.Depth() != 2 {
		t.Fatalf("Depth = %d", p.Depth())
	}
	pop2()
	pop2() // idempotent
	if p.Depth() != 1 || len(p.Tools()) != 4 {
		t.Fatalf("pop did not restore: %v", names(p.Tools()))
	}
	pop3 := p.Push("Read")
	pop1() // out of order: removes exactly the first layer
	if diff := cmp.Diff([]string{"Read"}, names(p.Tools())); diff != "" {
		t.Fatal(diff)
	}
	pop3()
	if p.Depth() != 0 || len(p.Tools()) != 8 {
		t.Fatalf("after all pops: %v", names(p.Tools()))
	}
}

func TestRestrictionStackConcurrent(t *testing.T) {
	p := filterPool(t, Options{})
	full := len(p.Tools())
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Go(func() {
			for j := range 50 {
				pop := p.Push("Read", "Bash", fmt.Sprintf("mcp__%d", i))
				inner := p.Push("Read")
				for _, tl := range p.Tools() {
					if n := tl.Spec().Name; n != "Read" && n != "Bash" {
						// Other goroutines' layers may narrow the view further, never widen it.
						t.Errorf("tool %q visible under a Read/Bash restriction", n)
						return
					}
				}
				if _, ok := p.Lookup("mcp__slack__send"); ok {
					t.Error("Lookup found a restricted tool")
				}
				if j%2 == 0 {
					inner()
					pop()
				} else {
					pop()
					inner()
				}
				p.Names()
				p.Load("Read")
			}
		})
	}
	wg.Wait()
	if p.Depth() != 0 || len(p.Tools()) != full {
		t.Fatalf("depth %d, tools %d after concurrent push/pop", p.Depth(), len(p.Tools()))
	}
}

func TestStableOrderAndBytes(t *testing.T) {
	build := func(reverse bool) []byte {
		r := NewRegistry()
		fs := slices.Clone(fixtureTools)
		if reverse {
			slices.Reverse(fs)
		}
		for _, f := range fs {
			r.MustRegister(Entry{Name: f.name, Aliases: f.aliases, Factory: func(context.Context, *tool.Env) (tool.Tool, error) { return f.build(), nil }})
		}
		users := []tool.Tool{simple(t, "Zeta"), simple(t, "Alpha")}
		if reverse {
			slices.Reverse(users)
		}
		p := newPool(t, Options{Registry: r, Tools: users})
		servers := []string{"slack", "github"}
		if reverse {
			slices.Reverse(servers)
		}
		for _, s := range servers {
			ts := mcpTools(s, 5)
			if reverse {
				slices.Reverse(ts)
			}
			if err := p.AddMCP(s, ts...); err != nil {
				t.Fatal(err)
			}
		}
		b, err := json.Marshal(specsMCP(p))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	a, b := build(false), build(true)
	if string(a) != string(b) {
		t.Fatal("two assemblies of the same inputs serialise differently")
	}
	var got []struct{ Name string }
	if err := json.Unmarshal(a, &got); err != nil {
		t.Fatal(err)
	}
	var ns []string
	for _, g := range got {
		ns = append(ns, g.Name)
	}
	i := slices.Index(ns, "Alpha")
	if i != 40 || ns[i+1] != "Zeta" || ns[i+2] != "mcp__github__create_issue" || ns[len(ns)-1] != "mcp__slack__update_issue" {
		t.Fatalf("order: %v", ns)
	}
	if !slices.IsSorted(ns[:40]) {
		t.Fatalf("built-ins not sorted: %v", ns[:40])
	}
}

// resolver is the executor's interface; *Pool must satisfy it.
type resolver interface {
	Lookup(string) (tool.Tool, bool)
	Names() []string
}

var _ resolver = (*Pool)(nil)
