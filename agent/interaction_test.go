package agent

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gantry-dev/gantry/builtin/ask"
	"github.com/gantry-dev/gantry/builtin/file"
	"github.com/gantry-dev/gantry/builtin/plan"
	"github.com/gantry-dev/gantry/executor"
	"github.com/gantry-dev/gantry/interaction"
	"github.com/gantry-dev/gantry/llm/llmtest"
	"github.com/gantry-dev/gantry/permission"
	"github.com/gantry-dev/gantry/settings"
	"github.com/gantry-dev/gantry/tool"
	"github.com/gantry-dev/gantry/toolset"
)

// person is a scripted person behind an interaction channel: it records
// every request and answers from queues, per kind.
type person struct {
	mu        sync.Mutex
	asked     []interaction.Request
	perms     []*interaction.PermissionAnswer
	plans     []*interaction.PlanAnswer
	questions []map[string]string
}

func (p *person) channel() interaction.Channel {
	return interaction.Funcs{
		Permission: func(_ context.Context, r *interaction.PermissionRequest) (*interaction.PermissionAnswer, error) {
			p.mu.Lock()
			defer p.mu.Unlock()
			p.asked = append(p.asked, r)
			a := p.perms[0]
			p.perms = p.perms[1:]
			return a, nil
		},
		Plan: func(_ context.Context, r *interaction.PlanRequest) (*interaction.PlanAnswer, error) {
			p.mu.Lock()
			defer p.mu.Unlock()
			p.asked = append(p.asked, r)
			a := p.plans[0]
			p.plans = p.plans[1:]
			return a, nil
		},
		Question: func(_ context.Context, r *interaction.QuestionRequest) (*interaction.QuestionAnswer, error) {
			p.mu.Lock()
			defer p.mu.Unlock()
			p.asked = append(p.asked, r)
			a := p.questions[0]
			p.questions = p.questions[1:]
			return &interaction.QuestionAnswer{Answers: a}, nil
		},
	}
}

func (p *person) kinds() []interaction.Kind {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []interaction.Kind
	for _, r := range p.asked {
		out = append(out, r.Kind())
	}
	return out
}

// outcomes runs prompt and returns the tool outcomes by call id.
func outcomes(t *testing.T, a *Agent, prompt string) (map[string]*executor.Outcome, *ResultEvent) {
	t.Helper()
	out, res, _ := outcomesEvents(t, a, prompt)
	return out, res
}

func modeEvents(t *testing.T, evs []Event) string {
	t.Helper()
	var out []string
	for _, ev := range evs {
		if m, ok := ev.(*ModeEvent); ok {
			out = append(out, string(m.From)+"→"+string(m.To))
		}
	}
	return strings.Join(out, " ")
}

func outcomesEvents(t *testing.T, a *Agent, prompt string) (map[string]*executor.Outcome, *ResultEvent, []Event) {
	t.Helper()
	evs, res, err := collect(t, context.Background(), a, prompt)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*executor.Outcome{}
	for _, ev := range evs {
		if e, ok := ev.(*ToolResultEvent); ok {
			out[e.Outcome.ID] = e.Outcome
		}
	}
	return out, res, evs
}

func interactionTools() []tool.Tool {
	return append(append(file.Tools(file.Options{}), plan.Tools()...), ask.Tools()...)
}

func writeCall(id, path, content string) llmtest.ToolCall {
	in, _ := json.Marshal(map[string]string{"file_path": path, "content": content})
	return llmtest.ToolCall{ID: id, Name: "Write", Input: string(in)}
}

func planCall(id, text string) llmtest.ToolCall {
	in, _ := json.Marshal(map[string]string{"plan": text})
	return llmtest.ToolCall{ID: id, Name: "ExitPlanMode", Input: string(in)}
}

// TestPlanModeRun: the model enters plan mode, a write is refused by its
// traits, the plan is rejected (feedback is the result, plan mode stays),
// then approved (the previous mode comes back), and the write then asks
// the person and runs.
func TestPlanModeRun(t *testing.T) {
	bothProviders(t, nil, func(t *testing.T, f *fixture) {
		target := filepath.Join(f.dir, "out.txt")
		f.srv.Script(
			llmtest.ToolReply(llmtest.ToolCall{ID: "enter", Name: "EnterPlanMode", Input: `{}`}),
			llmtest.ToolReply(writeCall("w1", target, "early")),
			llmtest.ToolReply(planCall("exit1", "1. write out.txt")),
			llmtest.ToolReply(planCall("exit2", "1. write out.txt\n2. test it")),
			llmtest.ToolReply(writeCall("w2", target, "planned")),
			llmtest.TextReply("done"),
		)
		p := &person{
			plans: []*interaction.PlanAnswer{{Approved: false, Feedback: "add a test step"}, {Approved: true}},
			perms: []*interaction.PermissionAnswer{{Choice: interaction.AllowOnce}},
		}
		a := f.agent(t, func(o *testOpts) {
			o.Pool = toolset.Options{Tools: interactionTools()}
			o.Mode = tool.ModeDefault
			o.Interaction = p.channel()
		})
		out, res, evs := outcomesEvents(t, a, "plan, then write out.txt")
		if res.IsError {
			t.Fatalf("result %+v", res)
		}
		if o := out["enter"]; o.Kind != executor.KindOK {
			t.Fatalf("EnterPlanMode: %s %s", o.Kind, o.Result.TextContent())
		}
		if o := out["w1"]; o.Kind != executor.KindDenied || !strings.Contains(o.Result.TextContent(), "plan mode") {
			t.Errorf("write in plan mode: %s %s", o.Kind, o.Result.TextContent())
		}
		if o := out["exit1"]; o.Result.IsError || !strings.Contains(o.Result.TextContent(), "add a test step") || !strings.Contains(o.Result.TextContent(), "stays in plan mode") {
			t.Errorf("rejected plan: %s", o.Result.TextContent())
		}
		if o := out["exit2"]; o.Result.IsError || !strings.Contains(o.Result.TextContent(), "approved") {
			t.Errorf("approved plan: %s", o.Result.TextContent())
		}
		if o := out["w2"]; o.Kind != executor.KindOK {
			t.Errorf("write after the plan: %s %s", o.Kind, o.Result.TextContent())
		}
		if b, err := os.ReadFile(target); err != nil || string(b) != "planned" {
			t.Errorf("out.txt = %q, %v", b, err)
		}
		if m := a.Env().Mode; m != tool.ModeDefault {
			t.Errorf("mode after approval = %s, want default", m)
		}
		if got := modeEvents(t, evs); got != "default→plan plan→default" {
			t.Errorf("mode events %q", got)
		}
		// The plan is saved under the session directory.
		b, err := os.ReadFile(filepath.Join(f.store.Dir(f.dir), a.SessionID(), plan.FileName))
		if err != nil || !strings.Contains(string(b), "2. test it") {
			t.Errorf("plan file: %q %v", b, err)
		}
		want := []interaction.Kind{interaction.KindPlan, interaction.KindPlan, interaction.KindPermission}
		if got := p.kinds(); !slices.Equal(got, want) {
			t.Errorf("asked %v, want %v", got, want)
		}
		if pr := p.asked[0].(*interaction.PlanRequest); pr.ReturnMode != tool.ModeDefault || pr.ToolUseID != "exit1" {
			t.Errorf("plan request %+v", pr)
		}
	})
}

// TestPlanApprovedIntoAcceptEdits: the person approves and chooses
// acceptEdits; the edit then runs without asking. A session that starts in
// plan mode without anybody to ask keeps plan mode and says so.
func TestPlanApprovedIntoAcceptEdits(t *testing.T) {
	f := newFixture(t)
	target := filepath.Join(f.dir, "out.txt")
	f.srv.Script(
		llmtest.ToolReply(planCall("exit", "write it")),
		llmtest.ToolReply(writeCall("w", target, "x")),
		llmtest.TextReply("done"),
	)
	p := &person{plans: []*interaction.PlanAnswer{{Approved: true, Mode: tool.ModeAcceptEdits}}}
	a := f.agent(t, func(o *testOpts) {
		o.Pool = toolset.Options{Tools: interactionTools()}
		o.Mode = tool.ModePlan
		o.Interaction = p.channel()
	})
	out, _ := outcomes(t, a, "go")
	if o := out["w"]; o.Kind != executor.KindOK {
		t.Fatalf("write in acceptEdits: %s %s", o.Kind, o.Result.TextContent())
	}
	if m := a.Env().Mode; m != tool.ModeAcceptEdits {
		t.Errorf("mode %s", m)
	}
	if got := p.kinds(); !slices.Equal(got, []interaction.Kind{interaction.KindPlan}) {
		t.Errorf("asked %v", got)
	}

	// Headless: nobody approves; the session stays in plan mode.
	f2 := newFixture(t)
	f2.srv.Script(llmtest.ToolReply(planCall("exit", "write it")), llmtest.TextReply("here is the plan"))
	b := f2.agent(t, func(o *testOpts) {
		o.Pool = toolset.Options{Tools: interactionTools()}
		o.Mode = tool.ModePlan
	})
	out, _ = outcomes(t, b, "go")
	if o := out["exit"]; !strings.Contains(o.Result.TextContent(), "Nobody can approve the plan") {
		t.Errorf("headless ExitPlanMode: %s", o.Result.TextContent())
	}
	if m := b.Env().Mode; m != tool.ModePlan {
		t.Errorf("headless mode %s", m)
	}
}

func questionCall(id string) llmtest.ToolCall {
	return llmtest.ToolCall{ID: id, Name: "AskUserQuestion", Input: `{"questions":[
		{"question":"Which database?","header":"Database","multiSelect":false,"options":[{"label":"SQLite","description":"embedded"},{"label":"Postgres","description":"server"}]},
		{"question":"Which checks?","header":"Checks","multiSelect":true,"options":[{"label":"vet","description":"go vet"},{"label":"race","description":"-race"},{"label":"fuzz","description":"fuzzing"}]}]}`}
}

// TestAskUserQuestionRun: answered through the channel (keyed by
// question, multi-select joined, a free answer marked); with nobody to ask
// the result says so at once.
func TestAskUserQuestionRun(t *testing.T) {
	bothProviders(t, nil, func(t *testing.T, f *fixture) {
		f.srv.Script(llmtest.ToolReply(questionCall("q")), llmtest.TextReply("ok"))
		p := &person{questions: []map[string]string{{"Which database?": "DuckDB", "Which checks?": interaction.JoinLabels([]string{"vet", "race"})}}}
		a := f.agent(t, func(o *testOpts) {
			o.Pool = toolset.Options{Tools: interactionTools()}
			o.Interaction = p.channel()
		})
		out, _ := outcomes(t, a, "ask me")
		o := out["q"]
		text := o.Result.TextContent()
		if o.Kind != executor.KindOK || !strings.Contains(text, `"Which database?" = "DuckDB" (in their own words)`) || !strings.Contains(text, `"Which checks?" = "vet, race"`) {
			t.Fatalf("answer: %s %s", o.Kind, text)
		}
		st := o.Result.Structured.(ask.Result)
		if st.Answers["Which checks?"] != "vet, race" {
			t.Errorf("structured %+v", st)
		}
		if q := p.asked[0].(*interaction.QuestionRequest); len(q.Questions) != 2 || q.ToolUseID != "q" {
			t.Errorf("request %+v", q)
		}
	})
	f := newFixture(t)
	f.srv.Script(llmtest.ToolReply(questionCall("q")), llmtest.TextReply("ok"))
	a := f.agent(t, func(o *testOpts) { o.Pool = toolset.Options{Tools: interactionTools()} })
	out, _ := outcomes(t, a, "ask me")
	if o := out["q"]; !o.Result.IsError || !strings.Contains(o.Result.TextContent(), "Nobody can answer") {
		t.Errorf("headless question: %s", o.Result.TextContent())
	}
}

// TestPermissionAnswers: allow once (asked again next time), allow always
// (the rule lands in the local settings file and the next call runs
// without asking), deny with a message (the model reads it).
func TestPermissionAnswers(t *testing.T) {
	bothProviders(t, nil, func(t *testing.T, f *fixture) {
		local := filepath.Join(f.dir, ".gantry", "settings.local.json")
		eng, err := permission.NewEngine(permission.Options{WorkDir: f.dir, SettingsPaths: map[settings.Scope]string{
			settings.ScopeLocal: local, settings.ScopeUser: filepath.Join(t.TempDir(), "settings.json"),
		}})
		if err != nil {
			t.Fatal(err)
		}
		f.srv.Script(
			llmtest.ToolReply(writeCall("once", filepath.Join(f.dir, "a.txt"), "a")),
			llmtest.ToolReply(writeCall("always", filepath.Join(f.dir, "b.txt"), "b")),
			llmtest.ToolReply(writeCall("free", filepath.Join(f.dir, "c.txt"), "c")),
			llmtest.ToolReply(llmtest.ToolCall{ID: "denied", Name: "Write", Input: `{"file_path":"/tmp/outside-gantry-test.txt","content":"x"}`}),
			llmtest.TextReply("done"),
		)
		p := &person{perms: []*interaction.PermissionAnswer{
			{Choice: interaction.AllowOnce},
			{Choice: interaction.AllowAlways},
			{Choice: interaction.Deny, Message: "not outside the project, use ./tmp"},
		}}
		a := f.agent(t, func(o *testOpts) {
			o.Pool = toolset.Options{Tools: interactionTools()}
			o.Decider = eng
			o.Interaction = p.channel()
		})
		out, _ := outcomes(t, a, "write files")
		for _, id := range []string{"once", "always", "free"} {
			if o := out[id]; o.Kind != executor.KindOK {
				t.Errorf("%s: %s %s", id, o.Kind, o.Result.TextContent())
			}
		}
		if o := out["denied"]; o.Kind != executor.KindDenied || !strings.Contains(o.Result.TextContent(), "not outside the project, use ./tmp") {
			t.Errorf("denied: %s %s", o.Kind, o.Result.TextContent())
		}
		if len(p.asked) != 3 {
			t.Fatalf("asked %d times, want 3 (the third write runs by the saved rule)", len(p.asked))
		}
		pr := p.asked[1].(*interaction.PermissionRequest)
		if len(pr.Suggestions) == 0 || len(pr.Scopes) == 0 || pr.Scopes[0] != settings.ScopeLocal || pr.ToolName != "Write" {
			t.Errorf("request %+v", pr)
		}
		st, err := settings.ReadFile(local)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(st.Permissions.Allow, pr.Suggestions) {
			t.Errorf("local settings allow %v, want %v", st.Permissions.Allow, pr.Suggestions)
		}
		if o := out["free"]; o.Decision == nil || o.Decision.Source != "local" {
			t.Errorf("third write decided by %+v, want the local rule", o.Decision)
		}
	})
}

// TestSubagentAsksTheSamePerson: a subagent's permission asks and its
// tools' questions reach the parent's channel, marked with the subagent.
func TestSubagentAsksTheSamePerson(t *testing.T) {
	f := newFixture(t)
	sc := convs{
		"delegate": {
			reply(llmtest.ToolReply(agentCall("c1", map[string]any{"description": "work", "prompt": "do the work", "subagent_type": "general-purpose"}))),
			text("ok"),
		},
		"do the work": {
			reply(llmtest.ToolReply(questionCall("q"))),
			reply(llmtest.ToolReply(llmtest.ToolCall{ID: "b1", Name: "Bash", Input: `{"command":"touch made-by-child"}`})),
			text("done"),
		},
	}
	f.srv = llmtest.NewServer(t, sc.responder(t))
	sf := newSub(t, f, nil)
	p := &person{
		perms:     []*interaction.PermissionAnswer{{Choice: interaction.AllowOnce}},
		questions: []map[string]string{{"Which database?": "SQLite"}},
	}
	a := sf.agent(t, func(o *testOpts) { o.Interaction = p.channel() })
	if _, res, err := collect(t, context.Background(), a, "delegate"); err != nil || res.IsError {
		t.Fatalf("%+v %v", res, err)
	}
	if _, err := os.Stat(filepath.Join(f.dir, "made-by-child")); err != nil {
		t.Errorf("the child's approved command did not run: %v", err)
	}
	if got := p.kinds(); !slices.Equal(got, []interaction.Kind{interaction.KindQuestion, interaction.KindPermission}) {
		t.Fatalf("asked %v", got)
	}
	q := p.asked[0].(*interaction.QuestionRequest).Who
	pr := p.asked[1].(*interaction.PermissionRequest).Who
	for _, w := range []interaction.Who{q, pr} {
		if w.Agent != "general-purpose" || w.ParentToolUseID != "c1" || w.SessionID == "" || w.SessionID == a.SessionID() {
			t.Errorf("request from the child labelled %+v", w)
		}
	}
}
