//go:build unix

package file

import (
	"path/filepath"
	"syscall"
	"testing"

	"github.com/gantry-dev/gantry/tool/tooltest"
)

// TestReadFIFO: a named pipe is refused without blocking on it.
func TestReadFIFO(t *testing.T) {
	dir, env := testEnv(t)
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	mustErr(t, tooltest.Call(t, NewRead(Options{}), env, ReadInput{FilePath: fifo}), "named pipe")
	mustErr(t, tooltest.Call(t, NewWrite(Options{}), env, WriteInput{FilePath: fifo, Content: "x"}), "named pipe")
}
