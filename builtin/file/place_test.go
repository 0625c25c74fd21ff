package file

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/tool/tooltest"
)

// TestCheckedTargetIsWritten: with env.Checked (the permission decision's
// resolution) the tools act on that file, whatever the link in the path
// points to by the time of the call, and follow no link to reach it.
func TestCheckedTargetIsWritten(t *testing.T) {
	dir, env := testEnv(t)
	outside, _ := filepath.EvalSymlinks(t.TempDir())
	os.Mkdir(filepath.Join(dir, "in"), 0o755)
	// Checked while l pointed at in/; it points outside now.
	os.Symlink(outside, filepath.Join(dir, "l"))
	env.Checked = map[string]string{"l/f.txt": filepath.Join(dir, "in", "f.txt"), "l/new/g.txt": filepath.Join(dir, "in", "new", "g.txt")}
	mustOK(t, tooltest.Call(t, NewWrite(Options{}), env, WriteInput{FilePath: "l/f.txt", Content: "hi\n"}))
	mustOK(t, tooltest.Call(t, NewWrite(Options{}), env, WriteInput{FilePath: "l/new/g.txt", Content: "hi\n"}))
	if got := readFile(t, filepath.Join(dir, "in", "f.txt")); got != "hi\n" {
		t.Fatalf("in/f.txt = %q", got)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Fatalf("landed outside: %v", ents)
	}
	mustOK(t, tooltest.Call(t, NewRead(Options{}), env, ReadInput{FilePath: "l/f.txt"}))
	mustOK(t, tooltest.Call(t, NewEdit(Options{}), env, EditInput{FilePath: "l/f.txt", OldString: "hi", NewString: "ho"}))
	if got := readFile(t, filepath.Join(dir, "in", "f.txt")); got != "ho\n" {
		t.Fatalf("in/f.txt = %q", got)
	}
	// A checked target whose path has since gained a link is refused.
	os.Rename(filepath.Join(dir, "in"), filepath.Join(dir, "in2"))
	os.Symlink(outside, filepath.Join(dir, "in"))
	mustErr(t, tooltest.Call(t, NewWrite(Options{}), env, WriteInput{FilePath: "l/f.txt", Content: "x"}), "symbolic link")
	mustErr(t, tooltest.Call(t, NewRead(Options{}), env, ReadInput{FilePath: "l/f.txt"}), "symbolic link")
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Fatalf("landed outside: %v", ents)
	}
}

// TestWritesOutsideTheProject: a write the decision allowed outside the
// working directory (an additional directory, or anywhere by a rule) works.
func TestWritesOutsideTheProject(t *testing.T) {
	dir, env := testEnv(t)
	extra, _ := filepath.EvalSymlinks(t.TempDir())
	elsewhere, _ := filepath.EvalSymlinks(t.TempDir())
	env.AdditionalDirs = []string{extra}
	for _, p := range []string{filepath.Join(extra, "a", "x.txt"), filepath.Join(elsewhere, "y.txt"), filepath.Join(dir, "z.txt")} {
		mustOK(t, tooltest.Call(t, NewWrite(Options{}), env, WriteInput{FilePath: p, Content: "ok"}))
		if readFile(t, p) != "ok" {
			t.Fatalf("%s not written", p)
		}
	}
	// A legitimate link inside the project is still written through.
	os.Symlink("z.txt", filepath.Join(dir, "zl"))
	mustOK(t, tooltest.Call(t, NewRead(Options{}), env, ReadInput{FilePath: "zl"}))
	mustOK(t, tooltest.Call(t, NewWrite(Options{}), env, WriteInput{FilePath: "zl", Content: "via link"}))
	if readFile(t, filepath.Join(dir, "z.txt")) != "via link" {
		t.Fatal("not written through the link")
	}
	if fi, _ := os.Lstat(filepath.Join(dir, "zl")); fi.Mode()&os.ModeSymlink == 0 {
		t.Fatal("the link was replaced")
	}
}

// TestReadProcFiles: /proc files report size 0 and still have content.
func TestReadProcFiles(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("needs /proc")
	}
	_, env := testEnv(t)
	for _, p := range []string{"/proc/self/status", "/proc/cpuinfo", "/proc/self/cmdline"} {
		r := tooltest.Call(t, NewRead(Options{}), env, ReadInput{FilePath: p})
		txt := mustOK(t, r)
		if strings.Contains(txt, "is empty") || len(txt) < 10 {
			t.Errorf("%s: %q", p, txt)
		}
	}
	txt := mustOK(t, tooltest.Call(t, NewRead(Options{}), env, ReadInput{FilePath: "/proc/self/status"}))
	if !strings.Contains(txt, "Pid:") {
		t.Fatalf("status without Pid: %s", txt)
	}
	// Read again: synthetic files are never "unchanged since your last read".
	txt = mustOK(t, tooltest.Call(t, NewRead(Options{}), env, ReadInput{FilePath: "/proc/self/status"}))
	if !strings.Contains(txt, "Pid:") {
		t.Fatalf("second read: %s", txt)
	}
}

// TestLinkIntoDevRefused: /dev is refused after resolution too, not only
// when the path names it.
func TestLinkIntoDevRefused(t *testing.T) {
	dir, env := testEnv(t)
	os.Symlink("/dev/null", filepath.Join(dir, "null"))
	os.Symlink("/dev/shm", filepath.Join(dir, "shm"))
	mustErr(t, tooltest.Call(t, NewRead(Options{}), env, ReadInput{FilePath: "null"}), "/dev")
	mustErr(t, tooltest.Call(t, NewWrite(Options{}), env, WriteInput{FilePath: "shm/x.txt", Content: "x"}), "/dev")
}
