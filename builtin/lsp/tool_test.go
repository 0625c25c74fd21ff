package lsp

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/tool"
)

// newEnv returns an environment whose services hold m.
func newEnv(dir string, m *Manager) *tool.Env {
	s := &tool.Services{}
	tool.Provide(s, m)
	return &tool.Env{WorkDir: dir, Services: s, Files: tool.NewFileCache(0)}
}

// run calls the LSP tool.
func run(t testing.TB, env *tool.Env, op, file string, line, char int) (string, bool) {
	t.Helper()
	in, _ := json.Marshal(Input{Operation: op, FilePath: file, Line: float64(line), Character: float64(char)})
	tl := New()
	if v, ok := tl.(tool.InputValidator); ok {
		if err := v.ValidateInput(context.Background(), env, in); err != nil {
			return err.Error(), true
		}
	}
	res, err := tl.Call(context.Background(), env, in)
	if err != nil {
		return err.Error(), true
	}
	return res.TextContent(), res.IsError
}

func TestNoManager(t *testing.T) {
	dir := t.TempDir()
	got, isErr := run(t, &tool.Env{WorkDir: dir}, OpHover, filepath.Join(dir, "a.go"), 1, 1)
	if !isErr || !strings.Contains(got, "language-server manager") {
		t.Fatalf("got %v %s", isErr, got)
	}
}

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	m := NewManager(Options{NoProjectConfig: true})
	defer m.Close()
	env := newEnv(dir, m)
	for _, tc := range []struct {
		in   Input
		want string
	}{
		{Input{Operation: OpHover, FilePath: "", Line: 1, Character: 1}, "filePath is empty"},
		{Input{Operation: OpHover, FilePath: "a\x00b", Line: 1, Character: 1}, "NUL"},
		{Input{Operation: OpHover, FilePath: "a.go", Line: 0, Character: 1}, "1-based"},
		{Input{Operation: OpHover, FilePath: "a.go", Line: 1.5, Character: 1}, "whole numbers"},
		{Input{Operation: OpHover, FilePath: "missing.go", Line: 1, Character: 1}, "no such file"},
		{Input{Operation: OpHover, FilePath: ".", Line: 1, Character: 1}, "is a directory"},
	} {
		got, isErr := run(t, env, tc.in.Operation, tc.in.FilePath, int(tc.in.Line), int(tc.in.Character))
		if tc.in.Line == 1.5 {
			raw, _ := json.Marshal(tc.in)
			err := New().(tool.InputValidator).ValidateInput(context.Background(), env, raw)
			got, isErr = err.Error(), err != nil
		}
		if !isErr || !strings.Contains(got, tc.want) {
			t.Errorf("%+v: got %v %q, want %q", tc.in, isErr, got, tc.want)
		}
	}
}

// The file is declared as read, so Read rules and the working directories
// apply to it in the permission layer.
func TestAccess(t *testing.T) {
	raw, _ := json.Marshal(Input{Operation: OpHover, FilePath: "../x.go", Line: 1, Character: 1})
	a, err := tool.AccessOf(New(), raw)
	if err != nil || len(a.Reads) != 1 || a.Reads[0] != "../x.go" || len(a.Writes) != 0 {
		t.Fatalf("access = %+v, %v", a, err)
	}
}
