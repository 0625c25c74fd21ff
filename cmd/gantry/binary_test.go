package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var testBin struct {
	once sync.Once
	dir  string
	path string
	err  error
	out  []byte
}

// gantryBinary builds the CLI once per test process (for the tests that
// run the real binary: kill -9, process checks) and returns its path. It
// skips in -short mode.
func gantryBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	testBin.once.Do(func() {
		dir, err := os.MkdirTemp("", "gantry-test-bin-*")
		if err != nil {
			testBin.err = err
			return
		}
		testBin.dir, testBin.path = dir, filepath.Join(dir, "gantry")
		testBin.out, testBin.err = exec.Command("go", "build", "-o", testBin.path, ".").CombinedOutput()
	})
	if testBin.err != nil {
		t.Fatalf("build: %v\n%s", testBin.err, testBin.out)
	}
	return testBin.path
}

// removeTestBinary removes what gantryBinary built (TestMain, after the
// tests).
func removeTestBinary() {
	if testBin.dir != "" {
		os.RemoveAll(testBin.dir)
	}
}
