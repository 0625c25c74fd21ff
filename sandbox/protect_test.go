package sandbox

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzSubmodulePaths: whatever .gitmodules says, the paths protected from
// it stay inside the checkout.
func FuzzSubmodulePaths(f *testing.F) {
	for _, s := range []string{
		"[submodule \"a\"]\n\tpath = lib/a\n\turl = x\n",
		"path=../../etc\npath = /abs\npath = \"q u\"\npath = a/../../b\n",
		"path = .\npath =\n",
	} {
		f.Add(s)
	}
	dir := f.TempDir()
	file := filepath.Join(dir, ".gitmodules")
	f.Fuzz(func(t *testing.T, s string) {
		if err := os.WriteFile(file, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, p := range submodulePaths(file) {
			if !filepath.IsLocal(p) || filepath.Clean(p) != p {
				t.Errorf("%q: path %q leaves the checkout", s, p)
			}
		}
	})
}
