package mcpserve

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gantry-dev/gantry/builtin/ask"
	"github.com/gantry-dev/gantry/builtin/plan"
	"github.com/gantry-dev/gantry/executor"
	"github.com/gantry-dev/gantry/interaction"
	"github.com/gantry-dev/gantry/permission"
	"github.com/gantry-dev/gantry/tool"
)

type pathIn struct {
	Path string `json:"path"`
}

// newApprovalServer serves a tool that writes (so it asks in default mode)
// through an executor whose asks go to ElicitApproval. ran counts the
// calls that ran.
func newApprovalServer(t *testing.T, ran *int, mu *sync.Mutex) *Server {
	t.Helper()
	tools := []tool.Tool{
		tool.Must(tool.NewText("Touch", "Creates a file (pretend).", func(_ context.Context, _ *tool.Env, in pathIn) (string, error) {
			mu.Lock()
			*ran++
			mu.Unlock()
			return "touched " + in.Path, nil
		}, tool.DescribeFunc(func(in pathIn) string { return "touch " + in.Path }))),
	}
	r, err := executor.NewMapResolver(tools...)
	if err != nil {
		t.Fatal(err)
	}
	ex := executor.New(r, executor.Options{CanUseTool: permission.AskChannel(Elicitation(), nil, interaction.Who{})})
	s, err := New(tools, ex, executor.NewSharedEnv(&tool.Env{WorkDir: os.TempDir(), Mode: tool.ModeDefault}),
		&Options{Name: "approve-test", EventStore: mcp.NewMemoryEventStore(nil)})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestElicitApproval(t *testing.T) {
	type answer struct {
		res *mcp.ElicitResult
		err error
	}
	cases := []struct {
		name    string
		answer  *answer // nil: the client has no elicitation capability
		version string  // protocol version the client offers; default 2025-11-25
		runs    bool
		errText string // in the denied result
	}{
		{"accept allow", &answer{res: &mcp.ElicitResult{Action: "accept", Content: map[string]any{ApprovalField: ApprovalAllow}}}, "", true, ""},
		{"accept allow 2025-06-18", &answer{res: &mcp.ElicitResult{Action: "accept", Content: map[string]any{ApprovalField: ApprovalAllow}}}, "2025-06-18", true, ""},
		{"accept deny", &answer{res: &mcp.ElicitResult{Action: "accept", Content: map[string]any{ApprovalField: ApprovalDeny}}}, "", false, "the user denied this call"},
		{"accept without content", &answer{res: &mcp.ElicitResult{Action: "accept"}}, "", false, "the user denied this call"},
		{"decline", &answer{res: &mcp.ElicitResult{Action: "decline"}}, "", false, "declined to approve"},
		{"cancel", &answer{res: &mcp.ElicitResult{Action: "cancel"}}, "", false, "dismissed the approval request"},
		{"handler error", &answer{err: errors.New("no UI")}, "", false, "asking the user failed"},
		{"no elicitation", nil, "", false, "cannot ask its user (it does not support elicitation)"},
	}
	for _, transport := range []string{"memory", "http"} {
		for _, tc := range cases {
			t.Run(transport+"/"+tc.name, func(t *testing.T) {
				var (
					mu   sync.Mutex
					ran  int
					msgs []string
				)
				s := newApprovalServer(t, &ran, &mu)
				opts := &mcp.ClientOptions{}
				if tc.answer != nil {
					opts.ElicitationHandler = func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
						mu.Lock()
						msgs = append(msgs, r.Params.Message)
						mu.Unlock()
						if schema, _ := json.Marshal(r.Params.RequestedSchema); !strings.Contains(string(schema), `"enum":["allow","deny"]`) {
							t.Errorf("schema = %s", schema)
						}
						return tc.answer.res, tc.answer.err
					}
				}
				version := tc.version
				if version == "" {
					version = "2025-11-25"
				}
				cs := connectVersion(t, s, transport, version, opts)
				res := call(t, cs, "Touch", map[string]any{"path": "/tmp/x"}, nil)
				mu.Lock()
				defer mu.Unlock()
				if tc.runs {
					if res.IsError || text(res) != "touched /tmp/x" || ran != 1 {
						t.Fatalf("want the call to run: isError=%v %q ran=%d", res.IsError, text(res), ran)
					}
				} else {
					if !res.IsError || ran != 0 || !strings.Contains(text(res), tc.errText) || !strings.Contains(text(res), "denied") {
						t.Fatalf("want a denial mentioning %q: isError=%v %q ran=%d", tc.errText, res.IsError, text(res), ran)
					}
				}
				if tc.answer != nil {
					if len(msgs) != 1 {
						t.Fatalf("asked %d times, want 1", len(msgs))
					}
					if !strings.Contains(msgs[0], "Touch") || !strings.Contains(msgs[0], "Call: touch /tmp/x") {
						t.Errorf("message does not name the tool and the call:\n%s", msgs[0])
					}
				}
			})
		}
	}
}

// On protocol 2026-07-28 a server cannot ask during a call (SEP-2322): the
// call is denied without asking, saying why.
func TestElicitApprovalMRTR(t *testing.T) {
	var (
		mu  sync.Mutex
		ran int
	)
	s := newApprovalServer(t, &ran, &mu)
	asked := false
	cs := connectVersion(t, s, "memory", "2026-07-28", &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked = true
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{ApprovalField: ApprovalAllow}}, nil
	}})
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Skipf("negotiated %s", v)
	}
	res := call(t, cs, "Touch", map[string]any{"path": "a"}, nil)
	if !res.IsError || asked || ran != 0 || !strings.Contains(text(res), "2026-07-28") {
		t.Fatalf("isError=%v asked=%v ran=%d: %s", res.IsError, asked, ran, text(res))
	}
}

// A call that does not need approval is not asked about.
func TestElicitApprovalOnlyOnAsk(t *testing.T) {
	var (
		mu  sync.Mutex
		ran int
	)
	s := newApprovalServer(t, &ran, &mu)
	s.session.Update(func(e *tool.Env) { e.Mode = tool.ModeBypassPermissions })
	asked := false
	cs := connectWith(t, s, "memory", &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked = true
		return &mcp.ElicitResult{Action: "decline"}, nil
	}})
	res := call(t, cs, "Touch", map[string]any{"path": "a"}, nil)
	if res.IsError || asked || ran != 1 {
		t.Fatalf("isError=%v asked=%v ran=%d: %s", res.IsError, asked, ran, text(res))
	}
}

func TestElicitApprovalOutsideMCP(t *testing.T) {
	req := &permission.Request{Name: "Touch", Env: &tool.Env{}}
	d := permission.ResolveAsk(context.Background(), req, permission.Decision{Behavior: tool.Ask, Reason: "writes need approval"},
		permission.AskChannel(Elicitation(), nil, interaction.Who{}))
	if d.Behavior != tool.Deny || !strings.HasPrefix(d.Reason, "writes need approval; ") || !strings.Contains(d.Reason, "not made by an MCP client") {
		t.Fatalf("%+v", d)
	}
	// Questions and plans outside a served call have nobody to ask too.
	if _, err := interaction.AskQuestions(context.Background(), Elicitation(), &interaction.QuestionRequest{}); !errors.Is(err, interaction.ErrNobody) {
		t.Errorf("questions: %v", err)
	}
	if _, err := interaction.AskTrust(context.Background(), Elicitation(), &interaction.TrustRequest{}); !errors.Is(err, interaction.ErrNobody) {
		t.Errorf("trust: %v", err)
	}
}

func TestApprovalMessage(t *testing.T) {
	tl := tool.Must(tool.NewText("Run", "x", func(context.Context, *tool.Env, pathIn) (string, error) { return "", nil },
		tool.DescribeFunc(func(in pathIn) string { return in.Path })))
	long := strings.Repeat("é", 400)
	cases := []struct {
		name, path, reason, rule string
		want, not                []string
	}{
		{"plain", "ls -la", "Bash commands need approval", "Bash(ls:*)",
			[]string{"Allow Gantry to run Run?", "Call: ls -la\n", "Needs approval because: Bash commands need approval\n", "Rule: Bash(ls:*)"}, nil},
		{"escapes shown", "echo \x1b[2Jhi\u202e\nrm -rf /", "", "",
			[]string{`Call: echo \x1b[2Jhi\u{202E}\nrm -rf /` + "\n"}, []string{"\x1b", "\u202e", "Needs approval because", "Rule:"}},
		{"long cut", long, "", "", []string{"Call: " + strings.Repeat("é", maxApprovalLine-1) + "…\n"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in, _ := json.Marshal(pathIn{tc.path})
			m := ApprovalMessage(&interaction.PermissionRequest{ToolName: "Run", Input: in, Description: tool.Describe(tl, in), Reason: tc.reason, Rule: tc.rule})
			for _, w := range tc.want {
				if !strings.Contains(m, w) {
					t.Errorf("message lacks %q:\n%s", w, m)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(m, n) {
					t.Errorf("message has %q:\n%s", n, m)
				}
			}
		})
	}
}

// TestElicitationChannel: served AskUserQuestion and ExitPlanMode reach the
// calling client's user through the same channel as permission asks.
func TestElicitationChannel(t *testing.T) {
	tools := []tool.Tool{ask.New(), plan.NewExit()}
	r, err := executor.NewMapResolver(tools...)
	if err != nil {
		t.Fatal(err)
	}
	services := tool.Provide(&tool.Services{}, Elicitation())
	ex := executor.New(r, executor.Options{CanUseTool: permission.AskChannel(Elicitation(), nil, interaction.Who{})})
	s, err := New(tools, ex, executor.NewSharedEnv(&tool.Env{WorkDir: t.TempDir(), Mode: tool.ModePlan, Services: services}),
		&Options{Name: "channel-test", EventStore: mcp.NewMemoryEventStore(nil)})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var forms []*mcp.ElicitParams
	cs := connectVersion(t, s, "memory", "2025-11-25", &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		mu.Lock()
		defer mu.Unlock()
		forms = append(forms, r.Params)
		if strings.Contains(r.Params.Message, "presents a plan") {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": PlanKeepPlanning, "feedback": "smaller steps"}}, nil
		}
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"q1": "Postgres", "q2": "", "q2_other": "both, really"}}, nil
	}})
	res := call(t, cs, "AskUserQuestion", map[string]any{"questions": []any{
		map[string]any{"question": "Which db?", "header": "DB", "multiSelect": false, "options": []any{map[string]any{"label": "SQLite", "description": "e"}, map[string]any{"label": "Postgres", "description": "s"}}},
		map[string]any{"question": "Which checks?", "header": "Checks", "multiSelect": true, "options": []any{map[string]any{"label": "vet", "description": "v"}, map[string]any{"label": "race", "description": "r"}}},
	}}, nil)
	if res.IsError || !strings.Contains(text(res), `"Which db?" = "Postgres"`) || !strings.Contains(text(res), `"Which checks?" = "both, really" (in their own words)`) {
		t.Fatalf("questions: isError=%v %s", res.IsError, text(res))
	}
	res = call(t, cs, "ExitPlanMode", map[string]any{"plan": "1. do it"}, nil)
	if res.IsError || !strings.Contains(text(res), "smaller steps") || !strings.Contains(text(res), "stays in plan mode") {
		t.Fatalf("plan: isError=%v %s", res.IsError, text(res))
	}
	mu.Lock()
	defer mu.Unlock()
	if len(forms) != 2 || !strings.Contains(forms[1].Message, "1. do it") {
		t.Fatalf("forms %+v", forms)
	}
	schema, _ := json.Marshal(forms[0].RequestedSchema)
	if !strings.Contains(string(schema), `"enum":["SQLite","Postgres"]`) || !strings.Contains(string(schema), `"q2_other"`) {
		t.Errorf("question form %s", schema)
	}
}
