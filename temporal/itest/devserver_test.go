package itest

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"

	"github.com/gantry-dev/gantry/temporal/durable"
)

// CLIEnv names the Temporal CLI binary the dev-server tests start
// (scripts/temporal-dev test installs it, pinned, and sets it). Without
// it the tests are skipped — except under CI, where that is a failure.
const CLIEnv = "GANTRY_TEMPORAL_CLI"

// devServer is `temporal server start-dev` on a SQLite file, stopped and
// started again by the test.
type devServer struct {
	t    *testing.T
	cli  string
	db   string
	port int
	log  *os.File
	cmd  *exec.Cmd
}

func newDevServer(t *testing.T) *devServer {
	cli := os.Getenv(CLIEnv)
	if cli == "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not set: run the temporal tests with scripts/temporal-dev test", CLIEnv)
		}
		t.Skipf("%s is not set (scripts/temporal-dev test sets it)", CLIEnv)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	dir := t.TempDir()
	lf, err := os.Create(filepath.Join(dir, "server.log"))
	if err != nil {
		t.Fatal(err)
	}
	s := &devServer{t: t, cli: cli, db: filepath.Join(dir, "dev.db"), port: port, log: lf}
	t.Cleanup(func() {
		s.kill()
		lf.Close()
		if t.Failed() {
			b, _ := os.ReadFile(lf.Name())
			t.Logf("dev server log:\n%s", b)
		}
	})
	s.start()
	return s
}

func (s *devServer) addr() string { return fmt.Sprintf("127.0.0.1:%d", s.port) }

// start starts the server on its port and database and waits until it
// serves.
func (s *devServer) start() {
	s.t.Helper()
	cmd := exec.Command(s.cli, "server", "start-dev", "--headless", "--ip", "127.0.0.1", "--port", fmt.Sprint(s.port),
		"--db-filename", s.db, "--log-level", "warn", "--dynamic-config-value", "frontend.enableServerVersionCheck=false")
	cmd.Env = append(os.Environ(), "TEMPORAL_VERSION_CHECK_DISABLED=1")
	cmd.Stdout, cmd.Stderr = s.log, s.log
	if err := cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	s.cmd = cmd
	deadline := time.Now().Add(time.Minute)
	for {
		cl, err := client.Dial(client.Options{HostPort: s.addr(), Logger: quiet()})
		if err == nil {
			cl.Close()
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("the dev server does not serve on %s: %v", s.addr(), err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// kill stops the server the hard way (SIGKILL) and waits for it.
func (s *devServer) kill() {
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Kill()
	s.cmd.Wait()
	s.cmd = nil
}

// restart kills the server and starts it again on the same database.
func (s *devServer) restart() {
	s.t.Helper()
	s.kill()
	s.start()
}

func quiet() log.Logger { return log.NewStructuredLogger(slog.New(slog.DiscardHandler)) }

// TestDevServerRestartedMidRun: the Temporal dev server (the CLI's, on a
// SQLite file) is killed and started again twice in one run — while the
// run waits on a permission ask, and in the middle of a slow Bash call —
// and the run resumes and completes: the asks are answered after the
// restarts, and no call ran twice.
func TestDevServerRestartedMidRun(t *testing.T) {
	srv := newDevServer(t)
	_, prov := fakeModel(t)
	cl, err := client.Dial(client.Options{HostPort: srv.addr(), Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	queue := "gantry-restart"
	w := worker.New(cl, queue, worker.Options{StickyScheduleToStartTimeout: time.Second})
	durable.Register(w, testActivities(t, prov))
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	dir := t.TempDir()
	// Bash is not allowed: each call asks.
	id, err := durable.Start(context.Background(), cl, testSpec(dir),
		"calls=2 cmd=echo start{i} >> started.txt; sleep 3; echo {i} >> done.txt", durable.StartOptions{TaskQueue: queue})
	if err != nil {
		t.Fatal(err)
	}
	answer := func(ask durable.Ask) {
		t.Helper()
		deadline := time.Now().Add(2 * time.Minute)
		for {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			err := durable.Answer(ctx, cl, id, ask.ID, json.RawMessage(`{"choice":"allow_once"}`))
			cancel()
			if err == nil {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("answer %s: %v", ask.ID, err)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	waitAskOn := func(n int) durable.Ask {
		t.Helper()
		deadline := time.Now().Add(2 * time.Minute)
		for {
			page, err := durable.Events(context.Background(), cl, id, 0)
			if err == nil {
				for _, a := range page.Pending {
					if a.Answer == nil && strings.HasPrefix(a.ID, fmt.Sprintf("toolu_%d#", n)) {
						return a
					}
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("no ask for call %d: %+v %v", n, page, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}

	// 1. The server restarts while the run waits on its first ask.
	ask := waitAskOn(1)
	srv.restart()
	answer(ask)

	// 2. The server restarts in the middle of the (slow) Bash call.
	started := filepath.Join(dir, "started.txt")
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		if b, _ := os.ReadFile(started); strings.Contains(string(b), "start1") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first call did not start")
		}
	}
	srv.restart()
	answer(waitAskOn(2))

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := durable.Wait(ctx, cl, id)
	if err != nil {
		t.Fatal(err)
	}
	if res.Subtype != "success" || res.Text != "done after 2" {
		t.Fatalf("result = %+v", res)
	}
	if got := lines(t, started); !slices.Equal(got, []string{"start1", "start2"}) {
		t.Errorf("started.txt = %v: each call must start exactly once", got)
	}
	if got := lines(t, filepath.Join(dir, "done.txt")); !slices.Equal(got, []string{"1", "2"}) {
		t.Errorf("done.txt = %v", got)
	}
}
