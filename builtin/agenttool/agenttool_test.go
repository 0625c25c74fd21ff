package agenttool

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/builtin/team"
	"github.com/gantry-dev/gantry/store"
	"github.com/gantry-dev/gantry/tool"
)

func TestParseDefinition(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     Definition
		err      string
	}{
		{name: "full", in: "---\nname: reviewer\ndescription: Reviews code.\ntools: Read, Grep, Bash(git diff *)\ndisallowedTools: [Write]\nmodel: inherit\npermissionMode: plan\nmaxTurns: 5\n---\nYou review.\n\nCarefully.\n",
			want: Definition{Name: "reviewer", Description: "Reviews code.", Tools: []string{"Read", "Grep", "Bash(git diff *)"}, DisallowedTools: []string{"Write"}, PermissionMode: "plan", MaxTurns: 5, Prompt: "You review.\n\nCarefully."}},
		{name: "yaml list, crlf, bom, fallback name", in: "\ufeff---\r\ndescription: D\r\ntools:\r\n  - Read\r\n  - Glob\r\n---\r\nP\r\n",
			want: Definition{Name: "fallback", Description: "D", Tools: []string{"Read", "Glob"}, Prompt: "P"}},
		{name: "no front matter", in: "just text", err: "no front matter"},
		{name: "unclosed", in: "---\nname: x\n", err: "not closed"},
		{name: "bad yaml", in: "---\nname: [x\n---\nP", err: "front matter"},
		{name: "no description", in: "---\nname: x\n---\nP", err: "description is required"},
		{name: "empty prompt", in: "---\nname: x\ndescription: d\n---\n  \n", err: "empty"},
		{name: "bad name", in: "---\nname: a b\ndescription: d\n---\nP", err: "agent name"},
		{name: "bad mode", in: "---\nname: x\ndescription: d\npermissionMode: yolo\n---\nP", err: "permissionMode"},
		{name: "bad tools", in: "---\nname: x\ndescription: d\ntools: {a: b}\n---\nP", err: "tool names"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := ParseDefinition([]byte(tc.in), "fallback")
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d.Name != tc.want.Name || d.Description != tc.want.Description || !slices.Equal(d.Tools, tc.want.Tools) ||
				!slices.Equal(d.DisallowedTools, tc.want.DisallowedTools) || d.Model != tc.want.Model ||
				d.PermissionMode != tc.want.PermissionMode || d.MaxTurns != tc.want.MaxTurns || d.Prompt != tc.want.Prompt {
				t.Fatalf("got %+v\nwant %+v", d, tc.want)
			}
		})
	}
}

func FuzzParseDefinition(f *testing.F) {
	f.Add([]byte("---\nname: x\ndescription: d\ntools: Read, Bash(a, b)\n---\nP"))
	f.Add([]byte("---\n---\n"))
	f.Add([]byte("---\ntools: [[a]]\n---"))
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := ParseDefinition(b, "f")
		if err == nil {
			if err := d.Validate(); err != nil {
				t.Fatalf("parsed an invalid definition: %v", err)
			}
		}
	})
}

func TestLoadPrecedence(t *testing.T) {
	home, proj := t.TempDir(), t.TempDir()
	write := func(dir, name, desc string) {
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, name+".md"), []byte("---\ndescription: "+desc+"\n---\nP"), 0o644)
	}
	write(filepath.Join(home, ".claude", "agents"), "a", "user claude")
	write(filepath.Join(home, ".gantry", "agents"), "a", "user gantry")
	write(filepath.Join(home, ".gantry", "agents"), "b", "user b")
	write(filepath.Join(proj, ".claude", "agents"), "b", "project b")
	os.WriteFile(filepath.Join(proj, ".claude", "agents", "bad.md"), []byte("no front matter"), 0o644)
	defs, err := Load(LoadOptions{ProjectDir: proj, UserHome: home, GantryHome: filepath.Join(home, ".gantry")})
	if err == nil || !strings.Contains(err.Error(), "bad.md") {
		t.Fatalf("the bad file is not reported: %v", err)
	}
	if len(defs) != 2 || defs[0].Description != "user gantry" || defs[1].Description != "project b" || defs[1].Source != "project" {
		t.Fatalf("%+v", defs)
	}
}

// The catalog's order is stable (built-ins first) and the tool's
// description follows it.
func TestCatalogAndDescription(t *testing.T) {
	c, err := NewCatalog(Definition{Name: "zeta", Description: "Z.", Prompt: "P"}, Definition{Name: "alpha", Description: "A.", Prompt: "P", Tools: []string{"Read"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Names(); !slices.Equal(got, []string{GeneralPurpose, Explore, Plan, "alpha", "zeta"}) {
		t.Fatalf("order %v", got)
	}
	tl := New(c)
	d1 := tl.Spec().Description
	if !strings.Contains(d1, "- alpha: A. (Tools: Read)\n- zeta: Z. (Tools: all tools)") {
		t.Fatalf("description:\n%s", d1)
	}
	if tl.Spec().Description != d1 {
		t.Fatal("description not stable")
	}
	c.Add(Definition{Name: "beta", Description: "B.", Prompt: "P"})
	if !strings.Contains(tl.Spec().Description, "- beta: B.") {
		t.Fatal("description does not follow the catalog")
	}
	if err := c.Add(Definition{Name: "bad name"}); err == nil {
		t.Fatal("invalid definition added")
	}
	if tl.Spec().Name != Name || !slices.Equal(tl.Spec().Aliases, []string{"Task"}) {
		t.Fatalf("spec %+v", tl.Spec())
	}
}

type fakeRunner struct{ got Request }

func (f *fakeRunner) RunAgent(ctx context.Context, env *tool.Env, req Request) (*Outcome, error) {
	f.got = req
	return &Outcome{AgentID: "id1", AgentType: req.Definition.Name, Text: "report", Subtype: "success",
		Worktree: &Worktree{Path: "/w", Branch: "gantry/x", Kept: true}}, nil
}

func (f *fakeRunner) StartAgent(ctx context.Context, env *tool.Env, req Request) (*Started, error) {
	f.got = req
	return &Started{TaskID: "t1", AgentID: "id2"}, nil
}

func TestToolCall(t *testing.T) {
	c, _ := NewCatalog()
	tl := New(c)
	call := func(env *tool.Env, in string) *tool.Result {
		t.Helper()
		if err := tl.ValidateInput(context.Background(), env, json.RawMessage(in)); err != nil {
			return tool.Errorf("%v", err)
		}
		r, err := tl.Call(context.Background(), env, json.RawMessage(in))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := call(&tool.Env{}, `{"description":"d","prompt":"p"}`); !r.IsError || !strings.Contains(r.TextContent(), "not available") {
		t.Fatalf("without a runner: %q", r.TextContent())
	}
	fr := &fakeRunner{}
	env := &tool.Env{ToolUseID: "u1", Services: tool.Provide[Runner](&tool.Services{}, fr)}
	if r := call(env, `{"description":"d","prompt":"p","subagent_type":"Nope"}`); !r.IsError || !strings.Contains(r.TextContent(), "general-purpose, Explore, Plan") {
		t.Fatalf("unknown type: %q", r.TextContent())
	}
	if r := call(env, `{"description":"d","prompt":" "}`); !r.IsError {
		t.Fatal("empty prompt accepted")
	}
	r := call(env, `{"description":"d","prompt":"p","subagent_type":"Explore"}`)
	if r.IsError || !strings.HasPrefix(r.TextContent(), "report\n\n") || !strings.Contains(r.TextContent(), "/w on branch gantry/x") {
		t.Fatalf("result %q", r.TextContent())
	}
	if fr.got.Definition.Name != Explore || fr.got.ToolUseID != "u1" {
		t.Fatalf("request %+v", fr.got)
	}
	r = call(env, `{"description":"d","prompt":"p","run_in_background":true}`)
	if r.IsError || !strings.Contains(r.TextContent(), "task id t1") {
		t.Fatalf("background %q", r.TextContent())
	}
}

// TestDefinitionOutputSchema: outputSchema in YAML front matter becomes a
// JSON Schema; a schema that is not an object is refused.
func TestDefinitionOutputSchema(t *testing.T) {
	src := "---\nname: extractor\ndescription: Extracts.\noutputSchema:\n  type: object\n  properties:\n    name: {type: string}\n  required: [name]\n---\nExtract.\n"
	d, err := ParseDefinition([]byte(src), "x")
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(d.OutputSchema, &got); err != nil || got["type"] != "object" {
		t.Fatalf("schema %s: %v", d.OutputSchema, err)
	}
	if _, err := ParseDefinition([]byte("---\nname: e\ndescription: E.\noutputSchema: [1]\n---\nX\n"), "x"); err == nil {
		t.Fatal("a list schema was accepted")
	}
}

func TestCatalogReplacesBuiltin(t *testing.T) {
	c, err := NewCatalog()
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Names(); !slices.Equal(got, []string{GeneralPurpose, Explore, Plan}) {
		t.Fatalf("order %v", got)
	}
	if d, ok := c.Get(Explore); !ok || d.Model != ModelFast {
		t.Fatalf("built-in Explore: %+v %v", d, ok)
	}
	if _, ok := c.Get("nope"); ok {
		t.Fatal("unknown type found")
	}
	if err := c.Add(Definition{Name: Explore, Description: "Mine.", Prompt: "P"}); err != nil {
		t.Fatal(err)
	}
	if d, ok := c.Get(Explore); !ok || d.Description != "Mine." {
		t.Fatalf("replaced Explore: %+v", d)
	}
	list := c.List()
	if len(list) != 3 || list[1].Name != Explore || list[1].Description != "Mine." {
		t.Fatalf("list after replacing a built-in: %+v", list)
	}
	if other, _ := NewCatalog(); other.List()[1].Description == "Mine." {
		t.Fatal("a replacement leaked into another catalog")
	}
}

// TestModeAndMaxTurns: mode narrows the child's permission mode and may
// never widen the caller's; max_turns bounds its turns, never above its
// type's bound.
func TestModeAndMaxTurns(t *testing.T) {
	c, _ := NewCatalog(Definition{Name: "capped", Description: "d", Prompt: "p", MaxTurns: 5})
	tl := New(c)
	fr := &fakeRunner{}
	cases := []struct {
		parent    tool.Mode
		in        string
		wantErr   string
		wantMode  tool.Mode
		wantTurns int
	}{
		{tool.ModeAcceptEdits, `{"mode":"plan"}`, "", tool.ModePlan, 0},
		{tool.ModeDefault, `{"mode":"default","max_turns":3}`, "", tool.ModeDefault, 3},
		{tool.ModeDefault, `{"mode":"acceptEdits"}`, "wider than this session's default", "", 0},
		{"", `{"mode":"bypassPermissions"}`, "wider than this session's default", "", 0},
		{tool.ModePlan, `{"mode":"dontAsk"}`, "wider", "", 0},
		{tool.ModeDefault, `{"mode":"sudo"}`, "mode", "", 0},
		{tool.ModeDefault, `{"max_turns":0}`, "max_turns", "", 0},
		{tool.ModeDefault, `{"max_turns":2.5}`, "max_turns", "", 0},
		{tool.ModeDefault, `{"max_turns":9,"subagent_type":"capped"}`, "", "", 5},
		{tool.ModeDefault, `{"max_turns":2,"subagent_type":"capped"}`, "", "", 2},
	}
	for _, tc := range cases {
		var in map[string]any
		json.Unmarshal([]byte(tc.in), &in)
		in["description"], in["prompt"] = "d", "p"
		raw, _ := json.Marshal(in)
		env := &tool.Env{Mode: tc.parent, Services: tool.Provide[Runner](&tool.Services{}, fr)}
		if err := tl.ValidateInput(context.Background(), env, raw); err != nil || tc.wantErr != "" {
			if tc.wantErr == "" || err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s in %s: %v, want %q", tc.in, tc.parent, err, tc.wantErr)
			}
			continue
		}
		if r, err := tl.Call(context.Background(), env, raw); err != nil || r.IsError {
			t.Fatalf("%s: %v %v", tc.in, err, r)
		}
		if d := fr.got.Definition; d.PermissionMode != tc.wantMode || d.MaxTurns != tc.wantTurns {
			t.Errorf("%s: mode %q turns %d, want %q %d", tc.in, d.PermissionMode, d.MaxTurns, tc.wantMode, tc.wantTurns)
		}
	}
	// The catalog's definition is not changed by a call.
	if d, _ := c.Get("capped"); d.MaxTurns != 5 {
		t.Errorf("catalog changed: %+v", d)
	}
}

// teamRunner starts members by recording them.
type teamRunner struct{ started []string }

func (r *teamRunner) StartMember(ctx context.Context, env *tool.Env, t store.Team, m store.Member, prompt string) error {
	r.started = append(r.started, m.Name+"/"+m.AgentType+": "+prompt)
	return nil
}

func (r *teamRunner) StopTeam(context.Context, string) error { return nil }

// TestTeamNameAndResume: team_name with name spawns a member into the
// caller's team (through team.Join, not the subagent runner); resume is
// handed to the runner; the fields that cannot go with them are refused.
func TestTeamNameAndResume(t *testing.T) {
	ctx := context.Background()
	c, _ := NewCatalog()
	tl := New(c)
	st := new(store.Memory)
	if _, err := st.CreateTeam(ctx, store.Team{Name: "red", Lead: "s1"}); err != nil {
		t.Fatal(err)
	}
	fr, tr := &fakeRunner{}, &teamRunner{}
	svc := &tool.Services{}
	tool.Provide[Runner](svc, fr)
	tool.Provide[team.Runner](svc, tr)
	tool.Provide[store.Teams](svc, st)
	env := &tool.Env{SessionID: "s1", Services: svc}
	call := func(in string) (*tool.Result, error) {
		raw := json.RawMessage(in)
		if err := tl.ValidateInput(ctx, env, raw); err != nil {
			return nil, err
		}
		return tl.Call(ctx, env, raw)
	}
	r, err := call(`{"description":"review","prompt":"review the diff","name":"rev","team_name":"red","subagent_type":"Explore"}`)
	if err != nil || r.IsError || !strings.Contains(r.TextContent(), "rev joined team red") {
		t.Fatalf("team spawn: %v %v", err, r)
	}
	if len(tr.started) != 1 || tr.started[0] != "rev/Explore: review the diff" || fr.got.Prompt != "" {
		t.Fatalf("started %q, subagent runner got %+v", tr.started, fr.got)
	}
	if m, ok := must(st.GetTeam(ctx, "red")).Member("rev"); !ok || m.Role != "review" {
		t.Fatalf("member %+v", m)
	}
	if r, err := call(`{"description":"again","prompt":"p","resume":"agent-7"}`); err != nil || r.IsError || fr.got.Resume != "agent-7" {
		t.Fatalf("resume: %v %v %+v", err, r, fr.got)
	}
	if r, _ := call(`{"description":"x","prompt":"p","name":"rev","team_name":"red"}`); r == nil || !r.IsError || !strings.Contains(r.TextContent(), "used") {
		t.Fatalf("second rev: %v", r)
	}
	for in, want := range map[string]string{
		`{"description":"x","prompt":"p","team_name":"red"}`:                          "needs name",
		`{"description":"x","prompt":"p","team_name":"red","name":"a","model":"m"}`:   "cannot be given with team_name",
		`{"description":"x","prompt":"p","team_name":"red","name":"a","max_turns":2}`: "cannot be given with team_name",
		`{"description":"x","prompt":"p","resume":"a1","team_name":"red","name":"a"}`: "cannot be given with it",
		`{"description":"x","prompt":"p","resume":"a1","isolation":"worktree"}`:       "cannot be given with it",
	} {
		if _, err := call(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", in, err, want)
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
