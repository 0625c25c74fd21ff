package mcptool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/tool/tooltest"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gantry-dev/gantry/tool"
)

// peerBin returns the path of an npm peer's executable, skipping the test
// when the peers are not installed (scripts/npm-peers; scripts/dev test sets
// GANTRY_PEERS_DIR).
func peerBin(t *testing.T, name string) string {
	t.Helper()
	dir := os.Getenv("GANTRY_PEERS_DIR")
	if dir == "" {
		t.Skip("GANTRY_PEERS_DIR is not set: run scripts/npm-peers and set it (scripts/dev test does both)")
	}
	p := filepath.Join(dir, "node_modules", ".bin", name)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("npm peer %s not installed in %s (run scripts/npm-peers)", name, dir)
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node not found")
	}
	return p
}

func TestPeerEverything(t *testing.T) {
	bin := peerBin(t, "mcp-server-everything")
	var mu sync.Mutex
	var procs []*exec.Cmd
	lroSent := make(chan struct{}, 1)
	m, err := NewManager(&ConfigFile{Servers: map[string]ServerConfig{"everything": {Type: TypeStdio, Command: bin}}},
		&Options{MaxReconnects: 1, ReconnectDelay: 50 * time.Millisecond,
			Transport: func(string, ServerConfig) (mcp.Transport, error) {
				cmd := exec.Command(bin)
				mu.Lock()
				procs = append(procs, cmd)
				mu.Unlock()
				return &sentTransport{Transport: &mcp.CommandTransport{Command: cmd, TerminateDuration: time.Second},
					marker: "trigger-long-running-operation", sent: lroSent}, nil
			}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if err := m.Start(context.Background()); err != nil {
		t.Fatal(err)
	}

	t.Run("calls", func(t *testing.T) {
		if r := tooltest.Call(t, findTool(t, m, "mcp__everything__echo"), &tool.Env{}, `{"message":"hi"}`); r.IsError || !strings.Contains(r.TextContent(), "hi") {
			t.Errorf("echo: %+v", r)
		}
		if r := tooltest.Call(t, findTool(t, m, "mcp__everything__get-sum"), &tool.Env{}, `{"a":2,"b":3}`); !strings.Contains(r.TextContent(), "5") {
			t.Errorf("get-sum: %q", r.TextContent())
		}
		r := tooltest.Call(t, findTool(t, m, "mcp__everything__get-tiny-image"), &tool.Env{}, `{}`)
		var img bool
		for _, c := range r.Content {
			img = img || c.Type == tool.TypeImage && len(c.Data) > 0 && c.MIMEType == "image/png"
		}
		if !img {
			t.Errorf("get-tiny-image: no image in %+v", r.Content)
		}
		if r := tooltest.Call(t, findTool(t, m, "mcp__everything__get-structured-content"), &tool.Env{}, `{"location":"New York"}`); r.Structured == nil {
			t.Errorf("get-structured-content: no structured content: %+v", r)
		}
		if r := tooltest.Call(t, findTool(t, m, "mcp__everything__get-resource-links"), &tool.Env{}, `{"count":2}`); !hasType(r, tool.TypeResourceLink) {
			t.Errorf("get-resource-links: %+v", r.Content)
		}
		// The server rejects an input of the wrong type.
		r, err := findTool(t, m, "mcp__everything__get-sum").Call(context.Background(), nil, json.RawMessage(`{"a":"x"}`))
		if err == nil && !r.IsError {
			t.Errorf("bad input accepted: %+v", r)
		}
		// Annotations are kept but grant nothing.
		echo := findTool(t, m, "mcp__everything__echo")
		if !echo.Spec().Annotations.ReadOnlyHint || tool.TraitsOf(echo, nil).ReadOnly {
			t.Errorf("echo annotations/traits: %+v %+v", echo.Spec().Annotations, tool.TraitsOf(echo, nil))
		}
	})

	t.Run("resources", func(t *testing.T) {
		list, err := m.Resources().ListResources(context.Background(), "everything")
		if err != nil || len(list) == 0 {
			t.Fatalf("list: %v %v", list, err)
		}
		parts, err := m.Resources().ReadResource(context.Background(), "everything", list[0].URI)
		if err != nil || len(parts) == 0 || parts[0].Text == "" && parts[0].Blob == nil {
			t.Fatalf("read %s: %+v %v", list[0].URI, parts, err)
		}
	})

	t.Run("killed mid-call", func(t *testing.T) {
		done := make(chan error, 1)
		lro := findTool(t, m, "mcp__everything__trigger-long-running-operation")
		go func() {
			_, err := lro.Call(context.Background(), nil, json.RawMessage(`{"duration":30,"steps":30}`))
			done <- err
		}()
		select {
		case <-lroSent: // the request is in the server's stdin: the call is in flight
		case err := <-done:
			t.Fatalf("the call ended before its request was sent: %v", err)
		}
		mu.Lock()
		first := procs[len(procs)-1]
		mu.Unlock()
		if err := first.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		err := <-done
		if !errors.Is(err, ErrDisconnected) && !errors.Is(err, ErrUnavailable) {
			t.Fatalf("in-flight call: %v, want a disconnected error", err)
		}
		// One bounded reconnect brings the server back.
		deadline := time.Now().Add(30 * time.Second)
		for {
			mu.Lock()
			n := len(procs)
			mu.Unlock()
			if n > 1 && m.Servers()[0].State == StateConnected {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no reconnect: %+v", m.Servers())
			}
			time.Sleep(20 * time.Millisecond)
		}
		if r := tooltest.Call(t, findTool(t, m, "mcp__everything__echo"), &tool.Env{}, `{"message":"again"}`); !strings.Contains(r.TextContent(), "again") {
			t.Errorf("after reconnect: %q", r.TextContent())
		}
	})
}

// sentTransport reports on sent when a request whose params contain marker
// has been written to the connection.
type sentTransport struct {
	mcp.Transport
	marker string
	sent   chan<- struct{}
}

func (t *sentTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &sentConn{Connection: c, t: t}, nil
}

type sentConn struct {
	mcp.Connection
	t *sentTransport
}

func (c *sentConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	err := c.Connection.Write(ctx, msg)
	if r, ok := msg.(*jsonrpc.Request); ok && err == nil && bytes.Contains(r.Params, []byte(c.t.marker)) {
		select {
		case c.t.sent <- struct{}{}:
		default:
		}
	}
	return err
}

func hasType(r *tool.Result, typ tool.ContentType) bool {
	for _, c := range r.Content {
		if c.Type == typ {
			return true
		}
	}
	return false
}

func TestPeerFilesystem(t *testing.T) {
	bin := peerBin(t, "mcp-server-filesystem")
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "hello.txt"), []byte("hello from disk\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := ParseConfig([]byte(`{"mcpServers":{"fs":{"command":"`+bin+`","args":["${ROOT}"]}}}`), "test",
		func(k string) string { return map[string]string{"ROOT": dir}[k] })
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewManager(cfg, &Options{MaxReconnects: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if err := m.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	in := func(v map[string]any) string { b, _ := json.Marshal(v); return string(b) }
	if r := tooltest.Call(t, findTool(t, m, "mcp__fs__read_text_file"), &tool.Env{}, in(map[string]any{"path": filepath.Join(dir, "hello.txt")})); r.IsError || !strings.Contains(r.TextContent(), "hello from disk") {
		t.Errorf("read: %+v", r)
	}
	if r := tooltest.Call(t, findTool(t, m, "mcp__fs__write_file"), &tool.Env{}, in(map[string]any{"path": filepath.Join(dir, "new.txt"), "content": "written"})); r.IsError {
		t.Errorf("write: %s", r.TextContent())
	}
	if b, err := os.ReadFile(filepath.Join(dir, "new.txt")); err != nil || string(b) != "written" {
		t.Errorf("written file: %q %v", b, err)
	}
	// Outside the allowed directory: the server refuses with isError.
	if r := tooltest.Call(t, findTool(t, m, "mcp__fs__read_text_file"), &tool.Env{}, in(map[string]any{"path": "/etc/hostname"})); !r.IsError {
		t.Errorf("outside read allowed: %s", r.TextContent())
	}
	if r := tooltest.Call(t, findTool(t, m, "mcp__fs__list_directory"), &tool.Env{}, in(map[string]any{"path": dir})); !strings.Contains(r.TextContent(), "hello.txt") {
		t.Errorf("list: %s", r.TextContent())
	}
	write := findTool(t, m, "mcp__fs__write_file")
	if tr := tool.TraitsOf(write, nil); tr != (tool.Traits{}) {
		t.Errorf("write_file traits = %+v, want fail-closed", tr)
	}
}
