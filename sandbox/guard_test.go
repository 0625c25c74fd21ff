package sandbox

import (
	"os"
	"path/filepath"
	"testing"
)

// TestGuardRuns checks the guard's bookkeeping directly on the host (no
// sandbox): each command is compared with its own start, host changes
// between commands stay, and a command that began after another's change
// does not put that change back once it was reverted.
func TestGuardRuns(t *testing.T) {
	proj := t.TempDir()
	cfg := filepath.Join(proj, ".git", "config")
	envrc := filepath.Join(proj, ".envrc")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(proj, ".git", "hooks"), 0o755))
	must(os.WriteFile(cfg, []byte("original\n"), 0o644))
	read := func(p string) string {
		data, err := os.ReadFile(p)
		if err != nil {
			return "<absent>"
		}
		return string(data)
	}
	g := &guard{qparent: t.TempDir()}

	// A change on the host between commands is kept.
	if rs := g.end(g.begin([]string{proj})); len(rs) != 0 {
		t.Fatalf("nothing changed, reverted %+v", rs)
	}
	must(os.WriteFile(cfg, []byte("edited by the user\n"), 0o644))
	if rs := g.end(g.begin([]string{proj})); len(rs) != 0 || read(cfg) != "edited by the user\n" {
		t.Fatalf("host change reverted: %+v %q", rs, read(cfg))
	}

	// A long-running command does not freeze the starting state of the
	// others.
	long := g.begin([]string{proj})
	must(os.WriteFile(cfg, []byte("edited again\n"), 0o644))
	if rs := g.end(g.begin([]string{proj})); len(rs) != 0 || read(cfg) != "edited again\n" {
		t.Fatalf("host change during a long command: %+v %q", rs, read(cfg))
	}
	g.end(long) // counts the edit as the long command's: reverted
	if read(cfg) != "edited by the user\n" {
		t.Fatalf("long command's end: %q", read(cfg))
	}

	// Overlapping commands: a plants and changes, b begins, a ends
	// (reverted), b ends (nothing more to do, and a's change stays undone).
	a := g.begin([]string{proj})
	must(os.WriteFile(envrc, []byte("evil\n"), 0o644))
	must(os.WriteFile(cfg, []byte("evil\n"), 0o644))
	b := g.begin([]string{proj})
	ra := g.end(a)
	if len(ra) != 2 || read(envrc) != "<absent>" || read(cfg) != "edited by the user\n" {
		t.Fatalf("a: %+v envrc %q config %q", ra, read(envrc), read(cfg))
	}
	for _, r := range ra {
		if !r.Restored || (r.Path == envrc && read(r.Quarantine) != "evil\n") {
			t.Errorf("a: %+v", r)
		}
	}
	if rb := g.end(b); len(rb) != 0 || read(cfg) != "edited by the user\n" || read(envrc) != "<absent>" {
		t.Fatalf("b put a's change back: %+v config %q envrc %q", rb, read(cfg), read(envrc))
	}
	if len(g.runs) != 0 {
		t.Errorf("runs left: %d", len(g.runs))
	}
}
