package task

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gantry-dev/gantry/tool/tooltest"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/gantry-dev/gantry/store"
	"github.com/gantry-dev/gantry/tool"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestSchemas checks the input shapes against the reference agent's shapes (docs/tasks-and-teams.md).
func TestSchemas(t *testing.T) {
	type prop struct {
		Type  string         `json:"type"`
		Enum  []string       `json:"enum"`
		Items map[string]any `json:"items"`
	}
	str := prop{Type: "string"}
	strs := prop{Type: "array", Items: map[string]any{"type": "string"}}
	tests := []struct {
		tool     tool.Tool
		props    map[string]prop
		required []string
	}{
		{NewCreate(), map[string]prop{"subject": str, "description": str, "activeForm": str, "metadata": {Type: "object"}}, []string{"description", "subject"}},
		{NewGet(), map[string]prop{"taskId": str}, []string{"taskId"}},
		{NewList(), map[string]prop{}, nil},
		{NewUpdate(), map[string]prop{
			"taskId": str, "subject": str, "description": str, "activeForm": str,
			"status":    {Type: "string", Enum: []string{"pending", "in_progress", "completed", "deleted"}},
			"addBlocks": strs, "addBlockedBy": strs, "owner": str, "metadata": {Type: "object"},
		}, []string{"taskId"}},
	}
	for _, tt := range tests {
		t.Run(tt.tool.Spec().Name, func(t *testing.T) {
			var s struct {
				Type       string          `json:"type"`
				Properties map[string]prop `json:"properties"`
				Required   []string        `json:"required"`
			}
			if err := json.Unmarshal(tt.tool.Spec().InputSchema, &s); err != nil {
				t.Fatal(err)
			}
			if s.Properties == nil {
				s.Properties = map[string]prop{}
			}
			if d := cmp.Diff(tt.props, s.Properties); d != "" || s.Type != "object" {
				t.Errorf("properties (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tt.required, slices.Sorted(slices.Values(s.Required))); d != "" {
				t.Errorf("required (-want +got):\n%s", d)
			}
		})
	}
}

func envWith(st store.Store, sc *store.Scope) *tool.Env {
	s := &tool.Services{}
	tool.Provide[store.Tasks](s, st)
	if sc != nil {
		tool.Provide(s, *sc)
	}
	return &tool.Env{SessionID: "sess-1", Services: s}
}

func stores(t *testing.T) map[string]store.Store {
	sq, err := store.OpenSQLite(t.Context(), filepath.Join(t.TempDir(), "g.db"), store.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sq.Close() })
	return map[string]store.Store{"memory": new(store.Memory), "sqlite": sq}
}

func TestFlow(t *testing.T) {
	for name, st := range stores(t) {
		t.Run(name, func(t *testing.T) {
			env := envWith(st, &store.Scope{TaskList: "team/red", Name: "alice"})
			create, get, list, update := NewCreate(), NewGet(), NewList(), NewUpdate()
			for _, s := range []string{"Design", "Build", "Test"} {
				r := tooltest.Call(t, create, env, fmt.Sprintf(`{"subject":%q,"description":"do %s","activeForm":"Doing %s"}`, s, s, s))
				if r.IsError || !strings.Contains(r.TextContent(), "created") {
					t.Fatalf("create: %s", r.TextContent())
				}
			}
			tooltest.Call(t, update, env, `{"taskId":"2","addBlockedBy":["1"]}`)
			tooltest.Call(t, update, env, `{"taskId":"#3","addBlockedBy":["2"]}`)
			r := tooltest.Call(t, list, env, `{}`)
			res := r.Structured.(ListResult)
			if !slices.Equal(res.Claimable, []string{"1"}) || len(res.Tasks) != 3 {
				t.Fatalf("list: %+v", res)
			}
			if txt := r.TextContent(); !strings.Contains(txt, "#2 [pending] Build [blocked by #1]") || !strings.Contains(txt, "Claimable: #1") {
				t.Fatalf("list text:\n%s", txt)
			}
			// A cycle is refused with a clear message.
			r = tooltest.Call(t, update, env, `{"taskId":"1","addBlockedBy":["3"]}`)
			if !r.IsError || !strings.Contains(r.TextContent(), "cycle") {
				t.Fatalf("cycle: %s", r.TextContent())
			}
			// A blocked task cannot be started.
			r = tooltest.Call(t, update, env, `{"taskId":"2","status":"in_progress"}`)
			if !r.IsError || !strings.Contains(r.TextContent(), "blocked by #1") {
				t.Fatalf("blocked start: %s", r.TextContent())
			}
			// Starting claims for the caller.
			r = tooltest.Call(t, update, env, `{"taskId":"1","status":"in_progress"}`)
			if tk := r.Structured.(store.Task); r.IsError || tk.Owner != "alice" || tk.Status != store.TaskInProgress {
				t.Fatalf("claim: %s", r.TextContent())
			}
			bob := envWith(st, &store.Scope{TaskList: "team/red", Name: "bob"})
			tooltest.Call(t, update, bob, `{"taskId":"1","status":"pending"}`) // hand it back…
			tooltest.Call(t, update, env, `{"taskId":"1","status":"in_progress"}`)
			r = tooltest.Call(t, update, bob, `{"taskId":"1","status":"pending","owner":""}`)
			if r.IsError {
				t.Fatal(r.TextContent())
			}
			tooltest.Call(t, update, env, `{"taskId":"1","status":"in_progress"}`)
			tooltest.Call(t, update, bob, `{"taskId":"1","status":"pending"}`)
			r = tooltest.Call(t, update, bob, `{"taskId":"1","status":"in_progress"}`)
			if !r.IsError || !strings.Contains(r.TextContent(), "owned by alice") {
				t.Fatalf("claim of another's task: %s", r.TextContent())
			}
			r = tooltest.Call(t, update, env, `{"taskId":"1","status":"completed","metadata":{"pr":12}}`)
			if r.IsError {
				t.Fatal(r.TextContent())
			}
			r = tooltest.Call(t, get, env, `{"taskId":"1"}`)
			if txt := r.TextContent(); !strings.Contains(txt, "status: completed") || !strings.Contains(txt, `metadata: {"pr":12}`) || !strings.Contains(txt, "blocks: #2") {
				t.Fatalf("get:\n%s", txt)
			}
			if got := tooltest.Call(t, list, env, `{}`).Structured.(ListResult).Claimable; !slices.Equal(got, []string{"2"}) {
				t.Fatalf("claimable after completing #1: %v", got)
			}
			tooltest.Call(t, update, env, `{"taskId":"3","status":"deleted"}`)
			if got := tooltest.Call(t, list, env, `{}`).Structured.(ListResult).Tasks; len(got) != 2 {
				t.Fatalf("deleted task listed: %v", got)
			}
			for in, want := range map[string]string{
				`{"taskId":"9"}`:                  "not found",
				`{"taskId":"1","subject":""}`:     "subject is empty",
				`{"taskId":"1","status":"bogus"}`: "unknown status",
			} {
				if r := tooltest.Call(t, update, env, in); !r.IsError || !strings.Contains(r.TextContent(), want) {
					t.Errorf("%s: %s", in, r.TextContent())
				}
			}
			// Another list (no scope: the session's own) is separate.
			own := envWith(st, nil)
			if r := tooltest.Call(t, list, own, `{}`); r.TextContent() != "The task list is empty." {
				t.Fatalf("own list: %s", r.TextContent())
			}
		})
	}
}

func TestNoStore(t *testing.T) {
	for _, tl := range Tools() {
		r, err := tl.Call(context.Background(), &tool.Env{}, json.RawMessage(`{"taskId":"1","subject":"x","description":"y"}`))
		if err != nil || !r.IsError || !strings.Contains(r.TextContent(), "not available") {
			t.Errorf("%s without a store: %v %+v", tl.Spec().Name, err, r)
		}
	}
}

func TestAllowsItself(t *testing.T) {
	for _, tl := range []tool.Tool{NewCreate(), NewUpdate()} {
		pc := tl.(tool.PermissionChecker)
		if got := pc.CheckPermission(context.Background(), nil, json.RawMessage(`{"taskId":"1","subject":"s","description":"d"}`)); got.Behavior != tool.Allow {
			t.Errorf("%s: %+v", tl.Spec().Name, got)
		}
	}
	for _, tl := range []tool.Tool{NewGet(), NewList()} {
		if !tl.Spec().Traits.ReadOnly {
			t.Errorf("%s is not read-only", tl.Spec().Name)
		}
	}
}

// TestConcurrentClaimsThroughTool: 50 agents each try to start every one of
// 5 tasks through TaskUpdate; every task ends with exactly one owner, and
// every agent that was told it won is that owner.
func TestConcurrentClaimsThroughTool(t *testing.T) {
	for name, st := range stores(t) {
		t.Run(name, func(t *testing.T) {
			lead := envWith(st, &store.Scope{TaskList: "L", Name: "lead"})
			for i := range 5 {
				tooltest.Call(t, NewCreate(), lead, fmt.Sprintf(`{"subject":"t%d","description":""}`, i))
			}
			update := NewUpdate()
			var wins [6]atomic.Int32
			winner := make([]atomic.Value, 6)
			var wg sync.WaitGroup
			for a := range 50 {
				wg.Go(func() {
					me := fmt.Sprint("agent", a)
					env := envWith(st, &store.Scope{TaskList: "L", Name: me})
					for i := 1; i <= 5; i++ {
						r, err := update.Call(context.Background(), env, json.RawMessage(fmt.Sprintf(`{"taskId":"%d","status":"in_progress"}`, i)))
						if err != nil {
							t.Error(err)
							return
						}
						if !r.IsError {
							wins[i].Add(1)
							winner[i].Store(me)
						}
					}
				})
			}
			wg.Wait()
			for i := 1; i <= 5; i++ {
				tk, _ := st.GetTask(context.Background(), "L", fmt.Sprint(i))
				if wins[i].Load() != 1 || tk.Owner != winner[i].Load() {
					t.Fatalf("task %d: %d winners, owner %q, winner %v", i, wins[i].Load(), tk.Owner, winner[i].Load())
				}
			}
		})
	}
}
