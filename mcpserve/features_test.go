package mcpserve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gantry-dev/gantry/executor"
	"github.com/gantry-dev/gantry/tool"
)

// notes collects what a client receives.
type notes struct {
	mu       sync.Mutex
	progress []*mcp.ProgressNotificationParams
	logs     []*mcp.LoggingMessageParams
	updated  []string
}

func (n *notes) snapshot() (p []*mcp.ProgressNotificationParams, l []*mcp.LoggingMessageParams, u []string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.progress), slices.Clone(n.logs), slices.Clone(n.updated)
}

// waitFor polls cond until it holds (notifications are handled
// asynchronously by the client) or fails after 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

type amountData struct{ done, total float64 }

func (a amountData) ProgressAmount() (float64, float64) { return a.done, a.total }

type cdIn struct {
	Dir string `json:"dir"`
}

// featureTools exercise progress, the Client, and context modifiers.
func featureTools(release, waiting chan struct{}) []tool.Tool {
	ro := tool.ReadOnly()
	return []tool.Tool{
		tool.Must(tool.NewNoInput("Steps", "Reports three steps.", func(_ context.Context, env *tool.Env) (*tool.Result, error) {
			for i := range 3 {
				env.ReportProgress(fmt.Sprintf("step %d", i+1), nil)
			}
			return tool.TextResult("stepped"), nil
		}, ro)),
		tool.Must(tool.NewNoInput("Amounts", "Reports amounts, one going backwards.", func(_ context.Context, env *tool.Env) (*tool.Result, error) {
			for _, d := range []float64{10, 5, 20, 20, 40} {
				env.ReportProgress(fmt.Sprintf("%v of 40", d), amountData{d, 40})
			}
			return tool.TextResult("counted"), nil
		}, ro)),
		tool.Must(tool.NewNoInput("Logs", "Logs at debug and warning.", func(ctx context.Context, _ *tool.Env) (*tool.Result, error) {
			c, ok := ClientFrom(ctx)
			if !ok {
				return nil, errors.New("no client")
			}
			if err := c.Log(ctx, "debug", "Logs", "quiet"); err != nil {
				return nil, err
			}
			if err := c.Log(ctx, "warning", "Logs", "loud"); err != nil {
				return nil, err
			}
			return tool.TextResult("logged"), nil
		}, ro)),
		tool.Must(tool.NewNoInput("Sample", "Asks the client's model.", func(ctx context.Context, _ *tool.Env) (*tool.Result, error) {
			c, _ := ClientFrom(ctx)
			res, err := c.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 10,
				Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "2+2?"}}}})
			if err != nil {
				return nil, err
			}
			return tool.TextResult("model said " + res.Content.(*mcp.TextContent).Text), nil
		}, ro)),
		tool.Must(tool.NewNoInput("Ask", "Asks the user for a name.", func(ctx context.Context, _ *tool.Env) (*tool.Result, error) {
			c, _ := ClientFrom(ctx)
			res, err := c.Elicit(ctx, &mcp.ElicitParams{Message: "name?", RequestedSchema: map[string]any{
				"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}, "required": []string{"name"}}})
			if err != nil {
				return nil, err
			}
			return tool.TextResult(fmt.Sprintf("%s %v", res.Action, res.Content["name"])), nil
		}, ro)),
		tool.Must(tool.NewNoInput("Reconnect", "Closes its stream, then answers.", func(ctx context.Context, _ *tool.Env) (*tool.Result, error) {
			c, _ := ClientFrom(ctx)
			closed := c.CloseStream(5 * time.Millisecond)
			time.Sleep(50 * time.Millisecond)
			return tool.TextResult(fmt.Sprintf("closed=%v", closed)), nil
		}, ro)),
		tool.Must(tool.NewText("Cd", "Changes the session's directory.", func(_ context.Context, _ *tool.Env, in cdIn) (string, error) {
			return "", nil // the modifier is set by the wrapper below
		})),
		tool.Must(tool.NewNoInput("Pwd", "Prints the session's directory.", func(_ context.Context, env *tool.Env) (*tool.Result, error) {
			return tool.TextResult(env.WorkDir), nil
		}, ro)),
		tool.Must(tool.NewNoInput("Wait", "Waits for the test.", func(ctx context.Context, _ *tool.Env) (*tool.Result, error) {
			select {
			case waiting <- struct{}{}:
			default:
			}
			select {
			case <-release:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return tool.TextResult("waited"), nil
		}, ro)),
	}
}

// cdTool wraps Cd so that its result moves the session.
type cdTool struct{ tool.Tool }

func (c cdTool) Call(ctx context.Context, env *tool.Env, input json.RawMessage) (*tool.Result, error) {
	var in cdIn
	if err := json.Unmarshal(input, &in); err != nil {
		return nil, err
	}
	dir := in.Dir
	return &tool.Result{Content: []tool.Content{tool.Text("moved")},
		ContextModifier: func(e *tool.Env) { e.WorkDir = dir }}, nil
}

type featureServer struct {
	srv     *Server
	sess    *executor.SharedEnv
	release chan struct{}
	waiting chan struct{} // Wait sends on it when it starts
	reports chan tool.Progress
}

func newFeatureServer(t *testing.T, opts *Options) *featureServer {
	t.Helper()
	release, waiting := make(chan struct{}), make(chan struct{}, 1)
	tools := featureTools(release, waiting)
	for i, tl := range tools {
		if tl.Spec().Name == "Cd" {
			tools[i] = cdTool{tl}
		}
	}
	r, err := executor.NewMapResolver(tools...)
	if err != nil {
		t.Fatal(err)
	}
	reports := make(chan tool.Progress, 100)
	sess := executor.NewSharedEnv(&tool.Env{WorkDir: "/start", Mode: tool.ModeBypassPermissions,
		Progress: func(p tool.Progress) { reports <- p }})
	srv, err := New(tools, executor.New(r, executor.Options{}), sess, opts)
	if err != nil {
		t.Fatal(err)
	}
	return &featureServer{srv: srv, sess: sess, release: release, waiting: waiting, reports: reports}
}

func clientOptions(n *notes, sampling, elicitation bool) *mcp.ClientOptions {
	o := &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			n.mu.Lock()
			n.progress = append(n.progress, r.Params)
			n.mu.Unlock()
		},
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			n.mu.Lock()
			n.logs = append(n.logs, r.Params)
			n.mu.Unlock()
		},
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
			n.mu.Lock()
			n.updated = append(n.updated, r.Params.URI)
			n.mu.Unlock()
		},
	}
	if sampling {
		o.CreateMessageHandler = func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: "4"}}, nil
		}
	}
	if elicitation {
		o.ElicitationHandler = func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
		}
	}
	return o
}

// connectWith connects a client with opts over transport ("memory" or
// "http").
func connectWith(t *testing.T, s *Server, transport string, opts *mcp.ClientOptions) *mcp.ClientSession {
	return connectVersion(t, s, transport, "", opts)
}

// connectVersion is connectWith offering protocol version (""; the SDK's
// latest).
func connectVersion(t *testing.T, s *Server, transport, version string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, opts)
	sopts := &mcp.ClientSessionOptions{ProtocolVersion: version}
	if transport == "http" {
		hs := httptest.NewServer(s.Handler())
		cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: hs.URL}, sopts)
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
	ct, st := mcp.NewInMemoryTransports()
	ss, err := s.MCP().Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := c.Connect(context.Background(), ct, sopts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return cs
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args any, token any) *mcp.CallToolResult {
	t.Helper()
	p := &mcp.CallToolParams{Name: name, Arguments: args}
	if token != nil {
		p.SetProgressToken(token)
	}
	res, err := cs.CallTool(context.Background(), p)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func TestProgressForwarding(t *testing.T) {
	for _, transport := range []string{"memory", "http"} {
		t.Run(transport, func(t *testing.T) {
			fs := newFeatureServer(t, nil)
			n := &notes{}
			cs := connectWith(t, fs.srv, transport, clientOptions(n, false, false))

			// No token: nothing is sent, but the session's sink still hears.
			if res := call(t, cs, "Steps", nil, nil); text(res) != "stepped" {
				t.Fatalf("Steps: %q", text(res))
			}
			for i := range 3 {
				if p := <-fs.reports; p.Message != fmt.Sprintf("step %d", i+1) {
					t.Errorf("session sink got %q", p.Message)
				}
			}

			call(t, cs, "Steps", nil, "tok-steps")
			waitFor(t, "3 progress notifications", func() bool { p, _, _ := n.snapshot(); return len(p) == 3 })
			call(t, cs, "Amounts", nil, 7)
			waitFor(t, "6 progress notifications", func() bool { p, _, _ := n.snapshot(); return len(p) == 6 })
			time.Sleep(20 * time.Millisecond) // nothing more may come
			got, _, _ := n.snapshot()
			var lines []string
			for _, p := range got {
				lines = append(lines, fmt.Sprintf("%v %v/%v %s", p.ProgressToken, p.Progress, p.Total, p.Message))
			}
			want := []string{
				"tok-steps 1/0 step 1", "tok-steps 2/0 step 2", "tok-steps 3/0 step 3",
				// 5 goes backwards and the second 20 does not advance: dropped.
				"7 10/40 10 of 40", "7 20/40 20 of 40", "7 40/40 40 of 40",
			}
			if !slices.Equal(lines, want) {
				t.Errorf("progress:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

func TestClientFeatures(t *testing.T) {
	if _, ok := ClientFrom(context.Background()); ok {
		t.Fatal("ClientFrom outside a call")
	}
	for _, transport := range []string{"memory", "http"} {
		// 2025-11-25: the level is the session's (logging/setLevel);
		// 2026-07-28: each request carries its own (_meta, SEP-2575).
		for _, version := range []string{"2025-11-25", "2026-07-28"} {
			t.Run(transport+"-"+version, func(t *testing.T) {
				fs := newFeatureServer(t, nil)
				n := &notes{}
				cs := connectVersion(t, fs.srv, transport, version, clientOptions(n, true, true))
				// The HTTP handler negotiates 2025-11-25 down from newer.
				version := cs.InitializeResult().ProtocolVersion
				call(t, cs, "Logs", nil, nil) // no level yet: nothing is sent
				p := &mcp.CallToolParams{Name: "Logs"}
				if version < "2026-07-28" {
					if err := cs.SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
						t.Fatal(err)
					}
				} else {
					p.Meta = mcp.Meta{mcp.MetaKeyLogLevel: "info"}
				}
				if _, err := cs.CallTool(context.Background(), p); err != nil {
					t.Fatal(err)
				}
				waitFor(t, "a log message", func() bool { _, l, _ := n.snapshot(); return len(l) > 0 })
				time.Sleep(20 * time.Millisecond)
				_, logs, _ := n.snapshot()
				if len(logs) != 1 || logs[0].Level != "warning" || logs[0].Data != "loud" || logs[0].Logger != "Logs" {
					t.Errorf("logs = %+v", logs)
				}
				if version >= "2026-07-28" {
					// No requests to the client during a call (SEP-2322).
					for _, name := range []string{"Sample", "Ask"} {
						if res := call(t, cs, name, nil, nil); !res.IsError || !strings.Contains(text(res), "multi round-trip") {
							t.Errorf("%s on %s: %v %q", name, version, res.IsError, text(res))
						}
					}
					return
				}
				if res := call(t, cs, "Sample", nil, nil); res.IsError || text(res) != "model said 4" {
					t.Errorf("Sample: %q", text(res))
				}
				if res := call(t, cs, "Ask", nil, nil); res.IsError || text(res) != "accept Ada" {
					t.Errorf("Ask: %q", text(res))
				}

				// A client without the capabilities: clear error results.
				bare := connectVersion(t, fs.srv, transport, version, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
				for _, name := range []string{"Sample", "Ask"} {
					if res := call(t, bare, name, nil, nil); !res.IsError || !strings.Contains(text(res), "does not support") {
						t.Errorf("%s without capability: %v %q", name, res.IsError, text(res))
					}
				}
			})
		}
	}
}

func TestCloseStreamResumes(t *testing.T) {
	for _, tc := range []struct {
		transport string
		store     bool
		want      string
	}{
		{"http", true, "closed=true"},
		{"http", false, "closed=false"}, // the client could not resume
		{"memory", true, "closed=false"},
	} {
		t.Run(fmt.Sprintf("%s-store=%v", tc.transport, tc.store), func(t *testing.T) {
			var opts Options
			if tc.store {
				opts.EventStore = mcp.NewMemoryEventStore(nil)
			}
			fs := newFeatureServer(t, &opts)
			cs := connectWith(t, fs.srv, tc.transport, nil)
			// The response of a call whose stream was closed arrives after
			// the client reconnects with Last-Event-ID.
			if res := call(t, cs, "Reconnect", nil, nil); res.IsError || text(res) != tc.want {
				t.Fatalf("Reconnect: %q, want %q", text(res), tc.want)
			}
			if res := call(t, cs, "Pwd", nil, nil); text(res) != "/start" {
				t.Fatalf("after reconnect: %q", text(res))
			}
		})
	}
}

func TestContextModifierCarried(t *testing.T) {
	fs := newFeatureServer(t, nil)
	cs := connectWith(t, fs.srv, "memory", nil)
	// A call that started before the move and ends after it must not undo
	// the move: only what a call changed is carried back.
	done := make(chan string, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "Wait"})
		if err != nil {
			done <- err.Error()
			return
		}
		done <- text(res)
	}()
	select {
	case <-fs.waiting: // Wait runs: its call started before the move
	case err := <-done:
		t.Fatalf("Wait ended before it was released: %s", err)
	}
	if res := call(t, cs, "Cd", map[string]any{"dir": "/moved"}, nil); text(res) != "moved" {
		t.Fatalf("Cd: %q", text(res))
	}
	close(fs.release)
	if got := <-done; got != "waited" {
		t.Fatalf("Wait: %q", got)
	}
	if res := call(t, cs, "Pwd", nil, nil); text(res) != "/moved" {
		t.Errorf("Pwd after Cd = %q", text(res))
	}
	if env := fs.sess.Env(); env.WorkDir != "/moved" || env.Progress == nil {
		t.Errorf("session env: dir %q, progress sink kept %v", env.WorkDir, env.Progress != nil)
	}
}

// mapFiles is a FileStates whose dynamic type is not comparable.
type mapFiles map[string]tool.FileState

func (m mapFiles) Get(p string) (tool.FileState, bool) { s, ok := m[p]; return s, ok }
func (m mapFiles) Put(s tool.FileState)                { m[s.Path] = s }
func (m mapFiles) Delete(p string)                     { delete(m, p) }

func TestMergeEnv(t *testing.T) {
	svc := &tool.Services{}
	cache := tool.NewFileCache(1)
	before := &tool.Env{WorkDir: "/a", Mode: tool.ModeDefault, AdditionalDirs: []string{"/x"}, Files: mapFiles{}}
	for _, tc := range []struct {
		name   string
		change func(*tool.Env)
		check  func(*tool.Env) bool
	}{
		{"nothing", func(*tool.Env) {}, func(d *tool.Env) bool { return d.WorkDir == "/other" && d.Mode == tool.ModeAcceptEdits }},
		{"workdir", func(e *tool.Env) { e.WorkDir = "/b" }, func(d *tool.Env) bool { return d.WorkDir == "/b" && d.Mode == tool.ModeAcceptEdits }},
		{"mode", func(e *tool.Env) { e.Mode = tool.ModePlan }, func(d *tool.Env) bool { return d.Mode == tool.ModePlan && d.WorkDir == "/other" }},
		{"dirs", func(e *tool.Env) { e.AdditionalDirs = append(e.AdditionalDirs, "/y") },
			func(d *tool.Env) bool { return slices.Equal(d.AdditionalDirs, []string{"/x", "/y"}) }},
		{"services", func(e *tool.Env) { e.Services = svc }, func(d *tool.Env) bool { return d.Services == svc }},
		{"files", func(e *tool.Env) { e.Files = cache }, func(d *tool.Env) bool { return d.Files == tool.FileStates(cache) }},
		{"own fields", func(e *tool.Env) { e.ToolUseID = "x"; e.Progress = func(tool.Progress) {} },
			func(d *tool.Env) bool { return d.ToolUseID == "" && d.Progress == nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			after := before.Clone()
			tc.change(after)
			dst := &tool.Env{WorkDir: "/other", Mode: tool.ModeAcceptEdits, AdditionalDirs: []string{"/x"}, Files: before.Files}
			mergeEnv(dst, before, after)
			if !tc.check(dst) {
				t.Errorf("merged = %+v", dst)
			}
		})
	}
}

func TestResourcesPromptsCompletion(t *testing.T) {
	read := func(text string) mcp.ResourceHandler {
		return func(_ context.Context, r *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: r.Params.URI, MIMEType: "text/plain", Text: text + r.Params.URI}}}, nil
		}
	}
	opts := &Options{
		Resources: []Resource{{Resource: &mcp.Resource{URI: "notes://today", Name: "today"}, Read: read("note ")}},
		ResourceTemplates: []ResourceTemplate{{Template: &mcp.ResourceTemplate{URITemplate: "notes://day/{day}", Name: "day"},
			Read: read("day ")}},
		Prompts: []Prompt{{Prompt: &mcp.Prompt{Name: "greet", Description: "Greets.",
			Arguments: []*mcp.PromptArgument{{Name: "who", Required: true}}},
			Get: func(_ context.Context, r *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "hello " + r.Params.Arguments["who"]}}}}, nil
			}}},
		Subscriptions: true,
		Complete: func(_ context.Context, r *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{r.Params.Argument.Value + "rld"}}}, nil
		},
	}
	fs := newFeatureServer(t, opts)
	n := &notes{}
	cs := connectWith(t, fs.srv, "http", clientOptions(n, false, false))
	ctx := context.Background()

	lr, err := cs.ListResources(ctx, nil)
	if err != nil || len(lr.Resources) != 1 || lr.Resources[0].URI != "notes://today" {
		t.Fatalf("list: %v %+v", err, lr)
	}
	for uri, want := range map[string]string{"notes://today": "note notes://today", "notes://day/mon": "day notes://day/mon"} {
		rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil || rr.Contents[0].Text != want {
			t.Errorf("read %s: %v %+v", uri, err, rr)
		}
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "notes://nowhere"}); err == nil {
		t.Error("read of an unknown URI succeeded")
	}
	gp, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "greet", Arguments: map[string]string{"who": "Ada"}})
	if err != nil || gp.Messages[0].Content.(*mcp.TextContent).Text != "hello Ada" {
		t.Fatalf("prompt: %v %+v", err, gp)
	}
	if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "greet"}); err == nil {
		t.Error("prompt without its required argument succeeded")
	}
	cr, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "greet"},
		Argument: mcp.CompleteParamsArgument{Name: "who", Value: "wo"}})
	if err != nil || !slices.Equal(cr.Completion.Values, []string{"world"}) {
		t.Fatalf("complete: %v %+v", err, cr)
	}

	for _, uri := range []string{"notes://today", "notes://day/tue"} {
		if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
			t.Fatalf("subscribe %s: %v", uri, err)
		}
	}
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "other://x"}); err == nil {
		t.Error("subscribed to an unknown resource")
	}
	for _, uri := range []string{"notes://today", "notes://day/tue", "notes://day/wed"} {
		if err := fs.srv.ResourceUpdated(ctx, uri); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "2 updates", func() bool { _, _, u := n.snapshot(); return len(u) == 2 })
	if err := cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: "notes://today"}); err != nil {
		t.Fatal(err)
	}
	fs.srv.ResourceUpdated(ctx, "notes://today")
	fs.srv.ResourceUpdated(ctx, "notes://day/tue")
	waitFor(t, "3 updates", func() bool { _, _, u := n.snapshot(); return len(u) == 3 })
	time.Sleep(20 * time.Millisecond)
	if _, _, u := n.snapshot(); !slices.Equal(u, []string{"notes://today", "notes://day/tue", "notes://day/tue"}) {
		t.Errorf("updates = %v", u)
	}

	plain := newFeatureServer(t, nil)
	if err := plain.srv.ResourceUpdated(ctx, "notes://today"); err == nil {
		t.Error("ResourceUpdated without Subscriptions succeeded")
	}
}

func TestFeatureErrors(t *testing.T) {
	h := func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) { return nil, nil }
	p := func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) { return nil, nil }
	for _, tc := range []struct {
		name string
		opts Options
		want string
	}{
		{"no handler", Options{Resources: []Resource{{Resource: &mcp.Resource{URI: "a://b", Name: "b"}}}}, "Read handler"},
		{"relative", Options{Resources: []Resource{{Resource: &mcp.Resource{URI: "b", Name: "b"}, Read: h}}}, "absolute"},
		{"no name", Options{Resources: []Resource{{Resource: &mcp.Resource{URI: "a://b"}, Read: h}}}, "name"},
		{"dup", Options{Resources: []Resource{{Resource: &mcp.Resource{URI: "a://b", Name: "b"}, Read: h},
			{Resource: &mcp.Resource{URI: "a://b", Name: "c"}, Read: h}}}, "duplicate"},
		{"bad template", Options{ResourceTemplates: []ResourceTemplate{{Template: &mcp.ResourceTemplate{URITemplate: "a://{x", Name: "x"}, Read: h}}}, "template"},
		{"dup template", Options{ResourceTemplates: []ResourceTemplate{{Template: &mcp.ResourceTemplate{URITemplate: "a://{x}", Name: "x"}, Read: h},
			{Template: &mcp.ResourceTemplate{URITemplate: "a://{x}", Name: "y"}, Read: h}}}, "duplicate"},
		{"prompt", Options{Prompts: []Prompt{{Prompt: &mcp.Prompt{Name: "p"}}}}, "Get handler"},
		{"dup prompt", Options{Prompts: []Prompt{{Prompt: &mcp.Prompt{Name: "p"}, Get: p}, {Prompt: &mcp.Prompt{Name: "p"}, Get: p}}}, "duplicate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tools := testTools(nil)
			r, _ := executor.NewMapResolver(tools...)
			_, err := New(tools, executor.New(r, executor.Options{}), executor.NewSharedEnv(nil), &tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestToMCPResultAudio(t *testing.T) {
	r := ToMCPResult(&tool.Result{Content: []tool.Content{tool.Audio([]byte("RIFF"), "audio/wav")}}, false)
	a, ok := r.Content[0].(*mcp.AudioContent)
	if !ok || string(a.Data) != "RIFF" || a.MIMEType != "audio/wav" {
		t.Fatalf("content = %#v", r.Content[0])
	}
}

// TestServeHTTPClosesSessions checks that sessions of clients that never
// ended them do not outlive ServeHTTP (goleak would report them).
func TestServeHTTPClosesSessions(t *testing.T) {
	fs := newFeatureServer(t, nil)
	l, err := Listen("127.0.0.1:0", false)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- fs.srv.ServeHTTP(ctx, l) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: "http://" + l.Addr().String() + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res := call(t, cs, "Pwd", nil, nil); text(res) != "/start" {
		t.Fatalf("Pwd: %q", text(res))
	}
	cancel() // the client has not closed its session
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	cs.Close()
	for range fs.srv.mcp.Sessions() {
		t.Fatal("a session outlived ServeHTTP")
	}
}
