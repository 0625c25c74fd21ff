package permission

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gantry-dev/gantry/tool"
)

// TestDecisionRecordsCheckedTargets: an allowed file call — or one that
// asks, which an answer may allow — records, for the path as the input
// wrote it, the file it resolved to (links resolved, ".." applied after a
// link physically); a denied call records nothing.
func TestDecisionRecordsCheckedTargets(t *testing.T) {
	w := newWorld(t)
	os.Symlink("src", filepath.Join(w.work, "l"))
	os.WriteFile(filepath.Join(w.work, "src", "a.go"), nil, 0o644)
	e := w.engine(t, nil, []string{"Read(./secret)"}, nil)
	cases := []struct {
		tool, path string
		mode       tool.Mode
		want       string // "" = no record
	}{
		{"Read", "l/a.go", tool.ModeDefault, filepath.Join(w.work, "src", "a.go")},
		{"Edit", "l/new.go", tool.ModeAcceptEdits, filepath.Join(w.work, "src", "new.go")},
		{"Write", filepath.Join(w.work, "l", "..", "x"), tool.ModeAcceptEdits, filepath.Join(w.work, "x")},
		{"Edit", "l/a.go", tool.ModeDefault, filepath.Join(w.work, "src", "a.go")}, // asks
		{"Read", "secret", tool.ModeDefault, ""},                                   // denied
	}
	for _, c := range cases {
		in := map[string]any{"file_path": c.path}
		if c.tool == "Edit" {
			in["old_string"], in["new_string"] = "a", "b"
		}
		if c.tool == "Write" {
			in["content"] = "x"
		}
		d := w.decide(t, e, call1{tool: c.tool, input: in, mode: c.mode})
		if got := d.Checked[c.path]; got != c.want || (c.want == "" && d.Checked != nil) {
			t.Errorf("%s %s (%s): Checked %v, want %q", c.tool, c.path, d.Behavior, d.Checked, c.want)
		}
	}
}
