package safefs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The write path of the file tools: BenchmarkWriteFile* replace a 4 KB file
// three directories below the root (openat2 or the O_NOFOLLOW walk, temp
// file, fsync, fchmod, renameat, directory fsync); BenchmarkWritePlainByPath
// is the former path-based write (os.CreateTemp, fsync, chmod, os.Rename,
// directory fsync) under the same conditions, for comparison.

var benchData = []byte(strings.Repeat("0123456789abcdef\n", 240))

func benchRoot(b *testing.B) (*Root, string) {
	dir := realTemp(b)
	os.MkdirAll(filepath.Join(dir, "a", "b", "c"), 0o755)
	r, err := OpenRoot(dir)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { r.Close() })
	return r, dir
}

func BenchmarkWriteFileOpenat2(b *testing.B) {
	r, _ := benchRoot(b)
	b.SetBytes(int64(len(benchData)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.WriteFile("a/b/c/f.txt", benchData, 0o644, WriteOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWriteFileWalk(b *testing.B) {
	forceWalk(b)
	r, _ := benchRoot(b)
	b.SetBytes(int64(len(benchData)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.WriteFile("a/b/c/f.txt", benchData, 0o644, WriteOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWriteFileJournal(b *testing.B) {
	r, dir := benchRoot(b)
	j, _, err := OpenJournal(filepath.Join(dir, "journal"))
	if err != nil {
		b.Fatal(err)
	}
	defer j.Close()
	b.SetBytes(int64(len(benchData)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.WriteFile("a/b/c/f.txt", benchData, 0o644, WriteOptions{Journal: j}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWritePlainByPath(b *testing.B) {
	_, dir := benchRoot(b)
	p := filepath.Join(dir, "a", "b", "c", "f.txt")
	b.SetBytes(int64(len(benchData)))
	b.ReportAllocs()
	for b.Loop() {
		tmp, err := os.CreateTemp(filepath.Dir(p), ".f.txt.gantry-*.tmp")
		if err != nil {
			b.Fatal(err)
		}
		tmp.Write(benchData)
		tmp.Sync()
		tmp.Chmod(0o644)
		tmp.Close()
		if err := os.Rename(tmp.Name(), p); err != nil {
			b.Fatal(err)
		}
		if d, err := os.Open(filepath.Dir(p)); err == nil {
			d.Sync()
			d.Close()
		}
	}
}

// benchOpen opens a/b/c/f.txt with open, the root (or plain-path) way.
func benchOpen(b *testing.B, walk bool, open func(r *Root, dir string) (*os.File, error)) {
	if walk {
		forceWalk(b)
	}
	r, dir := benchRoot(b)
	r.WriteFile("a/b/c/f.txt", benchData, 0o644, WriteOptions{})
	b.ReportAllocs()
	for b.Loop() {
		f, err := open(r, dir)
		if err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
}

func openBeneathRoot(r *Root, _ string) (*os.File, error) {
	return r.OpenFile("a/b/c/f.txt", os.O_RDONLY, 0)
}

func BenchmarkOpenFileOpenat2(b *testing.B) { benchOpen(b, false, openBeneathRoot) }

func BenchmarkOpenFileWalk(b *testing.B) { benchOpen(b, true, openBeneathRoot) }

func BenchmarkOpenPlainByPath(b *testing.B) {
	benchOpen(b, false, func(_ *Root, dir string) (*os.File, error) { return os.Open(filepath.Join(dir, "a/b/c/f.txt")) })
}
