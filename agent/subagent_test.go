package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/builtin/shell"
	"github.com/gantry-dev/gantry/hook"
	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/llm/llmtest"
	"github.com/gantry-dev/gantry/subagent"
	"github.com/gantry-dev/gantry/tool"
	"github.com/gantry-dev/gantry/transcript"
	"github.com/gantry-dev/gantry/workspace"
)

// convs scripts several conversations that run at once: each is keyed by
// its first user message and answered by step (the number of assistant
// messages already in the request).
type convs map[string][]func(r llmtest.Request) llmtest.Reply

func firstUser(r llmtest.Request) string {
	for _, m := range r.Messages {
		if m.Role != "user" {
			continue
		}
		for _, b := range m.Content {
			if b.Type == llm.TypeText {
				return b.Text
			}
		}
	}
	return ""
}

func assistants(r llmtest.Request) int {
	n := 0
	for _, m := range r.Messages {
		if m.Role == "assistant" {
			n++
		}
	}
	return n
}

func (c convs) responder(t *testing.T) llmtest.Option {
	return llmtest.WithResponder(func(r llmtest.Request) (llmtest.Reply, bool) {
		steps, ok := c[firstUser(r)]
		n := assistants(r)
		if !ok || n >= len(steps) {
			t.Errorf("unscripted request: first user %q, step %d", firstUser(r), n)
			return llmtest.TextReply("unscripted"), true
		}
		return steps[n](r), true
	})
}

func reply(rep llmtest.Reply) func(llmtest.Request) llmtest.Reply {
	return func(llmtest.Request) llmtest.Reply { return rep }
}

func text(s string) func(llmtest.Request) llmtest.Reply {
	return reply(withUsage(llmtest.TextReply(s)))
}

func withUsage(r llmtest.Reply) llmtest.Reply {
	r.Usage = llm.Usage{InputTokens: 100, OutputTokens: 10}
	return r
}

func agentCall(id string, in map[string]any) llmtest.ToolCall {
	b, _ := json.Marshal(in)
	return llmtest.ToolCall{ID: id, Name: "Agent", Input: string(b)}
}

// lastResults returns the text of the tool results of the request's last
// message.
func lastResults(r llmtest.Request) []string {
	var out []string
	// The trailing messages holding tool results (one for Anthropic, one
	// per result for OpenAI).
	i := len(r.Messages)
	for i > 0 && r.Messages[i-1].Role != "assistant" {
		i--
	}
	var blocks []llm.Block
	for _, m := range r.Messages[i:] {
		blocks = append(blocks, m.Content...)
	}
	for _, b := range blocks {
		if b.Type == llm.TypeToolResult {
			var parts []string
			for _, c := range b.Content {
				parts = append(parts, c.Text)
			}
			out = append(out, strings.Join(parts, ""))
		}
	}
	return out
}

// subFixture is an agent in a workspace of the built-in tools plus the
// test tools, in dir, with a recording hook runner.
type subFixture struct {
	*fixture
	ws     *workspace.Workspace
	mu     sync.Mutex
	hooked []hook.Input
}

func newSub(t *testing.T, f *fixture, wo func(*workspace.Options)) *subFixture {
	t.Helper()
	sf := &subFixture{fixture: f}
	home := t.TempDir()
	o := workspace.Options{
		Dir: f.dir, NoSettings: true, NoAgentFiles: true, PolicyPath: "-", Tools: testTools(t, nil), Transcripts: f.store,
		Getenv: func(k string) string {
			if k == "HOME" {
				return home
			}
			return ""
		},
		Hooks: hook.RunnerFunc(func(ctx context.Context, in *hook.Input) (*hook.Output, error) {
			sf.mu.Lock()
			sf.hooked = append(sf.hooked, *in)
			sf.mu.Unlock()
			return nil, nil
		}),
	}
	if wo != nil {
		wo(&o)
	}
	ws, err := workspace.Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	sf.ws = ws
	return sf
}

func (sf *subFixture) agent(t *testing.T, mod func(*testOpts)) *Agent {
	return sf.fixture.agent(t, func(o *testOpts) {
		o.Workspace = sf.ws
		if mod != nil {
			mod(o)
		}
	})
}

func (sf *subFixture) events(ev hook.Event) []hook.Input {
	sf.mu.Lock()
	defer sf.mu.Unlock()
	var out []hook.Input
	for _, in := range sf.hooked {
		if in.Event == ev {
			out = append(out, in)
		}
	}
	return out
}

// Two Agent calls in one message run in parallel (each child's first
// request waits until the other's arrived), their replies come back in the
// model's order, their usage rolls up, their events carry the Agent call's
// id, the Subagent hooks fire and each child has a linked transcript.
func TestParallelSubagents(t *testing.T) {
	bothProviders(t, nil, func(t *testing.T, f *fixture) {
		var arrived sync.WaitGroup
		arrived.Add(2)
		var overlapped atomic.Int32
		child := func(answer string) func(llmtest.Request) llmtest.Reply {
			return func(r llmtest.Request) llmtest.Reply {
				arrived.Done()
				done := make(chan struct{})
				go func() { arrived.Wait(); close(done) }()
				select {
				case <-done:
					overlapped.Add(1)
				case <-time.After(5 * time.Second):
				}
				return withUsage(llmtest.TextReply(answer))
			}
		}
		var final []string
		sc := convs{
			"fan out": {
				reply(withUsage(llmtest.ToolReply(
					agentCall("call_a", map[string]any{"description": "find A", "prompt": "task A"}),
					agentCall("call_b", map[string]any{"description": "find B", "prompt": "task B", "subagent_type": "general-purpose"}),
				))),
				func(r llmtest.Request) llmtest.Reply {
					final = lastResults(r)
					return withUsage(llmtest.TextReply("both done"))
				},
			},
			"task A": {child("result A")},
			"task B": {child("result B")},
		}
		f.srv = llmtest.NewServer(t, append([]llmtest.Option{sc.responder(t)}, indexZero(f)...)...)
		sf := newSub(t, f, nil)
		a := sf.agent(t, nil)
		evs, res, err := collect(t, context.Background(), a, "fan out")
		if err != nil || res.IsError || res.Text != "both done" {
			t.Fatalf("result %+v %v", res, err)
		}
		if overlapped.Load() != 2 {
			t.Fatalf("the children's requests did not overlap (%d)", overlapped.Load())
		}
		if len(final) != 2 || !strings.HasPrefix(final[0], "result A\n\n(agent id ") || !strings.HasPrefix(final[1], "result B\n\n(agent id ") {
			t.Fatalf("tool results %q", final)
		}
		if res.Usage.InputTokens != 400 || res.Usage.OutputTokens != 40 {
			t.Fatalf("usage did not roll up: %+v", res.Usage)
		}
		byParent := map[string]int{}
		for _, ev := range evs {
			if se, ok := ev.(*SubagentEvent); ok {
				if _, ok := se.Event.(*MessageEvent); ok {
					byParent[se.ParentToolUseID]++
				}
				if se.AgentType != subagent.GeneralPurpose {
					t.Errorf("agent type %q", se.AgentType)
				}
			}
		}
		if byParent["call_a"] < 2 || byParent["call_b"] < 2 {
			t.Fatalf("subagent message events by parent call: %v", byParent)
		}
		starts, stops := sf.events(hook.SubagentStart), sf.events(hook.SubagentStop)
		if len(starts) != 2 || len(stops) != 2 {
			t.Fatalf("SubagentStart %d, SubagentStop %d", len(starts), len(stops))
		}
		for _, in := range stops {
			if in.SessionID != a.SessionID() || in.AgentID == "" || in.AgentType != subagent.GeneralPurpose {
				t.Fatalf("SubagentStop input %+v", in)
			}
			recs, err := transcript.ReadFile(in.AgentTranscriptPath)
			if err != nil || len(recs) < 3 || !strings.Contains(string(recs[0].Data), a.SessionID()) {
				t.Fatalf("child transcript %s: %v %+v", in.AgentTranscriptPath, err, recs)
			}
		}
		if n := len(sf.events(hook.Stop)); n != 1 {
			t.Fatalf("Stop fired %d times, want once (for the parent)", n)
		}
	})
}

func indexZero(f *fixture) []llmtest.Option {
	if f.openai {
		return []llmtest.Option{llmtest.WithIndexZero()}
	}
	return nil
}

// An Explore agent runs read-only: no write tools, no Agent, plan mode
// (a writing shell command is refused), and the fast model.
func TestExploreCannotWrite(t *testing.T) {
	bothProviders(t, nil, func(t *testing.T, f *fixture) {
		var childReq llmtest.Request
		var childResults []string
		sc := convs{
			"explore": {
				reply(llmtest.ToolReply(agentCall("c1", map[string]any{"description": "look", "prompt": "look around", "subagent_type": "Explore"}))),
				text("ok"),
			},
			"look around": {
				func(r llmtest.Request) llmtest.Reply {
					childReq = r
					return llmtest.ToolReply(
						llmtest.ToolCall{ID: "w1", Name: "Write", Input: `{"file_path":"` + filepath.Join(f.dir, "x.txt") + `","content":"x"}`},
						llmtest.ToolCall{ID: "b1", Name: "Bash", Input: `{"command":"touch made-by-explore"}`},
					)
				},
				func(r llmtest.Request) llmtest.Reply {
					childResults = lastResults(r)
					return llmtest.TextReply("found nothing")
				},
			},
		}
		f.srv = llmtest.NewServer(t, append([]llmtest.Option{sc.responder(t)}, indexZero(f)...)...)
		sf := newSub(t, f, func(o *workspace.Options) { o.Mode = tool.ModeAcceptEdits })
		a := sf.agent(t, func(o *testOpts) { o.SmallModel = "fast-model" })
		_, res, err := collect(t, context.Background(), a, "explore")
		if err != nil || res.IsError {
			t.Fatalf("%+v %v", res, err)
		}
		names := childReq.ToolNames()
		for _, n := range []string{"Write", "Edit", "Agent", "NotebookEdit"} {
			if slices.Contains(names, n) {
				t.Errorf("Explore has %s: %v", n, names)
			}
		}
		if !slices.Contains(names, "Read") || !slices.Contains(names, "Grep") {
			t.Errorf("Explore lacks read tools: %v", names)
		}
		if childReq.Model != "fast-model" {
			t.Errorf("Explore model %q", childReq.Model)
		}
		if len(childResults) != 2 || !strings.Contains(childResults[1], "plan mode") {
			t.Fatalf("child results %q", childResults)
		}
		for _, p := range []string{"x.txt", "made-by-explore"} {
			if _, err := os.Stat(filepath.Join(f.dir, p)); err == nil {
				t.Fatalf("Explore wrote %s", p)
			}
		}
	})
}

// A custom agent from a project's .claude/agents file (trusted folder):
// its prompt, tools and model apply.
func TestCustomAgentFromFile(t *testing.T) {
	f := newFixture(t)
	def := "---\nname: reviewer\ndescription: Reviews code for bugs.\ntools: Read, Grep\nmodel: review-model\nmaxTurns: 3\n---\nYou review code and report bugs.\n"
	if err := os.MkdirAll(filepath.Join(f.dir, ".claude", "agents"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(f.dir, ".claude", "agents", "reviewer.md"), []byte(def), 0o644)
	var parentReq, childReq llmtest.Request
	sc := convs{
		"review": {
			func(r llmtest.Request) llmtest.Reply {
				parentReq = r
				return llmtest.ToolReply(agentCall("c1", map[string]any{"description": "review", "prompt": "review main.go", "subagent_type": "reviewer"}))
			},
			text("reviewed"),
		},
		"review main.go": {func(r llmtest.Request) llmtest.Reply { childReq = r; return llmtest.TextReply("no bugs") }},
	}
	f.srv = llmtest.NewServer(t, sc.responder(t))
	sf := newSub(t, f, func(o *workspace.Options) { o.NoSettings, o.NoAgentFiles, o.Trusted = false, false, true })
	a := sf.agent(t, nil)
	if _, res, err := collect(t, context.Background(), a, "review"); err != nil || res.IsError {
		t.Fatalf("%+v %v", res, err)
	}
	var agentDesc string
	for _, tl := range parentReq.Tools {
		if tl.Name == "Agent" {
			agentDesc = tl.Description
		}
	}
	if !strings.Contains(agentDesc, "- reviewer: Reviews code for bugs. (Tools: Read, Grep)") {
		t.Fatalf("Agent description does not list the custom type:\n%s", agentDesc)
	}
	if got := childReq.ToolNames(); !slices.Equal(got, []string{"Grep", "Read"}) {
		t.Fatalf("child tools %v", got)
	}
	if childReq.Model != "review-model" || !strings.Contains(childReq.System[0].Text, "You review code and report bugs.") {
		t.Fatalf("child model %q system %+v", childReq.Model, childReq.System)
	}
}

var taskIDRe = regexp.MustCompile(`task id (\w+)`)

// A background agent returns a task id at once; TaskOutput reads it,
// TaskStop stops it, and the parent learns how it ended at its next turn.
// A second one completes while the parent waits (headless run): its reply
// is held until the parent has sent the request of the turn that ends
// with waiting, so that it cannot complete before (its note would then
// reach that turn, and the run would rightly end there).
func TestBackgroundAgents(t *testing.T) {
	bothProviders(t, nil, func(t *testing.T, f *fixture) {
		var taskID string
		var outputRead, stopRead, note, quickNote string
		parentWaits := make(chan struct{})
		var waitsOnce sync.Once
		sc := convs{
			"background": {
				reply(llmtest.ToolReply(agentCall("c1", map[string]any{"description": "slow job", "prompt": "slow", "run_in_background": true}))),
				func(r llmtest.Request) llmtest.Reply {
					m := taskIDRe.FindStringSubmatch(lastResults(r)[0])
					if m == nil {
						t.Errorf("no task id in %q", lastResults(r))
						return llmtest.TextReply("?")
					}
					taskID = m[1]
					return llmtest.ToolReply(llmtest.ToolCall{ID: "o1", Name: "TaskOutput", Input: `{"task_id":"` + taskID + `","block":false}`})
				},
				func(r llmtest.Request) llmtest.Reply {
					outputRead = lastResults(r)[0]
					return llmtest.ToolReply(llmtest.ToolCall{ID: "s1", Name: "TaskStop", Input: `{"task_id":"` + taskID + `"}`})
				},
				func(r llmtest.Request) llmtest.Reply {
					stopRead = lastResults(r)[0]
					return llmtest.ToolReply(agentCall("c2", map[string]any{"description": "quick job", "prompt": "quick", "run_in_background": true}))
				},
				func(r llmtest.Request) llmtest.Reply {
					note = allText(r)
					waitsOnce.Do(func() { close(parentWaits) })
					return llmtest.TextReply("waiting for the quick job")
				},
				func(r llmtest.Request) llmtest.Reply { quickNote = allText(r); return llmtest.TextReply("all done") },
			},
			// The slow child streams a little, then stalls until stopped.
			"slow": {reply(llmtest.Reply{Content: []llm.Block{llm.Text("working on it, slowly")}, StallAfter: 3})},
			"quick": {func(llmtest.Request) llmtest.Reply {
				select {
				case <-parentWaits:
				case <-t.Context().Done(): // the test failed before: let the server close
				}
				return withUsage(llmtest.TextReply("quick result"))
			}},
		}
		f.srv = llmtest.NewServer(t, append([]llmtest.Option{sc.responder(t)}, indexZero(f)...)...)
		sf := newSub(t, f, func(o *workspace.Options) { o.Allow = []string{"TaskStop"} })
		a := sf.agent(t, func(o *testOpts) { o.WaitForBackground = true })
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, res, err := collect(t, ctx, a, "background")
		if err != nil || res.IsError || res.Text != "all done" {
			t.Fatalf("%+v %v", res, err)
		}
		if !strings.Contains(outputRead, "running") {
			t.Errorf("TaskOutput: %q", outputRead)
		}
		if !strings.Contains(stopRead, "Stopped task "+taskID) {
			t.Errorf("TaskStop: %q", stopRead)
		}
		if !strings.Contains(note, "slow job") || !strings.Contains(note, "killed") {
			t.Errorf("the parent was not told the slow job was stopped: %q", note)
		}
		if !strings.Contains(quickNote, "quick result") || !strings.Contains(quickNote, "completed") {
			t.Errorf("the parent was not told the quick result: %q", quickNote)
		}
		for _, ti := range sf.ws.Tasks().List() {
			if ti.Kind != "agent" || ti.Status == shell.TaskRunning {
				t.Errorf("task %+v", ti)
			}
		}
	})
}

func allText(r llmtest.Request) string {
	var b strings.Builder
	for _, m := range r.Messages {
		for _, bl := range m.Content {
			if bl.Type == llm.TypeText {
				b.WriteString(bl.Text + "\n")
			}
		}
	}
	return b.String()
}

// Cancelling the parent cancels a running child; nothing leaks (goleak).
func TestCancelMidChild(t *testing.T) {
	bothProviders(t, nil, func(t *testing.T, f *fixture) {
		childStarted := make(chan struct{})
		var once sync.Once
		sc := convs{
			"delegate": {reply(llmtest.ToolReply(agentCall("c1", map[string]any{"description": "long", "prompt": "long task"})))},
			"long task": {func(r llmtest.Request) llmtest.Reply {
				once.Do(func() { close(childStarted) })
				return llmtest.Reply{Content: []llm.Block{llm.Text("thinking very long")}, StallAfter: 2}
			}},
		}
		f.srv = llmtest.NewServer(t, append([]llmtest.Option{sc.responder(t)}, indexZero(f)...)...)
		sf := newSub(t, f, nil)
		a := sf.agent(t, nil)
		ctx, cancel := context.WithCancel(context.Background())
		go func() { <-childStarted; cancel() }()
		_, res, _ := collect(t, ctx, a, "delegate")
		if res.Subtype != SubtypeInterrupted {
			t.Fatalf("result %+v", res)
		}
		cancel()
	})
}

func gitRepo(t *testing.T, dir string) {
	t.Helper()
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"}, {"config", "user.email", "t@example.com"}, {"config", "user.name", "T"},
		{"commit", "-q", "--allow-empty", "-m", "init"},
	} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
}

// A worktree child that edits keeps its worktree (path and branch in the
// result); one that does not is removed.
func TestWorktreeIsolation(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	f := newFixture(t)
	gitRepo(t, f.dir)
	var results []string
	var childDir string
	sc := convs{
		"isolate": {
			reply(llmtest.ToolReply(
				agentCall("c1", map[string]any{"description": "edit", "prompt": "edit in a worktree", "isolation": "worktree", "name": "editor"}),
				agentCall("c2", map[string]any{"description": "read", "prompt": "only read", "isolation": "worktree"}),
			)),
			func(r llmtest.Request) llmtest.Reply { results = lastResults(r); return llmtest.TextReply("ok") },
		},
		"edit in a worktree": {
			func(r llmtest.Request) llmtest.Reply {
				m := regexp.MustCompile(`Working directory: (\S+)`).FindStringSubmatch(r.System[0].Text)
				if m == nil {
					t.Errorf("no working directory in the child's system prompt")
					return llmtest.TextReply("?")
				}
				childDir = m[1]
				return llmtest.ToolReply(llmtest.ToolCall{ID: "w", Name: "Write", Input: `{"file_path":"` + filepath.Join(childDir, "new.txt") + `","content":"hello"}`})
			},
			text("wrote new.txt"),
		},
		"only read": {text("nothing to change")},
	}
	f.srv = llmtest.NewServer(t, sc.responder(t))
	sf := newSub(t, f, func(o *workspace.Options) { o.Mode = tool.ModeAcceptEdits })
	a := sf.agent(t, func(o *testOpts) { o.NoEnvFacts = false })
	if _, res, err := collect(t, context.Background(), a, "isolate"); err != nil || res.IsError {
		t.Fatalf("%+v %v", res, err)
	}
	if len(results) != 2 {
		t.Fatalf("results %q", results)
	}
	m := regexp.MustCompile(`worktree (\S+) on branch (\S+)\.`).FindStringSubmatch(results[0])
	if m == nil || !strings.HasPrefix(m[1], filepath.Join(f.dir, ".gantry", "worktrees")) || !strings.HasPrefix(m[2], "gantry/editor-") {
		t.Fatalf("kept worktree not reported: %q", results[0])
	}
	if b, err := os.ReadFile(filepath.Join(m[1], "new.txt")); err != nil || string(b) != "hello" {
		t.Fatalf("the edit is not in the worktree: %v %q", err, b)
	}
	if _, err := os.Stat(filepath.Join(f.dir, "new.txt")); err == nil {
		t.Fatal("the edit leaked into the main checkout")
	}
	if strings.Contains(results[1], "worktree") {
		t.Fatalf("unchanged worktree reported: %q", results[1])
	}
	ents, _ := os.ReadDir(filepath.Join(f.dir, ".gantry", "worktrees"))
	var dirs []string
	for _, e := range ents {
		if e.IsDir() {
			dirs = append(dirs, e.Name())
		}
	}
	if len(dirs) != 1 {
		t.Fatalf("worktrees left: %v (the unchanged one must be removed)", dirs)
	}
	out, _ := exec.Command("git", "-C", f.dir, "branch", "--list", "--format=%(refname:short)", "gantry/*").Output()
	if n := len(strings.Fields(string(out))); n != 1 {
		t.Fatalf("branches: %q", out)
	}
	if out, _ := exec.Command("git", "-C", f.dir, "status", "--porcelain").Output(); len(out) != 0 {
		t.Fatalf("main checkout not clean: %q", out)
	}
}

// A child's transcript is a session of its own: resuming it continues its
// conversation.
func TestResumeChild(t *testing.T) {
	f := newFixture(t)
	var resumed llmtest.Request
	sc := convs{
		"delegate":    {reply(llmtest.ToolReply(agentCall("c1", map[string]any{"description": "remember", "prompt": "remember 42"}))), text("ok")},
		"remember 42": {text("remembered"), func(r llmtest.Request) llmtest.Reply { resumed = r; return llmtest.TextReply("it was 42") }},
	}
	f.srv = llmtest.NewServer(t, sc.responder(t))
	sf := newSub(t, f, nil)
	a := sf.agent(t, nil)
	evs, _, err := collect(t, context.Background(), a, "delegate")
	if err != nil {
		t.Fatal(err)
	}
	var childID string
	for _, ev := range evs {
		if tr, ok := ev.(*ToolResultEvent); ok {
			if out, ok := tr.Outcome.Result.Structured.(*subagent.Outcome); ok {
				childID = out.AgentID
			}
		}
	}
	if childID == "" {
		t.Fatal("no agent id in the Agent result")
	}
	co := testOpts{Options: Options{Provider: f.provider(), NoEnvFacts: true, NoMemoryFiles: true}, WorkDir: f.dir}
	child, err := New(context.Background(), withWorkspace(t, co, func(wo *workspace.Options) { wo.Transcripts, wo.ResumeID = f.store, childID }))
	if err != nil {
		t.Fatal(err)
	}
	defer child.Close()
	res, err := child.Prompt(context.Background(), "what was it?")
	if err != nil || res.Text != "it was 42" {
		t.Fatalf("%+v %v", res, err)
	}
	if len(resumed.Messages) < 3 || firstUser(resumed) != "remember 42" {
		t.Fatalf("resumed request %+v", resumed.Messages)
	}
}

// Subagents do not nest by default; MaxAgentDepth 2 lets them; a negative
// depth removes the Agent tool.
func TestNestingDepth(t *testing.T) {
	for _, tc := range []struct {
		depth     int
		parentHas bool
		childHas  bool
	}{{0, true, false}, {2, true, true}, {-1, false, false}} {
		t.Run(fmt.Sprint(tc.depth), func(t *testing.T) {
			f := newFixture(t)
			var parentTools, childTools []string
			sc := convs{
				"nest": {func(r llmtest.Request) llmtest.Reply {
					parentTools = r.ToolNames()
					if !tc.parentHas {
						return llmtest.TextReply("no agents")
					}
					return llmtest.ToolReply(agentCall("c1", map[string]any{"description": "child", "prompt": "child task"}))
				}, text("done")},
				"child task": {func(r llmtest.Request) llmtest.Reply {
					childTools = r.ToolNames()
					return llmtest.TextReply("child done")
				}},
			}
			f.srv = llmtest.NewServer(t, sc.responder(t))
			sf := newSub(t, f, nil)
			a := sf.agent(t, func(o *testOpts) { o.MaxAgentDepth = tc.depth })
			if _, res, err := collect(t, context.Background(), a, "nest"); err != nil || res.IsError {
				t.Fatalf("%+v %v", res, err)
			}
			if slices.Contains(parentTools, "Agent") != tc.parentHas {
				t.Fatalf("parent tools %v", parentTools)
			}
			if tc.parentHas && slices.Contains(childTools, "Agent") != tc.childHas {
				t.Fatalf("child tools %v", childTools)
			}
		})
	}
}

type marker struct{ name string }

// StartSubagent's hooks for long-lived members (teams): extra services,
// an Idle wait between runs, messages at turn boundaries, state changes.
func TestStartSubagentKeepAlive(t *testing.T) {
	f := newFixture(t)
	var second llmtest.Request
	sc := convs{"member work": {
		text("first part done"),
		func(r llmtest.Request) llmtest.Reply { second = r; return llmtest.TextReply("second part done") },
	}}
	f.srv = llmtest.NewServer(t, sc.responder(t))
	sf := newSub(t, f, nil)
	a := sf.agent(t, nil)
	var mu sync.Mutex
	var states []string
	var gotMarker bool
	wake := make(chan struct{})
	idles := 0
	s, err := a.StartSubagent(context.Background(), SubagentOptions{
		Name: "member", Prompt: "member work", Description: "team member",
		Services: func(sv *tool.Services) {
			tool.Provide(sv, marker{"alice"})
			_, err := tool.Use[marker](&tool.Env{Services: sv})
			gotMarker = err == nil
		},
		Idle: func(ctx context.Context) error {
			idles++
			if idles > 1 {
				return fmt.Errorf("team deleted")
			}
			select {
			case <-wake:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		},
		WakePrompt: "check your messages",
		OnState: func(st string, _ *ResultEvent) {
			mu.Lock()
			states = append(states, st)
			mu.Unlock()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	for {
		mu.Lock()
		n := len(states)
		mu.Unlock()
		if n >= 2 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	s.Send("message from the lead: also do part two")
	close(wake)
	<-s.Done()
	if !gotMarker {
		t.Fatal("the extra services were not in the subagent's services")
	}
	if got := strings.Join(states, ","); got != "running,idle,running,idle,completed" {
		t.Fatalf("states %s", got)
	}
	if txt := allText(second); !strings.Contains(txt, "check your messages") || !strings.Contains(txt, "also do part two") {
		t.Fatalf("second run did not get the wake prompt and the message: %q", txt)
	}
	if out := s.Outcome(); out == nil || out.Text != "second part done" || out.Turns != 2 {
		t.Fatalf("outcome %+v", out)
	}
}

var agentIDRe = regexp.MustCompile(`agent id ([0-9a-zA-Z-]+): continue this agent with resume`)

// The Agent tool's resume continues an earlier subagent of the session:
// its conversation so far plus the new prompt reach the model, under the
// same agent id; an unknown id is an error result. Both providers.
func TestAgentToolResume(t *testing.T) {
	bothProviders(t, nil, func(t *testing.T, f *fixture) {
		var childID, final, parentID string
		var bad []string
		sc := convs{
			"delegate": {
				reply(withUsage(llmtest.ToolReply(agentCall("c1", map[string]any{"description": "remember", "prompt": "remember 42"})))),
				func(r llmtest.Request) llmtest.Reply {
					res := lastResults(r)
					if m := agentIDRe.FindStringSubmatch(strings.Join(res, "")); m != nil {
						childID = m[1]
					}
					return withUsage(llmtest.ToolReply(
						agentCall("c2", map[string]any{"description": "recall", "prompt": "what was it?", "resume": childID}),
						agentCall("c3", map[string]any{"description": "recall", "prompt": "x", "resume": "nope"}),
						agentCall("c4", map[string]any{"description": "recall", "prompt": "x", "resume": parentID}),
					))
				},
				func(r llmtest.Request) llmtest.Reply {
					res := lastResults(r)
					if len(res) == 3 {
						final, bad = res[0], res[1:]
					}
					return withUsage(llmtest.TextReply("done"))
				},
			},
			"remember 42": {
				text("remembered"),
				func(r llmtest.Request) llmtest.Reply {
					if !strings.Contains(allText(r), "what was it?") || !strings.Contains(allText(r), "remembered") {
						t.Errorf("resumed child's request lacks its history or the new prompt: %s", allText(r))
					}
					return withUsage(llmtest.TextReply("it was 42"))
				},
			},
		}
		f.srv = llmtest.NewServer(t, append([]llmtest.Option{sc.responder(t)}, indexZero(f)...)...)
		sf := newSub(t, f, nil)
		a := sf.agent(t, nil)
		parentID = a.SessionID()
		_, res, err := collect(t, context.Background(), a, "delegate")
		if err != nil || res.Text != "done" {
			t.Fatalf("result %+v %v", res, err)
		}
		if childID == "" {
			t.Fatal("the first Agent result names no agent id")
		}
		if !strings.HasPrefix(final, "it was 42") || !strings.Contains(final, childID) {
			t.Fatalf("resumed result %q (child %s)", final, childID)
		}
		if len(bad) != 2 || !strings.Contains(bad[0], "no agent nope") || !strings.Contains(bad[1], "not a subagent of this session") {
			t.Fatalf("unknown id result %q", bad)
		}
		// One transcript holds both runs of the child.
		recs, err := transcript.ReadFile(f.store.Path(f.dir, childID))
		if err != nil {
			t.Fatal(err)
		}
		var resumedRec bool
		for _, r := range recs {
			resumedRec = resumedRec || r.Subtype == "subagent_resumed"
		}
		if !resumedRec {
			t.Fatalf("no subagent_resumed record in the child's transcript")
		}
	})
}

var bgAgentIDRe = regexp.MustCompile(`\(agent id ([0-9a-zA-Z-]+)\)`)

// A background subagent that still runs cannot be resumed (its transcript
// is open): the call is an error result that says so.
func TestAgentToolResumeRunning(t *testing.T) {
	f := newFixture(t)
	var refused string
	var taskID string
	sc := convs{
		"background": {
			reply(llmtest.ToolReply(agentCall("c1", map[string]any{"description": "slow job", "prompt": "slow", "run_in_background": true}))),
			func(r llmtest.Request) llmtest.Reply {
				res := strings.Join(lastResults(r), "")
				m, tm := bgAgentIDRe.FindStringSubmatch(res), taskIDRe.FindStringSubmatch(res)
				if m == nil || tm == nil {
					t.Errorf("no agent or task id in %q", res)
					return llmtest.TextReply("?")
				}
				taskID = tm[1]
				return llmtest.ToolReply(agentCall("c2", map[string]any{"description": "again", "prompt": "more", "resume": m[1]}))
			},
			func(r llmtest.Request) llmtest.Reply {
				refused = strings.Join(lastResults(r), "")
				return llmtest.ToolReply(llmtest.ToolCall{ID: "s1", Name: "TaskStop", Input: `{"task_id":"` + taskID + `"}`})
			},
			text("done"),
		},
		"slow": {reply(llmtest.Reply{Content: []llm.Block{llm.Text("working on it, slowly")}, StallAfter: 3})},
	}
	f.srv = llmtest.NewServer(t, sc.responder(t))
	sf := newSub(t, f, func(o *workspace.Options) { o.Allow = []string{"TaskStop"} })
	a := sf.agent(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, res, err := collect(t, ctx, a, "background"); err != nil || res.Text != "done" {
		t.Fatalf("%+v %v", res, err)
	}
	if !strings.Contains(refused, "still running") {
		t.Fatalf("resuming a running agent: %q", refused)
	}
}
