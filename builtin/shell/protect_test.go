package shell

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/tool/tooltest"

	"github.com/gantry-dev/gantry/sandbox"
	"github.com/gantry-dev/gantry/tool"
)

// TestBashProtectedPathsReported: a sandboxed command that plants project
// configuration leaves nothing on the host, and the model is told what was
// reverted.
func TestBashProtectedPathsReported(t *testing.T) {
	bash := NewBash(Options{Grace: 200 * time.Millisecond})
	for _, backend := range []string{sandbox.BackendBubblewrap, sandbox.BackendLandlock} {
		t.Run(backend, func(t *testing.T) {
			project := t.TempDir()
			sb, err := sandbox.New(sandbox.Options{Enabled: true, Backend: backend, Roots: []string{project}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { sb.Close() })
			if sb.Status().Backend != backend {
				t.Skipf("%s does not work here: %s", backend, sb.Status().Reason)
			}
			env := testEnv(t, nil)
			env.WorkDir = project
			tool.Provide(env.Services, sb)
			r := tooltest.Call(t, bash, env, map[string]any{"command": "echo 'eval x' > .envrc; mkdir -p .gantry && echo '{}' > .gantry/settings.json; echo ok > fine.txt"})
			for _, name := range []string{".envrc", ".gantry/settings.json"} {
				if _, err := os.Lstat(filepath.Join(project, name)); err == nil {
					t.Errorf("%s exists on the host after the command", name)
				}
			}
			if _, err := os.Stat(filepath.Join(project, "fine.txt")); err != nil {
				t.Errorf("ordinary write lost: %v", err)
			}
			if !strings.Contains(r.TextContent(), "protected paths") || !strings.Contains(r.TextContent(), ".envrc") {
				t.Errorf("the model was not told: %s", r.TextContent())
			}
		})
	}
}
