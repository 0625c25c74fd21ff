package shell

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/gantry-dev/gantry/sandbox"
	"github.com/gantry-dev/gantry/tool"
)

func TestMain(m *testing.M) {
	sandbox.Main() // the test binary is the sandbox helper
	goleak.VerifyTestMain(m)
}

// testEnv returns an environment with a fresh working directory, results
// directory and (if tasks is non-nil) a task manager.
func testEnv(t *testing.T, tasks *Jobs) *tool.Env {
	t.Helper()
	env := &tool.Env{ToolUseID: "toolu_test", WorkDir: t.TempDir(), ToolResultsDir: t.TempDir(), Services: &tool.Services{}}
	if tasks != nil {
		tool.Provide(env.Services, tasks)
	}
	return env
}

// pgidMembers returns the pids whose process group is pgid (zombies
// included: they still hold the group until reaped).
func pgidMembers(pgid int) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp …; comm may contain spaces.
		s := string(data)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 3 {
			continue
		}
		if g, _ := strconv.Atoi(f[2]); g == pgid {
			out = append(out, pid)
		}
	}
	return out
}

// pidAlive reports whether pid exists and is not a zombie.
func pidAlive(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && !strings.HasPrefix(strings.TrimSpace(s[i+1:]), "Z")
}

// waitGone waits (polling, up to 5 s) until no live process is in the
// group, and fails the test otherwise. Zombies are waited for as well:
// after SIGKILL they disappear once init reaps them.
func waitGone(t *testing.T, pgid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		var alive []int
		for _, pid := range pgidMembers(pgid) {
			if pidAlive(pid) {
				alive = append(alive, pid)
			}
		}
		if len(alive) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes of group %d still alive: %v", pgid, alive)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// firstInt parses the first line of s that is an integer.
func firstInt(t *testing.T, s string) int {
	t.Helper()
	for _, line := range strings.Split(s, "\n") {
		if n, err := strconv.Atoi(strings.TrimSpace(line)); err == nil {
			return n
		}
	}
	t.Fatalf("no integer line in %q", s)
	return 0
}

func structured[T any](t *testing.T, r *tool.Result) T {
	t.Helper()
	v, ok := r.Structured.(T)
	if !ok {
		t.Fatalf("Structured is %T, want %T", r.Structured, v)
	}
	return v
}
