package workspace

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/gantry-dev/gantry/builtin"
	"github.com/gantry-dev/gantry/executor"
	"github.com/gantry-dev/gantry/internal/benchcpu"
)

// TestSharedBuiltins: workspaces opened with one Shared share the built-in
// tools while their settings' env is the same; a directory whose settings
// set another env gets its own tools, and its commands see its env.
func TestSharedBuiltins(t *testing.T) {
	ctx := context.Background()
	getenv := fakeHome(t)
	plain1, plain2, withEnv := t.TempDir(), t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(withEnv, ".gantry", "settings.json"), `{"env":{"SHARED_TEST_VAR":"from-settings"},"permissions":{"allow":["Bash(printenv *)"]}}`)
	var shared Shared
	open := func(dir string) *Workspace {
		t.Helper()
		ws, err := Open(ctx, Options{Dir: dir, Getenv: getenv, PolicyPath: "-", Trusted: true, NoMCP: true, NoAgentFiles: true, Shared: &shared})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ws.Close() })
		return ws
	}
	a, b, c := open(plain1), open(plain2), open(withEnv)
	if a.PoolOptions().Registry != b.PoolOptions().Registry {
		t.Error("two directories with the same settings env do not share the built-in tools")
	}
	if c.PoolOptions().Registry == a.PoolOptions().Registry {
		t.Fatal("a directory whose settings set an env shares the tools of one without")
	}
	if c2 := open(withEnv); c2.PoolOptions().Registry != c.PoolOptions().Registry {
		t.Error("the same directory and settings got new tools")
	}
	// A workspace that asks for some tools only gets a registry of its own.
	only, err := Open(ctx, Options{Dir: plain1, Getenv: getenv, PolicyPath: "-", Trusted: true, NoMCP: true, NoAgentFiles: true, Shared: &shared, Builtin: builtin.Options{Only: []string{"Grep"}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { only.Close() })
	if only.PoolOptions().Registry == a.PoolOptions().Registry || only.PoolOptions().Registry.Len() != 1 {
		t.Error("a workspace built with Builtin.Only shares the full registry")
	}
	if a2 := open(plain1); a2.PoolOptions().Registry != a.PoolOptions().Registry || a2.PoolOptions().Registry.Len() < 20 {
		t.Error("a full workspace after one with Builtin.Only got its registry")
	}
	o, err := c.Executor().RunOne(ctx, c.Session(), executor.Call{ID: "c1", Name: "Bash", Input: json.RawMessage(`{"command":"printenv SHARED_TEST_VAR"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if got := o.Result.TextContent(); !strings.Contains(got, "from-settings") {
		t.Fatalf("the settings' env did not reach the command: %q", got)
	}
	// The shared tools keep each session's state apart: a file read in
	// one workspace is not read in another.
	writeFile(t, filepath.Join(plain1, "f.txt"), "one")
	writeFile(t, filepath.Join(plain2, "f.txt"), "two")
	var wg sync.WaitGroup
	for _, ws := range []*Workspace{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			in, _ := json.Marshal(map[string]string{"file_path": filepath.Join(ws.Dir(), "f.txt")})
			o, err := ws.Executor().RunOne(ctx, ws.Session(), executor.Call{ID: "r", Name: "Read", Input: in})
			if err != nil {
				t.Error(err)
				return
			}
			want := map[string]string{plain1: "one", plain2: "two"}[ws.Dir()]
			if got := o.Result.TextContent(); !strings.Contains(got, want) {
				t.Errorf("%s: read %q", ws.Dir(), got)
			}
		}()
	}
	wg.Wait()
	if _, ok := a.Session().Env().Files.Get(filepath.Join(plain2, "f.txt")); ok {
		t.Error("b's read is in a's file cache")
	}
}

// BenchmarkOpen opens and closes a workspace without settings files or MCP
// servers, as `gantry serve` does per run: "fresh" builds the built-in
// tools each time, "shared" takes them from a [Shared].
func BenchmarkOpen(b *testing.B) {
	home := b.TempDir()
	getenv := func(k string) string {
		if k == "HOME" {
			return home
		}
		return ""
	}
	dir := b.TempDir()
	for _, c := range []struct {
		name   string
		shared *Shared
	}{{"fresh", nil}, {"shared", new(Shared)}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			defer benchcpu.Start(b)()
			for b.Loop() {
				ws, err := Open(context.Background(), Options{Dir: dir, Getenv: getenv, PolicyPath: "-", NoSettings: true, NoMCP: true, NoAgentFiles: true, Shared: c.shared})
				if err != nil {
					b.Fatal(err)
				}
				if len(ws.Pool().Specs()) == 0 {
					b.Fatal("no tools")
				}
				ws.Close()
			}
		})
	}
}
