package mcpserve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/gantry-dev/gantry/executor"
	"github.com/gantry-dev/gantry/hook"
	"github.com/gantry-dev/gantry/tool"
)

// With GANTRY_MCPSERVE_STDIO=1 the test binary is `gantry mcp serve` in
// miniature: the test tools served over stdio through the executor.
func TestMain(m *testing.M) {
	if os.Getenv("GANTRY_MCPSERVE_STDIO") == "1" {
		s, err := newTestServer(nil, tool.ModeDefault, nil)
		if err == nil {
			err = s.ServeStdio(context.Background())
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "stdio server:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

type echoIn struct {
	Text string `json:"text" jsonschema:"text to echo"`
}

type sumOut struct {
	Sum int `json:"sum"`
}

type sumIn struct {
	A int `json:"a"`
	B int `json:"b"`
}

// cancelled records that the block tool saw its context end.
type recorder struct {
	mu     sync.Mutex
	events []string
	start  chan struct{}
}

func (r *recorder) add(s string) {
	r.mu.Lock()
	r.events = append(r.events, s)
	r.mu.Unlock()
}

func testTools(rec *recorder) []tool.Tool {
	return []tool.Tool{
		tool.Must(tool.NewText("Echo", "Echoes text.", func(_ context.Context, _ *tool.Env, in echoIn) (string, error) {
			return "echo: " + in.Text, nil
		}, tool.ReadOnly())),
		tool.Must(tool.NewTyped("Sum", "Adds two numbers.", func(_ context.Context, _ *tool.Env, in sumIn) (sumOut, error) {
			return sumOut{in.A + in.B}, nil
		}, tool.ReadOnly())),
		tool.Must(tool.NewText("Store", "Pretends to write (not read-only).", func(context.Context, *tool.Env, echoIn) (string, error) {
			return "wrote", nil
		})),
		tool.Must(tool.NewText("Fail", "Always fails.", func(context.Context, *tool.Env, echoIn) (string, error) {
			return "", errors.New("it broke")
		}, tool.ReadOnly())),
		tool.Must(tool.NewNoInput("Block", "Blocks until cancelled.", func(ctx context.Context, _ *tool.Env) (*tool.Result, error) {
			if rec != nil {
				rec.add("started")
				close(rec.start)
			}
			<-ctx.Done()
			if rec != nil {
				rec.add("cancelled")
			}
			return nil, ctx.Err()
		}, tool.ReadOnly())),
		tool.Must(tool.NewNoInput("Hidden", "Never enabled.", func(context.Context, *tool.Env) (*tool.Result, error) {
			return tool.TextResult("x"), nil
		}, tool.EnabledFunc(func(context.Context, *tool.Env) bool { return false }))),
	}
}

func newTestServer(rec *recorder, mode tool.Mode, hooks hook.Runner) (*Server, error) {
	tools := testTools(rec)
	r, err := executor.NewMapResolver(tools...)
	if err != nil {
		return nil, err
	}
	opts := executor.Options{}
	if hooks != nil {
		opts.Hooks = hooks
	}
	ex := executor.New(r, opts)
	sess := executor.NewSharedEnv(&tool.Env{WorkDir: os.TempDir(), Mode: mode})
	return New(tools, ex, sess, &Options{Name: "gantry-test"})
}

// connectInMemory connects the SDK's client to s.
func connectInMemory(t testing.TB, s *Server) *mcp.ClientSession {
	ct, st := mcp.NewInMemoryTransports()
	ss, err := s.MCP().Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return cs
}

func connectHTTP(t testing.TB, s *Server) *mcp.ClientSession {
	hs := httptest.NewServer(s.Handler())
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: hs.URL}, nil)
	if err != nil {
		hs.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		hs.CloseClientConnections()
		hs.Close()
	})
	return cs
}

func connectStdio(t testing.TB) *mcp.ClientSession {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	// GORACE: the race-built server would sleep 1 s at exit.
	cmd.Env = append(os.Environ(), "GANTRY_MCPSERVE_STDIO=1", "GORACE="+strings.TrimSpace("atexit_sleep_ms=0 "+os.Getenv("GORACE")))
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c"}, nil).Connect(context.Background(),
		&mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func text(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func TestServe(t *testing.T) {
	for _, transport := range []string{"memory", "http", "stdio"} {
		t.Run(transport, func(t *testing.T) {
			var cs *mcp.ClientSession
			switch transport {
			case "stdio":
				cs = connectStdio(t)
			default:
				s, err := newTestServer(nil, tool.ModeDefault, nil)
				if err != nil {
					t.Fatal(err)
				}
				if transport == "http" {
					cs = connectHTTP(t, s)
				} else {
					cs = connectInMemory(t, s)
				}
			}
			ctx := context.Background()
			lt, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			byName := map[string]*mcp.Tool{}
			for _, tl := range lt.Tools {
				names = append(names, tl.Name)
				byName[tl.Name] = tl
			}
			if got := strings.Join(names, ","); got != "Block,Echo,Fail,Store,Sum" {
				t.Fatalf("tools = %s", got)
			}
			if a := byName["Echo"].Annotations; a == nil || !a.ReadOnlyHint || a.DestructiveHint == nil || *a.DestructiveHint {
				t.Errorf("Echo annotations = %+v", a)
			}
			if a := byName["Store"].Annotations; a == nil || a.ReadOnlyHint {
				t.Errorf("Store annotations = %+v", a)
			}
			if byName["Sum"].OutputSchema == nil {
				t.Error("Sum has no output schema")
			}

			for _, tc := range []struct {
				name, args string
				isErr      bool
				want       string
			}{
				{"Echo", `{"text":"hi"}`, false, "echo: hi"},
				// The executor coerces a number sent as a string.
				{"Sum", `{"a":"2","b":3}`, false, `"sum": 5`},
				{"Echo", `{}`, true, "text"},
				{"Fail", `{"text":"x"}`, true, "it broke"},
				// Not read-only, default mode, nobody to ask: denied.
				{"Store", `{"text":"x"}`, true, "nobody can approve"},
			} {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tc.name, Arguments: json.RawMessage(tc.args)})
				if err != nil {
					t.Fatalf("%s: %v", tc.name, err)
				}
				if res.IsError != tc.isErr || !strings.Contains(text(res), tc.want) {
					t.Errorf("%s %s: isError=%v text=%q, want %v %q", tc.name, tc.args, res.IsError, text(res), tc.isErr, tc.want)
				}
				if tc.name == "Sum" && !tc.isErr {
					b, _ := json.Marshal(res.StructuredContent)
					if string(b) != `{"sum":5}` {
						t.Errorf("structured = %s", b)
					}
				}
			}
		})
	}
}

func TestModeAndHooks(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	hooks := hook.RunnerFunc(func(_ context.Context, in *hook.Input) (*hook.Output, error) {
		mu.Lock()
		seen = append(seen, string(in.Event)+":"+in.ToolName)
		mu.Unlock()
		if in.Event == hook.PreToolUse && strings.Contains(string(in.ToolInput), "forbidden") {
			return &hook.Output{Block: true, Reason: "no forbidden words"}, nil
		}
		return nil, nil
	})
	s, err := newTestServer(nil, tool.ModeBypassPermissions, hooks)
	if err != nil {
		t.Fatal(err)
	}
	cs := connectInMemory(t, s)
	ctx := context.Background()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "Store", Arguments: map[string]any{"text": "x"}})
	if err != nil || res.IsError || text(res) != "wrote" {
		t.Fatalf("bypass Store: %v %+v", err, res)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "Echo", Arguments: map[string]any{"text": "forbidden"}})
	if err != nil || !res.IsError || !strings.Contains(text(res), "no forbidden words") {
		t.Fatalf("blocked: %v %q", err, text(res))
	}
	mu.Lock()
	defer mu.Unlock()
	if got := strings.Join(seen, " "); !strings.Contains(got, "PreToolUse:Store PostToolUse:Store PreToolUse:Echo") {
		t.Errorf("hooks = %s", got)
	}
}

func TestCancelFromClient(t *testing.T) {
	rec := &recorder{start: make(chan struct{})}
	s, err := newTestServer(rec, tool.ModeDefault, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs := connectInMemory(t, s)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "Block"})
		done <- err
	}()
	<-rec.start
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("client err = %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		rec.mu.Lock()
		n := len(rec.events)
		rec.mu.Unlock()
		if n == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the tool's context was not cancelled")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestNewErrors(t *testing.T) {
	tools := testTools(nil)
	r, _ := executor.NewMapResolver(tools...)
	ex := executor.New(r, executor.Options{})
	sess := executor.NewSharedEnv(nil)
	if _, err := New(append(tools, tools[0]), ex, sess, nil); err == nil || !strings.Contains(err.Error(), "duplicate") {
		t.Errorf("duplicate: %v", err)
	}
	if _, err := New(tools, nil, sess, nil); err == nil {
		t.Error("nil executor accepted")
	}
}

func TestCheckLoopback(t *testing.T) {
	for _, tc := range []struct {
		addr string
		ok   bool
	}{
		{"127.0.0.1:0", true}, {"localhost:8080", true}, {"[::1]:9", true}, {"127.1.2.3:80", true},
		{":8080", false}, {"0.0.0.0:80", false}, {"192.168.1.2:80", false}, {"[::]:80", false},
		{"example.com:80", false}, {"nonsense", false},
	} {
		err := CheckLoopback(tc.addr)
		if (err == nil) != tc.ok {
			t.Errorf("CheckLoopback(%q) = %v", tc.addr, err)
		}
	}
	if _, err := Listen("0.0.0.0:0", false); !errors.Is(err, ErrNotLoopback) {
		t.Errorf("Listen non-loopback: %v", err)
	}
	l, err := Listen("127.0.0.1:0", false)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := newTestServer(nil, tool.ModeDefault, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.ServeHTTP(ctx, l) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: "http://" + l.Addr().String() + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "Echo", Arguments: map[string]any{"text": "net"}}); err != nil || text(res) != "echo: net" {
		t.Fatalf("%v %v", res, err)
	}
	cs.Close()
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("ServeHTTP: %v", err)
	}
}

func benchCall(b *testing.B, cs *mcp.ClientSession) {
	ctx := context.Background()
	params := &mcp.CallToolParams{Name: "Echo", Arguments: json.RawMessage(`{"text":"hello"}`)}
	b.ResetTimer()
	for b.Loop() {
		res, err := cs.CallTool(ctx, params)
		if err != nil || res.IsError {
			b.Fatalf("%v %+v", err, res)
		}
	}
}

// BenchmarkRoundTrip measures one tools/call through the executor, client
// to server and back, per transport.
func BenchmarkRoundTrip(b *testing.B) {
	b.Run("memory", func(b *testing.B) {
		s, _ := newTestServer(nil, tool.ModeDefault, nil)
		benchCall(b, connectInMemory(b, s))
	})
	b.Run("http", func(b *testing.B) {
		s, _ := newTestServer(nil, tool.ModeDefault, nil)
		benchCall(b, connectHTTP(b, s))
	})
	b.Run("stdio", func(b *testing.B) {
		benchCall(b, connectStdio(b))
	})
}

func TestToMCPResultCarriesMeta(t *testing.T) {
	r := tool.TextResult("x")
	r.Meta = map[string]any{"example.com/trace": "t-1"}
	if got := ToMCPResult(r, false).Meta; got["example.com/trace"] != "t-1" {
		t.Fatalf("meta %v", got)
	}
	if got := ToMCPResult(tool.TextResult("x"), false).Meta; got != nil {
		t.Fatalf("meta invented: %v", got)
	}
}
