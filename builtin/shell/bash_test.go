package shell

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/tool/tooltest"

	"github.com/google/go-cmp/cmp"

	"github.com/gantry-dev/gantry/tool"
)

func TestSchemas(t *testing.T) {
	type prop struct{ Type string }
	type schema struct {
		Type       string
		Properties map[string]prop
		Required   []string
	}
	tests := []struct {
		tl      tool.Tool
		name    string
		aliases []string
		props   map[string]string
		req     []string
	}{
		{NewBash(Options{}), "Bash", nil, map[string]string{
			"command": "string", "timeout": "number", "description": "string",
			"run_in_background": "boolean", "dangerouslyDisableSandbox": "boolean",
		}, []string{"command"}},
		{NewTaskOutput(Options{}), "TaskOutput", []string{"BashOutput", "AgentOutput"}, map[string]string{
			"task_id": "string", "block": "boolean", "timeout": "number",
		}, []string{"task_id"}},
		{NewTaskStop(Options{}), "TaskStop", []string{"KillShell"}, map[string]string{
			"task_id": "string", "shell_id": "string",
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := tt.tl.Spec()
			if spec.Name != tt.name || !cmp.Equal(spec.Aliases, tt.aliases) {
				t.Errorf("name %q aliases %v", spec.Name, spec.Aliases)
			}
			if err := tool.CheckSchema(spec.InputSchema); err != nil {
				t.Fatal(err)
			}
			var s schema
			if err := json.Unmarshal(spec.InputSchema, &s); err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for k, v := range s.Properties {
				got[k] = v.Type
			}
			if diff := cmp.Diff(tt.props, got); diff != "" || s.Type != "object" {
				t.Errorf("properties (-want +got):\n%s", diff)
			}
			if !cmp.Equal(s.Required, tt.req) {
				t.Errorf("required %v, want %v", s.Required, tt.req)
			}
		})
	}
	b := NewBash(Options{}).Spec()
	if b.Timeout != DefaultTimeout || b.MaxTimeout != MaxTimeout || !b.CancelSiblingsOnError {
		t.Errorf("Bash spec timeout %v max %v cancelSiblings %v", b.Timeout, b.MaxTimeout, b.CancelSiblingsOnError)
	}
}

func TestBashRun(t *testing.T) {
	b := NewBash(Options{})
	tests := []struct {
		cmd     string
		want    string // exact model text
		isError bool
		code    int
	}{
		{"echo hello", "hello", false, 0},
		{"true", "(no output)", false, 0},
		{"exit 3", "Exit code 3", true, 3},
		{"false", "Exit code 1", true, 1},
		{"echo out; echo err >&2; echo out2; echo err2 >&2", "out\nerr\nout2\nerr2", false, 0},
		{"echo partial; exit 2", "partial\n\nExit code 2", true, 2},
		{"cat; echo read-nothing", "read-nothing", false, 0},
		{"ls /nonexistent-gantry-dir 2>&1 >/dev/null | wc -l | tr -d ' '", "1", false, 0},
		{"echo 'a b'   \"c\"", "a b c", false, 0},
		{"kill -9 $$", "Killed by signal killed (exit code 137).", true, 137},
		{"printf 'no newline'", "no newline", false, 0},
		{"if then", "", true, 2},
	}
	for _, tt := range tests {
		t.Run(tt.cmd, func(t *testing.T) {
			r := tooltest.Call(t, b, testEnv(t, nil), map[string]any{"command": tt.cmd})
			out := structured[BashOutput](t, r)
			if tt.want != "" && r.TextContent() != tt.want {
				t.Errorf("text %q, want %q", r.TextContent(), tt.want)
			}
			if r.IsError != tt.isError || out.ExitCode != tt.code {
				t.Errorf("isError %v code %d, want %v %d (text %q)", r.IsError, out.ExitCode, tt.isError, tt.code, r.TextContent())
			}
		})
	}
}

func TestBashWorkDir(t *testing.T) {
	b := NewBash(Options{})
	env := testEnv(t, nil)
	if err := os.Mkdir(filepath.Join(env.WorkDir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(env.WorkDir, "here.txt"), nil, 0o644)

	// Runs in WorkDir.
	if r := tooltest.Call(t, b, env, map[string]any{"command": "ls"}); !strings.Contains(r.TextContent(), "here.txt") {
		t.Fatalf("ls in work dir: %q", r.TextContent())
	}
	// A cd persists through the modifier.
	r := tooltest.Call(t, b, env, map[string]any{"command": "cd sub && echo moved"})
	if r.ContextModifier == nil {
		t.Fatal("no ContextModifier after cd")
	}
	want, _ := filepath.EvalSymlinks(filepath.Join(env.WorkDir, "sub"))
	r.ContextModifier(env)
	if env.WorkDir != want {
		t.Fatalf("WorkDir %q, want %q", env.WorkDir, want)
	}
	if r := tooltest.Call(t, b, env, map[string]any{"command": "pwd -P"}); r.TextContent() != want {
		t.Fatalf("next call runs in %q, want %q", r.TextContent(), want)
	}
	// No change: no modifier. Failed cd: no modifier. cd then exit: kept.
	for _, c := range []string{"echo same", "cd /nonexistent-gantry", "cd .. && cd sub"} {
		if r := tooltest.Call(t, b, env, map[string]any{"command": c}); r.ContextModifier != nil {
			t.Errorf("%q: unexpected modifier", c)
		}
	}
	if r := tooltest.Call(t, b, env, map[string]any{"command": "cd .. && exit 0"}); r.ContextModifier == nil {
		t.Error("cd then exit: no modifier")
	}
	// A killed command does not move the session.
	if r := tooltest.Call(t, b, env, map[string]any{"command": "cd / && sleep 10", "timeout": 200}); r.ContextModifier != nil {
		t.Error("timed-out command moved the session")
	}
	// AllowCwd refuses.
	strict := NewBash(Options{AllowCwd: func(env *tool.Env, dir string) bool { return strings.HasPrefix(dir, env.WorkDir) }})
	r = tooltest.Call(t, strict, env, map[string]any{"command": "cd /"})
	if r.ContextModifier != nil || !strings.Contains(r.TextContent(), "stays") {
		t.Errorf("AllowCwd: modifier %v text %q", r.ContextModifier != nil, r.TextContent())
	}
}

func TestBashTimeoutKillsProcessTree(t *testing.T) {
	b := NewBash(Options{Grace: 300 * time.Millisecond})
	tests := []struct{ name, cmd string }{
		{"children", "echo $$; sleep 100 & sleep 100 & wait"},
		{"grandchild ignoring TERM", "echo $$; (trap '' TERM; sleep 100; echo never) & bash -c 'trap \"\" TERM; sleep 100' & wait"},
		{"shell ignoring TERM", "trap '' TERM; echo $$; sleep 100 & wait; sleep 100"},
		{"orphan left after exit", "echo $$; (sleep 100 &) ; echo done"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tooltest.Call(t, b, testEnv(t, nil), map[string]any{"command": tt.cmd, "timeout": 500})
			pgid := firstInt(t, r.TextContent())
			out := structured[BashOutput](t, r)
			if tt.name == "orphan left after exit" {
				if r.IsError {
					t.Fatalf("unexpected error: %q", r.TextContent())
				}
			} else if !out.TimedOut || !r.IsError || !strings.Contains(r.TextContent(), "timed out after 500ms") {
				t.Fatalf("not reported as timed out: %q", r.TextContent())
			}
			waitGone(t, pgid)
		})
	}
}

func TestBashCancel(t *testing.T) {
	b := NewBash(Options{Grace: 300 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	env := testEnv(t, nil)
	marker := filepath.Join(env.WorkDir, "started")
	go func() {
		// Cancel once the command has started (polling a file it writes).
		for range 500 {
			if _, err := os.Stat(marker); err == nil {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
	}()
	r := tooltest.CallContext(ctx, t, b, env, map[string]any{"command": "echo $$; touch started; sleep 100 & sleep 100; echo never"})
	out := structured[BashOutput](t, r)
	if !out.Interrupted || !r.IsError || strings.Contains(r.TextContent(), "never") {
		t.Fatalf("result %q %+v", r.TextContent(), out)
	}
	waitGone(t, firstInt(t, r.TextContent()))
}

func TestBashEnvironment(t *testing.T) {
	base := []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "LC_ALL=C.UTF-8",
		"ANTHROPIC_API_KEY=sk-ant", "OPENAI_API_KEY=sk-oai", "my_service_api_key=x", "ANTHROPIC_AUTH_TOKEN=t",
		"GITHUB_TOKEN=ghp", "AWS_SECRET_ACCESS_KEY=aws", "KEEP_ME=1", "KEEP_TOKEN=tok", "PAGER=less", "GIT_EDITOR=vim",
		"HTTPS_PROXY=http://user:pw@proxy:3128", "NO_PROXY=localhost",
	}
	cases := []struct {
		name       string
		opts       Options
		gone, kept []string
	}{
		{
			name: "default allow-list",
			opts: Options{},
			gone: []string{"ANTHROPIC_API_KEY=", "OPENAI_API_KEY=", "my_service_api_key=", "ANTHROPIC_AUTH_TOKEN=", "GITHUB_TOKEN=",
				"AWS_SECRET_ACCESS_KEY=", "KEEP_ME=", "PAGER=less", "GIT_EDITOR=vim", "HTTPS_PROXY="},
			kept: []string{"PATH=", "HOME=", "LC_ALL=C.UTF-8", "NO_PROXY=localhost", "GIT_EDITOR=true", "PAGER=cat", "GIT_TERMINAL_PROMPT=0", "GANTRY=1"},
		},
		{
			name: "a wider allow-list still drops credentials",
			opts: Options{AllowEnv: []string{"PATH", "KEEP_*", "GITHUB_*", "*_API_KEY"}},
			gone: []string{"HOME=", "KEEP_TOKEN=", "GITHUB_TOKEN=", "ANTHROPIC_API_KEY=", "my_service_api_key="},
			kept: []string{"PATH=", "KEEP_ME=1"},
		},
		{
			name: "configured variables pass, Gantry's own keys never",
			opts: Options{Env: map[string]string{"KEEP_ME": "2", "NPM_TOKEN": "configured", "OPENAI_API_KEY": "no"}},
			gone: []string{"OPENAI_API_KEY=", "KEEP_ME=1"},
			kept: []string{"KEEP_ME=2", "NPM_TOKEN=configured"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := c.opts
			o.Environ = func() []string { return base }
			r := tooltest.Call(t, NewBash(o), testEnv(t, nil), map[string]any{"command": "env | sort"})
			lines := strings.Split(r.TextContent(), "\n")
			has := func(kv string) bool {
				for _, l := range lines {
					if l == kv || strings.HasPrefix(l, kv) {
						return true
					}
				}
				return false
			}
			for _, gone := range c.gone {
				if has(gone) {
					t.Errorf("%s still in the environment", gone)
				}
			}
			for _, kept := range c.kept {
				if !has(kept) {
					t.Errorf("%s missing from the environment", kept)
				}
			}
		})
	}
	// No rc files: BASH_ENV is not read.
	rc := filepath.Join(t.TempDir(), "rc")
	os.WriteFile(rc, []byte("echo SOURCED\n"), 0o644)
	b2 := NewBash(Options{Environ: func() []string {
		return []string{"PATH=" + os.Getenv("PATH"), "BASH_ENV=" + rc, "HOME=" + filepath.Dir(rc)}
	}})
	if r := tooltest.Call(t, b2, testEnv(t, nil), map[string]any{"command": "echo ok"}); r.TextContent() != "ok" {
		t.Errorf("rc file sourced? %q", r.TextContent())
	}
}

func TestBashHugeOutput(t *testing.T) {
	t.Run("truncated and saved", func(t *testing.T) {
		b := NewBash(Options{})
		env := testEnv(t, nil)
		// 1,000,000 numbered lines: ~6.9 MB.
		r := tooltest.Call(t, b, env, map[string]any{"command": "seq 1 1000000"})
		out := structured[BashOutput](t, r)
		text := r.TextContent()
		if r.IsError || !out.Truncated || out.OutputFile == "" {
			t.Fatalf("isError %v truncated %v file %q", r.IsError, out.Truncated, out.OutputFile)
		}
		if n := len([]rune(text)); n > DefaultInlineChars+500 {
			t.Fatalf("inline text has %d chars", n)
		}
		if !strings.HasPrefix(text, "1\n2\n3\n") || !strings.HasSuffix(text, "999999\n1000000") || !strings.Contains(text, out.OutputFile) {
			t.Fatalf("head/tail/note wrong: %q … %q", text[:40], text[len(text)-40:])
		}
		if filepath.Dir(out.OutputFile) != env.ToolResultsDir {
			t.Errorf("file %s not in %s", out.OutputFile, env.ToolResultsDir)
		}
		data, err := os.ReadFile(out.OutputFile)
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(data)) != out.OutputBytes || !strings.HasSuffix(string(data), "\n999999\n1000000\n") {
			t.Fatalf("file has %d bytes, output %d", len(data), out.OutputBytes)
		}
	})
	t.Run("contiguous but over the inline budget", func(t *testing.T) {
		b := NewBash(Options{InlineChars: 100})
		r := tooltest.Call(t, b, testEnv(t, nil), map[string]any{"command": "seq 1 100"})
		out := structured[BashOutput](t, r)
		data, err := os.ReadFile(out.OutputFile)
		if err != nil || !out.Truncated || !strings.HasPrefix(string(data), "1\n2\n") || !strings.HasSuffix(string(data), "99\n100\n") {
			t.Fatalf("truncated %v file %q err %v", out.Truncated, data, err)
		}
	})
	t.Run("200 MB killed at the default 100 MiB cap with bounded memory", func(t *testing.T) {
		const limit = DefaultMaxOutputBytes
		b := NewBash(Options{})
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		r := tooltest.Call(t, b, testEnv(t, nil), map[string]any{"command": "echo $$; yes | head -c 200000000; echo never-printed"})
		runtime.ReadMemStats(&after)
		out := structured[BashOutput](t, r)
		if !out.OutputLimited || !r.IsError || !strings.Contains(r.TextContent(), "limit") {
			t.Fatalf("not killed at the cap: %+v", out)
		}
		if out.OutputBytes != limit {
			t.Errorf("accepted %d bytes, want %d", out.OutputBytes, limit)
		}
		if fi, err := os.Stat(out.OutputFile); err != nil || fi.Size() != limit {
			t.Errorf("output file: %v %v", fi, err)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
			t.Errorf("allocated %d MB while streaming %d MB", alloc>>20, limit>>20)
		}
		waitGone(t, firstInt(t, r.TextContent()))
	})
}

func TestBashEscapes(t *testing.T) {
	b := NewBash(Options{})
	r := tooltest.Call(t, b, testEnv(t, nil), map[string]any{"command": `printf '\033[31mred\033[0m \033]0;title\007x\342\200\256y\n'`})
	if got := r.TextContent(); got != `red x\u{202E}y` {
		t.Errorf("model text %q", got)
	}
	display := tool.JoinText(r.DisplayContent())
	if !strings.Contains(display, `\x1b[31mred\x1b[0m`) || !strings.Contains(display, `\x1b]0;title\x07`) || !strings.Contains(display, `\u{202E}`) {
		t.Errorf("display %q", display)
	}
	if strings.ContainsAny(display, "\x1b\x07\u202e") {
		t.Errorf("display keeps raw controls: %q", display)
	}
}

func TestBashProgress(t *testing.T) {
	b := NewBash(Options{ProgressInterval: 20 * time.Millisecond})
	env := testEnv(t, nil)
	var mu sync.Mutex
	var reports []tool.Progress
	seen := filepath.Join(env.WorkDir, "seen")
	env.Progress = func(p tool.Progress) {
		mu.Lock()
		reports = append(reports, p)
		mu.Unlock()
		os.WriteFile(seen, nil, 0o600) // lets the command go on
	}
	// The command prints "second" only once a report arrived (or after 10 s).
	tooltest.Call(t, b, env, map[string]any{"command": "echo first; for i in $(seq 1000); do [ -e seen ] && break; sleep 0.01; done; echo second"})
	mu.Lock()
	defer mu.Unlock()
	if len(reports) == 0 {
		t.Fatal("no progress reports")
	}
	p, ok := reports[0].Data.(Progress)
	if !ok || !strings.Contains(p.Output, "first") || reports[0].Message != "first" {
		t.Errorf("first report %+v", reports[0])
	}
}

func TestBashTraitsAndDescribe(t *testing.T) {
	b := NewBash(Options{})
	traits := func(in map[string]any) tool.Traits {
		raw, _ := json.Marshal(in)
		return tool.TraitsOf(b, raw)
	}
	if got := traits(map[string]any{"command": "git status && ls -la"}); got != tool.ReadOnlyTraits {
		t.Errorf("read-only command: %+v", got)
	}
	for _, in := range []map[string]any{
		{"command": "rm -rf x"}, {"command": "ls > f"}, {"command": "echo $(id)"}, {"command": "ls |"},
		{"command": "ls", "run_in_background": true}, {"command": "find . -delete"},
	} {
		if got := traits(in); got != (tool.Traits{}) {
			t.Errorf("%v: %+v, want fail-closed", in, got)
		}
	}
	// A read-only line that may change the shell's directory is read-only
	// but runs alone, so its cd is applied to the session.
	for _, cmd := range []string{"cd sub && ls", "pushd sub && ls", "ls; cd /tmp", "(cd sub && ls)", "cd", "eval 'cd sub'"} {
		want := tool.ReadOnlyTraits
		want.ConcurrencySafe = false
		if got := traits(map[string]any{"command": cmd}); got != want && got != (tool.Traits{}) {
			t.Errorf("%q: %+v, want read-only and not concurrency-safe (or fail-closed)", cmd, got)
		} else if got.ConcurrencySafe {
			t.Errorf("%q is concurrency-safe", cmd)
		}
	}
	raw := json.RawMessage(`{"command":"x"`)
	if got := tool.TraitsOf(b, raw); got != (tool.Traits{}) {
		t.Errorf("bad JSON: %+v", got)
	}
	desc := func(in map[string]any) string {
		r, _ := json.Marshal(in)
		return tool.Describe(b, r)
	}
	if got := desc(map[string]any{"command": "go test ./...\necho done", "description": "Run tests"}); got != "Run tests" {
		t.Errorf("describe %q", got)
	}
	if got := desc(map[string]any{"command": "go test ./...\necho done"}); got != "go test ./..." {
		t.Errorf("describe %q", got)
	}
	if got := desc(map[string]any{"command": "echo \x1b]0;x\x07" + strings.Repeat("a", 200)}); strings.ContainsRune(got, 0x1b) || len([]rune(got)) > 100 {
		t.Errorf("describe %q", got)
	}
	tm := b.(tool.Timeouter)
	for in, want := range map[string]time.Duration{
		`{"command":"x"}`: DefaultTimeout, `{"command":"x","timeout":1500}`: 1500 * time.Millisecond,
		`{"command":"x","timeout":99999999}`: MaxTimeout,
	} {
		if got := tm.CallTimeout(json.RawMessage(in)); got != want {
			t.Errorf("CallTimeout(%s) = %v, want %v", in, got, want)
		}
	}
	v := b.(tool.InputValidator)
	if err := v.ValidateInput(context.Background(), nil, json.RawMessage(`{"command":"  "}`)); err == nil {
		t.Error("empty command accepted")
	}
}

func BenchmarkBashTrue(b *testing.B) {
	bash := NewBash(Options{})
	env := &tool.Env{WorkDir: b.TempDir(), ToolResultsDir: b.TempDir()}
	in := json.RawMessage(`{"command":"true"}`)
	for b.Loop() {
		r, err := bash.Call(context.Background(), env, in)
		if err != nil || r.IsError {
			b.Fatal(err, r)
		}
	}
}

func TestBashTimeoutCapped(t *testing.T) {
	b := NewBash(Options{}).(tool.Timeouter)
	cases := []struct {
		in   string
		want time.Duration
	}{
		{`{"command":"x"}`, DefaultTimeout},
		{`{"command":"x","timeout":0}`, DefaultTimeout},
		{`{"command":"x","timeout":1500}`, 1500 * time.Millisecond},
		{`{"command":"x","timeout":0.0001}`, time.Millisecond},
		{`{"command":"x","timeout":600000}`, MaxTimeout},
		{`{"command":"x","timeout":600001}`, MaxTimeout},
		{`{"command":"x","timeout":9223372036854775807}`, MaxTimeout},
		{`{"command":"x","timeout":1e300}`, MaxTimeout},
		{`{"command":"x","timeout":1.7976931348623157e308}`, MaxTimeout},
	}
	for _, c := range cases {
		if got := b.CallTimeout(json.RawMessage(c.in)); got != c.want {
			t.Errorf("%s: timeout %v, want %v", c.in, got, c.want)
		}
	}
}

// TestBashGitReadEnv: a command that runs because it is read-only gets git
// configuration that switches off the programs a repository may name
// (fsmonitor, pager, hooks) and ignores an implicit bare repository; other
// commands run with the repository's own configuration.
func TestBashGitReadEnv(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	b := NewBash(Options{})
	env := testEnv(t, nil)
	marker := filepath.Join(env.WorkDir, "pwned")
	for _, c := range []string{"git init -q .", "git config core.fsmonitor 'touch " + marker + "; false'", "echo a > f"} {
		if r := tooltest.Call(t, b, env, map[string]any{"command": c}); r.IsError {
			t.Fatalf("%s: %s", c, r.TextContent())
		}
	}
	r := tooltest.Call(t, b, env, map[string]any{"command": "git status --short && git config --get core.fsmonitor"})
	if r.IsError || !strings.Contains(r.TextContent(), "false") {
		t.Fatalf("read-only git: %q", r.TextContent())
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("git status ran the repository's fsmonitor")
	}
	// Not read-only: the repository's configuration is in force.
	r = tooltest.Call(t, b, env, map[string]any{"command": "git config --get core.fsmonitor > out; cat out"})
	if !strings.Contains(r.TextContent(), "touch") {
		t.Fatalf("writing command saw %q", r.TextContent())
	}
}
