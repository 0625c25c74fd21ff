package streamjson_test

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gantry-dev/gantry/agent"
	"github.com/gantry-dev/gantry/checkpoint"
	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/llm/anthropic"
	"github.com/gantry-dev/gantry/llm/llmtest"
	"github.com/gantry-dev/gantry/mcptool"
	"github.com/gantry-dev/gantry/streamjson"
	"github.com/gantry-dev/gantry/workspace"
)

// hostedServer is an in-process MCP server the test's "SDK program"
// hosts: it answers the mcp_message requests Gantry sends.
type hostedServer struct {
	mu   sync.Mutex
	conn mcp.Connection
	srv  *mcp.ServerSession
}

func newHostedServer(t *testing.T) *hostedServer {
	s := mcp.NewServer(&mcp.Implementation{Name: "calc", Version: "1"}, nil)
	type in struct{ A, B int }
	mcp.AddTool(s, &mcp.Tool{Name: "add", Description: "add two numbers"}, func(ctx context.Context, req *mcp.CallToolRequest, x in) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "sum=" + itoa(x.A+x.B)}}}, nil, nil
	})
	ct, st := mcp.NewInMemoryTransports()
	ss, err := s.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := ct.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	h := &hostedServer{conn: conn, srv: ss}
	t.Cleanup(func() { conn.Close(); ss.Close() })
	return h
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// answer relays one JSON-RPC message and returns the server's reply to a
// request (nil for a notification).
func (h *hostedServer) answer(t *testing.T, raw json.RawMessage) any {
	h.mu.Lock()
	defer h.mu.Unlock()
	msg, err := jsonrpc.DecodeMessage(raw)
	if err != nil {
		t.Errorf("mcp_message: %v", err)
		return nil
	}
	if err := h.conn.Write(context.Background(), msg); err != nil {
		t.Errorf("mcp_message write: %v", err)
		return nil
	}
	req, ok := msg.(*jsonrpc.Request)
	if !ok || !req.ID.IsValid() {
		return map[string]any{"jsonrpc": "2.0", "result": map[string]any{}, "id": 0}
	}
	for {
		m, err := h.conn.Read(context.Background())
		if err != nil {
			t.Errorf("mcp_message read: %v", err)
			return nil
		}
		if r, ok := m.(*jsonrpc.Response); ok && r.ID == req.ID {
			b, _ := jsonrpc.EncodeMessage(r)
			return json.RawMessage(b)
		}
	}
}

// program plays the SDK program: it answers Gantry's control requests and
// hands every other message to msgs.
type program struct {
	*peer
	msgs   chan map[string]any
	asked  chan string
	hooked chan string
}

func runProgram(t *testing.T, p *peer, mcpSrv *hostedServer) *program {
	pr := &program{peer: p, msgs: make(chan map[string]any, 1024), asked: make(chan string, 16), hooked: make(chan string, 16)}
	go func() {
		defer close(pr.msgs)
		for m := range p.lines {
			if m["type"] != "control_request" {
				pr.msgs <- m
				continue
			}
			req := m["request"].(map[string]any)
			var resp any
			switch req["subtype"] {
			case "can_use_tool":
				name := req["tool_name"].(string)
				// The program is asked with the exact command, whole.
				if in, _ := req["input"].(map[string]any); name == "Bash" && in["command"] != "curl -s https://example.invalid" {
					t.Errorf("can_use_tool input %v, want the whole command", req["input"])
				}
				pr.asked <- name
				if strings.HasPrefix(name, "mcp__") {
					resp = map[string]any{"behavior": "allow", "updatedInput": req["input"]}
				} else {
					resp = map[string]any{"behavior": "deny", "message": "no " + name + " here"}
				}
			case "hook_callback":
				in := req["input"].(map[string]any)
				pr.hooked <- in["hook_event_name"].(string) + ":" + in["tool_name"].(string)
				resp = map[string]any{"decision": "block", "reason": "the hook says no"}
			case "mcp_message":
				raw, _ := json.Marshal(req["message"])
				resp = map[string]any{"mcp_response": mcpSrv.answer(t, raw)}
			}
			p.send(map[string]any{"type": "control_response", "response": map[string]any{"subtype": "success", "request_id": m["request_id"], "response": resp}})
		}
	}()
	return pr
}

func (pr *program) next(keep func(map[string]any) bool) map[string]any {
	pr.t.Helper()
	for m := range pr.msgs {
		if keep == nil || keep(m) {
			return m
		}
	}
	pr.t.Fatal("output ended")
	return nil
}

func isResult(m map[string]any) bool { return m["type"] == "result" }

func controlResponse(id string) func(map[string]any) bool {
	return func(m map[string]any) bool {
		return m["type"] == "control_response" && m["response"].(map[string]any)["request_id"] == id
	}
}

// TestServe drives a whole session in process, the way an SDK program
// does: initialize with a hook and an SDK MCP server, turns that use them,
// can_use_tool, set_model, mcp_status, an interrupt, bad input.
func TestServe(t *testing.T) {
	srv := llmtest.NewServer(t)
	srv.Script(
		llmtest.ToolReply(llmtest.ToolCall{ID: "t1", Name: "mcp__calc__add", Input: `{"A":2,"B":3}`}),
		llmtest.TextReply("five"),
		llmtest.ToolReply(
			llmtest.ToolCall{ID: "t2", Name: "Bash", Input: `{"command":"curl -s https://example.invalid"}`},
			llmtest.ToolCall{ID: "t3", Name: "Write", Input: `{"file_path":"x.txt","content":"x"}`}),
		llmtest.TextReply("done"),
		llmtest.Reply{Content: []llm.Block{llm.Text("this never ends")}, ChunkSize: 4, StallAfter: 4},
		llmtest.TextReply("after the interrupt"),
	)
	dir, home := t.TempDir(), t.TempDir()
	p, in, out := newPeer(t)
	mcpSrv := newHostedServer(t)
	pr := runProgram(t, p, mcpSrv)
	getenv := func(k string) string {
		if k == "HOME" {
			return home
		}
		return ""
	}
	done := make(chan error, 1)
	go func() {
		done <- streamjson.Serve(context.Background(), streamjson.Options{
			In: in, Out: out, PermissionPrompt: true, Version: "test", APIKeySource: "ANTHROPIC_API_KEY", Getenv: getenv,
			Writer: streamjson.WriterOptions{Partial: true},
			Open: func(ctx context.Context, init *streamjson.Init) (*agent.Agent, *workspace.Workspace, error) {
				ws, err := workspace.Open(ctx, workspace.Options{Dir: dir, NoSettings: true, Getenv: getenv, UserHome: home, PolicyPath: "-",
					MCPServers: init.MCPServers, MCP: &mcptool.Options{Hosted: init.Hosted}, ExtraHooks: init.Hooks, Interaction: init.Interaction})
				if err != nil {
					return nil, nil, err
				}
				ag, err := agent.New(ctx, agent.Options{
					Provider: anthropic.New(anthropic.Options{BaseURL: srv.URL(), APIKey: "k"}), Model: "claude-sonnet-4-5",
					Workspace: ws, Closers: []io.Closer{ws}, NoEnvFacts: true, NoMemoryFiles: true, StreamEvents: true,
					AppendSystemPrompt: init.AppendSystemPrompt,
				})
				if err != nil {
					ws.Close()
					return nil, nil, err
				}
				return ag, ws, nil
			},
		})
	}()

	p.send(map[string]any{"type": "control_request", "request_id": "init", "request": map[string]any{
		"subtype": "initialize", "sdkMcpServers": []string{"calc"}, "appendSystemPrompt": "Be brief.",
		"hooks": map[string]any{
			"PreToolUse":    []any{map[string]any{"matcher": "Write", "hookCallbackIds": []string{"hook_0"}}},
			"PostToolBatch": []any{map[string]any{"hookCallbackIds": []string{"hook_1"}}},
		},
	}})
	user := func(content any) {
		p.send(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": content}, "parent_tool_use_id": nil, "session_id": ""})
	}
	user("add 2 and 3")
	initResp := pr.next(controlResponse("init"))["response"].(map[string]any)
	if initResp["subtype"] != "success" {
		t.Fatalf("initialize: %v", initResp)
	}
	r := initResp["response"].(map[string]any)
	if r["hooks_applied"] != true || r["output_style"] != "default" || len(r["agents"].([]any)) == 0 {
		t.Errorf("initialize response: %v", r)
	}
	sysInit := pr.next(func(m map[string]any) bool { return m["subtype"] == "init" })
	if s := sysInit["mcp_servers"].([]any); len(s) != 1 || s[0].(map[string]any)["status"] != "connected" {
		t.Errorf("mcp_servers = %v", s)
	}
	if !strings.Contains(strings.Join(toStrings(sysInit["tools"]), ","), "mcp__calc__add") {
		t.Errorf("tools lack the SDK server's tool: %v", sysInit["tools"])
	}
	res := pr.next(isResult)
	if res["subtype"] != "success" || res["result"] != "five" {
		t.Fatalf("turn one: %v", res)
	}
	if got := <-pr.asked; got != "mcp__calc__add" {
		t.Errorf("asked %s first", got)
	}
	if !strings.Contains(strings.Join(toolResults(srv), "\n"), "sum=5") {
		t.Errorf("the SDK server's result did not reach the model: %v", toolResults(srv))
	}
	if sys, _ := json.Marshal(srv.Requests()[0].System); !strings.Contains(string(sys), "Be brief.") {
		t.Errorf("appendSystemPrompt not in the system prompt")
	}

	// Turn two: can_use_tool denies Bash, the hook blocks Write.
	user([]any{map[string]any{"type": "text", "text": "fetch and write"}})
	res = pr.next(isResult)
	if res["subtype"] != "success" || res["result"] != "done" {
		t.Fatalf("turn two: %v", res)
	}
	if got := <-pr.asked; got != "Bash" {
		t.Errorf("asked %s, want Bash", got)
	}
	if got := <-pr.hooked; got != "PreToolUse:Write" {
		t.Errorf("hook call %s", got)
	}
	all := strings.Join(toolResults(srv), "\n")
	for _, want := range []string{"no Bash here", "the hook says no"} {
		if !strings.Contains(all, want) {
			t.Errorf("tool results lack %q: %s", want, all)
		}
	}
	denials := res["permission_denials"].([]any)
	if len(denials) != 2 {
		t.Errorf("permission_denials = %v", denials)
	}

	// Control requests between turns.
	p.send(`{"type":"control_request","request_id":"m","request":{"subtype":"set_model","model":"claude-opus-4-1"}}`)
	if r := pr.next(controlResponse("m"))["response"].(map[string]any); r["subtype"] != "success" {
		t.Errorf("set_model: %v", r)
	}
	p.send(`{"type":"control_request","request_id":"s","request":{"subtype":"mcp_status"}}`)
	st := pr.next(controlResponse("s"))["response"].(map[string]any)["response"].(map[string]any)["mcpServers"].([]any)
	if len(st) != 1 || st[0].(map[string]any)["name"] != "calc" || st[0].(map[string]any)["status"] != "connected" {
		t.Errorf("mcp_status: %v", st)
	}
	p.send(`{"type":"control_request","request_id":"b","request":{"subtype":"set_permission_mode","mode":"bypassPermissions"}}`)
	if r := pr.next(controlResponse("b"))["response"].(map[string]any); r["subtype"] != "error" || !strings.Contains(r["error"].(string), "allow-dangerously-skip-permissions") {
		t.Errorf("bypass without the flag: %v", r)
	}
	p.send(`{"type":"control_request","request_id":"pm","request":{"subtype":"set_permission_mode","mode":"plan"}}`)
	if r := pr.next(controlResponse("pm"))["response"].(map[string]any); r["subtype"] != "success" {
		t.Errorf("set_permission_mode plan: %v", r)
	}
	p.send(`{"type":"control_request","request_id":"u","request":{"subtype":"rewind_everything"}}`)
	if r := pr.next(controlResponse("u"))["response"].(map[string]any); r["subtype"] != "error" || !strings.Contains(r["error"].(string), "unsupported") {
		t.Errorf("unknown request: %v", r)
	}
	p.send(`{"type":"control_request","request_id":"i2","request":{"subtype":"initialize"}}`)
	if r := pr.next(controlResponse("i2"))["response"].(map[string]any); r["subtype"] != "error" {
		t.Errorf("second initialize: %v", r)
	}

	// Turn three is interrupted while the model streams.
	user("think forever")
	ini := pr.next(func(m map[string]any) bool { return m["subtype"] == "init" })
	if ini["permissionMode"] != "plan" || ini["model"] != "claude-opus-4-1" {
		t.Errorf("turn three init: mode %v model %v", ini["permissionMode"], ini["model"])
	}
	pr.next(ofType("stream_event"))
	p.send(`{"type":"control_request","request_id":"x","request":{"subtype":"interrupt"}}`)
	res = pr.next(isResult)
	if res["subtype"] != "error_during_execution" || res["gantry_subtype"] != "interrupted" || res["is_error"] != true {
		t.Errorf("interrupted turn: %v", res)
	}

	// Bad content gets an error result; the session goes on.
	user([]any{map[string]any{"type": "document", "source": map[string]any{}}})
	res = pr.next(isResult)
	if res["is_error"] != true || !strings.Contains(strings.Join(toStrings(res["errors"]), ""), "document") {
		t.Errorf("bad content: %v", res)
	}
	user("one more")
	if res = pr.next(isResult); res["result"] != "after the interrupt" {
		t.Errorf("after the interrupt: %v", res)
	}
	if got := srv.Requests()[len(srv.Requests())-1].Model; got != "claude-opus-4-1" {
		t.Errorf("model after set_model = %s", got)
	}
	p.inW.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func toStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

func toolResults(srv *llmtest.Server) []string {
	var out []string
	for _, r := range srv.Requests() {
		for _, b := range r.ToolResults() {
			for _, c := range b.Content {
				out = append(out, c.Text)
			}
		}
	}
	return out
}

// TestServeRewindFiles: rewind_files restores the files to the state
// before a user message (its uuid, as --replay-user-messages prints it)
// through Agent.RewindFiles; dry_run changes nothing; an unknown id and an
// agent without checkpoints answer canRewind false with the reason.
func TestServeRewindFiles(t *testing.T) {
	srv := llmtest.NewServer(t)
	dir, home := t.TempDir(), t.TempDir()
	srv.Script(
		llmtest.ToolReply(llmtest.ToolCall{ID: "w1", Name: "Write", Input: `{"file_path":"x.txt","content":"x"}`}),
		llmtest.TextReply("written"),
	)
	st, err := checkpoint.Open(checkpoint.Options{Dir: dir, Home: home})
	if err != nil {
		t.Fatal(err)
	}
	p, in, out := newPeer(t)
	pr := runProgram(t, p, newHostedServer(t))
	getenv := func(k string) string {
		if k == "HOME" {
			return home
		}
		return ""
	}
	done := make(chan error, 1)
	go func() {
		done <- streamjson.Serve(context.Background(), streamjson.Options{
			In: in, Out: out, Version: "test", Getenv: getenv, Writer: streamjson.WriterOptions{ReplayUser: true},
			Open: func(ctx context.Context, init *streamjson.Init) (*agent.Agent, *workspace.Workspace, error) {
				ws, err := workspace.Open(ctx, workspace.Options{Dir: dir, NoSettings: true, Getenv: getenv, UserHome: home, PolicyPath: "-", Mode: "acceptEdits", Checkpoints: st})
				if err != nil {
					return nil, nil, err
				}
				ag, err := agent.New(ctx, agent.Options{
					Provider: anthropic.New(anthropic.Options{BaseURL: srv.URL(), APIKey: "k"}), Model: "claude-sonnet-4-5",
					Workspace: ws, Closers: []io.Closer{ws}, NoEnvFacts: true, NoMemoryFiles: true,
				})
				if err != nil {
					ws.Close()
					return nil, nil, err
				}
				return ag, ws, nil
			},
		})
	}()
	p.send(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": "write x"}, "parent_tool_use_id": nil, "session_id": ""})
	prompt := pr.next(func(m map[string]any) bool {
		msg, _ := m["message"].(map[string]any)
		return m["type"] == "user" && msg["content"] != nil && m["uuid"] != nil && !strings.Contains(fmtJSON(msg), "tool_result")
	})
	id := prompt["uuid"].(string)
	if res := pr.next(isResult); res["subtype"] != "success" {
		t.Fatalf("turn: %v", res)
	}
	rewind := func(reqID string, req map[string]any) map[string]any {
		t.Helper()
		req["subtype"] = "rewind_files"
		p.send(map[string]any{"type": "control_request", "request_id": reqID, "request": req})
		r := pr.next(controlResponse(reqID))["response"].(map[string]any)
		if r["subtype"] != "success" {
			t.Fatalf("rewind_files: %v", r)
		}
		return r["response"].(map[string]any)
	}
	if prompt["isReplay"] != true {
		t.Errorf("the replayed prompt has no isReplay: %v", prompt)
	}
	if r := rewind("d", map[string]any{"user_message_id": id, "dry_run": true}); r["canRewind"] != true || fmtJSON(r["filesChanged"]) != fmtJSON([]string{filepath.Join(dir, "x.txt")}) ||
		r["insertions"] != float64(0) || r["deletions"] != float64(1) {
		t.Fatalf("dry run: %v", r)
	}
	if _, err := os.Stat(filepath.Join(dir, "x.txt")); err != nil {
		t.Fatal("the dry run changed the files")
	}
	if r := rewind("r", map[string]any{"user_message_id": id}); r["canRewind"] != true {
		t.Fatalf("rewind: %v", r)
	}
	if _, err := os.Stat(filepath.Join(dir, "x.txt")); !os.IsNotExist(err) {
		t.Fatalf("x.txt survived the rewind: %v", err)
	}
	if r := rewind("u", map[string]any{"user_message_id": "nope"}); r["canRewind"] != false || !strings.Contains(r["error"].(string), "not found") {
		t.Fatalf("unknown id: %v", r)
	}
	p.inW.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func fmtJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
