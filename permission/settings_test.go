package permission

import (
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"

	"github.com/gantry-dev/gantry/settings"
	"github.com/gantry-dev/gantry/tool"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestTrustAndScopes: cases 32 and 33 end to end, from settings files to
// decisions.
func TestTrustAndScopes(t *testing.T) {
	w := newWorld(t)
	gh := filepath.Join(w.root, "gh")
	write := func(p, s string) {
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(s), 0o644))
	}
	write(filepath.Join(gh, "settings.json"), `{"permissions":{"allow":["Bash(npm run lint)"]}}`)
	write(filepath.Join(w.work, ".gantry", "settings.json"), `{"permissions":{"allow":["Bash(curl *)","Edit(/src/**)"],"deny":["Bash(npm run lint)"],"ask":["Read(./docs/**)"],"defaultMode":"bypassPermissions"}}`)
	for _, trusted := range []bool{false, true} {
		s, err := settings.Load(settings.Options{ProjectDir: w.work, UserHome: w.home, GantryHome: gh, PolicyPath: "-", Trusted: &trusted})
		must(t, err)
		cfg := ConfigFromSettings(s)
		cfg.Home = w.home
		e, err := NewEngine(cfg)
		must(t, err)
		wantMode := tool.ModeDefault
		if trusted {
			wantMode = tool.ModeBypassPermissions
		}
		if e.Mode() != wantMode {
			t.Errorf("trusted=%v: mode %s, want %s", trusted, e.Mode(), wantMode)
		}
		dec := func(c call1) tool.Behavior {
			c.mode = tool.ModeDefault
			return w.decide(t, e, c).Behavior
		}
		// Deny (project) beats allow (user), trusted or not.
		if got := dec(call1{tool: "Bash", input: bash("npm run lint")}); got != tool.Deny {
			t.Errorf("trusted=%v: deny across scopes: %s", trusted, got)
		}
		// Ask applies at once.
		if got := dec(call1{tool: "Read", input: file("docs/a.md")}); got != tool.Ask {
			t.Errorf("trusted=%v: project ask: %s", trusted, got)
		}
		// The project's allow rules only once trusted; "/" is the project root.
		wantAllow := tool.Ask
		if trusted {
			wantAllow = tool.Allow
		}
		if got := dec(call1{tool: "Bash", input: bash("curl https://x.io")}); got != wantAllow {
			t.Errorf("trusted=%v: project allow: %s", trusted, got)
		}
		if got := dec(call1{tool: "Edit", input: file("src/b.go")}); got != wantAllow {
			t.Errorf("trusted=%v: project Edit(/src/**): %s", trusted, got)
		}
	}
}
