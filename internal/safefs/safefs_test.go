package safefs

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func realTemp(t testing.TB) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// modes runs f with openat2 and, on Linux, with the O_NOFOLLOW walk.
func modes(t *testing.T, f func(t *testing.T)) {
	t.Run("openat2", f)
	if runtime.GOOS == "linux" {
		t.Run("walk", func(t *testing.T) {
			forceWalk(t)
			f(t)
		})
	}
}

func TestOpenFileNeverFollowsLinks(t *testing.T) {
	modes(t, func(t *testing.T) {
		dir := realTemp(t)
		outside := realTemp(t)
		os.WriteFile(filepath.Join(outside, "secret"), []byte("s"), 0o600)
		os.Mkdir(filepath.Join(dir, "sub"), 0o755)
		os.WriteFile(filepath.Join(dir, "sub", "ok"), []byte("ok"), 0o644)
		os.Symlink(outside, filepath.Join(dir, "linkdir"))
		os.Symlink(filepath.Join(outside, "secret"), filepath.Join(dir, "linkfile"))
		os.Symlink("ok", filepath.Join(dir, "sub", "inner"))
		r, err := OpenRoot(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		cases := []struct {
			name string
			want error // nil: opens
		}{
			{"sub/ok", nil},
			{"./sub//ok", nil},
			{"linkdir/secret", ErrSymlink},
			{"linkfile", ErrSymlink},
			{"sub/inner", ErrSymlink}, // even a link that stays inside
			{"../x", ErrEscape},
			{"sub/../../x", ErrEscape},
			{"/etc/passwd", ErrEscape},
			{"missing", fs.ErrNotExist},
		}
		for _, c := range cases {
			f, err := r.OpenFile(c.name, os.O_RDONLY, 0)
			if c.want == nil {
				if err != nil {
					t.Errorf("%s: %v", c.name, err)
					continue
				}
				f.Close()
				continue
			}
			if err == nil {
				f.Close()
				t.Errorf("%s: opened, want %v", c.name, c.want)
			} else if !errors.Is(err, c.want) {
				t.Errorf("%s: %v, want %v", c.name, err, c.want)
			}
		}
	})
}

func TestOpenRootRejectsLinks(t *testing.T) {
	dir := realTemp(t)
	os.Mkdir(filepath.Join(dir, "real"), 0o755)
	os.Symlink("real", filepath.Join(dir, "link"))
	if _, err := OpenRoot(filepath.Join(dir, "link")); !errors.Is(err, ErrSymlink) {
		t.Fatalf("root through a link: %v, want ErrSymlink", err)
	}
	if _, err := OpenRoot("rel"); err == nil {
		t.Fatal("relative root accepted")
	}
	r, err := OpenRoot("/")
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
}

func TestWriteFileAtomic(t *testing.T) {
	modes(t, func(t *testing.T) {
		dir := realTemp(t)
		r, err := OpenRoot(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if err := r.MkdirAll("a/b/c", 0o755); err != nil {
			t.Fatal(err)
		}
		info, err := r.WriteFile("a/b/c/f.txt", []byte("hello"), 0o640, WriteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if info.Name() != "f.txt" || info.Size() != 5 || info.Mode().Perm() != 0o640 {
			t.Fatalf("info %v %d %v", info.Name(), info.Size(), info.Mode())
		}
		got, _ := os.ReadFile(filepath.Join(dir, "a/b/c/f.txt"))
		if string(got) != "hello" {
			t.Fatalf("content %q", got)
		}
		// A failing write leaves the original and no temporary file.
		_, err = r.WriteFile("a/b/c/f.txt", []byte("new content"), 0o640, WriteOptions{Wrap: func(w io.Writer) io.Writer { return failWriter{} }})
		if err == nil {
			t.Fatal("want an error")
		}
		got, _ = os.ReadFile(filepath.Join(dir, "a/b/c/f.txt"))
		ents, _ := os.ReadDir(filepath.Join(dir, "a/b/c"))
		if string(got) != "hello" || len(ents) != 1 {
			t.Fatalf("after failure: %q, %d entries", got, len(ents))
		}
		// A link in the parent chain, or as the parent, is refused.
		out := realTemp(t)
		os.Symlink(out, filepath.Join(dir, "a/l"))
		if _, err := r.WriteFile("a/l/x", []byte("x"), 0o644, WriteOptions{}); !errors.Is(err, ErrSymlink) {
			t.Fatalf("write through a link: %v", err)
		}
		if err := r.MkdirAll("a/l/y", 0o755); !errors.Is(err, ErrSymlink) {
			t.Fatalf("mkdir through a link: %v", err)
		}
		if ents, _ := os.ReadDir(out); len(ents) != 0 {
			t.Fatalf("something landed outside: %v", ents)
		}
		// The target itself being a link: the link is replaced, not followed.
		os.Symlink(filepath.Join(out, "t"), filepath.Join(dir, "a/tl"))
		if _, err := r.WriteFile("a/tl", []byte("x"), 0o644, WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		if fi, _ := os.Lstat(filepath.Join(dir, "a/tl")); !fi.Mode().IsRegular() {
			t.Fatal("link not replaced")
		}
		if ents, _ := os.ReadDir(out); len(ents) != 0 {
			t.Fatalf("something landed outside: %v", ents)
		}
	})
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

func TestTempNames(t *testing.T) {
	n := tempName(strings.Repeat("x", 300), "0123abcd")
	if len(n) > 255 || !IsTempName(n) {
		t.Fatalf("%d %q", len(n), n)
	}
	for _, s := range []string{"x.tmp", ".x.gantry-0123.tmp", ".x.gantry-0123abcZ.tmp", "x.gantry-0123abcd.tmp"} {
		if IsTempName(s) {
			t.Errorf("%q is not a temporary name", s)
		}
	}
}

func TestJournalSweep(t *testing.T) {
	jdir := realTemp(t)
	work := realTemp(t)
	left := filepath.Join(work, tempName("f.txt", "0badc0de"))
	notTemp := filepath.Join(work, "keep.txt")
	done := filepath.Join(work, tempName("g.txt", "00000001"))
	for _, p := range []string{left, notTemp, done} {
		os.WriteFile(p, []byte("x"), 0o600)
	}
	// A journal of an ended process (nobody holds its lock).
	j := "+" + strconv.Quote(left) + "\n+" + strconv.Quote(notTemp) + "\n+" + strconv.Quote(done) + "\n-" + strconv.Quote(done) + "\n+\"relative\"\ngarbage\n"
	os.WriteFile(filepath.Join(jdir, "1-dead.journal"), []byte(j), 0o600)

	live, removed, err := OpenJournal(jdir)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	if len(removed) != 1 || removed[0] != left {
		t.Fatalf("removed %v, want [%s]", removed, left)
	}
	for _, p := range []string{notTemp, done} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s removed: %v", p, err)
		}
	}
	if _, err := os.Stat(filepath.Join(jdir, "1-dead.journal")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatal("dead journal kept")
	}

	// A live journal (this process holds its lock) is left alone, even
	// with a write in flight.
	live.begin(filepath.Join(work, tempName("h", "00000002")))
	os.WriteFile(filepath.Join(work, tempName("h", "00000002")), nil, 0o600)
	if removed, err := Sweep(jdir); err != nil || len(removed) != 0 {
		t.Fatalf("swept a live journal: %v %v", removed, err)
	}
	live.end(filepath.Join(work, tempName("h", "00000002")))
	if fi, _ := live.f.Stat(); fi.Size() != 0 {
		t.Fatalf("journal not compacted: %d bytes", fi.Size())
	}

	// A real WriteFile through a journal leaves it empty.
	r, _ := OpenRoot(work)
	defer r.Close()
	if _, err := r.WriteFile("w", []byte("x"), 0o644, WriteOptions{Journal: live}); err != nil {
		t.Fatal(err)
	}
	if fi, _ := live.f.Stat(); fi.Size() != 0 {
		t.Fatalf("journal not empty after the write: %d bytes", fi.Size())
	}
}

func TestRel(t *testing.T) {
	for _, c := range []struct {
		root, name, rel string
		ok              bool
	}{
		{"/a", "/a", ".", true},
		{"/a", "/a/b/c", "b/c", true},
		{"/a", "/ab", "", false},
		{"/", "/x/y", "x/y", true},
		{"/a/b", "/a", "", false},
	} {
		rel, ok := Rel(c.root, c.name)
		if rel != c.rel || ok != c.ok {
			t.Errorf("Rel(%s, %s) = %q %v", c.root, c.name, rel, ok)
		}
	}
}
