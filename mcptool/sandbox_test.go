package mcptool

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/sandbox"
	"github.com/gantry-dev/gantry/tool"

	"github.com/gantry-dev/gantry/sandbox/sandboxtest"
)

// A stdio server with "sandbox": true starts in the session's sandbox (its
// writes outside the working directory fail), and does not start at all
// in a session without one.
func TestSandboxedServer(t *testing.T) {
	outside := sandboxtest.Outside(t, "mcp-outside")
	mark := filepath.Join(outside, "mark")
	sc := ServerConfig{Command: os.Args[0], Sandbox: true, Env: map[string]string{
		"GANTRY_MCPTOOL_SERVER": "1", "GANTRY_MCPTOOL_MARK": mark,
		"GORACE": strings.TrimSpace("atexit_sleep_ms=0 " + os.Getenv("GORACE"))}}
	cfg := &ConfigFile{Servers: map[string]ServerConfig{"s": sc}}
	dir := t.TempDir()
	ctx := context.Background()

	m, err := NewManager(cfg, &Options{Dir: dir, MaxReconnects: -1, ConnectTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Start(ctx); err == nil || !strings.Contains(err.Error(), "sandbox") {
		t.Errorf("a sandboxed server started without a sandbox: %v", err)
	}
	m.Close()

	if b, st := sandbox.Detect(""); b.Name() == sandbox.BackendNone {
		t.Skipf("no sandbox backend: %s", st.Reason)
	}
	sb, err := sandbox.New(sandbox.Options{Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	m, err = NewManager(cfg, &Options{Dir: dir, MaxReconnects: -1, ConnectTimeout: 10 * time.Second,
		Sandbox: func(cmd *exec.Cmd) (func(), error) { return sb.Wrap(cmd, sb.Policy(dir)) }})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if err := m.Start(ctx); err != nil {
		t.Fatal(err)
	}
	var echo, block tool.Tool
	for _, tl := range m.ServerTools("s") {
		switch tl.Spec().Name {
		case "mcp__s__echo":
			echo = tl
		case "mcp__s__block":
			block = tl
		}
	}
	if echo == nil || block == nil {
		t.Fatalf("tools %v", m.ServerTools("s"))
	}
	r, err := echo.Call(ctx, &tool.Env{}, json.RawMessage(`{"text":"hi"}`))
	if err != nil || !strings.Contains(r.TextContent(), "hi") {
		t.Fatalf("echo: %v %v", r, err)
	}
	cctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	block.Call(cctx, &tool.Env{}, json.RawMessage(`{}`))
	cancel()
	if _, err := os.Stat(mark); err == nil {
		t.Error("the sandboxed server wrote outside its working directory")
	}
}
