package procenv

import (
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
)

func TestSecret(t *testing.T) {
	for name, want := range map[string]bool{
		"ANTHROPIC_API_KEY": true, "OPENAI_API_KEY": true, "GANTRY_FOO_TOKEN": true, "GITHUB_TOKEN": true,
		"my_service_api_key": true, "AWS_SECRET_ACCESS_KEY": true, "DB_PASSWORD": true, "NPM_AUTH_TOKEN": true,
		"GOOGLE_APPLICATION_CREDENTIALS": true, "SSH_PRIVATE_KEY": true, "GH_PAT": true, "SIGNING_KEY_ID": true,
		"PATH": false, "HOME": false, "GOPRIVATE": false, "LC_ALL": false, "KEYBOARD_LAYOUT": false, "TERM": false,
	} {
		if got := Secret(name); got != want {
			t.Errorf("Secret(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestBuild(t *testing.T) {
	base := []string{
		"PATH=/bin", "HOME=/h", "LC_ALL=C", "LANG=en", "GOPRIVATE=corp.example",
		"ANTHROPIC_API_KEY=sk", "GITHUB_TOKEN=ghp", "UNLISTED=1", "BASH_ENV=/rc", "ENV=/rc", "CDPATH=/etc",
		"HTTPS_PROXY=http://u:p@proxy:1", "HTTP_PROXY=http://proxy:1", "NO_PROXY=x@y", "malformed", "=empty",
		"PATH=/usr/bin", // a later duplicate wins
	}
	cases := []struct {
		name string
		o    Options
		want []string
	}{
		{"defaults", Options{}, []string{"PATH=/usr/bin", "HOME=/h", "LC_ALL=C", "LANG=en", "GOPRIVATE=corp.example", "HTTP_PROXY=http://proxy:1", "NO_PROXY=x@y"}},
		{"nothing allowed", Options{Allow: []string{}}, []string{}},
		{"patterns still never pass credentials", Options{Allow: []string{"*"}}, []string{"PATH=/usr/bin", "HOME=/h", "LC_ALL=C", "LANG=en", "GOPRIVATE=corp.example", "UNLISTED=1", "HTTP_PROXY=http://proxy:1", "NO_PROXY=x@y"}},
		{"explicit and set", Options{Allow: []string{"PATH"}, Explicit: map[string]string{"NPM_TOKEN": "t", "OPENAI_API_KEY": "no", "B": "2", "A": "1", "BAD=NAME": "x"}, Set: []string{"PATH=/set", "TERM=dumb"}},
			[]string{"PATH=/set", "A=1", "B=2", "NPM_TOKEN=t", "TERM=dumb"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Build(base, c.o)
			if !slices.Equal(got, c.want) {
				t.Fatalf("Build = %q\n want %q", got, c.want)
			}
		})
	}
}

func TestHide(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "sk-hide")
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("GITHUB_TOKEN", "not-ours")
	s, err := Hide()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := os.LookupEnv("ANTHROPIC_API_KEY"); ok {
		t.Fatal("the key is still in the environment")
	}
	if v, _ := s.Lookup("ANTHROPIC_API_KEY"); v != "sk-hide" || s.Getenv("ANTHROPIC_API_KEY") != "sk-hide" {
		t.Fatalf("hidden value %q", v)
	}
	if s.Getenv("GITHUB_TOKEN") != "not-ours" {
		t.Fatal("other variables are read from the environment")
	}
	if !slices.Equal(s.Names(), []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY"}) {
		t.Fatalf("names %v", s.Names())
	}
	if runtime.GOOS == "linux" && !Protected() {
		t.Fatal("the process is still dumpable")
	}
	var none *Secrets
	if _, ok := none.Lookup("X"); ok || none.Names() != nil {
		t.Fatal("nil Secrets")
	}
}

// FuzzBuild: whatever the base and the allow-list, no credential-looking
// name and no URL with a password comes out of the base.
func FuzzBuild(f *testing.F) {
	f.Add("GITHUB_TOKEN=x\x00PATH=/bin\x00HTTPS_PROXY=http://u:p@h", "*")
	f.Add("A=1\x00BASH_ENV=x", "A\x00BASH_*")
	f.Fuzz(func(t *testing.T, env, allow string) {
		base := strings.Split(env, "\x00")
		got := Build(base, Options{Allow: strings.Split(allow, "\x00")})
		for _, e := range got {
			name, val, ok := strings.Cut(e, "=")
			if !ok || Secret(name) || hasPassword(val) || name == "BASH_ENV" || name == "ENV" || name == "CDPATH" {
				t.Fatalf("%q passed", e)
			}
		}
	})
}
