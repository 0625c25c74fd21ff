package file_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/gantry-dev/gantry/builtin/file"
	"github.com/gantry-dev/gantry/executor"
	"github.com/gantry-dev/gantry/hook"
	"github.com/gantry-dev/gantry/permission"
	"github.com/gantry-dev/gantry/tool"
)

// TestBackfillAbsolutePath: hooks see the absolute file_path of a relative
// one; the tool reads the same file.
func TestBackfillAbsolutePath(t *testing.T) {
	work := realDir(t)
	os.WriteFile(filepath.Join(work, "a.txt"), []byte("hello\n"), 0o644)
	res, err := executor.NewMapResolver(file.Tools(file.Options{})...)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := permission.NewEngine(permission.Options{WorkDir: work, Home: realDir(t)})
	if err != nil {
		t.Fatal(err)
	}
	var saw []string
	hooks := hook.RunnerFunc(func(ctx context.Context, in *hook.Input) (*hook.Output, error) {
		if in.Event == hook.PreToolUse {
			saw = append(saw, string(in.ToolInput))
		}
		return nil, nil
	})
	ex := executor.New(res, executor.Options{Decider: eng, Hooks: hooks})
	sess := executor.NewSharedEnv(&tool.Env{WorkDir: work, Files: tool.NewFileCache(0)})
	o, err := ex.RunOne(context.Background(), sess, executor.Call{ID: "r", Name: "Read", Input: []byte(`{"file_path":"a.txt"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if o.Result.IsError || string(o.Input) != `{"file_path":"a.txt"}` {
		t.Fatalf("%s: %s", o.Input, o.Result.TextContent())
	}
	want := `{"file_path":"` + filepath.Join(work, "a.txt") + `"}`
	if len(saw) != 1 || saw[0] != want || string(o.Observable) != want {
		t.Fatalf("hook saw %q, observable %s, want %s", saw, o.Observable, want)
	}
}
