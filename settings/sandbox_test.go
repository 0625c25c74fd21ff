package settings

import (
	"path/filepath"
	"slices"
	"testing"
)

func TestSandboxSettings(t *testing.T) {
	e := newEnv(t)
	write(t, filepath.Join(e.gantryHome, "settings.json"), `{"sandbox":{"enabled":false,"excludedCommands":["docker"],"network":{"allowedDomains":["github.com"]}}}`)
	write(t, filepath.Join(e.project, ".gantry", "settings.json"), `{"sandbox":{"enabled":true,"autoAllowBashIfSandboxed":true,"allowUnsandboxedCommands":false,
		"excludedCommands":["make"],"network":{"allowedDomains":["evil.com"],"allowLocalBinding":true},"backend":"none"}}`)

	for _, tc := range []struct {
		name    string
		trusted bool
		want    EffectiveSandbox
		ignored int
	}{
		// Untrusted: only the tightening keys of the project count.
		{"untrusted", false, EffectiveSandbox{Enabled: true, AutoAllowBashIfSandboxed: true, AllowUnsandboxedCommands: false,
			ExcludedCommands: []string{"docker"}, AllowedDomains: []string{"github.com"}}, 4},
		{"trusted", true, EffectiveSandbox{Enabled: true, AutoAllowBashIfSandboxed: true, AllowUnsandboxedCommands: false, AllowLocalBinding: true,
			ExcludedCommands: []string{"make", "docker"}, AllowedDomains: []string{"evil.com", "github.com"}, Backend: "none"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Load(e.opts(ptr(tc.trusted)))
			must(t, err)
			got := s.Sandbox()
			if got.Enabled != tc.want.Enabled || got.AutoAllowBashIfSandboxed != tc.want.AutoAllowBashIfSandboxed ||
				got.AllowUnsandboxedCommands != tc.want.AllowUnsandboxedCommands || got.AllowLocalBinding != tc.want.AllowLocalBinding ||
				got.Backend != tc.want.Backend || !slices.Equal(got.ExcludedCommands, tc.want.ExcludedCommands) ||
				!slices.Equal(got.AllowedDomains, tc.want.AllowedDomains) {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
			n := 0
			for _, ig := range s.Ignored() {
				for _, x := range ig {
					if len(x) > 8 && x[:8] == "sandbox." {
						n++
					}
				}
			}
			if n != tc.ignored {
				t.Errorf("ignored sandbox keys: %d, want %d (%v)", n, tc.ignored, s.Ignored())
			}
		})
	}
	s := &Settings{}
	if d := s.Sandbox(); d.Enabled || !d.AutoAllowBashIfSandboxed || !d.AllowUnsandboxedCommands {
		t.Errorf("defaults %+v", d)
	}
}

// TestSandboxUnixSocketSettings: the Unix socket keys merge like the
// others, and an untrusted project cannot set them (they only widen).
func TestSandboxUnixSocketSettings(t *testing.T) {
	e := newEnv(t)
	write(t, filepath.Join(e.gantryHome, "settings.json"), `{"sandbox":{"network":{"allowUnixSockets":["/run/a.sock"]}}}`)
	write(t, filepath.Join(e.project, ".gantry", "settings.json"), `{"sandbox":{"enabled":true,"network":{"allowUnixSockets":["/run/docker.sock"],"allowAllUnixSockets":true}}}`)
	for _, tc := range []struct {
		trusted bool
		sockets []string
		all     bool
	}{
		{false, []string{"/run/a.sock"}, false},
		{true, []string{"/run/docker.sock", "/run/a.sock"}, true},
	} {
		s, err := Load(e.opts(ptr(tc.trusted)))
		must(t, err)
		got := s.Sandbox()
		if !slices.Equal(got.AllowUnixSockets, tc.sockets) || got.AllowAllUnixSockets != tc.all || !got.Enabled {
			t.Errorf("trusted=%v: %+v", tc.trusted, got)
		}
		ignored := false
		for _, ig := range s.Ignored() {
			ignored = ignored || slices.Contains(ig, "sandbox.network")
		}
		if !tc.trusted && !ignored {
			t.Errorf("untrusted: sandbox.network not reported as ignored: %v", s.Ignored())
		}
	}
}
