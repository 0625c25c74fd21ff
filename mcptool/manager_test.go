package mcptool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gantry-dev/gantry/builtin/mcpres"
	"github.com/gantry-dev/gantry/interaction"
	"github.com/gantry-dev/gantry/tool"
)

// inMemory returns an Options.Transport that connects each attempt to a
// fresh session of srv over in-memory transports; the cleanup waits for the
// server sessions to end.
func inMemory(t *testing.T, srv *mcp.Server) func(string, ServerConfig) (mcp.Transport, error) {
	var mu sync.Mutex
	var sessions []*mcp.ServerSession
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, ss := range sessions {
			ss.Close()
			ss.Wait()
		}
	})
	return func(string, ServerConfig) (mcp.Transport, error) {
		ct, st := mcp.NewInMemoryTransports()
		ss, err := srv.Connect(context.Background(), st, nil)
		if err != nil {
			return nil, err
		}
		mu.Lock()
		sessions = append(sessions, ss)
		mu.Unlock()
		return ct, nil
	}
}

func startManager(t *testing.T, names []string, opts Options) *Manager {
	t.Helper()
	cfg := &ConfigFile{Servers: map[string]ServerConfig{}}
	for _, n := range names {
		cfg.Servers[n] = ServerConfig{Command: "unused"}
	}
	m, err := NewManager(cfg, &opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	if err := m.Start(context.Background()); err != nil {
		t.Fatalf("Start: %v", err)
	}
	return m
}

func findTool(t *testing.T, m *Manager, name string) tool.Tool {
	t.Helper()
	for _, tl := range m.Tools() {
		if tl.Spec().Name == name {
			return tl
		}
	}
	var names []string
	for _, tl := range m.Tools() {
		names = append(names, tl.Spec().Name)
	}
	t.Fatalf("tool %s not found in %v", name, names)
	return nil
}

func TestToolsAndCalls(t *testing.T) {
	m := startManager(t, []string{"srv"}, Options{Transport: inMemory(t, newTestServer(""))})
	ctx := context.Background()

	st := m.Servers()
	if len(st) != 1 || st[0].State != StateConnected || st[0].Tools != 7 || st[0].ServerName != "testsrv" {
		t.Fatalf("status = %+v", st)
	}
	var names []string
	for _, tl := range m.Tools() {
		names = append(names, tl.Spec().Name)
		if err := tool.CheckSchema(tl.Spec().InputSchema); err != nil {
			t.Errorf("%s: schema: %v", tl.Spec().Name, err)
		}
	}
	want := "mcp__srv__ask mcp__srv__block mcp__srv__echo mcp__srv__fail mcp__srv__mixed mcp__srv__structured mcp__srv__weird_name_with_spaces"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("tools = %s\nwant    %s", got, want)
	}

	echo := findTool(t, m, "mcp__srv__echo")
	sp := echo.Spec()
	if !sp.Annotations.ReadOnlyHint || sp.Annotations.Title != "Echo" {
		t.Errorf("annotations = %+v", sp.Annotations)
	}
	// An untrusted readOnlyHint may order calls but never grants read-only.
	tr := tool.TraitsOf(echo, nil)
	if tr.ReadOnly || !tr.Destructive() || !tr.ConcurrencySafe {
		t.Errorf("traits = %+v, want concurrency-safe only", tr)
	}
	if tr := tool.TraitsOf(findTool(t, m, "mcp__srv__mixed"), nil); tr != (tool.Traits{}) {
		t.Errorf("mixed traits = %+v, want zero (destructiveHint:false is not trusted)", tr)
	}
	if !strings.Contains(string(sp.InputSchema), `"text"`) {
		t.Errorf("schema = %s", sp.InputSchema)
	}

	tests := []struct {
		tool, input string
		isErr       bool
		check       func(*tool.Result) string
	}{
		{"mcp__srv__echo", `{"text":"hi"}`, false, func(r *tool.Result) string { return r.TextContent() }},
		{"mcp__srv__fail", `{}`, true, func(r *tool.Result) string { return r.TextContent() }},
		{"mcp__srv__weird_name_with_spaces", ``, false, func(r *tool.Result) string { return r.TextContent() }},
		{"mcp__srv__structured", `{}`, false, func(r *tool.Result) string {
			b, _ := json.Marshal(r.Structured)
			return string(b) + "|" + strings.Join(strings.Fields(r.TextContent()), "")
		}},
		{"mcp__srv__mixed", `{}`, false, func(r *tool.Result) string {
			var parts []string
			for _, c := range r.Content {
				parts = append(parts, string(c.Type)+":"+c.Text+c.URI+c.MIMEType+c.Title)
			}
			return strings.Join(parts, ",")
		}},
	}
	wants := []string{
		"echo: hi",
		"it broke",
		"weird ok weird.name/with spaces",
		`{"n":42}|{"n":42}`,
		"text:hello,image:image/png,audio:audio/wav,resource_link:file:///x.txttext/plainX file,resource:embeddedmem://atext/plain,resource:mem://bapplication/octet-stream",
	}
	for i, tc := range tests {
		t.Run(tc.tool, func(t *testing.T) {
			r, err := findTool(t, m, tc.tool).Call(ctx, &tool.Env{}, json.RawMessage(tc.input))
			if err != nil {
				t.Fatal(err)
			}
			if r.IsError != tc.isErr {
				t.Errorf("IsError = %v", r.IsError)
			}
			if got := tc.check(r); got != wants[i] {
				t.Errorf("got  %s\nwant %s", got, wants[i])
			}
		})
	}
	// Input the server rejects is an error result.
	if r, err := echo.Call(ctx, nil, json.RawMessage(`{"text":5}`)); err != nil || !r.IsError {
		t.Errorf("bad input: %+v %v, want an error result", r, err)
	}
}

func TestCancelSendsCancelled(t *testing.T) {
	mark := filepath.Join(t.TempDir(), "mark")
	m := startManager(t, []string{"srv"}, Options{Transport: inMemory(t, newTestServer(mark))})
	block := findTool(t, m, "mcp__srv__block")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := block.Call(ctx, nil, nil)
		done <- err
	}()
	waitMark(t, mark, "started")
	cancel()
	err := <-done
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	// The server's handler saw its context cancelled: only
	// notifications/cancelled does that.
	waitMark(t, mark, "cancelled")
	// The session is still usable.
	if r, err := findTool(t, m, "mcp__srv__echo").Call(context.Background(), nil, json.RawMessage(`{"text":"x"}`)); err != nil || r.TextContent() != "echo: x" {
		t.Fatalf("after cancel: %v %v", r, err)
	}
}

func TestCallTimeout(t *testing.T) {
	mark := filepath.Join(t.TempDir(), "mark")
	m := startManager(t, []string{"srv"}, Options{Transport: inMemory(t, newTestServer(mark)), CallTimeout: 200 * time.Millisecond})
	_, err := findTool(t, m, "mcp__srv__block").Call(context.Background(), nil, nil)
	if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "200ms") {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
	waitMark(t, mark, "cancelled")
}

func waitMark(t *testing.T, path, want string) {
	t.Helper()
	for i := 0; i < 1000; i++ {
		b, _ := os.ReadFile(path)
		if strings.Contains(string(b), want) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("mark %q never written", want)
}

func TestElicitation(t *testing.T) {
	for _, tc := range []struct {
		name   string
		elicit ElicitFunc
		want   string
	}{
		{"headless declines", nil, "decline <nil>"},
		{"callback", func(_ context.Context, server string, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": server + ":" + p.Message}}, nil
		}, "accept srv:Your name?"},
		{"through a channel", ElicitThrough(interaction.Funcs{Elicitation: func(_ context.Context, r *interaction.ElicitationRequest) (*interaction.ElicitationAnswer, error) {
			var schema map[string]any
			if err := json.Unmarshal(r.Schema, &schema); err != nil || schema["type"] != "object" {
				return nil, fmt.Errorf("schema %s: %v", r.Schema, err)
			}
			return &interaction.ElicitationAnswer{Action: interaction.ElicitAccept, Content: map[string]any{"name": r.Server + "/" + r.Message}}, nil
		}}), "accept srv/Your name?"},
		{"channel with nobody declines", ElicitThrough(interaction.Nobody), "decline <nil>"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := startManager(t, []string{"srv"}, Options{Transport: inMemory(t, newTestServer("")), Elicit: tc.elicit})
			r, err := findTool(t, m, "mcp__srv__ask").Call(context.Background(), nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if r.TextContent() != tc.want {
				t.Errorf("got %q want %q", r.TextContent(), tc.want)
			}
		})
	}
}

func TestToolListChanged(t *testing.T) {
	srv := newTestServer("")
	changed := make(chan string, 10)
	m := startManager(t, []string{"srv"}, Options{Transport: inMemory(t, srv), OnToolsChanged: func(s string) { changed <- s }})
	srv.AddTool(&mcp.Tool{Name: "added", Description: "New.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "new"}}}, nil
		})
	select {
	case s := <-changed:
		if s != "srv" {
			t.Fatalf("changed %q", s)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no OnToolsChanged")
	}
	r, err := findTool(t, m, "mcp__srv__added").Call(context.Background(), nil, nil)
	if err != nil || r.TextContent() != "new" {
		t.Fatalf("%v %v", r, err)
	}
	srv.RemoveTools("added")
	<-changed
	for _, tl := range m.Tools() {
		if tl.Spec().Name == "mcp__srv__added" {
			t.Fatal("removed tool still listed")
		}
	}
}

func TestResourcesTools(t *testing.T) {
	m := startManager(t, []string{"a", "b"}, Options{Transport: inMemory(t, newTestServer(""))})
	env := &tool.Env{Services: tool.Provide(&tool.Services{}, m.Resources()), ToolResultsDir: t.TempDir()}
	tools := map[string]tool.Tool{}
	for _, tl := range mcpres.Tools() {
		tools[tl.Spec().Name] = tl
	}
	ctx := context.Background()
	r, err := tools["ListMcpResources"].Call(ctx, env, json.RawMessage(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	list := r.Structured.([]mcpres.Resource)
	if len(list) != 4 || list[0].Server != "a" || list[2].Server != "b" {
		t.Fatalf("list = %+v", list)
	}
	r, err = tools["ListMcpResources"].Call(ctx, env, json.RawMessage(`{"server":"b"}`))
	if err != nil || len(r.Structured.([]mcpres.Resource)) != 2 {
		t.Fatalf("%v %v", r, err)
	}
	if _, err := tools["ListMcpResources"].Call(ctx, env, json.RawMessage(`{"server":"nope"}`)); !errors.Is(err, mcpres.ErrUnknownServer) {
		t.Fatalf("unknown server: %v", err)
	}
	r, err = tools["ReadMcpResource"].Call(ctx, env, json.RawMessage(`{"server":"a","uri":"mem://readme"}`))
	if err != nil || r.TextContent() != "read me" {
		t.Fatalf("%v %v", r, err)
	}
	r, err = tools["ReadMcpResource"].Call(ctx, env, json.RawMessage(`{"server":"a","uri":"mem://logo"}`))
	if err != nil || r.Content[0].Type != tool.TypeImage {
		t.Fatalf("%+v %v", r, err)
	}
	if _, err := tools["ReadMcpResource"].Call(ctx, env, json.RawMessage(`{"server":"a","uri":"mem://none"}`)); err == nil {
		t.Fatal("missing resource: no error")
	}
}

// stdioServer returns an Options.Transport starting the test binary as a
// stdio server, and a function returning the latest process.
func stdioServer(t *testing.T, mark string) (func(string, ServerConfig) (mcp.Transport, error), func() *exec.Cmd) {
	var mu sync.Mutex
	var last *exec.Cmd
	return func(string, ServerConfig) (mcp.Transport, error) {
			cmd := exec.Command(os.Args[0])
			// GORACE: the race-built server would sleep 1 s at exit.
			cmd.Env = append(os.Environ(), "GANTRY_MCPTOOL_SERVER=1", "GANTRY_MCPTOOL_MARK="+mark,
				"GORACE="+strings.TrimSpace("atexit_sleep_ms=0 "+os.Getenv("GORACE")))
			mu.Lock()
			last = cmd
			mu.Unlock()
			return &mcp.CommandTransport{Command: cmd, TerminateDuration: time.Second}, nil
		}, func() *exec.Cmd {
			mu.Lock()
			defer mu.Unlock()
			return last
		}
}

func TestServerCrashMidCall(t *testing.T) {
	mark := filepath.Join(t.TempDir(), "mark")
	transport, proc := stdioServer(t, mark)
	changed := make(chan string, 10)
	m := startManager(t, []string{"crashy"}, Options{Transport: transport, ReconnectDelay: 50 * time.Millisecond,
		MaxReconnects: 2, OnToolsChanged: func(s string) { changed <- s }})
	block := findTool(t, m, "mcp__crashy__block")
	done := make(chan error, 1)
	go func() {
		_, err := block.Call(context.Background(), nil, nil)
		done <- err
	}()
	waitMark(t, mark, "started")
	first := proc()
	first.Process.Kill()
	err := <-done
	if !errors.Is(err, ErrDisconnected) {
		t.Fatalf("in-flight call: %v, want ErrDisconnected", err)
	}
	// Reconnected: a new process, tools enabled again.
	deadline := time.Now().Add(20 * time.Second)
	for m.Servers()[0].State != StateConnected || proc() == first {
		if time.Now().After(deadline) {
			t.Fatalf("no reconnect: %+v", m.Servers())
		}
		time.Sleep(20 * time.Millisecond)
	}
	echo := findTool(t, m, "mcp__crashy__echo")
	if !tool.IsEnabled(context.Background(), echo, nil) {
		t.Fatal("tool disabled after reconnect")
	}
	if r, err := echo.Call(context.Background(), nil, json.RawMessage(`{"text":"back"}`)); err != nil || r.TextContent() != "echo: back" {
		t.Fatalf("%v %v", r, err)
	}
}

func TestReconnectBounded(t *testing.T) {
	mark := filepath.Join(t.TempDir(), "mark")
	transport, proc := stdioServer(t, mark)
	var mu sync.Mutex
	attempts := 0
	broken := false
	m := startManager(t, []string{"flaky"}, Options{
		ReconnectDelay: 10 * time.Millisecond, MaxReconnects: 2,
		Transport: func(n string, sc ServerConfig) (mcp.Transport, error) {
			mu.Lock()
			defer mu.Unlock()
			if broken {
				attempts++
				return &mcp.CommandTransport{Command: exec.Command("false")}, nil
			}
			return transport(n, sc)
		}})
	echo := findTool(t, m, "mcp__flaky__echo")
	mu.Lock()
	broken = true
	mu.Unlock()
	proc().Process.Kill()
	deadline := time.Now().Add(20 * time.Second)
	for m.Servers()[0].State != StateFailed {
		if time.Now().After(deadline) {
			t.Fatalf("never failed: %+v", m.Servers())
		}
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock()
	if attempts != 2 {
		t.Errorf("attempts = %d, want 2", attempts)
	}
	mu.Unlock()
	if tool.IsEnabled(context.Background(), echo, nil) {
		t.Error("tool of a failed server is enabled")
	}
	if _, err := echo.Call(context.Background(), nil, json.RawMessage(`{"text":"x"}`)); !errors.Is(err, ErrUnavailable) {
		t.Errorf("call: %v, want ErrUnavailable", err)
	}
}

func TestOtherServersUnaffected(t *testing.T) {
	srv := newTestServer("")
	mem := inMemory(t, srv)
	m, err := NewManager(&ConfigFile{Servers: map[string]ServerConfig{
		"good": {Command: "unused"},
		"bad":  {Command: "unused"},
	}}, &Options{ConnectTimeout: 2 * time.Second, Transport: func(n string, sc ServerConfig) (mcp.Transport, error) {
		if n == "bad" {
			return &mcp.CommandTransport{Command: exec.Command("sleep", "30"), TerminateDuration: 50 * time.Millisecond}, nil // never answers
		}
		return mem(n, sc)
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	err = m.Start(context.Background())
	if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), `"bad"`) {
		t.Fatalf("Start: %v", err)
	}
	st := m.Servers()
	if st[0].Name != "bad" || st[0].State != StateFailed || st[1].State != StateConnected {
		t.Fatalf("status: %+v", st)
	}
	if len(m.ServerTools("bad")) != 0 || len(m.ServerTools("good")) != 7 {
		t.Fatal("tool counts")
	}
}

func TestNewManagerEnvTimeouts(t *testing.T) {
	env := map[string]string{"MCP_TIMEOUT": "1500", "MCP_TOOL_TIMEOUT": "2500"}
	m, err := NewManager(nil, &Options{Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if m.opts.ConnectTimeout != 1500*time.Millisecond || m.opts.CallTimeout != 2500*time.Millisecond {
		t.Fatalf("%v %v", m.opts.ConnectTimeout, m.opts.CallTimeout)
	}
	env["MCP_TIMEOUT"] = "soon"
	if _, err := NewManager(nil, &Options{Getenv: func(k string) string { return env[k] }}); !errors.Is(err, ErrConfig) {
		t.Fatalf("bad MCP_TIMEOUT: %v", err)
	}
}

func TestToolName(t *testing.T) {
	long := strings.Repeat("x", 80)
	for _, tc := range []struct{ server, tool, want string }{
		{"fs", "read_file", "mcp__fs__read_file"},
		{"fs", "a.b/c d", "mcp__fs__a_b_c_d"},
	} {
		if got := ToolName(tc.server, tc.tool); got != tc.want {
			t.Errorf("ToolName(%q,%q) = %q", tc.server, tc.tool, got)
		}
	}
	a, b := ToolName("s", long+"1"), ToolName("s", long+"2")
	if a == b || len(a) != 64 || !tool.ValidName(a) {
		t.Errorf("long names: %q %q", a, b)
	}
	if s, n, ok := SplitName("mcp__fs__read_file"); !ok || s != "fs" || n != "read_file" {
		t.Errorf("SplitName: %q %q %v", s, n, ok)
	}
	if _, _, ok := SplitName("Read"); ok {
		t.Error("SplitName(Read) ok")
	}
}
