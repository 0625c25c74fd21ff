package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestPolicyRootsFixed: with Roots, the writable directories are the roots
// resolved when the sandbox was made, whatever directory a command runs in
// or which directories the caller passes.
func TestPolicyRootsFixed(t *testing.T) {
	base := t.TempDir()
	project := filepath.Join(base, "project")
	granted := filepath.Join(base, "granted")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{project, granted, outside, filepath.Join(project, "sub")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink(project, link); err != nil {
		t.Fatal(err)
	}
	sb, err := New(Options{Enabled: true, backend: None{}, Roots: []string{link, granted, link}, TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	rp, _ := filepath.EvalSymlinks(project)
	rg, _ := filepath.EvalSymlinks(granted)
	if got := sb.Roots(); !slices.Equal(got, []string{rp, rg}) {
		t.Fatalf("Roots = %v", got)
	}
	for _, wd := range []string{outside, filepath.Join(project, "sub"), "/"} {
		p := sb.Policy(wd, outside)
		if slices.Contains(p.Write, outside) || slices.Contains(p.Write, "/") {
			t.Errorf("Policy(%s) made %v writable", wd, p.Write)
		}
		if !slices.Contains(p.Write, rp) || !slices.Contains(p.Write, rg) {
			t.Errorf("Policy(%s).Write = %v, want the roots", wd, p.Write)
		}
	}
	// Moving the link after the start changes nothing.
	os.Remove(link)
	os.Symlink(outside, link)
	if p := sb.Policy(link); slices.Contains(p.Write, outside) {
		t.Errorf("a re-pointed root link widened the area: %v", p.Write)
	}
	for dir, want := range map[string]bool{project: true, filepath.Join(project, "sub"): true, granted: true,
		outside: false, base: false, project + "x": false, link: false} {
		if got := sb.Inside(dir); got != want {
			t.Errorf("Inside(%s) = %v, want %v", dir, got, want)
		}
	}
}
