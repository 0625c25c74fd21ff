package lsp

import (
	"context"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/builtin/file"
	"github.com/gantry-dev/gantry/tool"
)

// TestGopls runs every operation against a real gopls on the fixture
// module (two packages: main calls shapes.Total through the Shape
// interface, which Square and Circle implement).
func TestGopls(t *testing.T) {
	gopls(t)
	dir := fixture(t)
	m := NewManager(Options{NoProjectConfig: true})
	defer m.Close()
	env := newEnv(dir, m)
	mainGo := filepath.Join(dir, "main.go")
	shapesGo := filepath.Join(dir, "shapes", "shapes.go")

	cases := []struct {
		name      string
		op        string
		file      string
		line      int
		at        string // the text whose first character is the position
		want      []string
		wantNot   []string
		wantError bool
	}{
		{name: "definition across packages", op: OpDefinition, file: mainGo, line: 14, at: "Total",
			want: []string{"shapes/shapes.go:23:6: func Total(shapes ...Shape) float64 {"}},
		{name: "references", op: OpReferences, file: shapesGo, line: 23, at: "Total",
			want: []string{"main.go:14:", "shapes.Total(s)", "shapes/shapes.go:23:6:"}},
		{name: "hover", op: OpHover, file: mainGo, line: 14, at: "Total",
			want: []string{"func shapes.Total(shapes ...shapes.Shape) float64", "Total sums the areas of shapes."}},
		{name: "implementations of an interface", op: OpImplementation, file: shapesGo, line: 6, at: "Shape",
			want: []string{"shapes/shapes.go:11:6: type Square struct{ Side float64 }", "shapes/shapes.go:17:6: type Circle struct{ R float64 }"}},
		{name: "prepare call hierarchy", op: OpPrepareCalls, file: mainGo, line: 13, at: "describe",
			want: []string{"main.go:13:6: Function describe"}},
		{name: "incoming calls", op: OpIncomingCalls, file: shapesGo, line: 23, at: "Total",
			want: []string{"main.go:14:", "in describe: return fmt.Sprintf"}},
		{name: "outgoing calls", op: OpOutgoingCalls, file: mainGo, line: 13, at: "describe",
			want: []string{"shapes/shapes.go:23:6: Function Total", "Sprintf"}},
		{name: "workspace symbols", op: OpWorkspaceSymbol, file: mainGo, line: 10, at: "Square",
			want: []string{`matching "Square"`, "shapes/shapes.go:11:6: Struct Square"}},
		{name: "document symbols", op: OpDocumentSymbol, file: shapesGo, line: 1, at: "",
			want: []string{"Symbols in shapes/shapes.go", "Interface Shape", "Struct Square", "Function Total"}},
		{name: "nothing at a blank position", op: OpDefinition, file: mainGo, line: 12, at: "",
			want: []string{"No definition found at main.go:12:1."}},
		{name: "line past the end", op: OpHover, file: mainGo, line: 99, at: "",
			want: []string{"line 99 is outside main.go"}, wantError: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := 1
			if tc.at != "" {
				c = col(t, tc.file, tc.line, tc.at)
			}
			got, isErr := run(t, env, tc.op, tc.file, tc.line, c)
			if isErr != tc.wantError {
				t.Fatalf("error = %v, want %v:\n%s", isErr, tc.wantError, got)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("result lacks %q:\n%s", w, got)
				}
			}
			if strings.Contains(got, dir) {
				t.Errorf("result shows absolute paths, want them relative to the project:\n%s", got)
			}
		})
	}
}

// TestGoplsDiagnosticsAfterEdit edits through the real Edit tool with the
// manager as the session's WriteObserver: an edit that breaks the build
// reports the new errors, in the edited file and in a file depending on it.
func TestGoplsDiagnosticsAfterEdit(t *testing.T) {
	gopls(t)
	dir := fixture(t)
	m := NewManager(Options{NoProjectConfig: true, Root: dir, Prestart: true, DiagnosticsWait: 20 * time.Second, DiagnosticsSettle: 2 * time.Second})
	defer m.Close()
	// Results wait only for a warm server: let it start.
	for deadline := time.Now().Add(2 * time.Minute); len(m.Running()) == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("gopls did not start")
		}
	}
	env := newEnv(dir, m)
	tool.Provide[file.WriteObserver](env.Services, m)
	read, edit := file.NewRead(file.Options{}), file.NewEdit(file.Options{})
	ctx := context.Background()
	do := func(tl tool.Tool, in any) string {
		t.Helper()
		raw, _ := json.Marshal(in)
		res, err := tl.Call(ctx, env, raw)
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %s", tl.Spec().Name, err, res.TextContent())
		}
		return res.TextContent()
	}
	mainGo := filepath.Join(dir, "main.go")
	shapesGo := filepath.Join(dir, "shapes", "shapes.go")

	// A clean edit reports nothing.
	do(read, map[string]any{"file_path": mainGo})
	got := do(edit, map[string]any{"file_path": mainGo, "old_string": `"%.1f"`, "new_string": `"%.2f"`})
	if strings.Contains(got, "language server") {
		t.Fatalf("a clean edit reported errors:\n%s", got)
	}
	// A type error in the edited file.
	got = do(edit, map[string]any{"file_path": mainGo, "old_string": "shapes.Total(s)", "new_string": "shapes.Total(s, 1)"})
	if !strings.Contains(got, "The language server (gopls) reports 1 new error after this change:") ||
		!regexp.MustCompile(`main\.go:14:\d+: .*1`).MatchString(got) {
		t.Fatalf("breaking edit result lacks the new error:\n%s", got)
	}
	// Fixing it reports nothing again.
	got = do(edit, map[string]any{"file_path": mainGo, "old_string": "shapes.Total(s, 1)", "new_string": "shapes.Total(s)"})
	if strings.Contains(got, "new error") {
		t.Fatalf("fixing edit reported errors:\n%s", got)
	}
	// Renaming Total in package shapes breaks its caller in main.go.
	do(read, map[string]any{"file_path": shapesGo})
	got = do(edit, map[string]any{"file_path": shapesGo, "old_string": "func Total(", "new_string": "func Sum("})
	if !strings.Contains(got, "main.go:14:") || !strings.Contains(got, "Total") {
		t.Fatalf("renaming edit does not report the broken caller:\n%s", got)
	}
}

// TestGoplsCrashRestart kills gopls mid-session: the next call restarts
// it and answers.
func TestGoplsCrashRestart(t *testing.T) {
	gopls(t)
	dir := fixture(t)
	m := NewManager(Options{NoProjectConfig: true})
	defer m.Close()
	env := newEnv(dir, m)
	mainGo := filepath.Join(dir, "main.go")
	c := col(t, mainGo, 14, "Total")
	if got, isErr := run(t, env, OpDefinition, mainGo, 14, c); isErr {
		t.Fatal(got)
	}
	running := m.Running()
	if len(running) != 1 {
		t.Fatalf("running = %v", running)
	}
	f := strings.Fields(running[0])
	pid, _ := strconv.Atoi(f[len(f)-1])
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	got, isErr := run(t, env, OpDefinition, mainGo, 14, c)
	if isErr || !strings.Contains(got, "shapes/shapes.go:23:6") {
		t.Fatalf("after a crash: %v\n%s", isErr, got)
	}
	after := m.Running()
	if len(after) != 1 || after[0] == running[0] {
		t.Fatalf("not restarted: before %v after %v", running, after)
	}
}
