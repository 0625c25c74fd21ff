package grep

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// dirent encodes one getdents64 record (padded to 8 bytes like the kernel).
func dirent(name string, typ byte) []byte {
	n := 19 + len(name) + 1
	n = (n + 7) &^ 7
	b := make([]byte, n)
	binary.LittleEndian.PutUint64(b, 1)
	binary.LittleEndian.PutUint16(b[16:], uint16(n))
	b[18] = typ
	copy(b[19:], name)
	return b
}

func TestParseDirents(t *testing.T) {
	var buf []byte
	for _, r := range []struct {
		name string
		typ  byte
	}{{".", syscall.DT_DIR}, {"..", syscall.DT_DIR}, {"a.go", syscall.DT_REG}, {"sub", syscall.DT_DIR},
		{"link", syscall.DT_LNK}, {"odd", syscall.DT_UNKNOWN}, {"fifo", syscall.DT_FIFO}, {strings.Repeat("n", 255), syscall.DT_REG}} {
		buf = append(buf, dirent(r.name, r.typ)...)
	}
	got := parseDirents(buf, nil)
	want := []dirEntry{{"a.go", 0}, {"sub", fs.ModeDir}, {"link", fs.ModeSymlink}, {"odd", fs.ModeIrregular},
		{"fifo", fs.ModeNamedPipe}, {strings.Repeat("n", 255), 0}}
	if !slices.Equal(got, want) {
		t.Errorf("parseDirents = %v, want %v", got, want)
	}
	// A truncated or malformed record ends the parse.
	if got := parseDirents(buf[:len(buf)-3], nil); len(got) != len(want)-1 {
		t.Errorf("truncated buffer: %d entries, want %d", len(got), len(want)-1)
	}
	bad := dirent("x", syscall.DT_REG)
	binary.LittleEndian.PutUint16(bad[16:], 0)
	if got := parseDirents(bad, nil); len(got) != 0 {
		t.Errorf("zero record length: %v", got)
	}
}

// TestReadDirectory compares the raw listing with os.ReadDir on a real
// directory.
func TestReadDirectory(t *testing.T) {
	dir := t.TempDir()
	for i := range 600 { // several getdents calls' worth of names
		os.WriteFile(filepath.Join(dir, strings.Repeat("f", 1+i%200)+string(rune('a'+i%26))+".txt"), nil, 0o644)
	}
	os.Mkdir(filepath.Join(dir, "d"), 0o755)
	os.Symlink("d", filepath.Join(dir, "l"))
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var want []dirEntry
	for _, d := range des {
		want = append(want, dirEntry{d.Name(), d.Type()})
	}
	// Buffers that hold one entry, a few, and all of them (the listing
	// then ends at the first read, on a complete-read file system).
	for _, size := range []int{maxDirent, 1024, 4096, 32 << 10} {
		w := &worker{dirBuf: make([]byte, size)}
		fd, ents, complete, err := readDirectory(w, dir, true)
		if err != nil || fd < 0 {
			t.Fatal(fd, err)
		}
		closeDir(fd)
		slices.SortFunc(ents, func(a, b dirEntry) int { return strings.Compare(a.name, b.name) })
		if !slices.Equal(ents, want) {
			t.Errorf("buffer %d (complete %v): %d entries, os.ReadDir %d", size, complete, len(ents), len(want))
		}
	}
}

func FuzzParseDirents(f *testing.F) {
	f.Add(append(dirent("a", syscall.DT_REG), dirent("bb", syscall.DT_DIR)...))
	f.Add([]byte{})
	f.Add(make([]byte, 40))
	f.Fuzz(func(t *testing.T, buf []byte) {
		for _, e := range parseDirents(buf, nil) {
			if e.name == "" || e.name == "." || e.name == ".." || strings.IndexByte(e.name, 0) >= 0 {
				t.Fatalf("bad entry %q", e.name)
			}
		}
	})
}

// TestReadFileSizes reads files around the buffer's size with and without
// the short-read end (complete), opened relative to their directory and by
// path, and compares with os.ReadFile.
func TestReadFileSizes(t *testing.T) {
	dir := t.TempDir()
	sizes := []int{0, 1, 4095, 4096, minBuffer - 1, minBuffer, minBuffer + 1, 3*minBuffer + 7}
	for _, n := range sizes {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte('a' + i%26)
		}
		os.WriteFile(filepath.Join(dir, strconv.Itoa(n)), b, 0o644)
	}
	fd, _, _, err := readDirectory(&worker{}, dir, true)
	if err != nil {
		t.Fatal(err)
	}
	defer closeDir(fd)
	if !completeReads(fd) {
		t.Logf("%s: not a complete-read file system", dir)
	}
	for _, complete := range []bool{false, true} {
		for _, dirfd := range []int{fd, -1} {
			w := &worker{}
			dj := &dirJob{path: dir, fd: dirfd, complete: complete}
			for _, n := range sizes {
				f, got, _, ok := readFile(w, fileEntry{dir: dj, name: strconv.Itoa(n)}, 1<<30, false)
				if !ok {
					t.Fatalf("size %d: not read", n)
				}
				f.close()
				want, _ := os.ReadFile(filepath.Join(dir, strconv.Itoa(n)))
				if !bytes.Equal(got, want) {
					t.Errorf("complete %v, dirfd %d, size %d: read %d bytes, want %d", complete, dirfd, n, len(got), len(want))
				}
			}
			// A large binary file is left after its first read; a NUL
			// past binaryChunk does not make a file binary.
			big := make([]byte, 3*minBuffer)
			for i, name := range []string{"bin-early", "bin-late"} {
				clear(big)
				for j := range big {
					big[j] = 'x'
				}
				big[[]int{10, binaryChunk + 10}[i]] = 0
				os.WriteFile(filepath.Join(dir, name), big, 0o644)
				f, got, _, ok := readFile(&worker{}, fileEntry{dir: dj, name: name}, 1<<30, false) // a buffer the file fills
				if ok {
					f.close()
				}
				if want := i == 1; ok != want || ok && len(got) != len(big) {
					t.Errorf("%s: read %v (%d bytes), want %v", name, ok, len(got), want)
				}
			}
			// Over the limit: not read.
			if _, _, _, ok := readFile(w, fileEntry{dir: dj, name: strconv.Itoa(minBuffer + 1)}, minBuffer, false); ok {
				t.Errorf("complete %v: a file over the limit was read", complete)
			}
		}
	}
}

// TestCompleteReads checks the file-system allow-list on /proc, whose files
// may be read in pieces.
func TestCompleteReads(t *testing.T) {
	fd, err := syscall.Open("/proc/self", syscall.O_RDONLY|syscall.O_DIRECTORY, 0)
	if err != nil {
		t.Skip(err)
	}
	defer syscall.Close(fd)
	if completeReads(fd) {
		t.Error("/proc: complete reads")
	}
}

// TestScanChunks checks files mode on files larger than the read buffer
// (searched a buffer of lines at a time) against count mode (the file read
// whole) and the expected answer: matches at and across buffer boundaries,
// lines longer than the buffer, NUL bytes before and after a match, a last
// line without a line break.
func TestScanChunks(t *testing.T) {
	line := strings.Repeat("abcdefghij", 9) + "\n" // 91 bytes
	fill := func(n int) string { return strings.Repeat(line, n/len(line)+1)[:n] }
	cases := []struct {
		name, text string
		want       bool
	}{
		{"none", fill(3 * minBuffer), false},
		{"first line", "needle\n" + fill(3*minBuffer), true},
		{"last line no eol", fill(3*minBuffer) + "\nneedle", true},
		{"across the boundary", fill(minBuffer-3) + "needle\n" + fill(minBuffer), true},
		{"just after the boundary", fill(minBuffer) + "needle\n" + fill(minBuffer), true},
		{"long line", strings.Repeat("x", 3*minBuffer) + "needle " + strings.Repeat("y", minBuffer) + "\n", true},
		{"NUL before", fill(minBuffer+100) + "\x00\n" + fill(minBuffer) + "needle\n", false},
		{"NUL on the line", fill(minBuffer+100) + "needle \x00\n", false},
		{"NUL after", fill(minBuffer+100) + "needle\n" + fill(minBuffer) + "\x00\n", true},
		{"NUL early", "\x00" + fill(2*minBuffer) + "needle\n", false},
		{"exact buffers", fill(2*minBuffer-7) + "needle\n", true},
	}
	dir := t.TempDir()
	for _, c := range cases {
		os.WriteFile(filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")), []byte(c.text), 0o644)
	}
	for _, pattern := range []string{"needle", `need(le|xx)`, `^needle|needle$|needle `, `n[e]edle`} {
		found := map[string]bool{}
		for _, mode := range []string{ModeFiles, ModeCount} {
			r, err := Search(context.Background(), &Query{Root: dir, Pattern: pattern, Mode: mode}, Options{Engine: EngineGo})
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range r.Files {
				found[mode+":"+filepath.Base(f.Path)] = true
			}
		}
		for _, c := range cases {
			name := strings.ReplaceAll(c.name, " ", "_")
			if files, count := found[ModeFiles+":"+name], found[ModeCount+":"+name]; files != c.want || count != c.want {
				t.Errorf("%s, %q: files mode %v, count mode %v, want %v", c.name, pattern, files, count, c.want)
			}
		}
	}
}

// TestScanChunksContent checks content and count results of files larger
// than the read buffer (line numbers going on from buffer to buffer, the
// line limit, a NUL byte) against a line-by-line reference over the whole
// file.
func TestScanChunksContent(t *testing.T) {
	var b strings.Builder
	for i := range 30000 { // ~1 MB: four buffers
		switch {
		case i%997 == 0:
			fmt.Fprintf(&b, "line %d needle needle\n", i)
		case i == 12345:
			b.WriteString(strings.Repeat("z", 2*minBuffer) + " needle\n") // longer than the buffer
		default:
			fmt.Fprintf(&b, "line %d %s\n", i, strings.Repeat("x", i%50))
		}
	}
	text := b.String()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "big"), []byte(text), 0o644)
	nul := text[:len(text)/2] + "\x00\n" + text[len(text)/2:]
	os.WriteFile(filepath.Join(dir, "nul"), []byte(nul), 0o644)
	for _, pattern := range []string{"needle", `ne+dle`, `(?i)NEEDLE`, `\d+7 needle`} {
		for _, f := range []struct{ name, text string }{{"big", text}, {"nul", nul}} {
			data := []byte(f.text)
			if i := bytes.IndexByte(data, 0); i >= 0 {
				data = data[:bytes.LastIndexByte(data[:i], '\n')+1]
			}
			m, err := compilePattern(pattern, false, false)
			if err != nil {
				t.Fatal(err)
			}
			ref := referenceLines(m.re, data)
			lines := bytes.Split(data, []byte("\n"))
			var wantNums []int
			matches := 0
			for n, subs := range ref {
				wantNums = append(wantNums, n)
				matches += len(subs)
			}
			slices.Sort(wantNums)
			for _, limit := range []int{0, 7} {
				q := &Query{Root: filepath.Join(dir, f.name), Pattern: pattern, Mode: ModeContent, LineNumbers: true, HeadLimit: limit}
				r, err := Search(context.Background(), q, Options{Engine: EngineGo, MaxColumns: -1})
				if err != nil || len(r.Files) != 1 {
					t.Fatalf("%s %q: %v, %d files", f.name, pattern, err, len(r.Files))
				}
				want := wantNums
				if limit > 0 {
					want = want[:min(limit+1, len(want))] // the page and one more line, to tell that more follow
				}
				got := r.Files[0].Lines
				if len(got) != len(want) {
					t.Fatalf("%s %q limit %d: %d lines, want %d", f.name, pattern, limit, len(got), len(want))
				}
				for i, l := range got {
					if l.Num != want[i] || l.Text != string(lines[want[i]-1]) {
						t.Fatalf("%s %q: line %d is %d %.20q, want %d %.20q", f.name, pattern, i, l.Num, l.Text, want[i], lines[want[i]-1])
					}
				}
			}
			q := &Query{Root: filepath.Join(dir, f.name), Pattern: pattern, Mode: ModeCount, OnlyMatching: true}
			r, err := Search(context.Background(), q, Options{Engine: EngineGo})
			if err != nil || len(r.Files) != 1 {
				t.Fatalf("%s %q count: %v", f.name, pattern, err)
			}
			if got := r.Files[0]; got.MatchedLines != len(ref) || got.Matches != matches {
				t.Errorf("%s %q count: %d lines, %d matches; want %d, %d", f.name, pattern, got.MatchedLines, got.Matches, len(ref), matches)
			}
		}
	}
}
