package permission

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/gantry-dev/gantry/builtin"
	"github.com/gantry-dev/gantry/builtin/web"

	"github.com/gantry-dev/gantry/tool"
)

// fakeTool is a minimal tool with a given name.
type fakeTool struct {
	spec tool.Spec
}

func (f *fakeTool) Spec() *tool.Spec { return &f.spec }
func (f *fakeTool) Call(context.Context, *tool.Env, json.RawMessage) (*tool.Result, error) {
	return &tool.Result{}, nil
}

// named returns the built-in tool called name (the permission layer knows
// tools by what they declare, never by name), else a bare tool.
func named(name string) tool.Tool {
	if t, ok := builtinTools()[name]; ok {
		return t
	}
	return &fakeTool{spec: tool.Spec{Name: name}}
}

var builtinTools = sync.OnceValue(func() map[string]tool.Tool {
	tools, err := builtin.Tools(builtin.Options{Web: web.Options{Search: noSearch{}}})
	if err != nil {
		panic(err)
	}
	m := make(map[string]tool.Tool)
	for _, t := range tools {
		for _, n := range t.Spec().Names() {
			m[n] = t
		}
	}
	return m
})

// world is a working directory and a home directory in t.TempDir().
type world struct {
	root, home, work string
}

func newWorld(t testing.TB) world {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w := world{root: root, home: filepath.Join(root, "home", "u"), work: filepath.Join(root, "home", "u", "project")}
	for _, d := range []string{w.work, filepath.Join(w.home, ".ssh"), filepath.Join(w.work, ".git", "hooks"), filepath.Join(w.work, "src")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

func (w world) engine(t testing.TB, allow, deny, askRules []string) *Engine {
	t.Helper()
	e, err := NewEngine(Options{
		Home:  w.home,
		Rules: []RuleSet{{Source: "project", Root: w.work, Allow: allow, Deny: deny, Ask: askRules}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

type call1 struct {
	tool   string
	input  any
	mode   tool.Mode
	traits tool.Traits
	hook   tool.Behavior
	check  tool.Behavior
}

func (w world) decide(t testing.TB, e *Engine, c call1) Decision {
	t.Helper()
	in, err := json.Marshal(c.input)
	if err != nil {
		t.Fatal(err)
	}
	mode := c.mode
	if mode == "" {
		mode = tool.ModeDefault
	}
	d, err := e.Decide(context.Background(), &Request{
		Tool: named(c.tool), Name: c.tool, Input: in,
		Env:    &tool.Env{WorkDir: w.work, Mode: mode},
		Traits: c.traits, HookVerdict: c.hook, ToolCheck: tool.PermissionResult{Behavior: c.check},
	})
	if err != nil {
		t.Fatalf("Decide: %v", err)
	}
	return d
}

func bash(cmd string) map[string]any { return map[string]any{"command": cmd} }
func file(p string) map[string]any   { return map[string]any{"file_path": p} }

// noSearch is a web search backend that finds nothing.
type noSearch struct{}

func (noSearch) Name() string { return "none" }
func (noSearch) Search(context.Context, web.SearchQuery) ([]web.SearchResult, error) {
	return nil, nil
}
