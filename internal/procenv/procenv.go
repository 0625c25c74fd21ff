// Package procenv decides the environment of the processes Gantry's tools
// run (Bash commands, command hooks, MCP servers) and keeps Gantry's own
// credentials away from them.
//
// Two rules:
//
//   - A child's environment is built from an allow-list: only variables
//     named by [DefaultAllow] (or a caller's own list) pass from Gantry's
//     environment, never one whose name looks like a credential ([Secret])
//     nor one whose value carries a password in a URL; then the variables
//     the user configured explicitly are added ([Build]).
//   - Gantry's own credentials ([Own]: the model providers' keys) leave the
//     process environment at start ([Hide]), so no child inherits them by
//     accident, and on Linux the process is made non-dumpable, which closes
//     /proc/<pid>/environ (it shows the environment as it was at exec, keys
//     included), /proc/<pid>/mem and ptrace to every other process of the
//     user — the processes Gantry runs included.
package procenv

import (
	"net/url"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
)

// DefaultAllow are the variables (path.Match patterns, case-sensitive)
// passed from Gantry's environment to the processes its tools run: the
// basics of a login session, locale, temporary directories, proxies and
// certificate bundles, and the toolchain locations common in development.
// Anything else — cloud credentials, tokens, a CI's secrets — stays out
// unless the user configures it explicitly.
var DefaultAllow = []string{
	// Session basics.
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "HOSTNAME", "TERM", "COLORTERM",
	"LANG", "LANGUAGE", "LC_*", "TZ", "TMPDIR", "TMP", "TEMP",
	"XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR",
	"XDG_CONFIG_DIRS", "XDG_DATA_DIRS", "MANPATH", "INFOPATH", "CI",
	// Network: proxies (dropped when they carry a password) and CA bundles.
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "no_proxy", "all_proxy",
	"SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "GIT_SSL_CAINFO",
	// Toolchains.
	"GOPATH", "GOROOT", "GOBIN", "GOCACHE", "GOMODCACHE", "GOFLAGS", "GOPROXY", "GOPRIVATE",
	"GONOPROXY", "GONOSUMDB", "GOSUMDB", "GOTOOLCHAIN", "GOEXPERIMENT", "GOOS", "GOARCH", "CGO_ENABLED",
	"CC", "CXX", "CFLAGS", "CXXFLAGS", "CPPFLAGS", "LDFLAGS", "PKG_CONFIG_PATH",
	"CARGO_HOME", "RUSTUP_HOME", "RUSTUP_TOOLCHAIN",
	"NVM_DIR", "NVM_BIN", "NODE_PATH", "PNPM_HOME", "BUN_INSTALL", "DENO_DIR", "VOLTA_HOME",
	"PYTHONPATH", "VIRTUAL_ENV", "CONDA_PREFIX", "CONDA_DEFAULT_ENV", "CONDA_EXE", "PYENV_ROOT", "PIPX_HOME", "UV_CACHE_DIR",
	"JAVA_HOME", "GRADLE_USER_HOME", "MAVEN_HOME", "M2_HOME", "ANDROID_HOME", "ANDROID_SDK_ROOT",
	"GEM_HOME", "GEM_PATH", "RBENV_ROOT", "SDKMAN_DIR",
	"HOMEBREW_PREFIX", "HOMEBREW_CELLAR", "HOMEBREW_REPOSITORY",
}

// Own are the variables holding Gantry's own credentials (path.Match
// patterns): the model providers' keys. [Hide] moves them out of the
// process environment; [Build] never passes them, not even when configured
// explicitly.
var Own = []string{
	"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY", "OPENAI_ADMIN_KEY",
	"GANTRY_*_KEY", "GANTRY_*_TOKEN",
}

// secretPatterns match (upper-cased) names that look like credentials.
var secretPatterns = []string{
	"*_KEY", "*_KEYS", "*_KEY_*", "*APIKEY*", "*TOKEN*", "*SECRET*", "*PASSWORD*", "*PASSWD*",
	"*CREDENTIAL*", "*_PAT", "*PRIVATE_KEY*", "*SESSION_ID*", "*COOKIE*",
}

// Secret reports whether a variable name looks like a credential (KEY,
// TOKEN, SECRET, PASSWORD, CREDENTIAL, … in its name) or is one of [Own].
func Secret(name string) bool {
	return matchAny(name, Own) || matchAny(strings.ToUpper(name), secretPatterns)
}

func matchAny(name string, patterns []string) bool {
	for _, p := range patterns {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}

// hasPassword reports whether a value is a URL with a password
// (scheme://user:pass@host): a proxy setting can carry one.
func hasPassword(v string) bool {
	if !strings.Contains(v, "@") || !strings.Contains(v, "://") {
		return false
	}
	u, err := url.Parse(strings.TrimSpace(v))
	if err != nil {
		return true // unparseable with an @: assume the worst
	}
	_, set := u.User.Password()
	return set
}

// Options configure [Build]. The zero value is ready to use.
type Options struct {
	// Allow are the variables (path.Match patterns, case-sensitive) passed
	// from the base environment. Nil means [DefaultAllow]; an empty
	// non-nil slice passes nothing.
	Allow []string
	// Explicit are variables the user configured for these processes
	// (settings "env", an MCP server's "env"): added as given, after the
	// base, except Gantry's own credentials ([Own]).
	Explicit map[string]string
	// Set are NAME=value settings applied last (they win over both).
	Set []string
}

// Build returns the environment of a child process: the variables of base
// (NAME=value entries) that Allow names and that are not [Secret] (nor a
// URL with a password), then Explicit (minus [Own]) in name order, then
// Set. A later entry replaces an earlier one of the same name. BASH_ENV
// and ENV (files a non-interactive shell would source) and CDPATH (it
// changes where a relative `cd` goes, which the command analysis assumes
// it does not) never pass from base.
func Build(base []string, o Options) []string {
	allow := o.Allow
	if allow == nil {
		allow = DefaultAllow
	}
	type kv struct{ name, val string }
	var out []kv
	idx := map[string]int{}
	put := func(name, val string) {
		if i, ok := idx[name]; ok {
			out[i].val = val
			return
		}
		idx[name] = len(out)
		out = append(out, kv{name, val})
	}
	for _, e := range base {
		name, val, ok := strings.Cut(e, "=")
		if !ok || name == "" || name == "BASH_ENV" || name == "ENV" || name == "CDPATH" {
			continue
		}
		if !matchAny(name, allow) || Secret(name) || hasPassword(val) {
			continue
		}
		put(name, val)
	}
	names := make([]string, 0, len(o.Explicit))
	for k := range o.Explicit {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		if k == "" || strings.ContainsAny(k, "=\x00") || matchAny(k, Own) {
			continue
		}
		put(k, o.Explicit[k])
	}
	for _, e := range o.Set {
		if name, val, ok := strings.Cut(e, "="); ok && name != "" {
			put(name, val)
		}
	}
	env := make([]string, len(out))
	for i, e := range out {
		env[i] = e.name + "=" + e.val
	}
	return env
}

// Secrets are Gantry's own credentials, moved out of the process
// environment by [Hide]. The zero value (and nil) holds none. Safe for
// concurrent use.
type Secrets struct {
	mu sync.RWMutex
	m  map[string]string
}

// Lookup returns a hidden variable.
func (s *Secrets) Lookup(name string) (string, bool) {
	if s == nil {
		return "", false
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	v, ok := s.m[name]
	return v, ok
}

// Names returns the names of the hidden variables, sorted.
func (s *Secrets) Names() []string {
	if s == nil {
		return nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	names := make([]string, 0, len(s.m))
	for k := range s.m {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

// Getenv returns a lookup function for a program's configuration: a hidden
// variable if there is one, else os.Getenv.
func (s *Secrets) Getenv(name string) string {
	if v, ok := s.Lookup(name); ok {
		return v
	}
	return os.Getenv(name)
}

// Hide moves the variables named by [Own] out of the process environment
// (os.Unsetenv: children started later do not inherit them) into the
// returned Secrets, and protects the process itself (see [Protect]). Call
// it first thing in main, before any goroutine or child process starts.
// The error reports only a failure of Protect; the variables are moved
// regardless.
func Hide() (*Secrets, error) {
	s := &Secrets{m: map[string]string{}}
	for _, e := range os.Environ() {
		name, val, ok := strings.Cut(e, "=")
		if ok && matchAny(name, Own) {
			s.m[name] = val
			os.Unsetenv(name)
		}
	}
	return s, Protect()
}
