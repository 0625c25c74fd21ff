// Package sandboxtest has helpers for tests of contained commands (the
// sandbox's own, and those of the tools, hooks and MCP servers that run in
// it). It imports nothing of Gantry, so package sandbox's internal tests can
// use it too.
package sandboxtest

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Outside returns a new directory outside every working directory and
// outside /tmp (which the bubblewrap backend replaces with a tmpfs), so it
// is the same directory inside a sandbox and out of it. It is removed when
// the test ends. name is part of the directory's name.
func Outside(t testing.TB, name string) string {
	t.Helper()
	d, err := os.MkdirTemp("/var/tmp", "gantry-"+name+"-*")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// Snapshot lists every file under dir with its mode and, for regular
// files, its content: two equal snapshots mean nothing under dir changed
// (time stamps aside).
func Snapshot(t testing.TB, dir string) string {
	t.Helper()
	var b strings.Builder
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			fmt.Fprintf(&b, "%s error %v\n", p, err)
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			fmt.Fprintf(&b, "%s error %v\n", p, err)
			return nil
		}
		fmt.Fprintf(&b, "%s %v", p, fi.Mode())
		if fi.Mode().IsRegular() {
			data, err := os.ReadFile(p)
			if err != nil {
				fmt.Fprintf(&b, " unreadable %v", err)
			}
			fmt.Fprintf(&b, " %q", data)
		}
		b.WriteByte('\n')
		return nil
	})
	return b.String()
}
