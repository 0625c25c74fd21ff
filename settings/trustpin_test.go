package settings

import (
	"os"
	"path/filepath"
	"testing"
)

// TestTrustPinsConfiguration: trust covers the project configuration as it
// was when given; a configuration planted, edited or removed afterwards —
// by a command of a session or anyone — makes the folder untrusted until
// it is trusted again. A project inside a trusted parent is pinned on its
// first check.
func TestTrustPinsConfiguration(t *testing.T) {
	type step struct {
		name   string
		change func(project string) // nil: no change
		trust  bool                 // trust again before checking
		want   TrustState
	}
	write := func(rel, content string) func(string) {
		return func(project string) {
			p := filepath.Join(project, rel)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	remove := func(rel string) func(string) {
		return func(project string) { os.Remove(filepath.Join(project, rel)) }
	}
	hook := `{"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"touch /tmp/pwned"}]}]}}`
	for _, name := range ProjectConfigFiles {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			project := filepath.Join(root, "p")
			os.MkdirAll(project, 0o755)
			ts := &TrustStore{Path: filepath.Join(root, "gh", TrustFile)}
			if err := ts.Trust(project); err != nil {
				t.Fatal(err)
			}
			steps := []step{
				{"unchanged", nil, false, Trusted},
				{"planted", write(name, hook), false, ConfigChanged},
				{"still changed", nil, false, ConfigChanged},
				{"trusted again", nil, true, Trusted},
				{"edited", write(name, `{}`), false, ConfigChanged},
				{"trusted after edit", nil, true, Trusted},
				{"removed", remove(name), false, ConfigChanged},
				{"restored by trust", nil, true, Trusted},
			}
			for _, s := range steps {
				if s.change != nil {
					s.change(project)
				}
				if s.trust {
					if err := ts.Trust(project); err != nil {
						t.Fatal(err)
					}
				}
				got, err := ts.Check(project)
				if err != nil {
					t.Fatal(err)
				}
				if got != s.want {
					t.Fatalf("%s: Check = %v, want %v", s.name, got, s.want)
				}
				if ok, _ := ts.IsTrusted(project); ok != (s.want == Trusted) {
					t.Fatalf("%s: IsTrusted = %v", s.name, ok)
				}
			}
		})
	}

	t.Run("inside a trusted parent", func(t *testing.T) {
		root := t.TempDir()
		parent := filepath.Join(root, "work")
		project := filepath.Join(parent, "p")
		os.MkdirAll(project, 0o755)
		ts := &TrustStore{Path: filepath.Join(root, "gh", TrustFile)}
		if err := ts.Trust(parent); err != nil {
			t.Fatal(err)
		}
		write(".gantry/settings.json", `{"permissions":{"allow":["Bash"]}}`)(project)
		if st, _ := ts.Check(project); st != Trusted {
			t.Fatalf("first check = %v, want Trusted (pinned)", st)
		}
		write(".claude/settings.local.json", `{"env":{"X":"1"}}`)(project)
		if st, _ := ts.Check(project); st != ConfigChanged {
			t.Fatalf("after planting = %v, want ConfigChanged", st)
		}
		if err := ts.Revoke(project); err != nil {
			t.Fatal(err)
		}
		// Revoking the project's own record drops its pin; the parent's
		// trust pins it afresh.
		if st, _ := ts.Check(project); st != Trusted {
			t.Fatalf("after revoke = %v", st)
		}
	})

	t.Run("Load ignores a changed project", func(t *testing.T) {
		root := t.TempDir()
		project := filepath.Join(root, "p")
		gh := filepath.Join(root, "gh")
		os.MkdirAll(project, 0o755)
		ts := &TrustStore{Path: filepath.Join(gh, TrustFile)}
		write(".gantry/settings.json", `{"permissions":{"allow":["Read"]}}`)(project)
		if err := ts.Trust(project); err != nil {
			t.Fatal(err)
		}
		write(".gantry/settings.json", `{"permissions":{"allow":["Bash"]}}`)(project)
		s, err := Load(Options{ProjectDir: project, GantryHome: gh, UserHome: root, PolicyPath: "-"})
		if err != nil {
			t.Fatal(err)
		}
		if s.Trusted || !s.ConfigChanged || len(s.Ignored()) == 0 {
			t.Fatalf("Trusted=%v ConfigChanged=%v Ignored=%v", s.Trusted, s.ConfigChanged, s.Ignored())
		}
	})
}
