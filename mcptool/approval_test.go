package mcptool

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/settings"
)

func TestFingerprint(t *testing.T) {
	base := `{"command":"npx","args":["-y","srv","${HOME}/src"],"env":{"LEVEL":"${LEVEL:-info}","A":"1"}}`
	web := `{"type":"http","url":"https://h/mcp","headers":{"Authorization":"Bearer ${TOKEN}"}}`
	fp := func(t *testing.T, def string, env map[string]string) string {
		t.Helper()
		cfg, err := ParseConfig([]byte(`{"mcpServers":{"s":`+def+`}}`), "f", func(k string) string { return env[k] })
		if err != nil {
			t.Fatal(err)
		}
		f := cfg.Servers["s"].Fingerprint
		if !strings.HasPrefix(f, "v1:sha256:") || len(f) != len("v1:sha256:")+64 {
			t.Fatalf("fingerprint %q", f)
		}
		return f
	}
	env := map[string]string{"HOME": "/home/a", "TOKEN": "t1"}
	for _, tc := range []struct {
		name, a, b string
		envB       map[string]string
		same       bool
	}{
		{"identical", base, base, env, true},
		{"other environment (expansion not hashed)", base, base, map[string]string{"HOME": "/home/b", "LEVEL": "debug", "TOKEN": "t2"}, true},
		{"explicit stdio type", base, `{"type":"stdio","command":"npx","args":["-y","srv","${HOME}/src"],"env":{"A":"1","LEVEL":"${LEVEL:-info}"}}`, env, true},
		{"key order and spacing", web, `{"headers": {"Authorization": "Bearer ${TOKEN}"}, "url": "https://h/mcp", "type": "http"}`, env, true},
		{"inferred http type", web, `{"url":"https://h/mcp","headers":{"Authorization":"Bearer ${TOKEN}"}}`, env, true},
		{"command", base, strings.Replace(base, "npx", "/tmp/npx", 1), env, false},
		{"args", base, strings.Replace(base, `"-y",`, "", 1), env, false},
		{"args split differently", `{"command":"x","args":["a b"]}`, `{"command":"x","args":["a","b"]}`, env, false},
		{"env value", base, strings.Replace(base, `"A":"1"`, `"A":"2"`, 1), env, false},
		{"env key", base, strings.Replace(base, `"A":"1"`, `"B":"1"`, 1), env, false},
		{"env added", base, strings.Replace(base, `"A":"1"`, `"A":"1","LD_PRELOAD":"/tmp/x.so"`, 1), env, false},
		{"url", web, strings.Replace(web, "https://h/", "https://evil/", 1), env, false},
		{"header value", web, strings.Replace(web, "Bearer", "Basic", 1), env, false},
		{"type", web, strings.Replace(web, `"http"`, `"sse"`, 1), env, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := fp(t, tc.a, env), fp(t, tc.b, tc.envB)
			if (a == b) != tc.same {
				t.Fatalf("same = %v, want %v", a == b, tc.same)
			}
		})
	}
	// Servers given in code are fingerprinted too; Source is not part of it.
	cfg, err := Load(LoadOptions{Servers: map[string]ServerConfig{"c": {Command: "x", Source: "mine"}}})
	if err != nil || cfg.Servers["c"].Fingerprint != Fingerprint(ServerConfig{Type: TypeStdio, Command: "x"}) {
		t.Fatalf("%v %+v", err, cfg)
	}
}

// TestLoadApproval: the changed-project-server case of docs/mcp.md. A project server whose definition
// changed since the user approved it is held back until approved again.
func TestLoadApproval(t *testing.T) {
	const (
		fs   = `"fs":{"command":"srv-fs","args":["--root","."],"env":{"LEVEL":"info"}}`
		web  = `"web":{"type":"http","url":"http://127.0.0.1:1/mcp"}`
		fsV2 = `"fs":{"command":"/tmp/evil","args":["--root","."],"env":{"LEVEL":"info"}}`
		fsV3 = `"fs":{"command":"srv-fs","args":["--root","."],"env":{"LEVEL":"info","LD_PRELOAD":"/tmp/x.so"}}`
		evil = `"evil":{"command":"curl"}`
	)
	type step struct {
		project   string // the .mcp.json servers; "-" for no file
		files     string // servers of an explicit --mcp-config file
		trusted   bool
		reapprove bool
		start     string // the servers loaded, sorted, comma-separated
		held      string // name=state, sorted
	}
	cases := []struct {
		name  string
		steps []step
	}{
		{"unchanged starts", []step{
			{project: fs + "," + web, trusted: true, start: "fs,web"},
			{project: fs + "," + web, trusted: true, start: "fs,web"},
		}},
		{"command changed is held", []step{
			{project: fs + "," + web, trusted: true, start: "fs,web"},
			{project: fsV2 + "," + web, trusted: true, start: "web", held: "fs=changed"},
		}},
		{"env changed is held", []step{
			{project: fs, trusted: true, start: "fs"},
			{project: fsV3, trusted: true, start: "", held: "fs=changed"},
		}},
		{"re-approved with --trust starts", []step{
			{project: fs, trusted: true, start: "fs"},
			{project: fsV2, trusted: true, start: "", held: "fs=changed"},
			{project: fsV2, trusted: true, reapprove: true, start: "fs"},
			{project: fsV2, trusted: true, start: "fs"},
			{project: fs, trusted: true, start: "", held: "fs=changed"}, // going back is a change too
		}},
		{"server added after approval is held", []step{
			{project: fs, trusted: true, start: "fs"},
			{project: fs + "," + evil, trusted: true, start: "fs", held: "evil=new"},
		}},
		{".mcp.json added to an approved folder is held", []step{
			{project: "-", trusted: true, start: ""},
			{project: evil, trusted: true, start: "", held: "evil=new"},
		}},
		{"removing a server needs nothing", []step{
			{project: fs + "," + web, trusted: true, start: "fs,web"},
			{project: web, trusted: true, start: "web"},
			{project: fs + "," + web, trusted: true, start: "fs,web"},
		}},
		{"untrusted: nothing read, nothing recorded", []step{
			{project: fsV2, trusted: false, start: ""},
			{project: fs, trusted: true, start: "fs"},
			{project: fsV2, trusted: true, start: "", held: "fs=changed"},
		}},
		{"an explicit file's server of the same name replaces a held one", []step{
			{project: fs, trusted: true, start: "fs"},
			{project: fsV2, files: `"fs":{"command":"mine"}`, trusted: true, start: "fs"},
		}},
		{"explicit files need no approval", []step{
			{project: "-", trusted: true, start: ""},
			{project: "-", files: evil, trusted: true, start: "evil"},
			{project: "-", files: `"evil":{"command":"other"}`, trusted: false, start: "evil"},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir, home := t.TempDir(), t.TempDir()
			store := &settings.MCPApprovals{Path: filepath.Join(home, settings.MCPApprovalFile)}
			for i, st := range tc.steps {
				p := filepath.Join(dir, ProjectConfigFile)
				if st.project == "-" {
					os.Remove(p)
				} else if err := os.WriteFile(p, []byte(`{"mcpServers":{`+st.project+`}}`), 0o600); err != nil {
					t.Fatal(err)
				}
				var files []string
				if st.files != "" {
					f := filepath.Join(home, "extra.json")
					os.WriteFile(f, []byte(`{"mcpServers":{`+st.files+`}}`), 0o600)
					files = []string{f}
				}
				cfg, err := Load(LoadOptions{Dir: dir, Trusted: st.trusted, Files: files, Approve: StoreApprover(store, st.reapprove)})
				if err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
				var held []string
				for _, name := range (&ConfigFile{Servers: toServers(cfg.Held)}).Names() {
					held = append(held, name+"="+string(cfg.Held[name].Approval))
				}
				if got := strings.Join(cfg.Names(), ","); got != st.start {
					t.Errorf("step %d: started %q, want %q", i, got, st.start)
				}
				if got := strings.Join(held, ","); got != st.held {
					t.Errorf("step %d: held %q, want %q", i, got, st.held)
				}
			}
		})
	}
}

func toServers(h map[string]HeldServer) map[string]ServerConfig {
	m := map[string]ServerConfig{}
	for k, v := range h {
		m[k] = v.Server
	}
	return m
}

type failingStore struct{ err error }

func (f failingStore) Approvals(string) (map[string]string, bool, error) { return nil, false, f.err }
func (f failingStore) SetApprovals(string, map[string]string) error      { return f.err }

func TestLoadApprovalErrors(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, ProjectConfigFile), []byte(`{"mcpServers":{"a":{"command":"x"}}}`), 0o600)
	boom := errors.New("disk full")
	if _, err := Load(LoadOptions{Dir: dir, Trusted: true, Approve: StoreApprover(failingStore{boom}, false)}); !errors.Is(err, boom) || !errors.Is(err, ErrConfig) {
		t.Fatalf("store error: %v", err)
	}
	// A verdict the approver leaves out is not an approval.
	cfg, err := Load(LoadOptions{Dir: dir, Trusted: true, Approve: func(string, map[string]ServerConfig) (map[string]Approval, error) { return nil, nil }})
	if err != nil || len(cfg.Servers) != 0 || cfg.Held["a"].Approval != ApprovalNew {
		t.Fatalf("%v %+v", err, cfg)
	}
	// A corrupt record is an error naming the file, not an approval.
	home := t.TempDir()
	store := &settings.MCPApprovals{Path: filepath.Join(home, settings.MCPApprovalFile)}
	os.WriteFile(store.Path, []byte("{not json"), 0o600)
	if _, err := Load(LoadOptions{Dir: dir, Trusted: true, Approve: StoreApprover(store, false)}); err == nil || !strings.Contains(err.Error(), store.Path) {
		t.Fatalf("corrupt record: %v", err)
	}
}
