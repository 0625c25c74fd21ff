package sandbox

import (
	"context"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func newTextLogger(w io.Writer) *slog.Logger { return slog.New(slog.NewTextHandler(w, nil)) }

type fakeResolver struct{}

func (fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	switch host {
	case "localhost":
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	case "rebind.github.com":
		return []netip.Addr{netip.MustParseAddr("10.0.0.7")}, nil
	case "mixed.github.com":
		return []netip.Addr{netip.MustParseAddr("140.82.112.3"), netip.MustParseAddr("::ffff:192.168.1.1")}, nil
	}
	return []netip.Addr{netip.MustParseAddr("93.184.215.14")}, nil
}

func TestExcluded(t *testing.T) {
	pats := []string{"docker", "git push:*", "make test", "npm run *"}
	for _, tc := range []struct {
		cmd string
		ok  bool
	}{
		{"docker ps", true}, {"docker", true}, {"git push origin main", true}, {"make test", true},
		{"make test -j4", true}, {"npm run build", true},
		{"dockerd", false}, {"git pull", false}, {"make", false},
		{"docker ps; rm -rf ~", false}, {"docker ps && curl x", false}, {"docker ps | sh", false},
		{"docker $(id)", false}, {"FOO=1 docker ps", false}, {"docker ps &", false},
		{"$D ps", false}, {"docker *", false}, {"eval docker ps", false}, {"ls | | wc", false},
		{"(docker ps)", true}, // a subshell of one command is that command
	} {
		if got := Excluded(tc.cmd, pats); got != tc.ok {
			t.Errorf("Excluded(%q) = %v", tc.cmd, got)
		}
	}
	if Excluded("docker ps", nil) {
		t.Error("no patterns")
	}
}

func FuzzExcluded(f *testing.F) {
	for _, s := range []string{"docker ps", "docker ps; x", "docker $(x)", "a=1 docker", "docker\nrm"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		if !Excluded(cmd, []string{"docker"}) {
			return
		}
		// Whatever matched must be one plain docker command.
		for _, bad := range []string{";", "&", "|", "$(", "`", "\n"} {
			if strings.Contains(cmd, bad) && !strings.Contains(cmd, "'") && !strings.Contains(cmd, `"`) && !strings.Contains(cmd, `\`) && !strings.Contains(cmd, "#") {
				t.Fatalf("excluded a compound command: %q", cmd)
			}
		}
	})
}

// BenchmarkTrue measures a sandboxed `bash -c true` against an
// uncontained one: the backend's overhead per call.
func BenchmarkTrue(b *testing.B) {
	dir := b.TempDir()
	p := &Policy{Write: []string{dir}, Hide: []string{"/root/.ssh"}}
	for _, be := range []Backend{None{}, &Bubblewrap{}, &Landlock{}} {
		if c, ok := be.(interface{ Check() error }); ok {
			if err := c.Check(); err != nil {
				b.Logf("%s: %v", be.Name(), err)
				continue
			}
		}
		b.Run(be.Name(), func(b *testing.B) {
			for b.Loop() {
				cmd := exec.Command("bash", "--noprofile", "--norc", "-c", "true")
				cmd.Dir = dir
				release, err := be.Wrap(cmd, p)
				if err != nil {
					b.Fatal(err)
				}
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("%v: %s", err, out)
				}
				release()
			}
		})
		if be.Name() == BackendNone {
			continue
		}
		// The session's Wrap: the backend plus the protected-path guard
		// (a .git, .gantry and hooks to record before and check after).
		b.Run(be.Name()+"+guard", func(b *testing.B) {
			proj := b.TempDir()
			for _, d := range []string{".git/hooks", ".git/info", ".gantry"} {
				os.MkdirAll(filepath.Join(proj, d), 0o755)
			}
			for _, f := range []string{".git/config", ".git/HEAD", ".git/hooks/pre-commit", ".git/info/exclude", ".gantry/settings.json"} {
				os.WriteFile(filepath.Join(proj, f), []byte("x\n"), 0o644)
			}
			s, err := New(Options{Enabled: true, backend: be, TempDir: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			sp := s.Policy(proj)
			for b.Loop() {
				cmd := exec.Command("bash", "--noprofile", "--norc", "-c", "true")
				cmd.Dir = proj
				release, err := s.WrapGuarded(cmd, sp)
				if err != nil {
					b.Fatal(err)
				}
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("%v: %s", err, out)
				}
				if rs := release(); len(rs) != 0 {
					b.Fatalf("reverted %+v", rs)
				}
			}
		})
	}
}
