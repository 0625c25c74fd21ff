package lsp

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/tool"
)

// fakeProject is a directory with one .fake file and a manager running
// the fake server in mode.
func fakeProject(t *testing.T, mode string, opts Options) (*Manager, *tool.Env, string) {
	t.Helper()
	bin := fakeServer(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "a.fake")
	if err := os.WriteFile(src, []byte("hello world\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	opts.NoBuiltin, opts.NoProjectConfig = true, true
	opts.Servers = map[string]ServerConfig{"fake": {
		Command:             bin,
		ExtensionToLanguage: map[string]string{".fake": "fake"},
		Env:                 map[string]string{"FAKELS_MODE": mode, "FAKELS_ONCE": filepath.Join(dir, "crashed-once"), "FAKELS_LOG": filepath.Join(dir, "log")},
	}}
	m := NewManager(opts)
	t.Cleanup(func() { m.Close() })
	return m, newEnv(dir, m), src
}

func TestFakeServer(t *testing.T) {
	cases := []struct {
		mode    string
		opts    Options
		want    string
		wantErr bool
	}{
		{mode: "ok", want: "Hover at a.fake:1:1:\nfake hover"},
		{mode: "hang", opts: Options{RequestTimeout: 300 * time.Millisecond}, want: "no answer from fake within 300ms", wantErr: true},
		{mode: "error", want: "fake answered textDocument/hover with an error: fake internal failure", wantErr: true},
		{mode: "garbage", want: "language server connection closed", wantErr: true},
		{mode: "crash", want: "fake hover after restart"},
	}
	for _, tc := range cases {
		t.Run(tc.mode, func(t *testing.T) {
			_, env, src := fakeProject(t, tc.mode, tc.opts)
			got, isErr := run(t, env, OpHover, src, 1, 1)
			if isErr != tc.wantErr || !strings.Contains(got, tc.want) {
				t.Fatalf("got (error %v):\n%s\nwant (error %v) %q", isErr, got, tc.wantErr, tc.want)
			}
		})
	}
}

// A server that keeps crashing is restarted once, then reported.
func TestFakeServerCrashesTwice(t *testing.T) {
	m, env, src := fakeProject(t, "crash", Options{})
	// FAKELS_ONCE points at a file that exists: crash every time.
	cfg := m.opts.Servers["fake"]
	cfg.Env = map[string]string{"FAKELS_MODE": "crash"}
	m.opts.Servers["fake"] = cfg
	got, isErr := run(t, env, OpHover, src, 1, 1)
	if !isErr || !strings.Contains(got, "connection closed") {
		t.Fatalf("first call: %v %s", isErr, got)
	}
	got, isErr = run(t, env, OpHover, src, 1, 1)
	if !isErr || !strings.Contains(got, `"fake" crashed and was restarted 1 time(s) already; not restarting it again`) {
		t.Fatalf("second call: %v %s", isErr, got)
	}
}

func TestNoServer(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "x.zig")
	os.WriteFile(src, []byte("const x = 1;\n"), 0o644)
	m := NewManager(Options{NoProjectConfig: true})
	defer m.Close()
	got, isErr := run(t, newEnv(dir, m), OpHover, src, 1, 1)
	if !isErr || !strings.Contains(got, "no language server configured for x.zig") || !strings.Contains(got, `"extensionToLanguage": {".zig": "language-id"}`) {
		t.Fatalf("got %v %s", isErr, got)
	}
	// Missing binary: clear install help, not retried on every call.
	m2 := NewManager(Options{NoProjectConfig: true, NoBuiltin: true, Servers: map[string]ServerConfig{
		"zls": {Command: "zls-not-installed-here", ExtensionToLanguage: map[string]string{".zig": "zig"}},
	}})
	defer m2.Close()
	got, isErr = run(t, newEnv(dir, m2), OpHover, src, 1, 1)
	if !isErr || !strings.Contains(got, "language server not installed") || !strings.Contains(got, "lspServers") {
		t.Fatalf("got %v %s", isErr, got)
	}
	// gopls missing: the error names the commands that install it.
	goSrc := filepath.Join(dir, "x.go")
	os.WriteFile(goSrc, []byte("package x\n"), 0o644)
	m3 := NewManager(Options{NoProjectConfig: true, NoBuiltin: true, Servers: map[string]ServerConfig{
		"gopls": {Command: "gopls-not-installed-here", ExtensionToLanguage: map[string]string{".go": "go"}},
	}})
	defer m3.Close()
	got, isErr = run(t, newEnv(dir, m3), OpHover, goSrc, 1, 1)
	if !isErr || !strings.Contains(got, "go install golang.org/x/tools/gopls@v0.23.0") || !strings.Contains(got, "scripts/setup --lsp") {
		t.Fatalf("got %v %s", isErr, got)
	}
}

// Close shuts the servers down (shutdown + exit) and reaps them.
func TestCloseShutsDown(t *testing.T) {
	m, env, src := fakeProject(t, "ok", Options{})
	if got, isErr := run(t, env, OpHover, src, 1, 1); isErr {
		t.Fatal(got)
	}
	running := m.Running()
	if len(running) != 1 {
		t.Fatalf("running %v", running)
	}
	f := strings.Fields(running[0])
	pid, _ := strconv.Atoi(f[len(f)-1])
	m.Close()
	if err := syscall.Kill(pid, 0); err == nil {
		t.Fatalf("server %d still running after Close", pid)
	}
	log, _ := os.ReadFile(filepath.Join(env.WorkDir, "log"))
	if !strings.Contains(string(log), "shutdown\nexit") {
		t.Fatalf("no orderly shutdown; the server saw:\n%s", log)
	}
	got, isErr := run(t, env, OpHover, src, 1, 1)
	if !isErr || !strings.Contains(got, "shut down") {
		t.Fatalf("after Close: %v %s", isErr, got)
	}
}

// Project configuration: .gantry/lsp.json and settings' lspServers are used
// only in trusted folders; lspDiagnostics false turns the write reports
// off.
func TestProjectConfig(t *testing.T) {
	bin := fakeServer(t)
	home := t.TempDir()
	getenv := func(k string) string {
		switch k {
		case "HOME":
			return home
		case "GANTRY_HOME":
			return filepath.Join(home, ".gantry")
		}
		return ""
	}
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, ".gantry"), 0o755)
	srv := map[string]any{"fake": map[string]any{"command": bin, "extensionToLanguage": map[string]string{".fake": "fake"}}}
	b, _ := json.Marshal(srv)
	os.WriteFile(filepath.Join(dir, ".gantry", "lsp.json"), b, 0o644)
	os.WriteFile(filepath.Join(dir, ".gantry", "settings.json"), []byte(`{"lspDiagnostics": false, "lspServers": {"other": {"command": "x", "extensionToLanguage": {".oth": "o"}}}}`), 0o644)
	src := filepath.Join(dir, "a.fake")
	os.WriteFile(src, []byte("x\n"), 0o644)

	for _, trusted := range []bool{false, true} {
		m := NewManager(Options{Getenv: getenv, Trusted: &trusted})
		_, servers, diags, err := m.config(&tool.Env{WorkDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		_, hasFake := servers["fake"]
		_, hasOther := servers["other"]
		_, hasGopls := servers["gopls"]
		if hasFake != trusted || hasOther != trusted || !hasGopls {
			t.Errorf("trusted=%v: servers %v", trusted, servers)
		}
		if diags {
			t.Errorf("trusted=%v: lspDiagnostics false not applied", trusted)
		}
		got, isErr := run(t, newEnv(dir, m), OpHover, src, 1, 1)
		if trusted && (isErr || !strings.Contains(got, "fake hover")) || !trusted && !strings.Contains(got, "no language server configured") {
			t.Errorf("trusted=%v: %v %s", trusted, isErr, got)
		}
		if note := m.FileWritten(context.Background(), newEnv(dir, m), src); note != "" {
			t.Errorf("diagnostics off, but FileWritten said %q", note)
		}
		m.Close()
	}
}
