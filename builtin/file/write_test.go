package file

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/tool/tooltest"

	"github.com/gantry-dev/gantry/internal/safefs"
	"github.com/gantry-dev/gantry/tool"
)

func TestWrite(t *testing.T) {
	t.Run("creates with parents", func(t *testing.T) {
		dir, env := testEnv(t)
		r := tooltest.Call(t, NewWrite(Options{}), env, WriteInput{FilePath: "a/b/c.txt", Content: "hi\n"})
		if got := mustOK(t, r); !strings.Contains(got, "Created") {
			t.Fatal(got)
		}
		p := filepath.Join(dir, "a/b/c.txt")
		if readFile(t, p) != "hi\n" {
			t.Fatal("content")
		}
		if st, ok := env.Files.Get(p); !ok || st.Hash != hashBytes([]byte("hi\n")) || st.Offset != 0 {
			t.Fatalf("state %+v", st)
		}
		if !strings.Contains(displayText(r), "+hi") {
			t.Errorf("display has no diff: %s", displayText(r))
		}
	})
	t.Run("overwrite needs a read", func(t *testing.T) {
		dir, env := testEnv(t)
		p := writeFile(t, filepath.Join(dir, "x.txt"), "old\n")
		mustErr(t, tooltest.Call(t, NewWrite(Options{}), env, WriteInput{FilePath: p, Content: "new\n"}), "has not been read")
		if readFile(t, p) != "old\n" {
			t.Fatal("overwritten")
		}
		mustOK(t, tooltest.Call(t, NewRead(Options{}), env, ReadInput{FilePath: p}))
		r := tooltest.Call(t, NewWrite(Options{}), env, WriteInput{FilePath: p, Content: "new\n"})
		mustOK(t, r)
		if readFile(t, p) != "new\n" {
			t.Fatal("not written")
		}
		if d := displayText(r); !strings.Contains(d, "-old\n+new") {
			t.Errorf("diff: %s", d)
		}
		// Written state counts as read: write again.
		mustOK(t, tooltest.Call(t, NewWrite(Options{}), env, WriteInput{FilePath: p, Content: "newer\n"}))
	})
	t.Run("partial read is not enough", func(t *testing.T) {
		dir, env := testEnv(t)
		p := writeFile(t, filepath.Join(dir, "x.txt"), "1\n2\n3\n")
		mustOK(t, tooltest.Call(t, NewRead(Options{}), env, ReadInput{FilePath: p, Limit: num(1)}))
		mustErr(t, tooltest.Call(t, NewWrite(Options{}), env, WriteInput{FilePath: p, Content: "new\n"}), "only part")
	})
	t.Run("changed since read", func(t *testing.T) {
		dir, env := testEnv(t)
		p := writeFile(t, filepath.Join(dir, "x.txt"), "old\n")
		mustOK(t, tooltest.Call(t, NewRead(Options{}), env, ReadInput{FilePath: p}))
		writeFile(t, p, "OLD\n") // same size, maybe same mtime: the hash tells
		mustErr(t, tooltest.Call(t, NewWrite(Options{}), env, WriteInput{FilePath: p, Content: "new\n"}), "has changed since it was last read")
		if readFile(t, p) != "OLD\n" {
			t.Fatal("overwritten")
		}
	})
	t.Run("touched but unchanged", func(t *testing.T) {
		dir, env := testEnv(t)
		p := writeFile(t, filepath.Join(dir, "x.txt"), "same\n")
		mustOK(t, tooltest.Call(t, NewRead(Options{}), env, ReadInput{FilePath: p}))
		later := time.Now().Add(time.Hour)
		if err := os.Chtimes(p, later, later); err != nil {
			t.Fatal(err)
		}
		mustOK(t, tooltest.Call(t, NewWrite(Options{}), env, WriteInput{FilePath: p, Content: "new\n"}))
	})
	t.Run("keeps mode, CRLF and BOM", func(t *testing.T) {
		dir, env := testEnv(t)
		p := writeFile(t, filepath.Join(dir, "run.sh"), "\ufeffecho a\r\necho b\r\n")
		os.Chmod(p, 0o750)
		mustOK(t, tooltest.Call(t, NewRead(Options{}), env, ReadInput{FilePath: p}))
		mustOK(t, tooltest.Call(t, NewWrite(Options{}), env, WriteInput{FilePath: p, Content: "echo c\necho d\n"}))
		if got := readFile(t, p); got != "\ufeffecho c\r\necho d\r\n" {
			t.Fatalf("%q", got)
		}
		if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o750 {
			t.Fatalf("mode %v", fi.Mode())
		}
	})
	t.Run("through a symlink", func(t *testing.T) {
		dir, env := testEnv(t)
		target := writeFile(t, filepath.Join(dir, "real.txt"), "a\n")
		link := filepath.Join(dir, "link.txt")
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
		mustOK(t, tooltest.Call(t, NewRead(Options{}), env, ReadInput{FilePath: link}))
		mustOK(t, tooltest.Call(t, NewWrite(Options{}), env, WriteInput{FilePath: link, Content: "b\n"}))
		if fi, _ := os.Lstat(link); fi.Mode()&os.ModeSymlink == 0 {
			t.Fatal("the link was replaced by a file")
		}
		if readFile(t, target) != "b\n" {
			t.Fatal("target not written")
		}
	})
	t.Run("no file cache", func(t *testing.T) {
		dir, _ := testEnv(t)
		env := &tool.Env{WorkDir: dir}
		mustErr(t, tooltest.Call(t, NewWrite(Options{}), env, WriteInput{FilePath: "n.txt", Content: "x"}), "no file-state cache")
		mustErr(t, tooltest.Call(t, NewEdit(Options{}), env, EditInput{FilePath: "n.txt", NewString: "x"}), "no file-state cache")
		mustErr(t, tooltest.Call(t, NewNotebookEdit(Options{}), env, NotebookEditInput{NotebookPath: "n.ipynb", CellID: "a"}), "no file-state cache")
		if _, err := os.Stat(filepath.Join(dir, "n.txt")); err == nil {
			t.Fatal("file created")
		}
	})
	t.Run("onto a directory", func(t *testing.T) {
		dir, env := testEnv(t)
		os.Mkdir(filepath.Join(dir, "d"), 0o755)
		mustErr(t, tooltest.Call(t, NewWrite(Options{}), env, WriteInput{FilePath: "d", Content: "x"}), "is a directory")
	})
}

// failAfter is a writer that fails like a full disk after n bytes.
type failAfter struct {
	w io.Writer
	n int
}

var errNoSpace = errors.New("no space left on device")

func (f *failAfter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		k, _ := f.w.Write(p[:f.n])
		f.n = 0
		return k, errNoSpace
	}
	f.n -= len(p)
	return f.w.Write(p)
}

// TestDiskFull: a write that fails half-way leaves the original intact and
// no temporary file behind, and says why.
func TestDiskFull(t *testing.T) {
	opts := Options{wrapTemp: func(w io.Writer) io.Writer { return &failAfter{w: w, n: 4} }}
	for _, name := range []string{"Write", "Edit", "NotebookEdit"} {
		t.Run(name, func(t *testing.T) {
			dir, env := testEnv(t)
			orig := "original content\n"
			p := filepath.Join(dir, "f.txt")
			if name == "NotebookEdit" {
				orig = nbFixture
				p = filepath.Join(dir, "f.ipynb")
			}
			writeFile(t, p, orig)
			mustOK(t, tooltest.Call(t, NewRead(Options{}), env, ReadInput{FilePath: p}))
			var r *tool.Result
			switch name {
			case "Write":
				r = tooltest.Call(t, NewWrite(opts), env, WriteInput{FilePath: p, Content: "replacement content\n"})
			case "Edit":
				r = tooltest.Call(t, NewEdit(opts), env, EditInput{FilePath: p, OldString: "original", NewString: "edited"})
			default:
				r = tooltest.Call(t, NewNotebookEdit(opts), env, NotebookEditInput{NotebookPath: p, CellID: "c1", NewSource: "x = 2"})
			}
			mustErr(t, r, "no space left on device", "unchanged")
			if readFile(t, p) != orig {
				t.Fatal("original changed")
			}
			entries, _ := os.ReadDir(dir)
			if len(entries) != 1 {
				t.Fatalf("leftover files: %v", entries)
			}
			// The state still describes the original: a retry without the
			// fault succeeds.
			if name == "Write" {
				mustOK(t, tooltest.Call(t, NewWrite(Options{}), env, WriteInput{FilePath: p, Content: "replacement content\n"}))
			}
		})
	}
	// A directory the temporary file cannot be created in.
	t.Run("no directory", func(t *testing.T) {
		dir := t.TempDir()
		r, err := safefs.OpenRoot(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		_, err = r.WriteFile("missing/f", []byte("x"), 0o644, safefs.WriteOptions{})
		if err == nil || !strings.Contains(err.Error(), "no such file") {
			t.Fatalf("err = %v", err)
		}
	})
}
