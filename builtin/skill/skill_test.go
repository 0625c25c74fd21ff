package skill

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/tool/tooltest"

	"github.com/gantry-dev/gantry/builtin/file"
	"github.com/gantry-dev/gantry/tool"
	"github.com/gantry-dev/gantry/toolset"
)

func TestParse(t *testing.T) {
	cases := []struct {
		name, in, dir string
		want          Skill
		err           string
	}{
		{name: "full", dir: "x", in: "---\nname: a\ndescription: Does A.\nallowed-tools: Read, Bash(git diff:*), Grep\nmodel: m1\n---\nBody\n",
			want: Skill{Name: "a", Description: "Does A.", AllowedTools: []string{"Read", "Bash(git diff:*)", "Grep"}, Model: "m1", Body: "Body"}},
		{name: "list and dir name", dir: "from-dir", in: "---\ndescription: D\nallowed-tools:\n  - Read\n  - \"Bash(ls *)\"\n---\n",
			want: Skill{Name: "from-dir", Description: "D", AllowedTools: []string{"Read", "Bash(ls *)"}}},
		{name: "space separated", dir: "x", in: "---\ndescription: D\nallowed-tools: Read Grep\n---\nb",
			want: Skill{Name: "x", Description: "D", AllowedTools: []string{"Read", "Grep"}, Body: "b"}},
		{name: "crlf and bom", dir: "x", in: "\xef\xbb\xbf---\r\ndescription: D\r\n---\r\nline1\r\nline2\r\n",
			want: Skill{Name: "x", Description: "D", Body: "line1\nline2"}},
		{name: "no front matter", dir: "x", in: "# Title\n", err: "no front matter"},
		{name: "unclosed", dir: "x", in: "---\ndescription: D\n", err: "not closed"},
		{name: "text after closing dashes", dir: "x", in: "---\ndescription: D\n---x\nbody", err: "not closed"},
		{name: "no description", dir: "x", in: "---\nname: x\n---\nbody", err: "no description"},
		{name: "bad name", dir: "x", in: "---\nname: ../../etc\ndescription: D\n---\n", err: "invalid skill name"},
		{name: "bad yaml", dir: "x", in: "---\ndescription: [\n---\n", err: "front matter"},
		{name: "bad allowed-tools", dir: "x", in: "---\ndescription: D\nallowed-tools: {a: b}\n---\n", err: "line 3: want a list or a comma-separated string of tool names"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse([]byte(tc.in), tc.dir)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.Name != tc.want.Name || s.Description != tc.want.Description || s.Model != tc.want.Model || s.Body != tc.want.Body || !slices.Equal(s.AllowedTools, tc.want.AllowedTools) {
				t.Fatalf("got %+v\nwant %+v", *s, tc.want)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("---\nname: a\ndescription: D\nallowed-tools: Read, Bash(x:*)\n---\nbody"), "dir")
	f.Add([]byte("---\n---\n"), "x")
	f.Add([]byte("---\ndescription: |\n  multi\n---"), "y")
	f.Fuzz(func(t *testing.T, data []byte, dir string) {
		s, err := Parse(data, dir)
		if err != nil {
			return
		}
		if !validName(s.Name) || s.Description == "" {
			t.Fatalf("accepted an invalid skill: %+v", s)
		}
		for _, a := range s.AllowedTools {
			if strings.TrimSpace(a) == "" {
				t.Fatalf("empty tool name in %q", s.AllowedTools)
			}
		}
	})
}

func fixtureOpts() Options {
	home, _ := filepath.Abs(filepath.Join("testdata", "home"))
	return Options{UserHome: home, GantryHome: filepath.Join(home, ".gantry"), Getenv: func(string) string { return "" }}
}

func project() string {
	p, _ := filepath.Abs(filepath.Join("testdata", "project"))
	return p
}

func TestDiscover(t *testing.T) {
	opts := fixtureOpts()
	opts.Skills = []Skill{{Name: "inline", Description: "Given in code.", Body: "Inline body."}, {Name: "notes", Description: "SDK notes.", Body: "sdk"}}
	skills, problems := Discover(opts, project())
	var names []string
	by := map[string]*Skill{}
	for _, s := range skills {
		names = append(names, s.Name+"/"+s.Source)
		by[s.Name] = s
	}
	want := []string{"inline/sdk", "legacy/project", "notes/sdk", "pdf/project", "review/project"}
	if !slices.Equal(names, want) {
		t.Fatalf("skills = %v, want %v", names, want)
	}
	if by["pdf"].Description != "Fill PDF forms (project version)." || by["pdf"].Model != "claude-haiku-4-5" {
		t.Errorf("project skill does not win over the user's: %+v", by["pdf"])
	}
	if len(problems) != 1 || !strings.Contains(problems[0].Error(), filepath.Join("broken", "SKILL.md")) {
		t.Errorf("problems = %v, want the broken skill", problems)
	}
	// NoProject / NoUser.
	opts.NoProject, opts.Skills = true, nil
	skills, _ = Discover(opts, project())
	if len(skills) != 2 || skills[0].Name != "notes" || skills[1].Description != "Fill PDF forms (user version)." {
		t.Errorf("user only: %v", skills)
	}
}

// session is a pool of the file tools plus Skill over the fixture, with a
// Turn over the pool's restriction stack.
func session(t *testing.T, opts Options) (*toolset.Pool, *tool.Env, *Turn) {
	t.Helper()
	reg := toolset.NewRegistry()
	for _, tl := range file.Tools(file.Options{}) {
		if err := reg.RegisterTool(tl, toolset.TierCore, ""); err != nil {
			t.Fatal(err)
		}
	}
	reg.MustRegister(toolset.Entry{Name: "Skill", Tier: toolset.TierAdvanced, Factory: Factory(opts)})
	env := &tool.Env{WorkDir: project(), Services: &tool.Services{}}
	pool, err := toolset.NewPool(context.Background(), toolset.Options{Registry: reg, Env: env})
	if err != nil {
		t.Fatal(err)
	}
	turn := NewTurn(pool)
	tool.Provide(env.Services, turn)
	return pool, env, turn
}

func TestToolListingAndInjection(t *testing.T) {
	pool, env, _ := session(t, fixtureOpts())
	tl, _ := pool.Lookup("Skill")
	desc := tl.Spec().Description
	for _, w := range []string{"- review: Review the changes of the current branch", "- pdf: Fill PDF forms (project version).", "- notes: Keep meeting notes.", "- legacy: An older skill"} {
		if !strings.Contains(desc, w) {
			t.Errorf("description lacks %q:\n%s", w, desc)
		}
	}
	if strings.Contains(desc, "git diff main") || strings.Contains(desc, "Legacy body") {
		t.Errorf("description shows skill bodies (progressive disclosure broken):\n%s", desc)
	}
	res := tooltest.Call(t, skillTool(t, pool), env, Input{Skill: "review", Args: "error handling"})
	if res.IsError {
		t.Fatal(res.TextContent())
	}
	if len(res.Messages) != 1 || res.Messages[0].Role != "user" {
		t.Fatalf("messages = %+v", res.Messages)
	}
	body := tool.JoinText(res.Messages[0].Content)
	dir := filepath.Join(project(), ".gantry", "skills", "review")
	for _, w := range []string{`<skill name="review">`, "Focus: error handling.", "Base directory of this skill (its files are readable): " + dir} {
		if !strings.Contains(body, w) {
			t.Errorf("injected message lacks %q:\n%s", w, body)
		}
	}
	if !strings.Contains(res.TextContent(), "limited to: Read, Grep, Glob, Bash(git diff:*)") {
		t.Errorf("result = %s", res.TextContent())
	}
	// A skill inside the project adds no directory; one outside does.
	if res.ContextModifier != nil {
		t.Error("a project skill's folder is already readable; no modifier expected")
	}
	res = tooltest.Call(t, skillTool(t, pool), env, Input{Skill: "notes", Args: "standup"})
	if res.IsError || res.ContextModifier == nil {
		t.Fatalf("user skill: %v %s", res.IsError, res.TextContent())
	}
	e := env.Clone()
	res.ContextModifier(e)
	if !slices.Contains(e.AdditionalDirs, filepath.Join(fixtureOpts().UserHome, ".claude", "skills", "notes")) {
		t.Errorf("skill folder not made readable: %v", e.AdditionalDirs)
	}
	if !strings.Contains(tool.JoinText(res.Messages[0].Content), "ARGUMENTS: standup") {
		t.Errorf("args not passed: %s", tool.JoinText(res.Messages[0].Content))
	}
	res = tooltest.Call(t, skillTool(t, pool), env, Input{Skill: "nope"})
	if !res.IsError || !strings.Contains(res.TextContent(), "available: legacy, notes, pdf, review") {
		t.Errorf("unknown skill: %s", res.TextContent())
	}
}

func TestAllowedToolsRestrictTheTurn(t *testing.T) {
	pool, env, turn := session(t, fixtureOpts())
	visible := func() []string {
		var out []string
		for _, s := range pool.Specs() {
			out = append(out, s.Name)
		}
		slices.Sort(out)
		return out
	}
	before := visible()
	if !slices.Contains(before, "Write") || !slices.Contains(before, "Edit") {
		t.Fatalf("pool = %v", before)
	}
	if res := tooltest.Call(t, skillTool(t, pool), env, Input{Skill: "review"}); res.IsError {
		t.Fatal(res.TextContent())
	}
	if got := visible(); !slices.Equal(got, []string{"Read", "Skill"}) {
		t.Fatalf("during the skill: %v, want [Read Skill] (Grep, Glob, Bash are not in this pool)", got)
	}
	if _, ok := pool.Lookup("Write"); ok {
		t.Fatal("Write callable while a read-only skill is active")
	}
	// A nested skill intersects: pdf allows Read and Skill.
	if res := tooltest.Call(t, skillTool(t, pool), env, Input{Skill: "pdf"}); res.IsError {
		t.Fatal(res.TextContent())
	}
	if got := turn.Active(); !slices.Equal(got, []string{"review", "pdf"}) {
		t.Fatalf("active = %v", got)
	}
	turn.End()
	if got := visible(); !slices.Equal(got, before) {
		t.Fatalf("after the turn: %v, want %v", got, before)
	}
	if len(turn.Active()) != 0 || pool.Depth() != 0 {
		t.Fatalf("turn not reset: %v depth %d", turn.Active(), pool.Depth())
	}
}

func TestNestingLimit(t *testing.T) {
	opts := fixtureOpts()
	opts.MaxDepth = 2
	pool, env, turn := session(t, opts)
	for _, name := range []string{"notes", "legacy"} {
		if res := tooltest.Call(t, skillTool(t, pool), env, Input{Skill: name}); res.IsError {
			t.Fatal(res.TextContent())
		}
	}
	res := tooltest.Call(t, skillTool(t, pool), env, Input{Skill: "pdf"})
	if !res.IsError || !strings.Contains(res.TextContent(), "2 skills are already active in this turn (notes → legacy), the nesting limit") {
		t.Fatalf("third skill: %s", res.TextContent())
	}
	turn.End()
	if res := tooltest.Call(t, skillTool(t, pool), env, Input{Skill: "pdf"}); res.IsError {
		t.Fatalf("after the turn ended: %s", res.TextContent())
	}
}

func TestNoSkillsDisabled(t *testing.T) {
	opts := Options{NoUser: true, NoProject: true}
	tl, err := Factory(opts)(context.Background(), &tool.Env{WorkDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if tool.IsEnabled(context.Background(), tl, &tool.Env{}) {
		t.Fatal("Skill enabled with no skills")
	}
	// Sessions without skills share one disabled tool; a session with
	// skills gets its own.
	f := Factory(opts)
	a, _ := f(context.Background(), &tool.Env{WorkDir: t.TempDir()})
	b, _ := f(context.Background(), &tool.Env{WorkDir: t.TempDir()})
	if a != b {
		t.Fatal("sessions without skills built a Skill tool each")
	}
	withSkills := Factory(Options{NoUser: true, NoProject: true, Skills: []Skill{{Name: "pdf", Description: "Fill PDF forms."}}})
	c, _ := withSkills(context.Background(), &tool.Env{WorkDir: t.TempDir()})
	d, _ := withSkills(context.Background(), &tool.Env{WorkDir: t.TempDir()})
	if c == d || !tool.IsEnabled(context.Background(), c, &tool.Env{}) || !strings.Contains(c.Spec().Description, "pdf") {
		t.Fatalf("sessions with skills share a tool or got a disabled one: %q", c.Spec().Description)
	}
	// Without the Turn service a call fails clearly.
	tl = New([]*Skill{{Name: "a", Description: "d"}}, opts)
	raw, _ := json.Marshal(Input{Skill: "a"})
	if _, err := tl.Call(context.Background(), &tool.Env{}, raw); err == nil || !strings.Contains(err.Error(), "skill state") {
		t.Fatalf("err = %v", err)
	}
}

func TestValidSkillName(t *testing.T) {
	for name, want := range map[string]bool{
		"review": true, "a.b:c-d_e": true, "9lives": true, strings.Repeat("x", 64): true,
		"": false, "-x": false, ".x": false, strings.Repeat("x", 65): false, "a b": false, "a/b": false,
	} {
		if got := validName(name); got != want {
			t.Errorf("validName(%q) = %v, want %v", name, got, want)
		}
	}
}

// skillTool returns the pool's Skill tool.
func skillTool(t *testing.T, pool *toolset.Pool) tool.Tool {
	t.Helper()
	tl, ok := pool.Lookup("Skill")
	if !ok {
		t.Fatal("Skill not in the pool")
	}
	return tl
}
