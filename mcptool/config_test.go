package mcptool

import (
	"errors"
	"github.com/gantry-dev/gantry/toolset"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestExpandEnv(t *testing.T) {
	env := map[string]string{"HOME": "/home/u", "TOKEN": "s3cret", "EMPTY": ""}
	getenv := func(k string) string { return env[k] }
	for _, tc := range []struct {
		in, want, err string
	}{
		{"plain", "plain", ""},
		{"${HOME}/x", "/home/u/x", ""},
		{"Bearer ${TOKEN}", "Bearer s3cret", ""},
		{"${MISSING:-fallback}", "fallback", ""},
		{"${EMPTY:-d}", "d", ""},
		{"${HOME:-d}", "/home/u", ""},
		{"${MISSING:-}", "", ""},
		{"$HOME stays", "$HOME stays", ""},
		{"a${HOME}b${TOKEN}c", "a/home/ubs3cretc", ""},
		{"${MISSING}", "", "MISSING"},
		{"${A_1}${B}", "", "A_1, B"},
		{"${HOME", "", "unterminated"},
		{"${}", "", "bad variable name"},
		{"${1X}", "", "bad variable name"},
		{"${A-B}", "", "bad variable name"},
	} {
		got, err := ExpandEnv(tc.in, getenv)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.Is(err, ErrConfig) {
				t.Errorf("ExpandEnv(%q) err = %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ExpandEnv(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestParseConfig(t *testing.T) {
	env := map[string]string{"KEY": "k1", "PORT": "8080"}
	getenv := func(k string) string { return env[k] }
	good := `{"mcpServers": {
		"fs": {"command": "npx", "args": ["-y", "server-fs", "${DIR:-/tmp}"], "env": {"API_KEY": "${KEY}"}},
		"web": {"type": "http", "url": "http://localhost:${PORT}/mcp", "headers": {"Authorization": "Bearer ${KEY}"}},
		"old": {"type": "sse", "url": "https://example.com/sse"},
		"guess": {"url": "https://example.com/mcp"}
	}}`
	cfg, err := ParseConfig([]byte(good), "test.json", getenv)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]ServerConfig{
		"fs":    {Type: "stdio", Command: "npx", Args: []string{"-y", "server-fs", "/tmp"}, Env: map[string]string{"API_KEY": "k1"}, Source: "test.json"},
		"web":   {Type: "http", URL: "http://localhost:8080/mcp", Headers: map[string]string{"Authorization": "Bearer k1"}, Source: "test.json"},
		"old":   {Type: "sse", URL: "https://example.com/sse", Source: "test.json"},
		"guess": {Type: "http", URL: "https://example.com/mcp", Source: "test.json"},
	}
	if d := cmp.Diff(want, cfg.Servers, cmpopts.IgnoreFields(ServerConfig{}, "Fingerprint")); d != "" {
		t.Fatalf("servers (-want +got):\n%s", d)
	}
	if got := strings.Join(cfg.Names(), ","); got != "fs,guess,old,web" {
		t.Errorf("Names = %s", got)
	}

	for _, tc := range []struct{ name, json, err string }{
		{"not json", `{`, "unexpected EOF"},
		{"trailing", `{"mcpServers":{}} x`, "trailing"},
		{"double underscore", `{"mcpServers":{"a__b":{"command":"x"}}}`, "invalid name"},
		{"dot in name", `{"mcpServers":{"a.b":{"command":"x"}}}`, "invalid name"},
		{"empty", `{"mcpServers":{"a":{}}}`, "neither"},
		{"unknown type", `{"mcpServers":{"a":{"type":"ws","url":"http://x"}}}`, "unknown type"},
		{"stdio with url", `{"mcpServers":{"a":{"type":"stdio","command":"x","url":"http://x"}}}`, "stdio server with"},
		{"http without url", `{"mcpServers":{"a":{"type":"http"}}}`, "without \"url\""},
		{"file url", `{"mcpServers":{"a":{"type":"http","url":"file:///etc/passwd"}}}`, "want http"},
		{"http with command", `{"mcpServers":{"a":{"type":"http","url":"http://x","command":"y"}}}`, "with \"command\""},
		{"missing var", `{"mcpServers":{"a":{"command":"x","env":{"T":"${NOPE}"}}}}`, "NOPE"},
		{"args not strings", `{"mcpServers":{"a":{"command":"x","args":[1]}}}`, "cannot unmarshal"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseConfig([]byte(tc.json), "f.json", getenv)
			if err == nil || !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("err = %v, want %q", err, tc.err)
			}
		})
	}
}

func TestLoadTrust(t *testing.T) {
	dir := t.TempDir()
	write := func(p, s string) string {
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write(filepath.Join(dir, ProjectConfigFile), `{"mcpServers":{"proj":{"command":"p"},"shared":{"command":"from-project"}}}`)
	extra := write(filepath.Join(dir, "extra.json"), `{"mcpServers":{"shared":{"command":"from-flag"}}}`)

	cfg, err := Load(LoadOptions{Dir: dir, Trusted: false, Files: []string{extra}})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(cfg.Names(), ","); got != "shared" {
		t.Fatalf("untrusted: %s (the project file must not be read)", got)
	}
	cfg, err = Load(LoadOptions{Dir: dir, Trusted: true, Files: []string{extra},
		Servers: map[string]ServerConfig{"code": {URL: "http://127.0.0.1:1/mcp"}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(cfg.Names(), ","); got != "code,proj,shared" {
		t.Fatalf("trusted: %s", got)
	}
	if cfg.Servers["shared"].Command != "from-flag" || cfg.Servers["code"].Type != TypeHTTP || cfg.Servers["code"].Source != "options" {
		t.Fatalf("precedence: %+v", cfg.Servers)
	}
	if _, err := Load(LoadOptions{Files: []string{filepath.Join(dir, "nope.json")}}); !errors.Is(err, ErrConfig) {
		t.Fatalf("missing explicit file: %v", err)
	}
	if cfg, err := Load(LoadOptions{Dir: t.TempDir(), Trusted: true}); err != nil || len(cfg.Servers) != 0 {
		t.Fatalf("no project file: %v %v", cfg, err)
	}
	if _, err := Load(LoadOptions{Servers: map[string]ServerConfig{"a__b": {Command: "x"}}}); !errors.Is(err, ErrConfig) {
		t.Fatalf("bad option server: %v", err)
	}
}

func FuzzExpandEnv(f *testing.F) {
	for _, s := range []string{"", "x", "${A}", "${A:-b}", "${", "${}", "$A", "${A:-${B}}", "a${B:-}c${", "}${A}{"} {
		f.Add(s)
	}
	getenv := func(k string) string {
		if k == "A" {
			return "va"
		}
		return ""
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ExpandEnv(s, getenv)
		if err != nil {
			if !errors.Is(err, ErrConfig) {
				t.Fatalf("error does not wrap ErrConfig: %v", err)
			}
			return
		}
		if !strings.Contains(s, "${") && got != s {
			t.Fatalf("changed a string without ${: %q -> %q", s, got)
		}
	})
}

func FuzzParseConfig(f *testing.F) {
	for _, s := range []string{
		`{"mcpServers":{"a":{"command":"x","args":["${A:-1}"]}}}`,
		`{"mcpServers":{"w":{"type":"http","url":"http://h/${A}","headers":{"X":"${B:-y}"}}}}`,
		`{"mcpServers":{"a__b":{}}}`, `{}`, `null`, `[]`, `{"mcpServers":{"s":{"type":"sse","url":":"}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := ParseConfig(data, "fuzz", func(string) string { return "v" })
		if err != nil {
			if !errors.Is(err, ErrConfig) {
				t.Fatalf("error does not wrap ErrConfig: %v", err)
			}
			return
		}
		for name, sc := range cfg.Servers {
			if !ValidServerName(name) {
				t.Fatalf("accepted bad name %q", name)
			}
			if sc.Type != TypeStdio && sc.Type != TypeHTTP && sc.Type != TypeSSE {
				t.Fatalf("type %q", sc.Type)
			}
			if sc.Type == TypeStdio && sc.Command == "" || sc.Type != TypeStdio && sc.URL == "" {
				t.Fatalf("incomplete server accepted: %+v", sc)
			}
			if !strings.HasPrefix(sc.Fingerprint, "v1:sha256:") {
				t.Fatalf("no fingerprint: %+v", sc)
			}
		}
	})
}

// Server names are checked against the pool's rules when the config is read,
// so a config that parses never fails later when its tools join the pool.
func TestServerNamesMatchThePool(t *testing.T) {
	for name, ok := range map[string]bool{
		"fs": true, "my-server_2": true, strings.Repeat("s", 40): true,
		strings.Repeat("s", 41): false, "trailing_": false, "a__b": false, "": false, "dot.ted": false,
	} {
		if got := ValidServerName(name); got != ok {
			t.Errorf("ValidServerName(%q) = %v, want %v", name, got, ok)
		}
		_, err := ParseConfig([]byte(`{"mcpServers":{"`+name+`":{"command":"x"}}}`), "t", func(string) string { return "" })
		if (err == nil) != ok {
			t.Errorf("ParseConfig with server %q: %v", name, err)
		}
		if ok {
			if _, err := toolset.MCPName(name, "tool"); err != nil {
				t.Errorf("valid config name %q refused by the pool: %v", name, err)
			}
		}
	}
}
