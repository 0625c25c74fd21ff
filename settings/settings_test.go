package settings

import (
	"context"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/gantry-dev/gantry/tool"
)

type env struct {
	home, gantryHome, project, policy string
}

func newEnv(t *testing.T) env {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	e := env{home: filepath.Join(root, "home"), gantryHome: filepath.Join(root, "gh"), project: filepath.Join(root, "home", "proj"), policy: filepath.Join(root, "etc", "managed.json")}
	for _, d := range []string{e.project, e.gantryHome} {
		must(t, os.MkdirAll(d, 0o755))
	}
	return e
}

func (e env) opts(trusted *bool) Options {
	return Options{ProjectDir: e.project, UserHome: e.home, PolicyPath: e.policy, Trusted: trusted,
		Getenv: func(k string) string {
			if k == "GANTRY_HOME" {
				return e.gantryHome
			}
			return ""
		}}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	must(t, os.MkdirAll(filepath.Dir(path), 0o755))
	must(t, os.WriteFile(path, []byte(content), 0o644))
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func ptr(b bool) *bool { return &b }

func TestLoadScopes(t *testing.T) {
	e := newEnv(t)
	write(t, filepath.Join(e.gantryHome, "settings.json"), `{"permissions":{"allow":["Read(~/notes/**)"],"defaultMode":"acceptEdits"},"env":{"A":"user","B":"user"},"enabledPlugins":{"a@m":true,"b@m":true}}`)
	write(t, filepath.Join(e.home, ".claude", "settings.json"), `{"permissions":{"deny":["WebFetch"]}}`)
	write(t, filepath.Join(e.project, ".gantry", "settings.json"), `{"permissions":{"allow":["Bash(make *)"],"deny":["Read(./.env)"],"defaultMode":"bypassPermissions","additionalDirectories":["../lib"]},
		"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"./check.sh","timeout":5}]}]},"env":{"B":"project"},"enabledPlugins":{"b@m":false,"c@m":true}}`)
	write(t, filepath.Join(e.project, ".claude", "settings.local.json"), `{"permissions":{"ask":["Bash(git push *)"]}}`)

	t.Run("untrusted", func(t *testing.T) {
		s, err := Load(e.opts(ptr(false)))
		must(t, err)
		scopes := []Scope{}
		for _, src := range s.Sources {
			scopes = append(scopes, src.Scope)
		}
		if want := []Scope{ScopeLocal, ScopeProject, ScopeUser, ScopeUser}; !slices.Equal(scopes, want) {
			t.Fatalf("scopes %v, want %v", scopes, want)
		}
		proj := s.Sources[1]
		if len(proj.File.Permissions.Allow) != 0 || len(proj.File.Hooks) != 0 || len(proj.File.Env) != 0 || proj.File.Permissions.DefaultMode != "" || len(proj.File.Permissions.AdditionalDirectories) != 0 {
			t.Errorf("case 32/33: untrusted project kept %+v", proj.File)
		}
		if !slices.Equal(proj.File.Permissions.Deny, []string{"Read(./.env)"}) {
			t.Errorf("deny dropped: %+v", proj.File.Permissions)
		}
		if len(proj.Ignored) == 0 || len(s.Ignored()) != 1 {
			t.Errorf("ignored not reported: %v", proj.Ignored)
		}
		if s.Mode() != tool.ModeAcceptEdits {
			t.Errorf("mode %s: the user's mode applies, the project's bypass is ignored", s.Mode())
		}
		if len(s.Hooks()) != 0 {
			t.Errorf("hooks %v", s.Hooks())
		}
		if got := s.Env(); got["B"] != "user" {
			t.Errorf("env %v", got)
		}
		if got := s.EnabledPlugins(); !maps.Equal(got, map[string]bool{"a@m": true, "b@m": true}) {
			t.Errorf("untrusted enabledPlugins %v, want the user's only", got)
		}
		if !slices.Contains(proj.Ignored, "enabledPlugins") {
			t.Errorf("ignored %v, want enabledPlugins named", proj.Ignored)
		}
		if proj.Root != e.project || s.Sources[2].Root != filepath.Dir(e.gantryHome) {
			t.Errorf("roots %q %q", proj.Root, s.Sources[2].Root)
		}
	})
	t.Run("trusted", func(t *testing.T) {
		s, err := Load(e.opts(ptr(true)))
		must(t, err)
		if s.Mode() != tool.ModeBypassPermissions {
			t.Errorf("mode %s", s.Mode())
		}
		if h := s.Hooks()["PreToolUse"]; len(h) != 1 || h[0].Hooks[0].Timeout != 5 {
			t.Errorf("hooks %v", s.Hooks())
		}
		if got := s.Env(); got["A"] != "user" || got["B"] != "project" {
			t.Errorf("env %v", got)
		}
		if got := s.EnabledPlugins(); !maps.Equal(got, map[string]bool{"a@m": true, "b@m": false, "c@m": true}) {
			t.Errorf("trusted enabledPlugins %v, want the project's over the user's", got)
		}
	})
	t.Run("policy overrides mode", func(t *testing.T) {
		write(t, e.policy, `{"permissions":{"defaultMode":"default","deny":["Bash(curl *)"]}}`)
		defer os.Remove(e.policy)
		s, err := Load(e.opts(ptr(true)))
		must(t, err)
		if s.Sources[0].Scope != ScopePolicy || s.Mode() != tool.ModeDefault {
			t.Errorf("policy: %v %s", s.Sources[0].Scope, s.Mode())
		}
	})
	t.Run("trust store decides", func(t *testing.T) {
		ts := &TrustStore{Path: filepath.Join(e.gantryHome, TrustFile)}
		must(t, ts.Trust(e.project))
		defer os.Remove(ts.Path)
		s, err := Load(e.opts(nil))
		must(t, err)
		if !s.Trusted || s.Mode() != tool.ModeBypassPermissions {
			t.Errorf("trusted %v mode %s", s.Trusted, s.Mode())
		}
	})
}

func TestLoadErrors(t *testing.T) {
	e := newEnv(t)
	write(t, e.policy, `{"permissions":`)
	if _, err := Load(e.opts(ptr(true))); err == nil || !strings.Contains(err.Error(), e.policy) {
		t.Errorf("broken policy: %v", err)
	}
	write(t, e.policy, `{"permissions":{"defaultMode":"yolo"}}`)
	if _, err := Load(e.opts(ptr(true))); err == nil {
		t.Error("bad mode accepted")
	}
	if _, err := Load(Options{}); err == nil {
		t.Error("no project dir accepted")
	}
	if _, err := ReadFile(filepath.Join(e.project, "none.json")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	write(t, filepath.Join(e.project, "empty.json"), "  \n")
	if f, err := ReadFile(filepath.Join(e.project, "empty.json")); err != nil || f == nil {
		t.Errorf("empty file: %v", err)
	}
}

func TestTrustStore(t *testing.T) {
	root, _ := filepath.EvalSymlinks(t.TempDir())
	ts := &TrustStore{Path: filepath.Join(root, "gh", TrustFile), Now: func() time.Time { return time.Unix(0, 0) }}
	proj := filepath.Join(root, "p")
	sibling := filepath.Join(root, "p2")
	link := filepath.Join(root, "link")
	for _, d := range []string{filepath.Join(proj, "sub"), sibling} {
		must(t, os.MkdirAll(d, 0o755))
	}
	must(t, os.Symlink(proj, link))
	check := func(dir string, want bool) {
		t.Helper()
		got, err := ts.IsTrusted(dir)
		must(t, err)
		if got != want {
			t.Errorf("IsTrusted(%s) = %v, want %v", dir, got, want)
		}
	}
	check(proj, false)
	must(t, ts.Trust(link)) // recorded as the resolved path
	check(proj, true)
	check(filepath.Join(proj, "sub"), true)
	check(sibling, false) // not a string prefix
	check(root, false)
	must(t, ts.Trust(filepath.Join(proj, "sub"))) // no-op inside trusted
	fs, err := ts.Folders()
	must(t, err)
	if len(fs) != 1 || fs[0].Path != proj {
		t.Errorf("folders %+v", fs)
	}
	st, err := os.Stat(ts.Path)
	must(t, err)
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", st.Mode())
	}
	must(t, ts.Revoke(proj))
	check(proj, false)
	if _, err := ts.IsTrusted("a\x00b"); err == nil {
		t.Error("NUL accepted")
	}
	// Concurrent trusts all land.
	var wg sync.WaitGroup
	for i := range 8 {
		d := filepath.Join(root, "c", string(rune('a'+i)))
		must(t, os.MkdirAll(d, 0o755))
		wg.Add(1)
		go func() { defer wg.Done(); must(t, ts.Trust(d)) }()
	}
	wg.Wait()
	fs, _ = ts.Folders()
	if len(fs) != 8 {
		t.Errorf("%d folders after concurrent trusts", len(fs))
	}
}

func TestPromptTrust(t *testing.T) {
	root := t.TempDir()
	for in, want := range map[string]bool{"y\n": true, "YES\n": true, "n\n": false, "": false, "maybe\n": false} {
		ts := &TrustStore{Path: filepath.Join(root, in+"x.json")}
		var out strings.Builder
		got, err := PromptTrust(context.Background(), ts, strings.NewReader(in), &out, root)
		must(t, err)
		trusted, _ := ts.IsTrusted(root)
		if got != want || trusted != want || !strings.Contains(out.String(), "[y/N]") {
			t.Errorf("%q: got %v trusted %v", in, got, trusted)
		}
	}
}

func TestUpdate(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, ".gantry", "settings.local.json")
	must(t, Update(p, Change{Kind: Allow, AddRules: []string{"Bash(ls)", "Bash(ls)"}}))
	write(t, p+".keep", "")
	must(t, Update(p, Change{Kind: Deny, AddRules: []string{"WebFetch"}, Mode: tool.ModePlan, AddDirectories: []string{"../x"}}))
	must(t, Update(p, Change{Kind: Allow, AddRules: []string{"Bash(ls)", "Read"}}))
	f, err := ReadFile(p)
	must(t, err)
	if !slices.Equal(f.Permissions.Allow, []string{"Bash(ls)", "Read"}) || !slices.Equal(f.Permissions.Deny, []string{"WebFetch"}) ||
		f.Permissions.DefaultMode != tool.ModePlan || !slices.Equal(f.Permissions.AdditionalDirectories, []string{"../x"}) {
		t.Errorf("%+v", f.Permissions)
	}
	entries, _ := os.ReadDir(filepath.Dir(p))
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp") {
			t.Errorf("temp file left: %s", e.Name())
		}
	}
	if err := Update(p, Change{Kind: "maybe", AddRules: []string{"X"}}); err == nil {
		t.Error("bad kind")
	}
	if err := Update(p, Change{Mode: "yolo"}); err == nil {
		t.Error("bad mode")
	}
	write(t, p, `[1]`)
	if err := Update(p, Change{Mode: tool.ModePlan}); err == nil {
		t.Error("non-object file")
	}
}

func TestWithin(t *testing.T) {
	cases := []struct {
		p, d string
		want bool
	}{
		{"/a/b", "/a", true}, {"/a", "/a", true}, {"/ab", "/a", false}, {"/a/../b", "/a", false}, {"/", "/", true}, {"/x", "/", true}, {"/a/..b", "/a", true},
	}
	for _, c := range cases {
		if got := Within(filepath.Clean(c.p), c.d); got != c.want {
			t.Errorf("Within(%s, %s) = %v", c.p, c.d, got)
		}
	}
}

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestStreamIdleTimeout(t *testing.T) {
	tests := []struct {
		name, user, project string
		want                time.Duration
		scope               Scope
	}{
		{"unset", `{}`, `{}`, 0, ""},
		{"user", `{"streamIdleTimeoutMs":90000}`, `{}`, 90 * time.Second, ScopeUser},
		{"project over user", `{"streamIdleTimeoutMs":90000}`, `{"streamIdleTimeoutMs":-1}`, -time.Millisecond, ScopeProject},
		{"zero is the default", `{"streamIdleTimeoutMs":90000}`, `{"streamIdleTimeoutMs":0}`, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			write(t, filepath.Join(e.gantryHome, "settings.json"), tt.user)
			write(t, filepath.Join(e.project, ".gantry", "settings.json"), tt.project)
			s, err := Load(e.opts(nil))
			if err != nil {
				t.Fatal(err)
			}
			if d, sc := s.StreamIdleTimeout(); d != tt.want || sc != tt.scope {
				t.Fatalf("StreamIdleTimeout() = %v, %q; want %v, %q", d, sc, tt.want, tt.scope)
			}
		})
	}
}
