package sandbox

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/gantry-dev/gantry/sandbox/sandboxtest"
)

// The escape table: what a command that wants out of the sandbox tries,
// under each backend that works here, with no permission analysis in
// front (the sandbox alone must hold). Run as root it also checks that
// root inside has no power left.

// containedBackends are the real backends that work here.
func containedBackends(t *testing.T) []Backend {
	t.Helper()
	var out []Backend
	for _, b := range backends(t) {
		if b.Name() != BackendNone {
			out = append(out, b)
		}
	}
	if len(out) == 0 {
		t.Skip("no sandbox backend works on this machine")
	}
	return out
}

// newGuarded is a session sandbox with backend b forced.
func newGuarded(t *testing.T, b Backend, opts Options) *Sandbox {
	t.Helper()
	opts.Enabled, opts.backend = true, b
	if opts.QuarantineDir == "" {
		opts.QuarantineDir = t.TempDir()
	}
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// runGuarded runs script with bash in dir through s and returns its
// output, exit code and what the guard reverted.
func runGuarded(t *testing.T, s *Sandbox, p *Policy, dir, script string) (runResult, []Reverted) {
	t.Helper()
	cmd := exec.Command("bash", "--noprofile", "--norc", "-c", script)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "LANG=C", "HOME=" + dir}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	release, err := s.WrapGuarded(cmd, p)
	if err != nil {
		t.Fatalf("Wrap: %v", err)
	}
	err = cmd.Run()
	rs := release()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run: %v", err)
	}
	return runResult{out.String(), code}, rs
}

func TestEscapeKernel(t *testing.T) {
	for _, b := range containedBackends(t) {
		t.Run(b.Name(), func(t *testing.T) {
			s := newGuarded(t, b, Options{})
			proj := sandboxtest.Outside(t, "escape")
			p := s.Policy(proj)
			for _, tc := range []struct {
				name, script string
				// ok reports whether the output shows the escape failed.
				ok func(r runResult) bool
			}{
				{"capabilities are zero", "grep -E '^(Cap(Inh|Prm|Eff|Bnd|Amb)|NoNewPrivs):' /proc/self/status", func(r runResult) bool {
					for _, l := range strings.Split(strings.TrimSpace(r.out), "\n") {
						f := strings.Fields(l)
						if len(f) != 2 || (f[0] == "NoNewPrivs:" && f[1] != "1") || (f[0] != "NoNewPrivs:" && strings.Trim(f[1], "0") != "") {
							return false
						}
					}
					return strings.Count(r.out, "\n") == 6
				}},
				{"remount / read-write", "mount -o remount,rw / && echo ESCAPED; touch /usr/escape-test && echo ESCAPED", nil},
				{"unmount /proc", "umount /proc && echo ESCAPED; umount -l /proc && echo ESCAPED", nil},
				{"new mount", "mount -t tmpfs none " + proj + " && echo ESCAPED", nil},
				{"setns into pid 1's network", "nsenter --net=/proc/1/ns/net true && echo ESCAPED", nil},
				{"setns into pid 1's mounts", "nsenter --mount=/proc/1/ns/mnt true && echo ESCAPED", nil},
				{"unshare -r", "unshare -r true && echo ESCAPED; unshare -Urm true && echo ESCAPED", nil},
				{"unshare -m", "unshare -m true && echo ESCAPED; unshare -n true && echo ESCAPED", nil},
				{"chroot", "chroot / true && echo ESCAPED", nil},
				{"ptrace", "python3 -c 'import ctypes,sys; sys.exit(0 if ctypes.CDLL(None).ptrace(0,0,0,0)==0 else 1)' && echo ESCAPED", nil},
			} {
				t.Run(tc.name, func(t *testing.T) {
					r, _ := runGuarded(t, s, p, proj, tc.script)
					bad := strings.Contains(r.out, "ESCAPED")
					if tc.ok != nil {
						bad = !tc.ok(r)
					}
					if bad {
						t.Errorf("escape: %q", r.out)
					}
				})
			}
			if _, err := os.Stat("/usr/escape-test"); err == nil {
				os.Remove("/usr/escape-test")
				t.Error("a file was written to /usr")
			}
		})
	}
}

// unixServer listens on a Unix socket (a path, or an abstract name with
// a leading "@") and counts connections.
func unixServer(t *testing.T, addr string) *atomic.Int32 {
	t.Helper()
	ln, err := net.Listen("unix", addr)
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int32
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			c.Write([]byte("HOST-SOCKET\n"))
			c.Close()
		}
	}()
	t.Cleanup(func() { ln.Close(); <-done })
	return &n
}

func TestEscapeUnixSockets(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is needed as the socket client")
	}
	for _, b := range containedBackends(t) {
		t.Run(b.Name(), func(t *testing.T) {
			dir := sandboxtest.Outside(t, "unixsock")
			sock := filepath.Join(dir, "host.sock")
			abstract := fmt.Sprintf("@gantry-escape-%d", os.Getpid())
			nPath, nAbs := unixServer(t, sock), unixServer(t, abstract)
			client := func(addr string) string {
				if strings.HasPrefix(addr, "@") {
					addr = `\0` + addr[1:]
				}
				return `python3 -c "import socket; s=socket.socket(socket.AF_UNIX); s.connect('` + addr + `'); print(s.recv(64).decode())" 2>&1; ` +
					`python3 -c "import socket; a,b=socket.socketpair(); a.send(b'PAIR-OK'); print(b.recv(7).decode())"`
			}
			for _, net := range []Network{NetworkNone, NetworkProxy, NetworkFull} {
				opts := Options{FullNetwork: net == NetworkFull}
				if net == NetworkProxy {
					// The bridge dials the proxy's Unix socket; the
					// command under it may not open one.
					opts.AllowedDomains = []string{"example.com"}
				}
				s := newGuarded(t, b, opts)
				p := s.Policy(dir)
				if p.Network != net {
					t.Fatalf("policy network %v, want %v", p.Network, net)
				}
				r, _ := runGuarded(t, s, p, dir, client(sock)+"; "+client(abstract))
				if strings.Contains(r.out, "HOST-SOCKET") || nPath.Load() != 0 || nAbs.Load() != 0 {
					t.Errorf("network %v: a host Unix socket is reachable: %q", net, r.out)
				}
				if strings.Count(r.out, "PAIR-OK") != 2 {
					t.Errorf("network %v: socketpair must work: %q", net, r.out)
				}
			}
			// A named socket is reachable (the control: the client works).
			s := newGuarded(t, b, Options{AllowUnixSockets: []string{sock}})
			r, _ := runGuarded(t, s, s.Policy(dir), dir, client(sock))
			if !strings.Contains(r.out, "HOST-SOCKET") || nPath.Load() != 1 {
				t.Errorf("allowUnixSockets: the named socket is not reachable: %q", r.out)
			}
		})
	}
}

// protectedState describes the protected paths of proj on the host: each
// one absent, or its type, mode and content (for a git directory its
// identity only; its protected entries are listed themselves).
func protectedState(t *testing.T, proj string) string {
	t.Helper()
	var b strings.Builder
	for _, pp := range protectedIn(proj) {
		fi, err := os.Lstat(pp.path)
		if err != nil {
			fmt.Fprintf(&b, "%s absent\n", pp.path)
			continue
		}
		if pp.gitDir {
			id := idOf(fi)
			fmt.Fprintf(&b, "%s gitdir %d:%d\n", pp.path, id.dev, id.ino)
			continue
		}
		filepath.WalkDir(pp.path, func(q string, d fs.DirEntry, err error) error {
			if err != nil {
				fmt.Fprintf(&b, "%s error\n", q)
				return nil
			}
			fi, _ := os.Lstat(q)
			fmt.Fprintf(&b, "%s %v", q, fi.Mode())
			switch {
			case fi.Mode()&fs.ModeSymlink != 0:
				l, _ := os.Readlink(q)
				fmt.Fprintf(&b, " -> %s", l)
			case fi.Mode().IsRegular():
				data, _ := os.ReadFile(q)
				fmt.Fprintf(&b, " %x", sha256.Sum256(data))
			}
			b.WriteByte('\n')
			return nil
		})
	}
	return b.String()
}

// newRepo makes a project with a git repository (one commit, a hook, a
// linked worktree outside the project) and some protected files.
func newRepo(t *testing.T) (proj string) {
	t.Helper()
	base := sandboxtest.Outside(t, "protect")
	proj = filepath.Join(base, "proj")
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.email=t@example.com", "-c", "user.name=t", "-c", "init.defaultBranch=main"}, args...)...)
		cmd.Dir = proj
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
	if err := os.MkdirAll(filepath.Join(proj, ".gantry"), 0o755); err != nil {
		t.Fatal(err)
	}
	git("init", "-q")
	for p, s := range map[string]string{
		"file.txt":               "content\n",
		".gantry/settings.json":  "{}\n",
		".git/hooks/pre-commit":  "#!/bin/sh\nexit 0\n",
		".bashrc":                "# rc\n",
		"evil/config":            "[core]\n\tfsmonitor = touch /tmp/pwned\n",
		"evil/hooks/post-commit": "#!/bin/sh\ntouch /tmp/pwned\n",
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(proj, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(proj, p), []byte(s), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	git("add", "file.txt")
	git("commit", "-qm", "first")
	git("worktree", "add", "-q", filepath.Join(base, "wt"))
	return proj
}

func TestEscapeProtectedPaths(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is needed")
	}
	attacks := []struct{ name, script string }{
		// Create what does not exist yet.
		{"create .claude/settings.json", `mkdir -p .claude && echo '{"hooks":{}}' > .claude/settings.json`},
		{"create .mcp.json", `echo '{"mcpServers":{}}' > .mcp.json`},
		{"create .vscode/tasks.json", `mkdir .vscode; echo '{}' > .vscode/tasks.json`},
		{"create .gitmodules", `printf '[submodule "x"]\n\tpath = x\n' > .gitmodules`},
		{"create .envrc", `echo 'touch /tmp/pwned' > .envrc`},
		{"create .hg/hgrc", `mkdir -p .hg && echo '[hooks]' > .hg/hgrc`},
		{"create .idea and .husky", `mkdir .idea .husky && touch .idea/workspace.xml .husky/pre-commit`},
		{"create .zshenv", `echo evil > .zshenv`},
		{"create .git/commondir", `echo "$PWD/evil" > .git/commondir`},
		{"symlink .git/commondir", `ln -s "$PWD/evil" .git/commondir`},
		{"create .git/config.worktree", `echo '[core]' > .git/config.worktree`},
		{"repoint worktree commondir", `for f in .git/worktrees/*/commondir; do echo "$PWD/evil" > "$f"; done`},
		// Change and replace what exists.
		{"append to .git/config", `printf '[core]\n\tfsmonitor = touch /tmp/pwned\n' >> .git/config`},
		{"replace .git/config", `rm -f .git/config; cp evil/config .git/config`},
		{"rename over .git/config", `cp evil/config c2 && mv -f c2 .git/config`},
		{"new hook", `echo evil > .git/hooks/post-checkout; chmod +x .git/hooks/post-checkout`},
		{"change hook", `echo evil >> .git/hooks/pre-commit`},
		{"replace hooks dir", `mv .git/hooks h; mkdir .git/hooks; cp evil/hooks/post-commit .git/hooks/`},
		{"symlink hooks dir", `rm -rf .git/hooks; ln -s "$PWD/evil/hooks" .git/hooks`},
		{"change .gantry/settings.json", `echo '{"permissions":{"allow":["Bash"]}}' > .gantry/settings.json`},
		{"replace .gantry", `mv .gantry g; mkdir .gantry; echo '{}' > .gantry/settings.json`},
		{"remove .gantry", `rm -rf .gantry`},
		{"change .bashrc", `echo evil >> .bashrc`},
		// Move, replace and link .git itself.
		{"move .git", `mv .git moved-git`},
		{"replace .git", `mv .git old-git; mkdir .git; cp -r old-git/objects old-git/refs old-git/HEAD .git/; cp evil/config .git/config`},
		{"replace .git by a gitfile", `mv .git old-git; echo "gitdir: $PWD/evil" > .git`},
		{"hard link .git/config", `ln .git/config cfg; echo evil >> cfg`},
		{"cp -al .git", `cp -al .git g2; echo evil >> g2/config; echo evil >> g2/hooks/pre-commit`},
		{"hard link over .bashrc", `echo evil > x; ln -f x .bashrc`},
	}
	for _, b := range containedBackends(t) {
		t.Run(b.Name(), func(t *testing.T) {
			s := newGuarded(t, b, Options{})
			for _, a := range attacks {
				t.Run(a.name, func(t *testing.T) {
					proj := newRepo(t)
					before := protectedState(t, proj)
					r, rs := runGuarded(t, s, s.Policy(proj), proj, a.script)
					t.Logf("exit %d, output %q, reverted %d: %s", r.code, r.out, len(rs), Notice(rs))
					if after := protectedState(t, proj); after != before {
						t.Errorf("protected paths changed on the host:\n%s\nwas\n%s\n(output %q, reverted %+v)", after, before, r.out, rs)
					}
					for _, x := range rs {
						if !x.Restored {
							t.Errorf("not restored: %+v", x)
						}
						if x.Quarantine != "" && !strings.HasPrefix(x.Quarantine, s.guard.qparent) {
							t.Errorf("quarantine outside its directory: %+v", x)
						}
					}
					if len(rs) > 0 && !strings.Contains(Notice(rs), rs[0].Path) {
						t.Errorf("notice: %s", Notice(rs))
					}
					// git still works on the host repository afterwards.
					cmd := exec.Command("git", "status", "--porcelain")
					cmd.Dir = proj
					if out, err := cmd.CombinedOutput(); err != nil {
						t.Errorf("git status after the attack: %v: %s", err, out)
					}
					if _, err := os.Stat("/tmp/pwned"); err == nil {
						os.Remove("/tmp/pwned")
						t.Errorf("a planted hook ran on the host")
					}
				})
			}
		})
	}
}

// TestProtectedWorkStillRuns: ordinary git work inside the sandbox is not
// reverted (the guard's control case), and a name created in a writable
// directory that is not protected stays.
func TestProtectedWorkStillRuns(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is needed")
	}
	for _, b := range containedBackends(t) {
		t.Run(b.Name(), func(t *testing.T) {
			s := newGuarded(t, b, Options{})
			proj := newRepo(t)
			before := protectedState(t, proj)
			r, rs := runGuarded(t, s, s.Policy(proj), proj,
				`set -e; echo more >> file.txt; echo new > new.txt; mkdir -p sub/.cache; git add file.txt new.txt; `+
					`git -c user.email=t@example.com -c user.name=t commit -qm second; git checkout -qb topic; git log --oneline | wc -l`)
			if r.code != 0 || strings.TrimSpace(r.out) != "2" {
				t.Fatalf("git work inside the sandbox failed (%d): %q", r.code, r.out)
			}
			if len(rs) != 0 {
				t.Errorf("ordinary work reverted: %+v", rs)
			}
			if after := protectedState(t, proj); after != before {
				t.Errorf("protected state changed by ordinary work:\n%s\nwas\n%s", after, before)
			}
			if _, err := os.Stat(filepath.Join(proj, "new.txt")); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestProtectedList(t *testing.T) {
	proj := t.TempDir()
	ps := Protected(proj)
	for _, n := range []string{".git", ".gantry", ".claude", ".mcp.json", ".vscode", ".idea", ".husky", ".gitmodules", ".envrc", ".hg", ".gitconfig", ".npmrc", ".bashrc", ".zshrc", ".profile"} {
		if !slices.Contains(ps, filepath.Join(proj, n)) {
			t.Errorf("%s is not protected", n)
		}
	}
	if err := os.MkdirAll(filepath.Join(proj, ".git", "worktrees", "w"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(proj, ".git", "modules", "a", "b"), 0o755)
	os.WriteFile(filepath.Join(proj, ".git", "modules", "a", "b", "HEAD"), nil, 0o644)
	os.WriteFile(filepath.Join(proj, ".gitmodules"), []byte("[submodule \"s\"]\n\tpath = lib/s\n\turl = x\n[submodule \"bad\"]\n\tpath = ../out\n"), 0o644)
	ps = Protected(proj)
	for _, want := range []string{".git/config", ".git/hooks", ".git/commondir", ".git/info", ".git/config.worktree",
		".git/worktrees/w/commondir", ".git/worktrees/w/gitdir", ".git/modules/a/b/config", ".git/modules/a/b/hooks", "lib/s/.git"} {
		if !slices.Contains(ps, filepath.Join(proj, want)) {
			t.Errorf("%s is not protected", want)
		}
	}
	for _, p := range ps {
		if !strings.HasPrefix(p, proj+"/") {
			t.Errorf("protected path outside the directory: %s", p)
		}
	}
}
