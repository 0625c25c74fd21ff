package todo

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/tool/tooltest"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/gantry-dev/gantry/store"
	"github.com/gantry-dev/gantry/tool"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestSchema(t *testing.T) {
	var s struct {
		Properties map[string]struct {
			Type  string `json:"type"`
			Items struct {
				Type       string `json:"type"`
				Properties map[string]struct {
					Type string   `json:"type"`
					Enum []string `json:"enum"`
				} `json:"properties"`
				Required []string `json:"required"`
			} `json:"items"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(New().Spec().InputSchema, &s); err != nil {
		t.Fatal(err)
	}
	todos := s.Properties["todos"]
	if len(s.Properties) != 1 || todos.Type != "array" || !slices.Equal(s.Required, []string{"todos"}) {
		t.Fatalf("schema %+v", s)
	}
	it := todos.Items
	if d := cmp.Diff([]string{"activeForm", "content", "status"}, slices.Sorted(slices.Values(it.Required))); d != "" || len(it.Properties) != 3 {
		t.Fatalf("item required: %s", d)
	}
	if st := it.Properties["status"]; !slices.Equal(st.Enum, []string{"pending", "in_progress", "completed"}) {
		t.Fatalf("status enum %v", st.Enum)
	}
}

func env(st store.Todos) *tool.Env {
	s := &tool.Services{}
	if st != nil {
		tool.Provide(s, st)
	}
	return &tool.Env{SessionID: "s1", Services: s}
}

func TestTodoWrite(t *testing.T) {
	st := new(store.Memory)
	e := env(st)
	r := tooltest.Call(t, New(), e, `{"todos":[{"content":"Read code","status":"completed","activeForm":"Reading code"},{"content":"Fix bug","status":"in_progress","activeForm":"Fixing bug"},{"content":"Test","status":"pending","activeForm":"Testing"}]}`)
	if r.IsError {
		t.Fatal(r.TextContent())
	}
	res := r.Structured.(Result)
	if len(res.OldTodos) != 0 || len(res.NewTodos) != 3 {
		t.Fatalf("result %+v", res)
	}
	want := "[x] Read code\n[>] Fixing bug\n[ ] Test"
	if got := tool.JoinText(r.DisplayContent()); got != want {
		t.Fatalf("display %q", got)
	}
	if Summary(res.NewTodos) != "1/3 done · Fixing bug" {
		t.Fatalf("summary %q", Summary(res.NewTodos))
	}
	l, _ := st.GetTodos(context.Background(), "s1")
	if len(l.Items) != 3 {
		t.Fatalf("stored %+v", l)
	}
	r = tooltest.Call(t, New(), e, `{"todos":[{"content":"Test","status":"in_progress","activeForm":"Testing"}]}`)
	if res := r.Structured.(Result); len(res.OldTodos) != 3 || len(res.NewTodos) != 1 {
		t.Fatalf("replace %+v", res)
	}
	for in, want := range map[string]string{
		`{"todos":[{"content":"a","status":"in_progress","activeForm":"A"},{"content":"b","status":"in_progress","activeForm":"B"}]}`: "at most one",
		`{"todos":[{"content":" ","status":"pending","activeForm":"A"}]}`:                                                             "content is empty",
	} {
		if r := tooltest.Call(t, New(), e, in); !r.IsError || !strings.Contains(r.TextContent(), want) {
			t.Errorf("%s: %s", in, r.TextContent())
		}
	}
	if l, _ := st.GetTodos(context.Background(), "s1"); len(l.Items) != 1 {
		t.Fatal("an invalid write changed the list")
	}
	if r := tooltest.Call(t, New(), env(nil), `{"todos":[]}`); !r.IsError || !strings.Contains(r.TextContent(), "not available") {
		t.Fatalf("no store: %s", r.TextContent())
	}
	if pc := New().(tool.PermissionChecker).CheckPermission(context.Background(), e, nil); pc.Behavior != tool.Allow {
		t.Fatalf("permission %+v", pc)
	}
}

func TestReminder(t *testing.T) {
	ctx := context.Background()
	st := new(store.Memory)
	e := env(st)
	rm := &Reminder{StaleTurns: 3}
	remind := func() string {
		t.Helper()
		text, ack, err := rm.Remind(ctx, e)
		if err != nil || ack != nil {
			t.Fatal(err, ack != nil)
		}
		return text
	}
	// No list: nothing, however long.
	for range 5 {
		if remind() != "" {
			t.Fatal("reminded of an empty list")
		}
	}
	tooltest.Call(t, New(), e, `{"todos":[{"content":"Fix","status":"in_progress","activeForm":"Fixing"}]}`)
	for i := range 3 {
		if remind() != "" {
			t.Fatalf("reminded at turn %d", i)
		}
	}
	text := remind()
	if !strings.Contains(text, "has not changed for 3 turns") || !strings.Contains(text, "[>] Fixing") {
		t.Fatalf("reminder %q", text)
	}
	// The count restarts after a reminder and after an update.
	if remind() != "" {
		t.Fatal("reminded twice in a row")
	}
	tooltest.Call(t, New(), e, `{"todos":[{"content":"Fix","status":"completed","activeForm":"Fixing"}]}`)
	for range 6 {
		if remind() != "" {
			t.Fatal("reminded of a finished list")
		}
	}
	// A lazily opened store that is not open yet is not opened by reminders.
	lazy := store.NewLazy(func(context.Context) (store.Store, error) { t.Fatal("opened"); return nil, nil })
	if text, _, err := (&Reminder{}).Remind(ctx, env(lazy)); text != "" || err != nil {
		t.Fatal(text, err)
	}
	if text, _, err := (&Reminder{}).Remind(ctx, &tool.Env{}); text != "" || err != nil {
		t.Fatal(text, err)
	}
}
