package grep

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRipgrepOutput runs real processes writing to the paced pipe: bursts
// with pauses between them, more than the pipe holds, a writer that
// outlives the process (a grandchild holding the pipe), and the blocking
// fallback. Every byte arrives, in order, and the reader stops at the end.
func TestRipgrepOutput(t *testing.T) {
	for _, c := range []struct {
		name, script string
		want         func() []byte
		paced        bool // false: the fallback (blocking reads)
	}{
		{"bursts", `for i in 1 2 3 4 5; do echo "line $i"; sleep 0.01; done`, func() []byte {
			return []byte("line 1\nline 2\nline 3\nline 4\nline 5\n")
		}, true},
		{"more than the pipe", `head -c 3000000 /dev/zero | tr '\0' x`, func() []byte {
			return bytes.Repeat([]byte("x"), 3000000)
		}, true},
		{"grandchild writes after the exit", `(sleep 0.05; echo late) & echo early`, func() []byte {
			return []byte("early\nlate\n")
		}, true},
		{"nothing", `exit 0`, func() []byte { return nil }, true},
		{"quiet, then a burst", `sleep 0.08; head -c 200000 /dev/zero | tr '\0' y`, func() []byte {
			return bytes.Repeat([]byte("y"), 200000)
		}, true},
		{"blocking fallback", `for i in 1 2 3; do echo "line $i"; sleep 0.01; done`, func() []byte {
			return []byte("line 1\nline 2\nline 3\n")
		}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			o, cmd := startWriter(t, c.script, c.paced)
			defer o.Close()
			if c.paced && o.exit == nil {
				t.Log("pacing unavailable here (no large pipe or pidfd): the fallback is tested")
			}
			if !c.paced && o.exit != nil {
				t.Fatal("paced without a large pipe")
			}
			got, err := io.ReadAll(o)
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Wait(); err != nil {
				t.Fatal(err)
			}
			if want := c.want(); !bytes.Equal(got, want) {
				t.Fatalf("read %d bytes %.40q, want %d bytes %.40q", len(got), got, len(want), want)
			}
			if n, err := o.Read(make([]byte, 10)); n != 0 || err != io.EOF {
				t.Fatalf("read after the end: %d, %v", n, err)
			}
		})
	}
}

// startWriter runs the shell script writing to a ripgrepOutput, paced or
// not (a pipe left at its default size).
func startWriter(t testing.TB, script string, paced bool) (*ripgrepOutput, *exec.Cmd) {
	t.Helper()
	o, w, err := newRipgrepOutput()
	if err != nil {
		t.Fatal(err)
	}
	if !paced {
		o.pace = 0
	}
	cmd := exec.Command("sh", "-c", script)
	cmd.Stdout = w
	err = cmd.Start()
	w.Close()
	if err != nil {
		o.Close()
		t.Fatal(err)
	}
	o.started(cmd.Process.Pid)
	return o, cmd
}

// TestCapStat: the size cap applied by a stat relative to the directory
// ripgrep ran in, and by absolute path when the directory cannot be
// opened.
func TestCapStat(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, []fixture{{"sub/small.txt", "abc"}, {"big.txt", strings.Repeat("x", 100)}})
	if err := os.Symlink("big.txt", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	mtime := time.Date(2020, 1, 2, 3, 4, 5, 6000, time.UTC)
	if err := os.Chtimes(filepath.Join(dir, "sub/small.txt"), mtime, mtime); err != nil {
		t.Fatal(err)
	}
	for _, v := range []struct {
		d   string
		raw bool
	}{{dir, true}, {dir, false}, {filepath.Join(dir, "missing"), false}} {
		d := v.d
		s := newCapStat(d, 10)
		if s.dirfd >= 0 {
			s.raw = v.raw
		}
		for _, c := range []struct {
			rel string
			ok  bool
		}{
			{"sub/small.txt", true},
			{"big.txt", false},
			{"link", false}, // followed, like os.Stat
			{"gone.txt", true},
		} {
			got, ok := s.within(c.rel, filepath.Join(dir, c.rel))
			if ok != c.ok {
				t.Errorf("%s: within(%s) = %v, want %v", d, c.rel, ok, c.ok)
			}
			if c.rel == "sub/small.txt" && !got.Equal(mtime) {
				t.Errorf("%s: mtime %v, want %v", d, got, mtime)
			}
		}
		s.close()
		s.close()
	}
}

// BenchmarkRipgrepOutputPaced: a process writing 100 lines 1 ms apart
// (ripgrep's pattern: a write per file with results), read to the end
// paced and unpaced; reads/op is how often the reader woke with data.
func BenchmarkRipgrepOutputPaced(b *testing.B) {
	script := `i=0; while [ $i -lt 100 ]; do echo "./file$i.go:1:errors.New"; sleep 0.001; i=$((i+1)); done`
	for _, paced := range []bool{true, false} {
		name := "paced"
		if !paced {
			name = "unpaced"
		}
		b.Run(name, func(b *testing.B) {
			reads := 0
			for b.Loop() {
				o, cmd := startWriter(b, script, paced)
				buf := make([]byte, 64<<10)
				for {
					n, err := o.Read(buf)
					if n > 0 {
						reads++
					}
					if err != nil {
						break
					}
				}
				cmd.Wait()
				o.Close()
			}
			b.ReportMetric(float64(reads)/float64(b.N), "reads/op")
		})
	}
}
