package triggertool_test

import (
	"context"
	"encoding/json"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/tool/tooltest"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/gantry-dev/gantry/builtin/triggertool"
	"github.com/gantry-dev/gantry/internal/trigger"
	"github.com/gantry-dev/gantry/runqueue"
	"github.com/gantry-dev/gantry/serve"
	"github.com/gantry-dev/gantry/serveapi"
	"github.com/gantry-dev/gantry/store"
	"github.com/gantry-dev/gantry/tool"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestSchema(t *testing.T) {
	var s struct {
		Properties map[string]struct {
			Type string   `json:"type"`
			Enum []string `json:"enum"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(triggertool.New(triggertool.Options{}).Spec().InputSchema, &s); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for k, p := range s.Properties {
		got[k] = p.Type
	}
	want := map[string]string{"action": "string", "trigger_id": "string", "session_id": "string", "cursor": "string", "body": "object"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("properties (-want +got):\n%s", d)
	}
	if !slices.Equal(s.Required, []string{"action"}) {
		t.Errorf("required %v", s.Required)
	}
	if e := s.Properties["action"].Enum; !slices.Equal(e, []string{"list", "get", "create", "update", "run", "list_runs", "get_run_log"}) {
		t.Errorf("action enum %v", e)
	}
}

func newEnv(t *testing.T, st *store.SQLite, mode tool.Mode) *tool.Env {
	s := &tool.Services{}
	tool.Provide[store.Triggers](s, st)
	tool.Provide[store.CronJobs](s, st)
	tool.Provide[store.Runs](s, st)
	return &tool.Env{SessionID: "sess", WorkDir: t.TempDir(), Mode: mode, Services: s}
}

func openStore(t *testing.T) *store.SQLite {
	st, err := store.OpenSQLite(t.Context(), filepath.Join(t.TempDir(), "g.db"), store.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// TestLocal: the session's store, no serve running: runs are queued as
// one-shot jobs for the next serve.
func TestLocal(t *testing.T) {
	st := openStore(t)
	env := newEnv(t, st, tool.ModeAcceptEdits)
	rt := triggertool.New(triggertool.Options{})
	r := tooltest.Call(t, rt, env, `{"action":"create","body":{"name":"lint","prompt":"run the linters and fix what they report","cron":"0 6 * * 1-5","permission_mode":"default"}}`)
	if r.IsError {
		t.Fatal(r.TextContent())
	}
	tr := r.Structured.(trigger.Trigger)
	if tr.Dir != env.WorkDir || tr.JobID == "" {
		t.Fatalf("trigger %+v", tr)
	}
	if txt := tooltest.Call(t, rt, env, `{"action":"list"}`).TextContent(); !strings.Contains(txt, "lint") || !strings.Contains(txt, "cron 0 6 * * 1-5") {
		t.Fatal(txt)
	}
	// Never wider than the session.
	for _, bad := range []string{
		`{"action":"create","body":{"name":"x","prompt":"p","permission_mode":"bypassPermissions"}}`,
		`{"action":"update","trigger_id":"lint","body":{"permission_mode":"bypassPermissions"}}`,
		`{"action":"create","body":{"name":"y","prompt":"p","dir":"/"}}`,
		`{"action":"create","body":{"name":"z","prompt":"p","allowed_tools":["Bash"]}}`,
		`{"action":"create","body":{"name":"w","prompt":"p","unknown":1}}`,
		`{"action":"get"}`,
		`{"action":"explode"}`,
	} {
		if r := tooltest.Call(t, rt, env, bad); !r.IsError {
			t.Errorf("%s accepted: %s", bad, r.TextContent())
		}
	}
	env.Mode = tool.ModePlan
	if r := tooltest.Call(t, rt, env, `{"action":"update","trigger_id":"lint","body":{"prompt":"p2"}}`); !r.IsError || !strings.Contains(r.TextContent(), "wider") {
		t.Fatalf("update from a plan-mode session: %s", r.TextContent())
	}
	env.Mode = tool.ModeAcceptEdits
	r = tooltest.Call(t, rt, env, `{"action":"run","trigger_id":"lint"}`)
	if r.IsError || !strings.Contains(r.TextContent(), "queued") {
		t.Fatal(r.TextContent())
	}
	jobs, _ := st.ListCronJobs(t.Context())
	if len(jobs) != 2 {
		t.Fatalf("jobs %+v", jobs)
	}
	// Permissions: reading allows itself, the rest is left to the rules.
	pc := rt.(tool.PermissionChecker)
	for in, want := range map[string]tool.Behavior{`{"action":"list"}`: tool.Allow, `{"action":"get_run_log","session_id":"r"}`: tool.Allow,
		`{"action":"run","trigger_id":"x"}`: tool.Passthrough, `{"action":"create","body":{}}`: tool.Passthrough} {
		if got := pc.CheckPermission(context.Background(), env, json.RawMessage(in)).Behavior; got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
}

// TestWithServe: run goes to the serve process; list_runs and get_run_log
// follow it, page by page.
func TestWithServe(t *testing.T) {
	st := openStore(t)
	runner := runqueue.RunnerFunc(func(ctx context.Context, req runqueue.Request, x runqueue.Exec) (*runqueue.Result, error) {
		for i := range 60 {
			x.Emit(map[string]any{"type": "assistant", "n": i})
		}
		x.Emit(map[string]any{"type": "result", "result": "done"})
		return &runqueue.Result{Subtype: "success", Text: "done"}, nil
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := serve.New(serve.Options{Store: st, Runner: runner, Listener: ln, Token: "tok", Tick: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- srv.Run(ctx) }()
	defer func() { cancel(); <-done }()
	client := &serveapi.Client{URL: "http://" + ln.Addr().String(), Token: "tok"}

	for name, o := range map[string]triggertool.Options{
		"local serve":  {Local: func() (*serveapi.Client, error) { return client, nil }},
		"remote serve": {Remote: func() (*serveapi.Client, error) { return client, nil }},
	} {
		t.Run(name, func(t *testing.T) {
			env := newEnv(t, st, tool.ModeDefault)
			rt := triggertool.New(o)
			tname := strings.ReplaceAll(name, " ", "-")
			if r := tooltest.Call(t, rt, env, `{"action":"create","body":{"name":"`+tname+`","prompt":"report"}}`); r.IsError {
				t.Fatal(r.TextContent())
			}
			r := tooltest.Call(t, rt, env, `{"action":"run","trigger_id":"`+tname+`"}`)
			if r.IsError {
				t.Fatal(r.TextContent())
			}
			run := r.Structured.(runqueue.Run)
			for range srv.Engine().Events(context.Background(), run.ID, 0) {
			}
			r = tooltest.Call(t, rt, env, `{"action":"list_runs","trigger_id":"`+tname+`"}`)
			if runs := r.Structured.(map[string]any)["runs"].([]runqueue.Run); len(runs) != 1 || runs[0].ID != run.ID {
				t.Fatalf("runs %s", r.TextContent())
			}
			cursor, pages, events := "", 0, 0
			for {
				r = tooltest.Call(t, rt, env, `{"action":"get_run_log","session_id":"`+run.ID+`","cursor":"`+cursor+`"}`)
				if r.IsError {
					t.Fatal(r.TextContent())
				}
				m := r.Structured.(map[string]any)
				events += len(m["events"].([]runqueue.Event))
				pages++
				if m["ended"].(bool) {
					break
				}
				cursor = m["next_cursor"].(string)
				if pages > 5 {
					t.Fatal("the log never ends")
				}
			}
			if events != 61 || pages != 2 {
				t.Fatalf("%d events in %d pages", events, pages)
			}
		})
	}
}
