package workspace

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/gantry-dev/gantry/builtin/shell"
	"github.com/gantry-dev/gantry/executor"
	"github.com/gantry-dev/gantry/hook"
	"github.com/gantry-dev/gantry/sandbox"
	"github.com/gantry-dev/gantry/tool"
)

func TestMain(m *testing.M) {
	sandbox.Main() // the test binary is the sandbox helper
	goleak.VerifyTestMain(m)
}

// fakeHome returns a Getenv whose HOME (and Gantry home) is a fresh
// directory, so the user's real settings never leak into a test.
func fakeHome(t *testing.T) func(string) string {
	home := t.TempDir()
	return func(k string) string {
		switch k {
		case "HOME":
			return home
		case "GANTRY_HOME":
			return filepath.Join(home, ".gantry")
		}
		return ""
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func names(ws *Workspace) []string {
	var out []string
	for _, s := range ws.Pool().Specs() {
		out = append(out, s.Name)
	}
	return out
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	writeFile(t, file, "x")
	for _, tc := range []struct {
		name string
		opts Options
		want string
	}{
		{"not a dir", Options{Dir: file}, "not a directory"},
		{"bad mode", Options{Dir: dir, Mode: "yolo"}, "unknown permission mode"},
		{"bad rule", Options{Dir: dir, Allow: []string{"Bash(unclosed"}}, "bad tool rule"},
		{"bad settings", Options{Dir: dir, Trusted: true}, "settings"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "bad settings" {
				writeFile(t, filepath.Join(dir, ".gantry", "settings.json"), "{not json")
				defer os.RemoveAll(filepath.Join(dir, ".gantry"))
			}
			tc.opts.Getenv, tc.opts.PolicyPath = fakeHome(t), "-"
			ws, err := Open(context.Background(), tc.opts)
			if err == nil {
				ws.Close()
				t.Fatalf("Open succeeded, want error containing %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q, want it to contain %q", err, tc.want)
			}
		})
	}
}

// The project's settings apply only in a trusted folder; the CLI rules and
// bare denies apply always.
func TestSettingsDriveTheSession(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, ".gantry", "settings.json"), `{"permissions":{"allow":["Bash(touch *)"]}}`)
	call := func(ws *Workspace) *executor.Outcome {
		t.Helper()
		o, err := ws.Executor().RunOne(ctx, ws.Session(), executor.Call{ID: "c1", Name: "Bash", Input: json.RawMessage(`{"command":"touch made && echo hi"}`)})
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	for _, tc := range []struct {
		name    string
		opts    Options
		allowed bool
	}{
		{"untrusted", Options{}, false},
		{"trusted", Options{Trusted: true}, true},
		{"cli rule", Options{Allow: []string{"Bash(touch *)"}}, true},
		{"no settings", Options{Trusted: true, NoSettings: true}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.Dir, tc.opts.Getenv, tc.opts.PolicyPath = dir, fakeHome(t), "-"
			ws, err := Open(ctx, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer ws.Close()
			o := call(ws)
			if got := !o.Result.IsError; got != tc.allowed {
				t.Fatalf("allowed = %v, want %v (%+v)", got, tc.allowed, o.Result.Content)
			}
			if tc.allowed && !strings.Contains(o.Result.Content[0].Text, "hi") {
				t.Fatalf("output %q", o.Result.Content[0].Text)
			}
			if ws.Trusted() != (tc.opts.Trusted && !tc.opts.NoSettings) {
				t.Fatalf("Trusted() = %v", ws.Trusted())
			}
		})
	}
}

func TestPoolDefaults(t *testing.T) {
	ws, err := Open(context.Background(), Options{Dir: t.TempDir(), Getenv: fakeHome(t), PolicyPath: "-", Deny: []string{"NotebookEdit"}})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	got := names(ws)
	for _, n := range []string{"Read", "Bash", "Edit", "TaskOutput"} {
		if !slices.Contains(got, n) {
			t.Errorf("pool %v lacks %s", got, n)
		}
	}
	for _, n := range []string{"NotebookEdit", "ListMcpResources", "ReadMcpResource"} {
		if slices.Contains(got, n) {
			t.Errorf("pool %v has %s", got, n)
		}
	}
	if ws.Mode() != tool.ModeDefault || ws.Engine() == nil || ws.Hooks() == nil || ws.MCP() != nil {
		t.Fatalf("mode %s engine %v hooks %v mcp %v", ws.Mode(), ws.Engine(), ws.Hooks(), ws.MCP())
	}
}

// Close kills the background tasks the session started and removes the
// empty temporary results directory.
func TestCloseStopsTasks(t *testing.T) {
	ctx := context.Background()
	ws, err := Open(ctx, Options{Dir: t.TempDir(), Getenv: fakeHome(t), PolicyPath: "-", Allow: []string{"Bash(sleep *)"}})
	if err != nil {
		t.Fatal(err)
	}
	o, err := ws.Executor().RunOne(ctx, ws.Session(), executor.Call{ID: "c1", Name: "Bash", Input: json.RawMessage(`{"command":"sleep 30","run_in_background":true}`)})
	if err != nil || o.Result.IsError {
		t.Fatalf("%v %+v", err, o.Result)
	}
	if l := ws.Tasks().List(); len(l) != 1 || l[0].Status != shell.TaskRunning {
		t.Fatalf("tasks %+v", l)
	}
	if err := ws.Close(); err != nil {
		t.Fatal(err)
	}
	if l := ws.Tasks().List(); l[0].Status == shell.TaskRunning {
		t.Fatalf("task still running: %+v", l)
	}
	if err := ws.Close(); err != nil {
		t.Fatal("second Close:", err)
	}
}

// A skill's allowed-tools narrow the pool until the next user prompt.
func TestSkillTurnEndsAtNextPrompt(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, ".gantry", "skills", "look", "SKILL.md"), "---\ndescription: Only look.\nallowed-tools: Read, Grep\n---\nLook, do not touch.\n")
	ws, err := Open(ctx, Options{Dir: dir, Getenv: fakeHome(t), PolicyPath: "-"})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	if !slices.Contains(names(ws), "Skill") || !slices.Contains(names(ws), "Bash") {
		t.Fatalf("pool = %v", names(ws))
	}
	o, err := ws.Executor().RunOne(ctx, ws.Session(), executor.Call{ID: "s1", Name: "Skill", Input: json.RawMessage(`{"skill":"look"}`)})
	if err != nil || o.Result.IsError {
		t.Fatalf("%v %+v", err, o.Result)
	}
	if got := names(ws); slices.Contains(got, "Bash") || !slices.Contains(got, "Read") {
		t.Fatalf("during the skill: %v", got)
	}
	if _, err := ws.Hooks().Run(ctx, &hook.Input{Event: hook.UserPromptSubmit, Prompt: "next"}); err != nil {
		t.Fatal(err)
	}
	if got := names(ws); !slices.Contains(got, "Bash") {
		t.Fatalf("after the next prompt: %v", got)
	}
}

// TestCompletionToolsUserReplacement: with completion tools on, a caller's
// tool named attempt_completion replaces the built-in one instead of
// failing the pool with a duplicate name.
func TestCompletionToolsUserReplacement(t *testing.T) {
	mine := tool.Must(tool.NewText("attempt_completion", "My completion.", func(context.Context, *tool.Env, struct{}) (string, error) { return "ok", nil }))
	ws, err := Open(context.Background(), Options{Dir: t.TempDir(), Getenv: func(string) string { return "" }, PolicyPath: "-",
		NoSettings: true, NoMCP: true, NoAgentFiles: true, CompletionTools: true, Tools: []tool.Tool{mine}})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	var descs []string
	for _, s := range ws.Pool().Specs() {
		if s.Name == "attempt_completion" || s.Name == "new_task" {
			descs = append(descs, s.Name+": "+s.Description)
		}
	}
	if len(descs) != 2 || descs[0] != "attempt_completion: My completion." {
		t.Fatalf("completion tools %q", descs)
	}
}
