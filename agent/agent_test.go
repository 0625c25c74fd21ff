package agent

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/builtin/file"
	"github.com/gantry-dev/gantry/executor"
	"github.com/gantry-dev/gantry/hook"
	"github.com/gantry-dev/gantry/interaction"
	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/llm/anthropic"
	"github.com/gantry-dev/gantry/llm/llmtest"
	"github.com/gantry-dev/gantry/llm/openai"
	"github.com/gantry-dev/gantry/permission"
	"github.com/gantry-dev/gantry/subagent"
	"github.com/gantry-dev/gantry/tool"
	"github.com/gantry-dev/gantry/toolset"
	"github.com/gantry-dev/gantry/transcript"
	"github.com/gantry-dev/gantry/workspace"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type echoIn struct {
	Text string `json:"text"`
}

type sleepIn struct {
	Ms int `json:"ms"`
}

// testTools returns Echo (read-only), Fail (always errors), Sleep
// (read-only, honours ctx) and Counter (counts calls).
func testTools(t *testing.T, calls *atomic.Int32) []tool.Tool {
	t.Helper()
	echo := tool.Must(tool.NewText("Echo", "Echo the text back.", func(ctx context.Context, env *tool.Env, in echoIn) (string, error) {
		if calls != nil {
			calls.Add(1)
		}
		return "echo: " + in.Text, nil
	}, tool.ReadOnly()))
	fail := tool.Must(tool.NewText("Fail", "Always fails.", func(ctx context.Context, env *tool.Env, in echoIn) (string, error) {
		return "", errors.New("disk on fire: " + in.Text)
	}, tool.ReadOnly()))
	sleep := tool.Must(tool.NewText("Sleep", "Sleeps.", func(ctx context.Context, env *tool.Env, in sleepIn) (string, error) {
		select {
		case <-time.After(time.Duration(in.Ms) * time.Millisecond):
			return "slept", nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}, tool.ReadOnly()))
	return []tool.Tool{echo, fail, sleep}
}

type fixture struct {
	srv    *llmtest.Server
	store  *transcript.Store
	dir    string
	openai bool
}

func newFixture(t *testing.T, opts ...llmtest.Option) *fixture {
	return &fixture{srv: llmtest.NewServer(t, opts...), store: transcript.NewStore(t.TempDir()), dir: t.TempDir()}
}

// bothProviders runs a test against the Anthropic and the OpenAI adapter
// (the OpenAI fake gives every parallel call index 0, like Ollama).
func bothProviders(t *testing.T, opts []llmtest.Option, test func(t *testing.T, f *fixture)) {
	t.Run("anthropic", func(t *testing.T) { test(t, newFixture(t, opts...)) })
	t.Run("openai", func(t *testing.T) {
		f := newFixture(t, append(opts, llmtest.WithIndexZero())...)
		f.openai = true
		test(t, f)
	})
}

func (f *fixture) provider() llm.Provider {
	retry := llm.RetryPolicy{BaseDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond}
	if f.openai {
		return openai.New(openai.Options{BaseURL: f.srv.OpenAIURL(), APIKey: "test-key", Retry: retry})
	}
	return anthropic.New(anthropic.Options{BaseURL: f.srv.URL(), APIKey: "test-key", Retry: retry})
}

func (f *fixture) agent(t *testing.T, mod func(*testOpts)) *Agent {
	t.Helper()
	return f.agentWS(t, nil, mod)
}

// testOpts are an agent's options and the workspace fields the tests set
// (see withWorkspace).
type testOpts struct {
	Options
	WorkDir         string
	Mode            tool.Mode
	Pool            toolset.Options
	Services        *tool.Services
	Decider         permission.Decider
	Hooks           hook.Runner
	AdditionalDirs  []string
	Agents          []subagent.Definition
	CompletionTools bool
	Interaction     interaction.Channel
}

// agentWS is agent with a workspace that keeps the fixture's transcripts:
// unless mod gives a Workspace, one is opened from the options (see
// withWorkspace) and adjusted by wsMod.
func (f *fixture) agentWS(t *testing.T, wsMod func(*workspace.Options), mod func(*testOpts)) *Agent {
	t.Helper()
	o := testOpts{
		Options: Options{Provider: f.provider(), Model: "claude-sonnet-4-5", NoEnvFacts: true, NoMemoryFiles: true},
		WorkDir: f.dir, Pool: toolset.Options{Tools: testTools(t, nil)},
	}
	if mod != nil {
		mod(&o)
	}
	ao := withWorkspace(t, o, func(wo *workspace.Options) {
		wo.Transcripts = f.store
		if wsMod != nil {
			wsMod(wo)
		}
	})
	a, err := New(context.Background(), ao)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// withWorkspace returns o's agent options with a workspace, when they
// have none, assembled from o's workspace fields the way a test wants it:
// no settings files, no MCP servers, the pool exactly o.Pool (no built-in
// tools), the Agent tool only with o.Agents; mod adjusts it — the way to
// give the agent what the workspace keeps (transcripts, resuming,
// checkpoints). Closing the agent closes the workspace.
func withWorkspace(tb testing.TB, o testOpts, mod func(*workspace.Options)) Options {
	tb.Helper()
	if o.Workspace != nil {
		// A given workspace: the agent types and the channel are added
		// to it; the rest is the workspace's.
		if o.Decider != nil || o.Hooks != nil || o.Services != nil || o.Mode != "" || o.CompletionTools || len(o.AdditionalDirs) > 0 {
			tb.Fatal("withWorkspace: a workspace's safety layer, services or mode set beside it")
		}
		if err := o.Workspace.Agents().Add(o.Agents...); err != nil {
			tb.Fatal(err)
		}
		if o.Interaction != nil {
			tool.Provide(o.Workspace.Services(), o.Interaction)
		}
		return o.Options
	}
	po := o.Pool
	if po.Registry == nil {
		po.Registry = toolset.NewRegistry()
	}
	wo := workspace.Options{
		Dir: o.WorkDir, Mode: o.Mode, NoSettings: true, Pool: &po, Services: o.Services,
		Decider: o.Decider, Hooks: o.Hooks, AdditionalDirs: o.AdditionalDirs, Interaction: o.Interaction,
		Agents: o.Agents, NoAgentFiles: true, NoAgentTool: len(o.Agents) == 0 || o.MaxAgentDepth < 0,
		CompletionTools: o.CompletionTools,
	}
	if mod != nil {
		mod(&wo)
	}
	ws, err := workspace.Open(context.Background(), wo)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ws.Close() }) // if New fails
	ao := o.Options
	ao.Workspace, ao.Closers = ws, append(ao.Closers, ws)
	return ao
}

// collect runs prompt and returns every event and the final result.
func collect(t *testing.T, ctx context.Context, a *Agent, prompt string) ([]Event, *ResultEvent, error) {
	t.Helper()
	var evs []Event
	var res *ResultEvent
	var runErr error
	for ev, err := range a.Run(ctx, prompt) {
		if err != nil {
			runErr = err
			continue
		}
		evs = append(evs, ev)
		if r, ok := ev.(*ResultEvent); ok {
			res = r
		}
	}
	if res == nil {
		t.Fatal("no result event")
	}
	return evs, res, runErr
}

func TestMultiTurnToolUse(t *testing.T) {
	bothProviders(t, []llmtest.Option{llmtest.WithChunkSize(3)}, func(t *testing.T, f *fixture) {
		f.srv.Script(
			llmtest.ToolReply(llmtest.ToolCall{ID: "toolu_1", Name: "Echo", Input: `{"text":"hello"}`}),
			llmtest.Reply{Content: []llm.Block{llm.Text("all done")}, Usage: llm.Usage{InputTokens: 100, OutputTokens: 20}},
		)
		a := f.agent(t, nil)
		evs, res, err := collect(t, context.Background(), a, "say hello")
		if err != nil {
			t.Fatal(err)
		}
		if res.Subtype != SubtypeSuccess || res.IsError || res.Text != "all done" || res.NumTurns != 2 {
			t.Fatalf("result = %+v", res)
		}
		if res.CostUSD <= 0 {
			t.Fatalf("cost not computed: %+v", res)
		}
		reqs := f.srv.Requests()
		if len(reqs) != 2 {
			t.Fatalf("%d requests", len(reqs))
		}
		tr := reqs[1].ToolResults()
		if len(tr) != 1 || tr[0].ToolUseID != "toolu_1" || tr[0].IsError || tool.JoinText(tr[0].Content) != "echo: hello" {
			t.Fatalf("tool results sent: %+v", tr)
		}
		if names := reqs[0].ToolNames(); strings.Join(names, ",") != "Echo,Fail,Sleep" {
			t.Fatalf("tools sent: %v", names)
		}
		// Events: init first, statuses reach DOING and SUCCESS, a tool result, the
		// text streamed in pieces, result last.
		if _, ok := evs[0].(*InitEvent); !ok {
			t.Fatalf("first event %T", evs[0])
		}
		var phases []tool.Phase
		var text strings.Builder
		var results int
		for _, ev := range evs {
			switch e := ev.(type) {
			case *ToolStatus:
				phases = append(phases, e.Status.Phase)
			case *TextDelta:
				text.WriteString(e.Text)
			case *ToolResultEvent:
				results++
			}
		}
		if text.String() != "all done" || results != 1 {
			t.Fatalf("text %q, results %d", text.String(), results)
		}
		if !containsPhase(phases, tool.PhaseDoing) || phases[len(phases)-1] != tool.PhaseSuccess {
			t.Fatalf("phases %v", phases)
		}
		// The transcript holds prompt, tool use, tool result, reply.
		recs, err := transcript.ReadFile(f.store.Path(f.dir, a.SessionID()))
		if err != nil {
			t.Fatal(err)
		}
		var types []string
		for _, r := range recs {
			types = append(types, r.Type)
		}
		if got := strings.Join(types, ","); got != "user,assistant,user,assistant,system" {
			t.Fatalf("transcript types %s", got)
		}
	})
}

func containsPhase(ps []tool.Phase, p tool.Phase) bool {
	for _, x := range ps {
		if x == p {
			return true
		}
	}
	return false
}

func TestParallelCallsAndErrorsKeepOrder(t *testing.T) {
	bothProviders(t, nil, func(t *testing.T, f *fixture) {
		f.srv.Script(
			llmtest.ToolReply(
				llmtest.ToolCall{ID: "a", Name: "Sleep", Input: `{"ms":60}`},
				llmtest.ToolCall{ID: "b", Name: "Fail", Input: `{"text":"x"}`},
				llmtest.ToolCall{ID: "c", Name: "Echo", Input: `{"text":"c"}`},
				llmtest.ToolCall{ID: "d", Name: "Nope", Input: `{}`},
				llmtest.ToolCall{ID: "e", Name: "Echo", Input: `{"text":"bad json`},
			),
			llmtest.TextReply("ok"),
		)
		a := f.agent(t, nil)
		_, res, err := collect(t, context.Background(), a, "go")
		if err != nil || res.Subtype != SubtypeSuccess {
			t.Fatalf("res %+v err %v", res, err)
		}
		tr := f.srv.Requests()[1].ToolResults()
		var ids []string
		for _, b := range tr {
			ids = append(ids, b.ToolUseID)
		}
		if strings.Join(ids, "") != "abcde" {
			t.Fatalf("result order %v", ids)
		}
		wantErr := map[string]bool{"a": false, "b": true, "c": false, "d": true, "e": true}
		for _, b := range tr {
			isErr := b.IsError
			if f.openai { // Chat Completions has no is_error: the text says it
				isErr = strings.HasPrefix(tool.JoinText(b.Content), "Error:")
			}
			if isErr != wantErr[b.ToolUseID] {
				t.Errorf("%s is_error=%v: %s", b.ToolUseID, b.IsError, tool.JoinText(b.Content))
			}
		}
		if txt := tool.JoinText(tr[1].Content); !strings.Contains(txt, "disk on fire") || strings.Contains(txt, "Error: Error") {
			t.Errorf("fail text %q", txt)
		}
	})
}

func TestMaxTurnsAndBudget(t *testing.T) {
	tests := []struct {
		name    string
		mod     func(*testOpts)
		subtype string
		turns   int
	}{
		{"max turns", func(o *testOpts) { o.MaxTurns = 3 }, SubtypeMaxTurns, 3},
		{"token budget", func(o *testOpts) { o.MaxBudgetTokens = 250 }, SubtypeMaxTokens, 3},
		{"usd budget", func(o *testOpts) { o.MaxBudgetUSD = 0.0009 }, SubtypeMaxBudget, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			for i := range 10 {
				r := llmtest.ToolReply(llmtest.ToolCall{ID: "t" + string(rune('a'+i)), Name: "Echo", Input: `{"text":"again"}`})
				r.Usage = llm.Usage{InputTokens: 80, OutputTokens: 20} // $0.00054 a turn at sonnet prices
				f.srv.Script(r)
			}
			a := f.agent(t, tt.mod)
			_, res, err := collect(t, context.Background(), a, "loop")
			if err != nil {
				t.Fatal(err)
			}
			if res.Subtype != tt.subtype || !res.IsError {
				t.Fatalf("result %+v", res)
			}
			if tt.subtype == SubtypeMaxTurns && res.NumTurns != tt.turns {
				t.Fatalf("turns %d", res.NumTurns)
			}
			// The conversation is consistent: the last message answers every tool use.
			msgs := a.Messages()
			last := msgs[len(msgs)-1]
			if last.Role != llm.RoleUser || len(last.Content) == 0 || last.Content[0].Type != llm.TypeToolResult {
				t.Fatalf("last message %+v", last)
			}
		})
	}
}

func TestCancelMidStream(t *testing.T) {
	bothProviders(t, []llmtest.Option{llmtest.WithChunkSize(1), llmtest.WithChunkDelay(20 * time.Millisecond)}, func(t *testing.T, f *fixture) {
		f.srv.Script(llmtest.TextReply("a long reply that streams slowly"))
		a := f.agent(t, nil)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var res *ResultEvent
		for ev, err := range a.Run(ctx, "talk") {
			if err != nil {
				t.Fatalf("unexpected error %v", err)
			}
			switch e := ev.(type) {
			case *TextDelta:
				cancel()
			case *ResultEvent:
				res = e
			}
		}
		if res == nil || res.Subtype != SubtypeInterrupted {
			t.Fatalf("result %+v", res)
		}
		// The partial reply is not part of the conversation.
		msgs := a.Messages()
		if len(msgs) != 1 || msgs[0].Role != llm.RoleUser {
			t.Fatalf("messages after cancel: %+v", msgs)
		}
	})
}

// TestCancelDuringToolGivesResults cancels while a call runs after the
// reply has streamed completely: the reply is kept and the call gets an
// error result. (The call starts as soon as its input is complete, possibly
// before the reply ends; a cancel then would discard the partial reply, so
// the test cancels only once the provider's stream is done and the call is
// running.)
func TestCancelDuringToolGivesResults(t *testing.T) {
	bothProviders(t, nil, func(t *testing.T, f *fixture) {
		f.srv.Script(llmtest.ToolReply(llmtest.ToolCall{ID: "s", Name: "Sleep", Input: `{"ms":5000}`}))
		streamed, doing := make(chan struct{}), make(chan struct{})
		inner := f.provider()
		a := f.agent(t, func(o *testOpts) {
			o.Provider = llm.ProviderFunc(func(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
				return func(yield func(llm.Event, error) bool) {
					for ev, err := range inner.Stream(ctx, req) {
						if !yield(ev, err) {
							return
						}
						if err != nil {
							return
						}
					}
					close(streamed)
				}
			})
		})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			for _, c := range []chan struct{}{streamed, doing} {
				select {
				case <-c:
				case <-ctx.Done(): // the test ended first
					return
				}
			}
			cancel()
		}()
		var res *ResultEvent
		var once sync.Once
		for ev := range a.Run(ctx, "sleep") {
			switch e := ev.(type) {
			case *ToolStatus:
				if e.Status.Phase == tool.PhaseDoing {
					once.Do(func() { close(doing) })
				}
			case *ResultEvent:
				res = e
			}
		}
		if res == nil || res.Subtype != SubtypeInterrupted {
			t.Fatalf("result %+v", res)
		}
		msgs := a.Messages()
		last := msgs[len(msgs)-1]
		if last.Role != llm.RoleUser || last.Content[0].ToolUseID != "s" || !last.Content[0].IsError {
			t.Fatalf("cancelled call has no error result: %+v", last)
		}
	})
}

func TestRetryAfterOverloadAndDroppedStream(t *testing.T) {
	bothProviders(t, nil, func(t *testing.T, f *fixture) {
		f.srv.Script(
			llmtest.ErrorReply(529, "", ""),
			llmtest.Reply{Content: []llm.Block{llm.Text("first try breaks here")}, ChunkSize: 2, DropAfter: 6},
			llmtest.TextReply("recovered"),
		)
		a := f.agent(t, nil)
		evs, res, err := collect(t, context.Background(), a, "hi")
		if err != nil || res.Text != "recovered" {
			t.Fatalf("res %+v err %v", res, err)
		}
		retries := 0
		for _, ev := range evs {
			if _, ok := ev.(*RetryEvent); ok {
				retries++
			}
		}
		if retries != 1 || len(f.srv.Requests()) != 3 {
			t.Fatalf("retries %d requests %d", retries, len(f.srv.Requests()))
		}
	})
}

func TestProviderErrorSurfaces(t *testing.T) {
	f := newFixture(t)
	f.srv.Script(llmtest.ErrorReply(401, "authentication_error", "invalid x-api-key"))
	a := f.agent(t, nil)
	_, res, err := collect(t, context.Background(), a, "hi")
	if err == nil || !errors.Is(err, llm.ErrAuth) || !strings.Contains(err.Error(), "invalid x-api-key") {
		t.Fatalf("err %v", err)
	}
	if !res.IsError || res.Subtype != SubtypeDuringExecution {
		t.Fatalf("res %+v", res)
	}
}

func TestCompaction(t *testing.T) {
	f := newFixture(t)
	// Turn 1 reports a prompt near the window: compaction runs before turn 2.
	r := llmtest.ToolReply(llmtest.ToolCall{ID: "c0", Name: "Echo", Input: `{"text":"step"}`})
	r.Usage = llm.Usage{InputTokens: 900, OutputTokens: 50}
	f.srv.Script(r, llmtest.TextReply("SUMMARY: echoed once"),
		llmtest.ToolReply(llmtest.ToolCall{ID: "c1", Name: "Echo", Input: `{"text":"more"}`}),
		llmtest.TextReply("finished"))
	a := f.agent(t, func(o *testOpts) { o.ContextWindow = 1000; o.KeepMessages = 2; o.MaxTurns = 10 })
	// The first turns are small until the usage crosses 80% of the window.
	evs, res, err := collect(t, context.Background(), a, "work")
	if err != nil || res.Subtype != SubtypeSuccess {
		t.Fatalf("res %+v err %v", res, err)
	}
	compactions := 0
	for _, ev := range evs {
		if _, ok := ev.(*CompactEvent); ok {
			compactions++
		}
	}
	if compactions == 0 {
		t.Fatal("no compaction")
	}
	msgs := a.Messages()
	if !strings.Contains(msgs[0].Text(), "SUMMARY: echoed once") {
		t.Fatalf("first message after compaction: %q", msgs[0].Text())
	}
	// The summary request carried no tool choice other than none.
	var sawSummaryReq bool
	for _, r := range f.srv.Requests() {
		if strings.Contains(string(r.ToolChoice), "none") {
			sawSummaryReq = true
		}
	}
	if !sawSummaryReq {
		t.Fatal("summary request not seen")
	}
	// Resuming starts from the summary.
	a.Close()
	f.srv.Script(llmtest.TextReply("resumed"))
	b := f.agentWS(t, func(o *workspace.Options) { o.ResumeID = a.SessionID() }, nil)
	if got := b.Messages(); len(got) == 0 || !strings.Contains(got[0].Text(), "SUMMARY") {
		t.Fatalf("resumed history: %+v", got)
	}
}

func TestResumeContinueFork(t *testing.T) {
	bothProviders(t, nil, func(t *testing.T, f *fixture) {
		f.srv.Script(llmtest.TextReply("first answer"), llmtest.TextReply("second answer"), llmtest.TextReply("forked answer"))
		a := f.agent(t, nil)
		if _, res, err := collect(t, context.Background(), a, "first question"); err != nil || res.IsError {
			t.Fatal(res, err)
		}
		a.Close()

		b := f.agentWS(t, func(o *workspace.Options) { o.Continue = true }, nil)
		if b.SessionID() != a.SessionID() {
			t.Fatalf("continue opened %s, want %s", b.SessionID(), a.SessionID())
		}
		if _, res, err := collect(t, context.Background(), b, "second question"); err != nil || res.IsError {
			t.Fatal(res, err)
		}
		var msgs []llmtest.Message
		for _, m := range f.srv.LastRequest().Messages {
			if m.Role != "system" {
				msgs = append(msgs, m)
			}
		}
		if len(msgs) != 3 || msgs[0].Content[0].Text != "first question" || msgs[1].Content[0].Text != "first answer" {
			t.Fatalf("resumed request messages: %+v", msgs)
		}
		b.Close()

		c := f.agentWS(t, func(o *workspace.Options) { o.ResumeID = a.SessionID(); o.Fork = true }, nil)
		if c.SessionID() == a.SessionID() {
			t.Fatal("fork kept the session id")
		}
		if _, res, err := collect(t, context.Background(), c, "fork question"); err != nil || res.IsError {
			t.Fatal(res, err)
		}
		orig, _ := transcript.ReadFile(f.store.Path(f.dir, a.SessionID()))
		forked, _ := transcript.ReadFile(f.store.Path(f.dir, c.SessionID()))
		if len(forked) <= len(orig) {
			t.Fatalf("fork has %d records, original %d", len(forked), len(orig))
		}
	})
}

func TestRepairHistoryAnswersDanglingToolUse(t *testing.T) {
	recs := []transcript.Record{
		{Type: transcript.TypeUser, Message: mustJSON(llm.UserText("q"))},
		{Type: transcript.TypeAssistant, Message: mustJSON(llm.AssistantMessage(llm.ToolUse("x", "Echo", json.RawMessage(`{}`))))},
	}
	h, _ := historyFromRecords(recs, 0)
	if len(h) != 3 || h[2].Content[0].ToolUseID != "x" || !h[2].Content[0].IsError {
		t.Fatalf("history %+v", h)
	}
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func TestSystemPromptAndMemory(t *testing.T) {
	root := t.TempDir()
	sub := filepath.Join(root, "a", "b")
	os.MkdirAll(sub, 0o755)
	os.WriteFile(filepath.Join(root, "AGENTS.md"), []byte("root rules"), 0o644)
	os.WriteFile(filepath.Join(sub, "GANTRY.md"), []byte("leaf rules"), 0o644)
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, "GANTRY.md"), []byte("user rules"), 0o644)
	mem := FindMemoryFiles(sub, home)
	var got []string
	for _, m := range mem {
		got = append(got, m.Content)
	}
	if strings.Join(got, "|") != "user rules|root rules|leaf rules" {
		t.Fatalf("memory order %v", got)
	}
	p := BuildSystemPrompt("", EnvFacts{WorkDir: sub, Platform: "linux/amd64", Date: time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)}, mem, "extra words")
	for _, want := range []string{"Working directory: " + sub, "2026-11-22", "leaf rules", "extra words"} {
		if !strings.Contains(p, want) {
			t.Errorf("system prompt lacks %q", want)
		}
	}
}

func TestPrices(t *testing.T) {
	p, ok := DefaultPrices().Lookup("claude-sonnet-4-5-20250929")
	if !ok || p.Input != 3 {
		t.Fatalf("lookup %v %v", p, ok)
	}
	if _, ok := DefaultPrices().Lookup("llama3"); ok {
		t.Fatal("unknown model priced")
	}
	if c := p.Cost(TokenCounts{Input: 1_000_000, Output: 1_000_000}); c != 18 {
		t.Fatalf("cost %v", c)
	}
}

func TestInterruptDecisionStopsRun(t *testing.T) {
	f := newFixture(t)
	f.srv.Script(llmtest.ToolReply(llmtest.ToolCall{ID: "w", Name: "Store", Input: `{"text":"x"}`}), llmtest.TextReply("never"))
	writer := tool.Must(tool.NewText("Store", "Stores the text (not read-only).", func(ctx context.Context, env *tool.Env, in echoIn) (string, error) {
		return "wrote", nil
	}))
	a := f.agent(t, func(o *testOpts) {
		o.Pool = toolset.Options{Tools: []tool.Tool{writer}}
		o.Interaction = interaction.Funcs{Permission: func(ctx context.Context, req *interaction.PermissionRequest) (*interaction.PermissionAnswer, error) {
			return &interaction.PermissionAnswer{Choice: interaction.Deny, Message: "user said stop", Interrupt: true}, nil
		}}
	})
	_, res, err := collect(t, context.Background(), a, "write")
	if err != nil || res.Subtype != SubtypeInterrupted {
		t.Fatalf("res %+v err %v", res, err)
	}
	if len(f.srv.Requests()) != 1 {
		t.Fatalf("the run went on after an interrupt: %d requests", len(f.srv.Requests()))
	}
	_ = executor.KindDenied
}

func TestCompactionForgetsFileReads(t *testing.T) {
	f := newFixture(t)
	r := llmtest.ToolReply(llmtest.ToolCall{ID: "c0", Name: "Echo", Input: `{"text":"step"}`})
	r.Usage = llm.Usage{InputTokens: 900, OutputTokens: 50}
	f.srv.Script(r, llmtest.TextReply("SUMMARY"), llmtest.TextReply("finished"))
	a := f.agent(t, func(o *testOpts) { o.ContextWindow = 1000; o.KeepMessages = 2 })
	before := a.Env().Files
	before.Put(tool.FileState{Path: "/x", Size: 1})
	if _, res, err := collect(t, context.Background(), a, "work"); err != nil || res.IsError {
		t.Fatal(res, err)
	}
	if _, ok := a.Env().Files.Get("/x"); ok {
		t.Fatal("file reads survived compaction")
	}
}

func testToolsB(b *testing.B) []tool.Tool {
	echo := tool.Must(tool.NewText("Echo", "Echo the text back.", func(ctx context.Context, env *tool.Env, in echoIn) (string, error) {
		return "echo: " + in.Text, nil
	}, tool.ReadOnly()))
	return []tool.Tool{echo}
}

func sessionStore(tb testing.TB) *transcript.Store { return transcript.NewStore(tb.TempDir()) }

func TestPermissionRequestHookAnswersAsk(t *testing.T) {
	for _, tc := range []struct {
		name    string
		verdict tool.Behavior
		isError bool
	}{{"allow", tool.Allow, false}, {"deny", tool.Deny, true}, {"no verdict", tool.Passthrough, true}} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.srv.Script(llmtest.ToolReply(llmtest.ToolCall{ID: "w", Name: "Store", Input: `{"text":"x"}`}), llmtest.TextReply("ok"))
			writer := tool.Must(tool.NewText("Store", "Stores the text (not read-only).", func(ctx context.Context, env *tool.Env, in echoIn) (string, error) {
				return "wrote", nil
			}))
			var seen atomic.Int32
			hooks := hookRunner(func(ctx context.Context, in *hookInput) (*hookOutput, error) {
				if in.Event == "PermissionRequest" && in.ToolName == "Store" {
					seen.Add(1)
					return &hookOutput{Decision: tc.verdict, Reason: "policy hook"}, nil
				}
				return nil, nil
			})
			a := f.agent(t, func(o *testOpts) { o.Pool = toolset.Options{Tools: []tool.Tool{writer}}; o.Hooks = hooks })
			if _, res, err := collect(t, context.Background(), a, "write"); err != nil || res.IsError {
				t.Fatal(res, err)
			}
			if seen.Load() != 1 {
				t.Fatalf("PermissionRequest hook ran %d times", seen.Load())
			}
			tr := f.srv.Requests()[1].ToolResults()
			if tr[0].IsError != tc.isError {
				t.Fatalf("is_error %v: %s", tr[0].IsError, tool.JoinText(tr[0].Content))
			}
		})
	}
}

func TestContentBlockNotes(t *testing.T) {
	tests := []struct {
		in   tool.Content
		want string
	}{
		{tool.Text("hi"), "hi"},
		{tool.Audio([]byte("abc"), "audio/wav"), "[audio clip, 3 bytes, audio/wav]"},
		{tool.ResourceLink("file:///x", "x", "text/plain"), "[resource link x: file:///x]"},
		{tool.EmbeddedBlob("file:///b", "application/octet-stream", []byte{1, 2}), "[resource file:///b (application/octet-stream, 2 bytes)]"},
		{tool.EmbeddedText("file:///t", "text/plain", "body"), "body"},
	}
	for _, tt := range tests {
		if got := contentBlock(tt.in); got.Type != llm.TypeText || got.Text != tt.want {
			t.Errorf("contentBlock(%+v) = %+v, want text %q", tt.in, got, tt.want)
		}
	}
	if got := contentBlock(tool.Image([]byte{1}, "image/png")); got.Type != llm.TypeImage {
		t.Errorf("image became %+v", got)
	}
}

// The default permission engine lets reads inside the working directory run
// and denies (nobody to ask) a read outside it.
func TestDefaultPermissionsGuardPaths(t *testing.T) {
	f := newFixture(t)
	inside := filepath.Join(f.dir, "in.txt")
	os.WriteFile(inside, []byte("inside"), 0o644)
	outside := filepath.Join(t.TempDir(), "out.txt")
	os.WriteFile(outside, []byte("outside"), 0o644)
	f.srv.Script(llmtest.ToolReply(
		llmtest.ToolCall{ID: "a", Name: "Read", Input: `{"file_path":"` + inside + `"}`},
		llmtest.ToolCall{ID: "b", Name: "Read", Input: `{"file_path":"` + outside + `"}`},
	), llmtest.TextReply("ok"))
	a := f.agent(t, func(o *testOpts) { o.Pool = toolset.Options{Tools: file.Tools(file.Options{})} })
	if _, res, err := collect(t, context.Background(), a, "read both"); err != nil || res.IsError {
		t.Fatal(res, err)
	}
	tr := f.srv.Requests()[1].ToolResults()
	if tr[0].IsError || !strings.Contains(tool.JoinText(tr[0].Content), "inside") {
		t.Fatalf("inside read: %+v", tr[0])
	}
	if !tr[1].IsError || strings.Contains(tool.JoinText(tr[1].Content), "outside\n") {
		t.Fatalf("outside read was not denied: %+v", tr[1])
	}
}
