package file

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/tool"
)

// BenchmarkRead10kLines reads a 10,000-line Go-like file in full (one call
// with allow_large; a fresh file cache per call so no "unchanged" shortcut).
func BenchmarkRead10kLines(b *testing.B) {
	dir := b.TempDir()
	p := filepath.Join(dir, "big.go")
	var sb strings.Builder
	for i := 0; i < 10_000; i++ {
		fmt.Fprintf(&sb, "\tx%d := compute(%d, \"some string literal\") // comment %d\n", i, i, i)
	}
	os.WriteFile(p, []byte(sb.String()), 0o644)
	rd := NewRead(Options{})
	raw, _ := json.Marshal(ReadInput{FilePath: p, Limit: num(10_000), AllowLarge: true})
	b.SetBytes(int64(sb.Len()))
	b.ReportAllocs()
	for b.Loop() {
		env := &tool.Env{WorkDir: dir, Files: tool.NewFileCache(0)}
		r, err := rd.Call(context.Background(), env, raw)
		if err != nil || r.IsError {
			b.Fatal(err, r.TextContent())
		}
	}
}

// BenchmarkEdit1MB edits one line in the middle of a 1 MB file and back
// (read-check, replace, atomic write with fsync, diff for the display).
func BenchmarkEdit1MB(b *testing.B) {
	dir := b.TempDir()
	p := filepath.Join(dir, "big.txt")
	var sb strings.Builder
	for i := 0; sb.Len() < 1<<20; i++ {
		fmt.Fprintf(&sb, "line %d of a one megabyte file with some filler text\n", i)
	}
	os.WriteFile(p, []byte(sb.String()), 0o644)
	env := &tool.Env{WorkDir: dir, Files: tool.NewFileCache(0)}
	ed := NewEdit(Options{})
	rd, _ := json.Marshal(ReadInput{FilePath: p, Offset: num(1), Limit: num(1)})
	if r, _ := NewRead(Options{}).Call(context.Background(), env, rd); r.IsError {
		b.Fatal(r.TextContent())
	}
	fwd, _ := json.Marshal(EditInput{FilePath: p, OldString: "line 10000 of", NewString: "LINE 10000 OF"})
	rev, _ := json.Marshal(EditInput{FilePath: p, OldString: "LINE 10000 OF", NewString: "line 10000 of"})
	b.SetBytes(int64(sb.Len()))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		in := fwd
		if i%2 == 1 {
			in = rev
		}
		i++
		r, err := ed.Call(context.Background(), env, in)
		if err != nil || r.IsError {
			b.Fatal(err, r.TextContent())
		}
	}
}

// BenchmarkWriteSmall overwrites a 4 KB file inside the working directory
// (read-check, atomic write with fsync): the per-write cost of the write
// path itself.
func BenchmarkWriteSmall(b *testing.B) {
	dir := b.TempDir()
	p := filepath.Join(dir, "small.txt")
	content := strings.Repeat("0123456789abcdef\n", 4096/17)
	os.WriteFile(p, []byte(content), 0o644)
	env := &tool.Env{WorkDir: dir, Files: tool.NewFileCache(0)}
	w := NewWrite(Options{})
	rd, _ := json.Marshal(ReadInput{FilePath: p})
	if r, _ := NewRead(Options{}).Call(context.Background(), env, rd); r.IsError {
		b.Fatal(r.TextContent())
	}
	in, _ := json.Marshal(WriteInput{FilePath: p, Content: content})
	b.SetBytes(int64(len(content)))
	b.ReportAllocs()
	for b.Loop() {
		r, err := w.Call(context.Background(), env, in)
		if err != nil || r.IsError {
			b.Fatal(err, r.TextContent())
		}
	}
}
