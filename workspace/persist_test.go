package workspace_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/gantry-dev/gantry/builtin/team"
	"github.com/gantry-dev/gantry/builtin/todo"
	"github.com/gantry-dev/gantry/checkpoint"
	"github.com/gantry-dev/gantry/cron"
	"github.com/gantry-dev/gantry/llm/anthropic"
	"github.com/gantry-dev/gantry/llm/llmtest"
	"github.com/gantry-dev/gantry/store"
	"github.com/gantry-dev/gantry/tool"
	"github.com/gantry-dev/gantry/transcript"
	"github.com/gantry-dev/gantry/workspace"
)

// TestCLISession runs the package example's session (openCLISession)
// against the fake API server through the real Anthropic SDK, and checks
// that it keeps what `gantry -p` keeps: the todo list in the durable store
// $GANTRY_HOME/gantry.db, the transcript under $GANTRY_HOME/projects, a
// checkpoint of the prompt; and that a second session resumes the first.
func TestCLISession(t *testing.T) {
	home, dir := t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("GANTRY_HOME", filepath.Join(home, ".gantry"))
	gh := filepath.Join(home, ".gantry")
	srv := llmtest.NewServer(t)
	srv.Script(
		llmtest.ToolReply(llmtest.ToolCall{ID: "t1", Name: "TodoWrite", Input: `{"todos":[{"content":"Run the tests","status":"in_progress","activeForm":"Running the tests"}]}`}),
		llmtest.TextReply("done"),
	)
	ctx := context.Background()
	p := anthropic.New(anthropic.Options{BaseURL: srv.URL(), APIKey: "test-key"})
	ag, err := openCLISession(ctx, dir, p)
	if err != nil {
		t.Fatal(err)
	}
	res, err := ag.Prompt(ctx, "plan the work")
	if err != nil || res.IsError || res.Text != "done" {
		t.Fatalf("run: %v %+v", err, res)
	}
	id := ag.SessionID()
	if err := ag.Close(); err != nil {
		t.Fatal(err)
	}

	// The durable store holds the todo list.
	db, err := store.OpenSQLite(ctx, filepath.Join(gh, store.DefaultFile), store.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	todos, err := db.GetTodos(ctx, id)
	if err != nil || len(todos.Items) != 1 || todos.Items[0].Content != "Run the tests" {
		t.Fatalf("todos in gantry.db: %+v, %v", todos, err)
	}
	// The transcript.
	recs, err := transcript.ReadFile(transcript.NewStore(gh).Path(dir, id))
	if err != nil || len(recs) < 4 {
		t.Fatalf("transcript: %d records, %v", len(recs), err)
	}
	// A checkpoint before the prompt.
	cp, err := checkpoint.Open(checkpoint.Options{Dir: dir, Home: gh})
	if err != nil {
		t.Fatal(err)
	}
	infos, err := cp.List(id)
	if err != nil || len(infos) == 0 {
		t.Fatalf("checkpoints: %v, %v", infos, err)
	}

	// Resuming: the second session continues the first.
	srv.Script(llmtest.TextReply("still done"))
	ws, err := workspace.Open(ctx, workspace.Options{Dir: dir, Persist: true, Continue: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	if r := ws.Resume(); !r.Continue || ws.Transcripts() == nil || ws.Checkpoints() == nil || ws.Store() == nil {
		t.Fatalf("resume %+v, transcripts %v, checkpoints %v, store %v", r, ws.Transcripts(), ws.Checkpoints(), ws.Store())
	}
}

// TestReminders: the workspace's own reminders come first, in order, then
// the program's.
func TestReminders(t *testing.T) {
	mine := tool.Reminder(&todo.Reminder{StaleTurns: 3})
	ws, err := workspace.Open(context.Background(), workspace.Options{Dir: t.TempDir(), NoSettings: true, NoMCP: true, Reminders: []tool.Reminder{mine}})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	var got []string
	for _, r := range ws.Reminders() {
		got = append(got, reflect.TypeOf(r).String())
	}
	want := []string{reflect.TypeFor[team.Inbox]().String(), reflect.TypeFor[cron.Reminder]().String(), "workspace.serviceReminder", "*todo.Reminder", "*todo.Reminder"}
	if !reflect.DeepEqual(got, want) || ws.Reminders()[4] != mine {
		t.Fatalf("reminders %v, want %v", got, want)
	}
}

// TestNothingPersistedByDefault: without Persist nothing is written under
// the Gantry home, and resuming fails early.
func TestNothingPersistedByDefault(t *testing.T) {
	home := t.TempDir()
	getenv := func(k string) string { return map[string]string{"HOME": home}[k] }
	ws, err := workspace.Open(context.Background(), workspace.Options{Dir: t.TempDir(), Getenv: getenv, PolicyPath: "-", NoMCP: true})
	if err != nil {
		t.Fatal(err)
	}
	if ws.Transcripts() != nil || ws.Checkpoints() != nil {
		t.Fatal("a transcript or checkpoint store without Persist")
	}
	if _, ok := ws.Store().(*store.Memory); !ok {
		t.Fatalf("store %T, want *store.Memory", ws.Store())
	}
	ws.Close()
	if _, err := os.Stat(filepath.Join(home, ".gantry", store.DefaultFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("gantry.db: %v", err)
	}
	_, err = workspace.Open(context.Background(), workspace.Options{Dir: t.TempDir(), Getenv: getenv, PolicyPath: "-", NoMCP: true, ResumeID: "abc"})
	if err == nil {
		t.Fatal("resuming without transcripts opened")
	}
}
