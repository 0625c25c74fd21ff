package permission

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gantry-dev/gantry/tool"
)

func TestResolvePath(t *testing.T) {
	w := newWorld(t)
	deep := filepath.Join(w.root, "elsewhere", "deep")
	must(t, os.MkdirAll(deep, 0o755))
	must(t, os.WriteFile(filepath.Join(w.root, "elsewhere", "secret"), []byte("s"), 0o600))
	must(t, os.Symlink(deep, filepath.Join(w.work, "l")))
	must(t, os.Symlink("src", filepath.Join(w.work, "rel")))
	must(t, os.Symlink("loop2", filepath.Join(w.work, "loop1")))
	must(t, os.Symlink("loop1", filepath.Join(w.work, "loop2")))
	must(t, os.Symlink(filepath.Join(w.work, "l"), filepath.Join(w.work, "chain")))
	cases := map[string]string{
		filepath.Join(w.work, "l") + "/../secret":   filepath.Join(w.root, "elsewhere", "secret"),
		filepath.Join(w.work, "rel", "x.go"):        filepath.Join(w.work, "src", "x.go"),
		filepath.Join(w.work, "chain", "new", "f"):  filepath.Join(deep, "new", "f"),
		filepath.Join(w.work, "missing", "..", "a"): filepath.Join(w.work, "a"),
		"/": "/",
	}
	for in, want := range cases {
		if got := resolvePath(in); got != want {
			t.Errorf("resolvePath(%s) = %s, want %s", in, got, want)
		}
	}
	// Existing paths agree with the standard library.
	for _, p := range []string{filepath.Join(w.work, "rel"), filepath.Join(w.work, "chain"), w.work} {
		std, err := filepath.EvalSymlinks(p)
		must(t, err)
		if got := resolvePath(p); got != std {
			t.Errorf("resolvePath(%s) = %s, EvalSymlinks = %s", p, got, std)
		}
	}
	// A loop ends.
	_ = resolvePath(filepath.Join(w.work, "loop1", "x"))

	runCases(t, w, []decisionCase{
		{name: "dotdot after symlink is physical", call: call1{tool: "Read", input: file("l/../secret")}, want: tool.Ask},
		{name: "dotdot after symlink denied", deny: []string{"Read(//" + filepath.Join(w.root, "elsewhere", "secret")[1:] + ")"}, call: call1{tool: "Read", input: file("l/../secret")}, want: tool.Deny},
		{name: "relative symlink inside", call: call1{tool: "Edit", input: file("rel/x.go"), mode: tool.ModeAcceptEdits}, want: tool.Allow},
		{name: "loop is a clear error, not a hang", call: call1{tool: "Edit", input: file("loop1/x"), mode: tool.ModeAcceptEdits}, want: tool.Deny, wantReasonIn: "symbolic links"},
	})
}
