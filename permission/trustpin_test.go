package permission

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gantry-dev/gantry/settings"
)

// TestApplyKeepsTrust: a rule the person saves to the project through
// Gantry changes a trusted folder's pinned configuration without making it
// untrusted; an untrusted folder stays untrusted.
func TestApplyKeepsTrust(t *testing.T) {
	for _, trusted := range []bool{true, false} {
		w := newWorld(t)
		gh := filepath.Join(w.home, ".gantry")
		ts := &settings.TrustStore{Path: filepath.Join(gh, settings.TrustFile)}
		if trusted {
			must(t, ts.Trust(w.work))
		}
		paths := map[settings.Scope]string{
			settings.ScopeProject: filepath.Join(w.work, ".gantry", "settings.json"),
			settings.ScopeLocal:   filepath.Join(w.work, ".gantry", "settings.local.json"),
		}
		must(t, os.MkdirAll(filepath.Dir(paths[settings.ScopeLocal]), 0o755))
		e, err := NewEngine(Options{Home: w.home, GantryHome: gh, WorkDir: w.work})
		must(t, err)
		for _, dest := range []Destination{ToProject, ToLocal} {
			must(t, e.Apply(Update{Destination: dest, Kind: settings.Allow, Rules: []string{"Bash(npm test)"}}, paths))
			if ok, err := ts.IsTrusted(w.work); err != nil || ok != trusted {
				t.Errorf("trusted=%v: after saving to %s IsTrusted = %v, %v", trusted, dest, ok, err)
			}
		}
		// A change made outside Gantry is not covered.
		must(t, os.WriteFile(paths[settings.ScopeProject], []byte(`{"permissions":{"allow":["Bash"]}}`), 0o644))
		if st, _ := ts.Check(w.work); trusted && st != settings.ConfigChanged {
			t.Errorf("after an outside edit: %v", st)
		}
	}
}
