package lsp

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/builtin/file"
	"github.com/gantry-dev/gantry/tool"
)

// awaitRemind polls Remind until it has something (the model's turns, in
// fast motion) and returns the text and its ack.
func awaitRemind(t *testing.T, m *Manager, env *tool.Env, limit time.Duration) (string, func()) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		text, ack, err := m.Remind(context.Background(), env)
		if err != nil {
			t.Fatal(err)
		}
		if text != "" {
			return text, ack
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no late diagnostics within %v; running %v", limit, m.Running())
	return "", nil
}

// A write while the server is still starting returns at once; its errors
// reach the next turn, once; a write to the warm server reports inline;
// another session sees nothing of it.
func TestLateDiagnosticsColdServer(t *testing.T) {
	m, env, src := fakeProject(t, "ok", Options{})
	cfg := m.opts.Servers["fake"]
	cfg.Env["FAKELS_START_DELAY"] = "300ms"
	env.SessionID = "s1"
	os.WriteFile(src, []byte("BROKEN one\n"), 0o644)
	if note := m.FileWritten(context.Background(), env, src); note != "" {
		t.Fatalf("a write to a cold server waited for it: %q", note)
	}
	other := newEnv(env.WorkDir, m)
	other.SessionID = "s2"
	text, ack := awaitRemind(t, m, env, 20*time.Second)
	if !strings.Contains(text, "The language server (fake) reports 1 new error after your recent changes") || !strings.Contains(text, "a.fake:1:1: fake: broken") {
		t.Fatalf("late text:\n%s", text)
	}
	if got, _, _ := m.Remind(context.Background(), other); got != "" {
		t.Fatalf("another session got %q", got)
	}
	// Not acknowledged (the run ended before the message was kept): given
	// again; acknowledged: gone.
	again, ack2, _ := m.Remind(context.Background(), env)
	if again != text {
		t.Fatalf("unacknowledged reminder not repeated: %q", again)
	}
	ack()
	ack2()
	if got, _, _ := m.Remind(context.Background(), env); got != "" {
		t.Fatalf("delivered twice: %q", got)
	}
	// Warm now: the next write reports inline, only the new error.
	os.WriteFile(src, []byte("BROKEN one\nBROKEN two\n"), 0o644)
	note := m.FileWritten(context.Background(), env, src)
	if !strings.Contains(note, "reports 1 new error after this change:\na.fake:2:1: fake: broken") {
		t.Fatalf("warm write: %q", note)
	}
	if got, _, _ := m.Remind(context.Background(), env); got != "" {
		t.Fatalf("reported inline and again late: %q", got)
	}
}

// With no wait (a negative DiagnosticsWait, or lspDiagnosticsWaitMs 0 in
// settings) even a warm server's errors go to the next turn.
func TestLateDiagnosticsNoWait(t *testing.T) {
	home := t.TempDir()
	getenv := func(k string) string {
		if k == "HOME" {
			return home
		}
		return ""
	}
	for _, tc := range []struct {
		name     string
		opts     Options
		settings string
	}{
		{name: "option", opts: Options{DiagnosticsWait: -1}},
		{name: "settings", settings: `{"lspDiagnosticsWaitMs": 0}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, env, src := fakeProject(t, "ok", tc.opts)
			if tc.settings != "" {
				os.MkdirAll(filepath.Join(env.WorkDir, ".gantry"), 0o755)
				os.WriteFile(filepath.Join(env.WorkDir, ".gantry", "settings.json"), []byte(tc.settings), 0o644)
				trusted := true
				m.opts.NoProjectConfig, m.opts.Trusted, m.opts.Getenv = false, &trusted, getenv
			}
			if got, isErr := run(t, env, OpHover, src, 1, 1); isErr { // warm it
				t.Fatal(got)
			}
			os.WriteFile(src, []byte("BROKEN\n"), 0o644)
			if note := m.FileWritten(context.Background(), env, src); note != "" {
				t.Fatalf("waited: %q", note)
			}
			text, _ := awaitRemind(t, m, env, 10*time.Second)
			if !strings.Contains(text, "a.fake:1:1: fake: broken") {
				t.Fatalf("late text: %s", text)
			}
		})
	}
}

// Prestart starts the servers of the project's files in the background;
// without it nothing starts until used.
func TestPrestart(t *testing.T) {
	m, env, _ := fakeProject(t, "ok", Options{})
	if r := m.Running(); len(r) != 0 {
		t.Fatalf("started unasked: %v", r)
	}
	opts := m.opts
	opts.Prestart, opts.Root = true, env.WorkDir
	m2 := NewManager(opts)
	defer m2.Close()
	start := time.Now()
	deadline := time.Now().Add(20 * time.Second)
	for len(m2.Running()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("prestart started nothing")
		}
		time.Sleep(20 * time.Millisecond)
	}
	took := time.Since(start)
	// A project without files of the server: nothing starts.
	root := opts.Root
	opts.Root = t.TempDir()
	m3 := NewManager(opts)
	m3.Close() // waits for the background scan
	if r := m3.Running(); len(r) != 0 {
		t.Fatalf("started for an empty project: %v", r)
	}
	// A folder that is not trusted: nothing starts before the person acts.
	home, untrusted := t.TempDir(), false
	opts.Root, opts.NoProjectConfig, opts.Trusted = root, false, &untrusted
	opts.Getenv = func(k string) string {
		if k == "HOME" {
			return home
		}
		return ""
	}
	m4 := NewManager(opts)
	defer m4.Close()
	// Three times what the trusted start took, and at least a second.
	for end := time.Now().Add(max(3*took, time.Second)); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if r := m4.Running(); len(r) != 0 {
			t.Fatalf("started in an untrusted folder: %v", r)
		}
	}
}

// Close during a background start ends it: no process is left.
func TestCloseDuringLateStart(t *testing.T) {
	m, env, src := fakeProject(t, "ok", Options{})
	m.opts.Servers["fake"].Env["FAKELS_START_DELAY"] = "30s"
	m.FileWritten(context.Background(), env, src)
	time.Sleep(50 * time.Millisecond)
	m.Close()
	out, _ := exec.Command("pgrep", "-f", fakeServer(t)).Output()
	if len(strings.TrimSpace(string(out))) > 0 {
		t.Fatalf("server still running after Close: %s", out)
	}
}

// TestGoplsSlowStart: a gopls that takes a second to start (a wrapper that
// sleeps, then execs it) never holds up the Edit result; the error the
// edit caused is delivered afterwards; gopls runs with telemetry off.
func TestGoplsSlowStart(t *testing.T) {
	real := gopls(t)
	dir := fixture(t)
	bin := t.TempDir()
	wrapper := filepath.Join(bin, "slow-gopls")
	envFile := filepath.Join(bin, "env")
	os.WriteFile(wrapper, []byte("#!/bin/sh\nenv > "+envFile+"\nsleep 1\nexec "+real+" \"$@\"\n"), 0o755)
	cfg := Gopls()
	cfg.Command = wrapper
	m := NewManager(Options{NoProjectConfig: true, Servers: map[string]ServerConfig{"gopls": cfg}})
	defer m.Close()
	env := newEnv(dir, m)
	env.SessionID = "s"
	tool.Provide[file.WriteObserver](env.Services, m)
	edit := file.NewEdit(file.Options{})
	mainGo := filepath.Join(dir, "main.go")
	if _, err := file.NewRead(file.Options{}).Call(context.Background(), env, json.RawMessage(`{"file_path":`+jsonString(mainGo)+`}`)); err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(map[string]any{"file_path": mainGo, "old_string": "shapes.Total(s)", "new_string": "shapes.Total(s, 1)"})
	res, err := edit.Call(context.Background(), env, raw)
	if err != nil || res.IsError {
		t.Fatal(err, res.TextContent())
	}
	if strings.Contains(res.TextContent(), "language server") {
		t.Fatalf("the edit result waited for a starting server:\n%s", res.TextContent())
	}
	text, _ := awaitRemind(t, m, env, 120*time.Second)
	if !strings.Contains(text, "main.go:14:") || !strings.Contains(text, "(gopls)") {
		t.Fatalf("late text:\n%s", text)
	}
	b, _ := os.ReadFile(envFile)
	if !strings.Contains(string(b), "GOTELEMETRY=off") {
		t.Fatalf("gopls environment lacks GOTELEMETRY=off:\n%s", b)
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
