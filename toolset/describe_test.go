package toolset_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/internal/benchcpu"
	"github.com/gantry-dev/gantry/llm/llmtest"
	"github.com/gantry-dev/gantry/tool"
	"github.com/gantry-dev/gantry/toolset"
)

func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// TestDocGolden renders structured descriptions and session-time prompts
// in the MCP and Markdown formats (the Anthropic and OpenAI adapters have
// their own goldens of the same pool).
func TestDocGolden(t *testing.T) {
	p := llmtest.DocPool(t)
	t.Run("mcp", func(t *testing.T) { llmtest.Golden(t, "mcp_doc.json", p.MCP(), updating()) })
	t.Run("markdown", func(t *testing.T) {
		llmtest.GoldenText(t, "markdown_doc.md", p.Markdown(), updating())
	})
	if err := p.Err(); err != nil {
		t.Fatal(err)
	}
}

// counting is a custom tool whose session-time description counts its
// calls and may fail, time out or replace the schema.
type counting struct {
	calls  atomic.Int32
	answer tool.SessionSpec
	err    error
	block  bool
	doc    *tool.Doc
}

func (c *counting) Spec() *tool.Spec {
	return &tool.Spec{Name: "Counted", Description: "Static.", InputSchema: tool.EmptyObjectSchema, Doc: c.doc}
}

func (c *counting) Call(context.Context, *tool.Env, json.RawMessage) (*tool.Result, error) {
	return tool.TextResult("ok"), nil
}

func (c *counting) DescribeSession(ctx context.Context, env *tool.Env) (tool.SessionSpec, error) {
	c.calls.Add(1)
	if c.block {
		<-ctx.Done()
		return tool.SessionSpec{}, ctx.Err()
	}
	return c.answer, c.err
}

func newPool(t testing.TB, o toolset.Options) *toolset.Pool {
	t.Helper()
	p, err := toolset.NewPool(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func specOf(p *toolset.Pool, name string) *tool.Spec {
	for _, s := range p.Specs() {
		if s.Name == name {
			return s
		}
	}
	return nil
}

func TestSessionDescription(t *testing.T) {
	objSchema := json.RawMessage(`{"type":"object","properties":{"table":{"type":"string","enum":["orders","users"]}},"required":["table"]}`)
	tests := []struct {
		name     string
		c        *counting
		wantErr  string // "" means the tool is in the pool
		wantDesc string
		check    func(t *testing.T, s *tool.Spec)
	}{
		{name: "prompt", c: &counting{answer: tool.SessionSpec{Prompt: "Tables: orders, users."}},
			wantDesc: "Static.\n\nTables: orders, users."},
		{name: "nothing", c: &counting{}, wantDesc: "Static."},
		{name: "description and schema", c: &counting{answer: tool.SessionSpec{Description: "Dynamic.", InputSchema: objSchema}},
			wantDesc: "Dynamic.", check: func(t *testing.T, s *tool.Spec) {
				if !strings.Contains(string(s.InputSchema), `"enum":["orders","users"]`) {
					t.Errorf("schema %s", s.InputSchema)
				}
			}},
		{name: "doc around the session prompt", c: &counting{
			answer: tool.SessionSpec{Prompt: "Tables: orders."},
			doc:    &tool.Doc{DisplayName: "Counter", UsageNotes: []string{"Count once."}},
		}, wantDesc: "Static.\n\nTables: orders.\n\nUsage notes:\n- Count once.", check: func(t *testing.T, s *tool.Spec) {
			if s.Annotations.Title != "Counter" || s.DisplayName() != "Counter" {
				t.Errorf("title %q", s.Annotations.Title)
			}
		}},
		{name: "error", c: &counting{err: errors.New("database unreachable")}, wantErr: `tool "Counted": session-time description: database unreachable`},
		{name: "timeout", c: &counting{block: true}, wantErr: "no answer within 20ms"},
		{name: "bad schema", c: &counting{answer: tool.SessionSpec{InputSchema: json.RawMessage(`{"type":"string"}`)}}, wantErr: "bad input schema"},
		{name: "example against the session schema", c: &counting{
			answer: tool.SessionSpec{InputSchema: objSchema},
			doc:    &tool.Doc{Examples: []tool.Example{{Description: "no table", Input: json.RawMessage(`{}`)}}},
		}, wantErr: "example input does not match"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPool(t, toolset.Options{Tools: []tool.Tool{tt.c}, SessionTimeout: 20 * time.Millisecond})
			err := p.Build()
			s := specOf(p, "Counted")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Build error %v, want %q", err, tt.wantErr)
				}
				if s != nil {
					t.Fatal("a tool whose session-time description failed is in the pool")
				}
				if _, ok := p.Lookup("Counted"); ok {
					t.Fatal("Lookup finds it")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := toolset.FullDescription(s); got != tt.wantDesc {
				t.Errorf("description %q, want %q", got, tt.wantDesc)
			}
			if tt.check != nil {
				tt.check(t, s)
			}
			// Frozen: later views and derived pools neither ask again nor
			// change a byte.
			first, _ := json.Marshal(p.Specs())
			for range 3 {
				again, _ := json.Marshal(p.Derive(nil).Specs())
				if string(again) != string(first) {
					t.Fatalf("specs changed:\n%s\n%s", first, again)
				}
			}
			if n := tt.c.calls.Load(); n != 1 {
				t.Errorf("DescribeSession called %d times, want 1", n)
			}
			if lt, ok := p.Lookup("Counted"); !ok || lt.Spec() != s && toolset.FullDescription(lt.Spec()) != tt.wantDesc {
				t.Errorf("Lookup returns another spec")
			}
		})
	}
}

func TestDocExampleRejected(t *testing.T) {
	type in struct {
		N int `json:"n"`
	}
	_, err := tool.NewText("Bad", "Has a bad example.", func(context.Context, *tool.Env, in) (string, error) { return "", nil },
		tool.WithDoc(tool.Doc{Examples: []tool.Example{{Description: "a string for a number", Input: json.RawMessage(`{"n":"x"}`)}}}))
	if !errors.Is(err, tool.ErrBadExample) || !strings.Contains(err.Error(), `example 1 (a string for a number)`) {
		t.Fatalf("error %v", err)
	}
	// A custom tool's Doc is checked when the pool builds it.
	c := &counting{doc: &tool.Doc{Examples: []tool.Example{{Description: "extra field", Input: json.RawMessage(`{"x":1}`)}}}}
	p := newPool(t, toolset.Options{Tools: []tool.Tool{c}})
	if err := p.Build(); !errors.Is(err, tool.ErrBadExample) {
		t.Fatalf("Build error %v", err)
	}
}

func TestDiscoverToolsAlias(t *testing.T) {
	deferred := tool.Must(tool.NewNoInput("Rare", "Rarely needed.", func(context.Context, *tool.Env) (*tool.Result, error) { return nil, nil },
		tool.WithDefer(tool.Deferral{ShouldDefer: true})))
	p := newPool(t, toolset.Options{Tools: []tool.Tool{deferred}, Defer: true})
	st, ok := p.Lookup(toolset.DiscoverToolsName)
	if !ok || st.Spec().Name != toolset.ToolSearchName {
		t.Fatalf("DiscoverTools resolves to %v %v", st, ok)
	}
	if !p.Unloaded("Rare") {
		t.Error("Rare is deferred and not loaded")
	}
	p.Load("Rare")
	if p.Unloaded("Rare") {
		t.Error("Rare is loaded")
	}
	if p.Unloaded("Nope") || p.Unloaded(toolset.ToolSearchName) {
		t.Error("unknown names are not unloaded deferred tools")
	}
	clash := tool.Must(tool.NewNoInput("DiscoverTools", "Mine.", func(context.Context, *tool.Env) (*tool.Result, error) { return nil, nil }))
	if _, err := toolset.NewPool(context.Background(), toolset.Options{Tools: []tool.Tool{clash}}); err == nil || !strings.Contains(err.Error(), "reserved") {
		t.Fatalf("a user tool named DiscoverTools: %v", err)
	}
}

// BenchmarkAssembleSessionPrompts assembles a session's pool of 40
// built-ins and 200 MCP tools, every built-in with a structured
// description and a session-time prompt, up to the specs a request
// carries: "prebuilt" with the built-in tools built once (as a shared pool
// core keeps them), "factories" with each session building its built-ins.
func BenchmarkAssembleSessionPrompts(b *testing.B) {
	type in struct {
		Path  string `json:"path" jsonschema:"The file"`
		Limit int    `json:"limit,omitempty" jsonschema:"At most this many"`
	}
	build := func(name string) (tool.Tool, error) {
		return tool.NewText(name, "A built-in.", func(context.Context, *tool.Env, in) (string, error) { return "", nil },
			tool.WithDoc(tool.Doc{
				DisplayName: name, Long: "What it does, when to use it and when not to.",
				UsageNotes: []string{"One note.", "Another note."},
				Examples:   []tool.Example{{Description: "Read a file", Input: json.RawMessage(`{"path":"a.go","limit":3}`)}},
			}),
			tool.SessionFunc(func(ctx context.Context, env *tool.Env) (tool.SessionSpec, error) {
				return tool.SessionSpec{Prompt: "Session-time usage text listing " + env.WorkDir + "."}, nil
			}))
	}
	var mcpTools []tool.Tool
	for i := range 200 {
		mcpTools = append(mcpTools, tool.Must(tool.NewRaw(fmt.Sprintf("remote_%03d", i), "A remote tool.",
			json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`),
			func(context.Context, *tool.Env, json.RawMessage) (*tool.Result, error) { return nil, nil })))
	}
	for _, prebuilt := range []bool{true, false} {
		reg := toolset.NewRegistry()
		for i := range 40 {
			name := fmt.Sprintf("Builtin%02d", i)
			f := func(context.Context, *tool.Env) (tool.Tool, error) { return build(name) }
			if prebuilt {
				t := tool.Must(build(name))
				f = func(context.Context, *tool.Env) (tool.Tool, error) { return t, nil }
			}
			reg.MustRegister(toolset.Entry{Name: name, Factory: f})
		}
		b.Run(map[bool]string{true: "prebuilt", false: "factories"}[prebuilt], func(b *testing.B) {
			env := &tool.Env{WorkDir: "/w"}
			b.ReportAllocs()
			defer benchcpu.Start(b)()
			for b.Loop() {
				p, err := toolset.NewPool(context.Background(), toolset.Options{Registry: reg, Env: env})
				if err != nil {
					b.Fatal(err)
				}
				if err := p.AddMCP("srv", mcpTools...); err != nil {
					b.Fatal(err)
				}
				if err := p.Build(); err != nil {
					b.Fatal(err)
				}
				if n := len(p.Specs()); n != 240 {
					b.Fatalf("%d specs", n)
				}
			}
		})
	}
}
