package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/gantry-dev/gantry/sandbox/sandboxtest"
)

func TestMain(m *testing.M) {
	Main() // the test binary is the Landlock helper and the proxy bridge
	goleak.VerifyTestMain(m)
}

// backends returns the backends that work here; each test runs with each.
// The none backend is always included (forced off).
func backends(t *testing.T) []Backend {
	t.Helper()
	out := []Backend{None{}}
	bw := &Bubblewrap{}
	if err := bw.Check(); err == nil {
		out = append(out, bw)
	} else {
		t.Logf("bubblewrap not tested: %v", err)
	}
	lk := &Landlock{}
	if err := lk.Check(); err == nil {
		out = append(out, lk)
	} else {
		t.Logf("landlock not tested: %v", err)
	}
	return out
}

// world is a project directory, a directory outside it, and a home with
// secrets, all outside /tmp (which bubblewrap replaces) so that they exist
// inside the sandbox.
type world struct {
	proj, outside, home, secret string
}

func newWorld(t *testing.T) world {
	t.Helper()
	base := sandboxtest.Outside(t, "sandbox-test")
	w := world{
		proj:    filepath.Join(base, "proj"),
		outside: filepath.Join(base, "outside"),
		home:    filepath.Join(base, "home"),
	}
	w.secret = filepath.Join(w.home, ".ssh")
	for _, d := range []string{w.proj, w.outside, w.secret, filepath.Join(w.proj, ".git", "hooks"), filepath.Join(w.proj, ".gantry")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(w.secret, "id_rsa"), "PRIVATE KEY")
	write(filepath.Join(w.outside, "keep.txt"), "untouched")
	write(filepath.Join(w.home, ".bashrc"), "# rc")
	write(filepath.Join(w.proj, ".git", "hooks", "pre-commit"), "#!/bin/sh\n")
	write(filepath.Join(w.proj, ".git", "config"), "[core]\n")
	write(filepath.Join(w.proj, ".gantry", "settings.json"), "{}")
	write(filepath.Join(w.proj, "file.txt"), "in project")
	write(filepath.Join(w.proj, ".env"), "TOKEN=secret-in-project")
	return w
}

func (w world) policy() *Policy {
	return &Policy{
		Write: []string{w.proj},
		Hide:  []string{w.secret, filepath.Join(w.proj, ".env")},
	}
}

type runResult struct {
	out  string
	code int
}

// run runs script with bash inside b.
func run(t *testing.T, b Backend, p *Policy, dir, script string, env ...string) runResult {
	t.Helper()
	cmd := exec.Command("bash", "--noprofile", "--norc", "-c", script)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "LANG=C"}, env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// A file, not a pipe: Wait must not wait for processes that escaped
	// and hold the output open — release kills them.
	out, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	cmd.Stdout, cmd.Stderr = out, out
	release, err := b.Wrap(cmd, p)
	if err != nil {
		t.Fatalf("Wrap: %v", err)
	}
	err = cmd.Run()
	release()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run: %v", err)
	}
	data, _ := os.ReadFile(out.Name())
	return runResult{string(data), code}
}

func TestFilesystem(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.Name(), func(t *testing.T) {
			w := newWorld(t)
			contained := b.Name() != BackendNone
			before := sandboxtest.Snapshot(t, w.outside)
			outFile := filepath.Join(w.outside, "new.txt")
			r := run(t, b, w.policy(), w.proj, "echo hi > "+outFile+"; echo rc=$?; echo in > inside.txt; echo rc2=$?")
			if contained {
				if !strings.Contains(r.out, "Read-only file system") && !strings.Contains(r.out, "Permission denied") {
					t.Errorf("write outside: want EROFS or EACCES, got %q", r.out)
				}
				if _, err := os.Stat(outFile); !os.IsNotExist(err) {
					t.Errorf("file outside exists after the write: %v", err)
				}
				if got := sandboxtest.Snapshot(t, w.outside); got != before {
					t.Errorf("outside changed:\n%s\nwas\n%s", got, before)
				}
			} else if _, err := os.Stat(outFile); err != nil {
				t.Errorf("none backend must not contain: %v (%s)", err, r.out)
			}
			if data, err := os.ReadFile(filepath.Join(w.proj, "inside.txt")); err != nil || string(data) != "in\n" {
				t.Errorf("write inside the project: %q %v (%s)", data, err, r.out)
			}

			r = run(t, b, w.policy(), w.proj, "cat "+filepath.Join(w.secret, "id_rsa")+"; cat .env")
			if leaked := strings.Contains(r.out, "PRIVATE KEY") || strings.Contains(r.out, "secret-in-project"); leaked == contained {
				t.Errorf("hidden paths (contained=%v): %q", contained, r.out)
			}
			if contained && r.code == 0 {
				t.Errorf("reading hidden paths succeeded: %q", r.out)
			}

			r = run(t, b, w.policy(), w.proj, "echo evil >> .git/hooks/pre-commit; echo x > .gantry/settings.json; echo y >> .git/config; cat file.txt")
			if b.Name() == BackendBubblewrap { // Landlock cannot make a path inside a writable one read-only
				for _, f := range []string{".git/hooks/pre-commit", ".gantry/settings.json", ".git/config"} {
					data, _ := os.ReadFile(filepath.Join(w.proj, f))
					if strings.Contains(string(data), "evil") || strings.Contains(string(data), "x\n") || strings.Contains(string(data), "y\n") {
						t.Errorf("protected %s changed: %q", f, data)
					}
				}
			}
			if !strings.Contains(r.out, "in project") {
				t.Errorf("reading inside the project failed: %q", r.out)
			}
		})
	}
}

func TestProcesses(t *testing.T) {
	t.Setenv("GANTRY_TEST_API_KEY", "sk-test-secret-123")
	for _, b := range backends(t) {
		t.Run(b.Name(), func(t *testing.T) {
			if b.Name() == BackendNone {
				t.Skip("the none backend does not contain processes (covered by the session tests)")
			}
			w := newWorld(t)
			marker := fmt.Sprintf("%d.%d", 1000+os.Getpid()%1000, time.Now().UnixNano()%1000)
			r := run(t, b, w.policy(), w.proj, "setsid sleep "+marker+" >/dev/null 2>&1 < /dev/null & (setsid sh -c 'sleep "+marker+" & ' &) ; sleep 0.1; echo started")
			if !strings.Contains(r.out, "started") {
				t.Fatalf("script: %q", r.out)
			}
			deadline := time.Now().Add(3 * time.Second)
			for leftover(marker) && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			if leftover(marker) {
				t.Errorf("a setsid / double-forked sleep %s survived the call", marker)
				killMarked(marker)
			}
			// The process can neither see Gantry's environment nor signal it.
			self := fmt.Sprint(os.Getpid())
			r = run(t, b, w.policy(), w.proj, "cat /proc/1/environ /proc/"+self+"/environ 2>&1 | tr '\\0' '\\n'; kill -0 "+self+" && echo SIGNALLED")
			if strings.Contains(r.out, "sk-test-secret-123") {
				t.Errorf("an API key is visible inside: %q", r.out)
			}
			if strings.Contains(r.out, "SIGNALLED") {
				t.Errorf("the sandboxed command can signal Gantry: %q", r.out)
			}
			if b.Name() == BackendBubblewrap {
				r = run(t, b, w.policy(), w.proj, "ps -e -o pid=,comm=")
				exe := filepath.Base(os.Args[0])
				if strings.Contains(r.out, exe[:min(len(exe), 15)]) || strings.Count(strings.TrimSpace(r.out), "\n") > 4 {
					t.Errorf("ps inside shows more than the sandbox: %q", r.out)
				}
			}
		})
	}
}

// killMarked kills, by pid, the processes this test started with marker
// in their command line.
func killMarked(marker string) {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		var pid int
		if err == nil && bytes.Contains(data, []byte(marker)) {
			if _, err := fmt.Sscan(e.Name(), &pid); err == nil && pid != os.Getpid() {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
}

// leftover reports whether a process with marker in its command line runs.
func leftover(marker string) bool {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(data, []byte(marker)) && !bytes.Contains(data, []byte("-c")) {
			return true
		}
	}
	return false
}

func TestNetwork(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "hello from the test host")
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	dir := t.TempDir()
	proxy, err := NewProxy(filepath.Join(dir, "p.sock"), ProxyOptions{AllowedDomains: []string{"127.0.0.1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	for _, b := range backends(t) {
		t.Run(b.Name(), func(t *testing.T) {
			if b.Name() == BackendNone {
				t.Skip("no containment")
			}
			w := newWorld(t)
			p := w.policy()
			r := run(t, b, p, w.proj, "exec 3<>/dev/tcp/127.0.0.1/"+port+" && echo CONNECTED; curl -sS -m 5 http://127.0.0.1:"+port+"/ || echo CURL-FAILED")
			if strings.Contains(r.out, "CONNECTED") || strings.Contains(r.out, "hello from") || !strings.Contains(r.out, "CURL-FAILED") {
				t.Errorf("no network: %q", r.out)
			}
			p.Network, p.ProxySocket = NetworkProxy, proxy.Socket()
			r = run(t, b, p, w.proj, "curl -sS -m 5 http://127.0.0.1:"+port+"/; echo; curl -fsS -m 5 http://localhost:"+port+"/ || echo REFUSED; exec 3<>/dev/tcp/127.0.0.1/"+port+" && echo CONNECTED")
			if !strings.Contains(r.out, "hello from the test host") {
				t.Errorf("allowed host through the proxy: %q", r.out)
			}
			if !strings.Contains(r.out, "REFUSED") || !strings.Contains(r.out, "403") {
				t.Errorf("host not allowed: %q", r.out)
			}
			if strings.Contains(r.out, "CONNECTED") && b.Name() == BackendBubblewrap {
				t.Errorf("direct TCP past the proxy: %q", r.out)
			}
			// HTTPS goes through CONNECT: allowed host tunnels (the TLS
			// handshake then fails against a plain HTTP server, which
			// proves the tunnel opened); a refused host gets 403.
			r = run(t, b, p, w.proj, "curl -sS -m 5 -p https://127.0.0.1:"+port+"/ 2>&1; curl -sS -m 5 https://example.invalid/ 2>&1")
			if !strings.Contains(r.out, "CONNECT tunnel failed, response 403") {
				t.Errorf("CONNECT to a refused host: %q", r.out)
			}
		})
	}
}

func TestDetect(t *testing.T) {
	b, st := Detect(BackendNone)
	if b.Name() != BackendNone || st.Contained() || !strings.Contains(st.Reason, "forced off") {
		t.Errorf("forced off: %s %+v", b.Name(), st)
	}
	b, st = Detect("")
	t.Logf("auto: %s — %s (cleanup: %s)", b.Name(), st.Reason, st.Cleanup)
	if (b.Name() != BackendNone) != st.Contained() {
		t.Errorf("status %+v for %s", st, b.Name())
	}
	if _, st := Detect("nonsense"); st.Contained() || !strings.Contains(st.Reason, "unknown") {
		t.Errorf("unknown backend: %+v", st)
	}
}

// TestSandboxNoneWarnsOnce: the fallback says so once and changes nothing.
func TestSandboxNoneWarnsOnce(t *testing.T) {
	var logs bytes.Buffer
	s, err := New(Options{Enabled: true, Backend: BackendNone, AutoAllow: true, AllowUnsandboxed: true, Logger: newTextLogger(&logs)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Contained() || s.AutoAllow() || !s.Unavailable() || s.Runs("ls", false) {
		t.Fatalf("fallback claims a sandbox: %+v", s.Status())
	}
	for range 3 {
		cmd := exec.Command("true")
		release, err := s.Wrap(cmd, s.Policy(t.TempDir()))
		if err != nil || cmd.Path != mustLook(t, "true") {
			t.Fatalf("Wrap changed the command: %v %v", cmd.Args, err)
		}
		release()
	}
	if n := strings.Count(logs.String(), "WITHOUT a sandbox"); n != 1 {
		t.Errorf("want one warning, got %d: %s", n, logs.String())
	}
}

func mustLook(t *testing.T, name string) string {
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSandboxSession(t *testing.T) {
	b, _ := Detect("")
	if b.Name() == BackendNone {
		t.Skip("no backend here")
	}
	s, err := New(Options{Enabled: true, AutoAllow: true, ExcludedCommands: []string{"docker"}, AllowUnsandboxed: true,
		AllowedDomains: []string{"example.com"}, Hide: []string{"/nonexistent/secret"}})
	if err != nil {
		t.Fatal(err)
	}
	tmp := s.TempDir()
	if !s.Contained() || !s.AutoAllow() || s.Unavailable() {
		t.Fatalf("status %+v", s.Status())
	}
	if !s.Runs("ls -la", false) || s.Runs("ls", true) || s.Runs("docker ps", false) || !s.Runs("docker ps; rm -rf x", false) {
		t.Error("Runs")
	}
	p := s.Policy(t.TempDir())
	if p.Network != NetworkProxy || p.ProxySocket == "" || p.TempDir != tmp || len(p.ReadOnly) != 0 {
		t.Errorf("policy %+v", p)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Errorf("temp dir left: %v", err)
	}
	off, _ := New(Options{})
	if off.Contained() || off.Unavailable() || off.Runs("ls", false) {
		t.Errorf("disabled sandbox: %+v", off.Status())
	}
}

func TestPolicyValidate(t *testing.T) {
	for _, p := range []*Policy{
		{Write: []string{"rel"}},
		{Hide: []string{"/a\x00b"}},
		{Network: NetworkProxy},
	} {
		if err := p.Validate(); err == nil {
			t.Errorf("%+v: want an error", p)
		}
	}
	if err := (&Policy{Write: []string{"/a"}}).Validate(); err != nil {
		t.Error(err)
	}
}

func TestProxyCheck(t *testing.T) {
	p := &Proxy{opt: ProxyOptions{
		AllowedDomains: []string{"example.com", "*.github.com", "127.0.0.1", "localhost"},
		Resolver:       fakeResolver{},
	}}
	for _, tc := range []struct {
		host string
		ok   bool
	}{
		{"example.com", true},
		{"EXAMPLE.com.", true},
		{"api.github.com", true},
		{"github.com", false}, // *.x is subdomains only
		{"evil.com", false},   // not listed
		{"example.com.evil.com", false},
		{"127.0.0.1", true},          // named exactly
		{"localhost", true},          // named exactly
		{"rebind.github.com", false}, // resolves to a private address
		{"mixed.github.com", false},  // one private address refuses the name
		{"[::1]", false},             // loopback, not named exactly
		{"169.254.169.254", false},   // not listed
	} {
		_, err := p.Check(context.Background(), tc.host)
		if (err == nil) != tc.ok {
			t.Errorf("%s: err %v, want ok=%v", tc.host, err, tc.ok)
		}
	}
}
