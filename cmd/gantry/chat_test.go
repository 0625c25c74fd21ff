package main

import (
	"context"
	"testing"

	"github.com/spf13/cobra"

	"github.com/gantry-dev/gantry/tui"
)

// TestChatSessionRecordsCheckpoints: the interactive terminal's sessions
// are assembled by the same openSession as gantry -p, so they record
// checkpoints (what /rewind restores) unless --no-checkpoints.
func TestChatSessionRecordsCheckpoints(t *testing.T) {
	for _, tc := range []struct {
		args []string
		on   bool
	}{{nil, true}, {[]string{"--no-checkpoints"}, false}} {
		a, _, _ := testApp(t)
		env := map[string]string{}
		get := a.getenv
		a.getenv = func(k string) string {
			if v, ok := env[k]; ok {
				return v
			}
			return get(k)
		}
		env["ANTHROPIC_API_KEY"] = "test" // no request is made
		f := &runFlags{}
		cmd := &cobra.Command{}
		addRunFlags(cmd, f)
		if err := cmd.ParseFlags(append([]string{"--cwd", t.TempDir(), "--model", "claude-test"}, tc.args...)); err != nil {
			t.Fatal(err)
		}
		f.chat = tui.New(tui.Options{}).Channel()
		s, err := openSession(context.Background(), a, f, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, cerr := s.ag.Checkpoints()
		s.ag.Close()
		if (cerr == nil) != tc.on {
			t.Errorf("%v: Checkpoints() = %v, want on=%v", tc.args, cerr, tc.on)
		}
	}
}
