package streamjson_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/llm/llmtest"
)

// sdkProgram is one program of testdata/sdk run by node against the fake
// model server, with the official Agent SDK driving the gantry binary.
type sdkProgram struct {
	Name   string // file name under testdata/sdk
	Marker string // printed on stdout when every check of the program passed
	Node   string // node, and the directory holding the SDK (agentSDK)
	SDKDir string
	Bin    string // the gantry binary (buildGantry)
	Work   string // WORK_DIR: the session's folder
	Home   string // HOME; GANTRY_HOME is .gantry under it
	Srv    *llmtest.Server
	Env    []string // more variables for the program
}

// run runs the program (two minutes at most) and fails t unless it exits 0
// and prints its marker. It returns the program's stderr.
func (p sdkProgram) run(t *testing.T) string {
	t.Helper()
	program := filepath.Join("testdata", "sdk", p.Name)
	if _, err := os.ReadFile(program); err != nil { // read here so that go test's cache sees its changes
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, p.Node, program)
	cmd.Env = append([]string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + p.Home, "GANTRY_HOME=" + filepath.Join(p.Home, ".gantry"),
		"GANTRY_BIN=" + p.Bin, "SDK_DIR=" + p.SDKDir, "WORK_DIR=" + p.Work,
		"ANTHROPIC_BASE_URL=" + p.Srv.URL(), "ANTHROPIC_API_KEY=test-key",
	}, p.Env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil || !strings.Contains(stdout.String(), p.Marker) {
		t.Fatalf("the SDK program %s failed: %v\nstdout:\n%s\nstderr:\n%s", p.Name, err, stdout.String(), stderr.String())
	}
	return stderr.String()
}
