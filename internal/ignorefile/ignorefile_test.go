package ignorefile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

func TestParse(t *testing.T) {
	pats := Parse([]byte("# comment\r\n\r\n*.log\r\n!keep.log\nbuild/\n  \n/top\n"), nil)
	if len(pats) != 4 {
		t.Fatalf("%d patterns, want 4", len(pats))
	}
	m := gitignore.NewMatcher(pats)
	for _, tc := range []struct {
		path  string
		isDir bool
		want  bool
	}{
		{"a.log", false, true},
		{"sub/b.log", false, true},
		{"keep.log", false, false},
		{"build", true, true},
		{"build", false, false},
		{"top", false, true},
		{"sub/top", false, false},
		{"# comment", false, false},
	} {
		if got := m.Match(strings.Split(tc.path, "/"), tc.isDir); got != tc.want {
			t.Errorf("%s (dir %v): ignored = %v, want %v", tc.path, tc.isDir, got, tc.want)
		}
	}
	sub := Parse([]byte("x\n"), []string{"sub"})
	if m := gitignore.NewMatcher(sub); m.Match([]string{"x"}, false) || !m.Match([]string{"sub", "x"}, false) {
		t.Error("a domain must confine the patterns to its directory")
	}
}

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, ".gitignore")
	if err := os.WriteFile(p, []byte("a\nb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if n := len(ReadFile(p, nil)); n != 2 {
		t.Errorf("%d patterns, want 2", n)
	}
	if ReadFile(filepath.Join(dir, "missing"), nil) != nil {
		t.Error("a missing file has patterns")
	}
}

func FuzzParse(f *testing.F) {
	f.Add("*.o\n!a.o\nbuild/\n# c\n\\#x\n**/y/**\n")
	f.Fuzz(func(t *testing.T, s string) {
		pats := Parse([]byte(s), []string{"d"})
		m := gitignore.NewMatcher(pats)
		_ = m.Match([]string{"d", "a", "b.o"}, false) // must not panic
		if len(pats) > strings.Count(s, "\n")+1 {
			t.Fatalf("%d patterns from %d lines", len(pats), strings.Count(s, "\n")+1)
		}
	})
}
