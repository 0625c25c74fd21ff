//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/llm/llmtest"
	"github.com/gantry-dev/gantry/runqueue"
	"github.com/gantry-dev/gantry/sandbox"
	"github.com/gantry-dev/gantry/serveapi"
)

// TestKill9LeavesNothing: every process a Bash command started — a
// setsid-detached one and a double-forked one among them — dies when
// `gantry -p` or `gantry serve` running it is killed with SIGKILL, with
// the sandbox off (a supervisor) and under bubblewrap (its pid namespace),
// and none of them does what it would have done two seconds later. A
// restarted `gantry serve` kills what a dead serve's recorded command left
// and removes its temporary files.
func TestKill9LeavesNothing(t *testing.T) {
	bin := gantryBinary(t)
	backends := []string{"off"}
	if (&sandbox.Bubblewrap{}).Check() == nil {
		backends = append(backends, sandbox.BackendBubblewrap)
	}
	if (&sandbox.Landlock{}).Check() == nil {
		backends = append(backends, sandbox.BackendLandlock)
	}
	for _, backend := range backends {
		t.Run("print/sandbox="+backend, func(t *testing.T) {
			k := newKillCase(t, bin, backend)
			cmd := k.gantry("-p", "go", "--allowedTools", "Bash", "--no-session-persistence")
			k.waitTagged(cmd)
			k.kill9(cmd)
			k.assertClean()
		})
		t.Run("serve/sandbox="+backend, func(t *testing.T) {
			k := newKillCase(t, bin, backend)
			serve := k.gantry("serve", "--http", "127.0.0.1:0")
			c := k.discover(serve)
			run, err := c.Start(context.Background(), runqueue.Request{Prompt: "go", Dir: k.dir,
				Options: runqueue.Options{Allow: []string{"Bash"}}})
			if err != nil {
				t.Fatal(err)
			}
			k.waitTagged(serve)
			var st serveapi.State
			b, _ := os.ReadFile(filepath.Join(k.gh, serveapi.StateFile))
			if err := json.Unmarshal(b, &st); err != nil {
				t.Fatal(err)
			}
			k.kill9(serve)
			k.assertClean()

			// A leftover recorded for the dead serve: a process group
			// still running and a temporary file. A new serve reaps both
			// before it reports the run lost.
			leftover := exec.Command("sh", "-c", "sleep 30."+k.tag+"1; :")
			leftover.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			if err := leftover.Start(); err != nil {
				t.Fatal(err)
			}
			gone := make(chan struct{})
			go func() { leftover.Wait(); close(gone) }()
			temp := filepath.Join(t.TempDir(), "gantry-cwd-leftover")
			if err := os.WriteFile(temp, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the leftover's sleep", func() bool { return len(tagged(k.tag+"1")) > 0 })
			ledger := &sandbox.Ledger{Dir: filepath.Join(k.gh, "procs"), Owner: st.Owner}
			if _, err := ledger.Record(leftover.Process.Pid, leftover.Process.Pid, temp); err != nil {
				t.Fatal(err)
			}
			serve2 := k.gantry("serve", "--http", "127.0.0.1:0")
			c2 := k.discover(serve2)
			select {
			case <-gone:
			case <-time.After(10 * time.Second):
				leftover.Process.Kill()
				t.Fatal("the restarted serve did not kill the leftover")
			}
			if _, err := os.Stat(temp); !os.IsNotExist(err) {
				t.Errorf("the leftover's temporary file stayed: %v", err)
			}
			waitFor(t, "no tagged process", func() bool { return len(tagged(k.tag+"1")) == 0 })
			waitFor(t, "the run reported lost", func() bool {
				r, err := c2.Get(context.Background(), run.ID)
				return err == nil && r.Status == runqueue.StatusLost
			})
			serve2.Process.Signal(syscall.SIGTERM)
			serve2.Wait()
		})
	}
}

// killCase is one run of the kill -9 test: a project directory, a Gantry
// home, a model that asks for the command, and the tag that marks its
// processes.
type killCase struct {
	t       *testing.T
	bin     string
	dir, gh string
	tag     string
	model   *llmtest.Server
	markers []string
	started time.Time
	out     *bytes.Buffer
	backend string
}

func newKillCase(t *testing.T, bin, backend string) *killCase {
	k := &killCase{t: t, bin: bin, dir: t.TempDir(), gh: filepath.Join(t.TempDir(), ".gantry"),
		tag: strconv.Itoa(100000 + rand.IntN(900000)), out: &bytes.Buffer{}, backend: backend}
	if err := os.MkdirAll(k.gh, 0o700); err != nil {
		t.Fatal(err)
	}
	if backend != "off" {
		s := fmt.Sprintf(`{"sandbox":{"enabled":true,"backend":%q}}`, backend)
		if err := os.WriteFile(filepath.Join(k.gh, "settings.json"), []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	k.markers = []string{filepath.Join(k.dir, "marker-setsid"), filepath.Join(k.dir, "marker-fork"), filepath.Join(k.dir, "marker-child")}
	// Each would write its marker two seconds later; the tag is in the
	// argv of every process (sleep 2.TAG is a valid duration).
	later := func(m string) string { return fmt.Sprintf(`sh -c 'sleep 2.%s; touch %s' %s`, k.tag, m, k.tag) }
	command := fmt.Sprintf("setsid %s & ( ( %s & ) & ) ; %s & sleep 30.%s",
		later(k.markers[0]), later(k.markers[1]), later(k.markers[2]), k.tag)
	in, _ := json.Marshal(map[string]any{"command": command, "timeout": 60000})
	k.model = llmtest.NewServer(t)
	k.model.Script(llmtest.ToolReply(llmtest.ToolCall{ID: "sh", Name: "Bash", Input: string(in)}), llmtest.TextReply("done"))
	return k
}

// gantry starts the binary.
func (k *killCase) gantry(args ...string) *exec.Cmd {
	cmd := exec.Command(k.bin, args...)
	cmd.Dir = k.dir
	cmd.Env = append(os.Environ(), "ANTHROPIC_BASE_URL="+k.model.URL(), "ANTHROPIC_API_KEY=k", "HOME="+filepath.Dir(k.gh),
		"GANTRY_HOME="+k.gh, "OPENAI_API_KEY=", "OPENAI_BASE_URL=")
	cmd.Stdout, cmd.Stderr = k.out, k.out
	if err := cmd.Start(); err != nil {
		k.t.Fatal(err)
	}
	k.t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return cmd
}

// discover waits for a serve process's API.
func (k *killCase) discover(cmd *exec.Cmd) *serveapi.Client {
	deadline := time.Now().Add(15 * time.Second)
	for {
		c, err := serveapi.Discover(k.gh)
		if err == nil {
			var st serveapi.State
			b, _ := os.ReadFile(filepath.Join(k.gh, serveapi.StateFile))
			if json.Unmarshal(b, &st) == nil && st.PID == cmd.Process.Pid {
				return c
			}
		}
		if time.Now().After(deadline) {
			k.t.Fatalf("serve did not start: %v\n%s", err, k.out)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitTagged waits until the command's processes all run: the three
// delayed ones and the command's own sleep.
func (k *killCase) waitTagged(cmd *exec.Cmd) {
	k.started = time.Now()
	deadline := time.Now().Add(15 * time.Second)
	for len(tagged(k.tag)) < 7 { // 3 × (sh + sleep) + sleep 30
		if time.Now().After(deadline) {
			k.t.Fatalf("the command's processes did not start (%d): %s", len(tagged(k.tag)), k.out)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Under bubblewrap the command runs in a pid namespace of its own.
	self, _ := os.Readlink("/proc/self/ns/pid")
	inside := 0
	for _, p := range tagged(k.tag) {
		if ns, _ := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", p)); ns != self {
			inside++
		}
	}
	if (inside > 0) != (k.backend == sandbox.BackendBubblewrap) {
		k.t.Fatalf("sandbox %s but %d processes of the command run in another pid namespace", k.backend, inside)
	}
}

func (k *killCase) kill9(cmd *exec.Cmd) {
	if err := cmd.Process.Kill(); err != nil {
		k.t.Fatal(err)
	}
	cmd.Wait()
}

// assertClean: within a second no process of the command is left, and
// none of the markers appears after the time they were due.
func (k *killCase) assertClean() {
	k.t.Helper()
	deadline := time.Now().Add(time.Second)
	for {
		left := tagged(k.tag)
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			for _, p := range left {
				syscall.Kill(p, syscall.SIGKILL)
			}
			k.t.Fatalf("processes of the command survived gantry's SIGKILL: %v", left)
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(time.Until(k.started.Add(2500 * time.Millisecond)))
	for _, m := range k.markers {
		if _, err := os.Stat(m); err == nil {
			k.t.Errorf("%s was written after gantry died", filepath.Base(m))
		}
	}
}

// tagged lists the processes whose command line holds tag.
func tagged(tag string) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !strings.Contains(string(b), tag) {
			continue
		}
		if st, err := os.ReadFile("/proc/" + e.Name() + "/stat"); err == nil {
			if i := strings.LastIndexByte(string(st), ')'); i > 0 && strings.HasPrefix(string(st[i+1:]), " Z") {
				continue // a zombie is dead
			}
		}
		out = append(out, pid)
	}
	return out
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
