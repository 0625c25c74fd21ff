package agent

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/builtin/file"
	"github.com/gantry-dev/gantry/builtin/lsp"
	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/llm/llmtest"
	"github.com/gantry-dev/gantry/tool"
	"github.com/gantry-dev/gantry/toolset"
)

// TestLateDiagnosticsNextTurn: the model writes a file whose language
// server is still starting (builtin/lsp's fake server, slow to start); the
// Write result does not wait for it, and the error the server reports
// afterwards reaches the model at its next turn, once.
func TestLateDiagnosticsNextTurn(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "fakels")
	if out, err := exec.Command("go", "build", "-o", bin, "../internal/lsp/testdata/fakels").CombinedOutput(); err != nil {
		t.Fatalf("build fakels: %v\n%s", err, out)
	}
	f := newFixture(t)
	src := filepath.Join(f.dir, "a.fake")
	os.WriteFile(filepath.Join(f.dir, "other.fake"), []byte("fine\n"), 0o644)
	servers := lsp.NewManager(lsp.Options{NoBuiltin: true, NoProjectConfig: true, Root: f.dir, Servers: map[string]lsp.ServerConfig{"fake": {
		Command: bin, ExtensionToLanguage: map[string]string{".fake": "fake"}, Env: map[string]string{"FAKELS_START_DELAY": "500ms"},
	}}})
	defer servers.Close()
	services := &tool.Services{}
	tool.Provide(services, servers)
	tool.Provide[file.WriteObserver](services, servers)
	tool.Provide[tool.Reminder](services, servers)
	// WaitLate stands for the time a model spends on its next steps: it
	// returns once the late diagnostics are there (without taking them).
	wait := tool.Must(tool.NewText("WaitLate", "Waits.", func(ctx context.Context, env *tool.Env, _ struct{}) (string, error) {
		for ctx.Err() == nil {
			if text, _, _ := servers.Remind(ctx, env); text != "" {
				return "waited", nil
			}
			time.Sleep(10 * time.Millisecond)
		}
		return "", ctx.Err()
	}, tool.ReadOnly()))
	f.srv.Script(
		llmtest.ToolReply(llmtest.ToolCall{ID: "toolu_1", Name: "Write", Input: `{"file_path":` + jsonQuote(src) + `,"content":"BROKEN\n"}`}),
		llmtest.ToolReply(llmtest.ToolCall{ID: "toolu_2", Name: "WaitLate", Input: `{}`}),
		llmtest.Reply{Content: []llm.Block{llm.Text("done")}},
	)
	a := f.agent(t, func(o *testOpts) {
		o.Services = services
		o.Mode = tool.ModeAcceptEdits
		o.Pool = toolset.Options{Tools: []tool.Tool{file.NewRead(file.Options{}), file.NewWrite(file.Options{}), wait}}
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	evs, res, err := collect(t, ctx, a, "write it")
	reqs := f.srv.Requests()
	if err != nil || res.IsError {
		for _, ev := range evs {
			t.Logf("%T %+v", ev, ev)
		}
		t.Fatal(err, res, servers.Running())
	}
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	afterWrite, afterWait := dump(reqs[1].Messages), dump(reqs[2].Messages)
	if strings.Contains(afterWrite, "fake: broken") {
		t.Fatalf("the Write result waited for the starting server:\n%s", afterWrite)
	}
	if strings.Count(afterWait, "a.fake:1:1: fake: broken") != 1 || !strings.Contains(afterWait, "reported late") {
		t.Fatalf("the next turn lacks the late diagnostics:\n%s", afterWait)
	}
}

func jsonQuote(s string) string {
	return `"` + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), `"`, `\"`) + `"`
}
