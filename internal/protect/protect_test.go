package protect

import (
	"strings"
	"testing"
)

func TestNames(t *testing.T) {
	seen := map[string]bool{}
	for _, n := range Names() {
		if seen[n] {
			t.Errorf("%s listed twice", n)
		}
		seen[n] = true
		if !strings.HasPrefix(n, ".") || strings.ContainsAny(n, "/*?[") || strings.ToLower(n) != n {
			t.Errorf("%q: names are plain lower-case dot names", n)
		}
	}
	for _, must := range []string{".git", ".gantry", ".claude", ".mcp.json", ".vscode", ".idea", ".gitmodules", ".envrc", ".hg", ".bashrc"} {
		if !seen[must] {
			t.Errorf("%s is not protected", must)
		}
	}
	d := Dirs()
	d[0] = "x"
	if Dirs()[0] != ".git" {
		t.Error("Dirs shares its backing array")
	}
}
