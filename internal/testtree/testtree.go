// Package testtree writes file trees for tests: each file in order, with
// strictly increasing modification times, so that "newest first" orders
// are the same on every file system.
package testtree

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// File is one entry of a tree: a path relative to the root (slash
// separated; a trailing "/" makes an empty directory) and its content.
type File struct{ Path, Content string }

// base is the modification time of the first file; each next file is one
// minute newer.
var base = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// Write writes files under root in order, failing tb on any error.
func Write(tb testing.TB, root string, files []File) {
	tb.Helper()
	for i, f := range files {
		p := filepath.Join(root, filepath.FromSlash(f.Path))
		if strings.HasSuffix(f.Path, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				tb.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f.Content), 0o644); err != nil {
			tb.Fatal(err)
		}
		mt := base.Add(time.Duration(i) * time.Minute)
		if err := os.Chtimes(p, mt, mt); err != nil {
			tb.Fatal(err)
		}
	}
}
