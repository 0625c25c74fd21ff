package crontool

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/tool/tooltest"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/gantry-dev/gantry/cron"
	"github.com/gantry-dev/gantry/runqueue"
	"github.com/gantry-dev/gantry/store"
	"github.com/gantry-dev/gantry/tool"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestSchemas checks the input shapes: names, types and required sets are
// the reference agent's.
func TestSchemas(t *testing.T) {
	type prop struct {
		Type string `json:"type"`
	}
	tests := []struct {
		tool     tool.Tool
		props    map[string]prop
		required []string
	}{
		{NewCreate(), map[string]prop{"cron": {"string"}, "prompt": {"string"}, "recurring": {"boolean"}, "durable": {"boolean"}}, []string{"cron", "prompt"}},
		{NewDelete(), map[string]prop{"id": {"string"}}, []string{"id"}},
		{NewList(), map[string]prop{}, nil},
	}
	for _, tt := range tests {
		var s struct {
			Properties map[string]prop `json:"properties"`
			Required   []string        `json:"required"`
		}
		if err := json.Unmarshal(tt.tool.Spec().InputSchema, &s); err != nil {
			t.Fatal(err)
		}
		if s.Properties == nil {
			s.Properties = map[string]prop{}
		}
		if d := cmp.Diff(tt.props, s.Properties); d != "" {
			t.Errorf("%s properties (-want +got):\n%s", tt.tool.Spec().Name, d)
		}
		if d := cmp.Diff(tt.required, slices.Sorted(slices.Values(s.Required))); d != "" {
			t.Errorf("%s required (-want +got):\n%s", tt.tool.Spec().Name, d)
		}
	}
}

func newEnv(t *testing.T, mode tool.Mode, durable bool) (*tool.Env, *cron.SessionJobs, *store.SQLite) {
	s := &tool.Services{}
	sess := cron.NewSessionJobs(nil)
	tool.Provide(s, sess)
	var st *store.SQLite
	if durable {
		var err error
		st, err = store.OpenSQLite(t.Context(), filepath.Join(t.TempDir(), "g.db"), store.SQLiteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		tool.Provide[store.CronJobs](s, st)
	}
	return &tool.Env{SessionID: "sess-1", WorkDir: t.TempDir(), Mode: mode, Services: s}, sess, st
}

func TestSessionJobs(t *testing.T) {
	env, sess, _ := newEnv(t, tool.ModeDefault, false)
	create, del, list := NewCreate(), NewDelete(), NewList()
	r := tooltest.Call(t, create, env, `{"cron":"*/5 * * * *","prompt":"check CI"}`)
	if r.IsError || !strings.Contains(r.TextContent(), "Recurring session-only job") {
		t.Fatal(r.TextContent())
	}
	j := r.Structured.(Job)
	if got := sess.List(); len(got) != 1 || got[0].CreatedBy != "sess-1" || got[0].Dir != env.WorkDir || !got[0].Recurring {
		t.Fatalf("session jobs %+v", got)
	}
	r = tooltest.Call(t, create, env, `{"cron":"0 9 * * *","prompt":"standup","recurring":false}`)
	if r.IsError || !strings.Contains(r.TextContent(), "One-shot") {
		t.Fatal(r.TextContent())
	}
	if txt := tooltest.Call(t, list, env, `{}`).TextContent(); !strings.Contains(txt, "check CI") || !strings.Contains(txt, "standup") {
		t.Fatal(txt)
	}
	for _, bad := range []string{`{"cron":"* * * *","prompt":"x"}`, `{"cron":"99 * * * *","prompt":"x"}`, `{"cron":"* * * * *","prompt":""}`} {
		if r := tooltest.Call(t, create, env, bad); !r.IsError {
			t.Errorf("%s accepted", bad)
		}
	}
	if r := tooltest.Call(t, del, env, `{"id":"`+j.ID+`"}`); r.IsError {
		t.Fatal(r.TextContent())
	}
	if r := tooltest.Call(t, del, env, `{"id":"`+j.ID+`"}`); !r.IsError {
		t.Fatal("deleted twice")
	}
	// Durable without a durable store: a clear error.
	if r := tooltest.Call(t, create, env, `{"cron":"0 9 * * *","prompt":"x","durable":true}`); !r.IsError || !strings.Contains(r.TextContent(), "durable store") {
		t.Fatal(r.TextContent())
	}
}

func TestDurableJobs(t *testing.T) {
	env, _, st := newEnv(t, tool.ModeAcceptEdits, true)
	create, del, list := NewCreate(), NewDelete(), NewList()
	in := json.RawMessage(`{"cron":"0 3 * * *","prompt":"nightly report","durable":true}`)
	// Creating a durable job is left to the rules (it asks by default); a
	// session-only one allows itself.
	if p := create.(tool.PermissionChecker).CheckPermission(context.Background(), env, in); p.Behavior != tool.Passthrough {
		t.Fatalf("durable create permission %v", p)
	}
	if p := create.(tool.PermissionChecker).CheckPermission(context.Background(), env, json.RawMessage(`{"cron":"0 3 * * *","prompt":"x"}`)); p.Behavior != tool.Allow {
		t.Fatalf("session create permission %v", p)
	}
	r := tooltest.Call(t, create, env, string(in))
	if r.IsError {
		t.Fatal(r.TextContent())
	}
	jobs, _ := st.ListCronJobs(t.Context())
	if len(jobs) != 1 || jobs[0].Prompt != "nightly report" || jobs[0].CreatedBy != "sess-1" {
		t.Fatalf("stored %+v", jobs)
	}
	// The job runs in the session's directory and mode, never wider.
	req, err := cron.Request(jobs[0], jobs[0].NextScheduled)
	if err != nil || req.Dir != env.WorkDir || req.Options.Mode != tool.ModeAcceptEdits || req.Origin.Kind != runqueue.OriginCron {
		t.Fatalf("request %+v %v", req, err)
	}
	if txt := tooltest.Call(t, list, env, `{}`).TextContent(); !strings.Contains(txt, "durable") {
		t.Fatal(txt)
	}
	if r := tooltest.Call(t, del, env, `{"id":"`+jobs[0].ID+`"}`); r.IsError || !strings.Contains(r.TextContent(), "durable") {
		t.Fatal(r.TextContent())
	}
	// bypassPermissions sessions cannot create durable jobs.
	env.Mode = tool.ModeBypassPermissions
	if r := tooltest.Call(t, create, env, string(in)); !r.IsError || !strings.Contains(r.TextContent(), "bypassPermissions") {
		t.Fatal(r.TextContent())
	}
}

// TestListSaysWhatItCannotSee: CronList without a scheduler and a store
// says scheduling is not available instead of "No scheduled jobs.", and
// with one of them says which jobs it did not look at.
func TestListSaysWhatItCannotSee(t *testing.T) {
	list := NewList()
	r := tooltest.Call(t, list, &tool.Env{Services: &tool.Services{}}, `{}`)
	if !r.IsError || !strings.Contains(r.TextContent(), "Scheduling is not available") {
		t.Errorf("nothing: %q", r.TextContent())
	}
	s := &tool.Services{}
	tool.Provide(s, cron.NewSessionJobs(nil))
	r = tooltest.Call(t, list, &tool.Env{Services: s}, `{}`)
	if r.IsError || r.TextContent() != "No scheduled jobs.\n(Durable jobs are not listed: this session has no durable store.)" {
		t.Errorf("session only: %q", r.TextContent())
	}
	st, err := store.OpenSQLite(t.Context(), filepath.Join(t.TempDir(), "g.db"), store.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s = &tool.Services{}
	tool.Provide[store.CronJobs](s, st)
	r = tooltest.Call(t, list, &tool.Env{Services: s}, `{}`)
	if r.IsError || !strings.Contains(r.TextContent(), "only durable jobs are listed") {
		t.Errorf("durable only: %q", r.TextContent())
	}
}
