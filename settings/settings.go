// Package settings loads Gantry's settings files, merges their scopes and
// records which project folders the user trusts.
//
// Settings live in JSON files with Claude Code's keys:
//
//	{
//	  "permissions": {
//	    "allow": ["Bash(npm run test:*)", "Read(~/notes/**)"],
//	    "deny":  ["WebFetch", "Read(./.env)"],
//	    "ask":   ["Bash(git push *)"],
//	    "defaultMode": "acceptEdits",
//	    "additionalDirectories": ["~/src/common"]
//	  },
//	  "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./check.sh", "timeout": 10}]}]},
//	  "env": {"FOO": "1"}
//	}
//
// The scopes, from weakest to strongest source of allow rules, are user
// (~/.gantry/settings.json, or $GANTRY_HOME/settings.json), project
// (<project>/.gantry/settings.json) and local
// (<project>/.gantry/settings.local.json); for compatibility the
// .claude/settings.json and .claude/settings.local.json files in the same
// places are read too. A managed policy file (default
// /etc/gantry/managed-settings.json) overrides everything: its defaultMode
// wins, and its deny and ask rules are always in force. CLI flags form the
// "cli" scope. Permission rules are never overridden between scopes: deny in
// any scope beats allow in any other (see package permission).
//
// Trust: the project and local scopes of a folder the user has not trusted
// contribute only their deny and ask rules and a defaultMode that is not more
// permissive than "default" (plan, dontAsk, default); their allow rules,
// additional directories, hooks, env and language servers (lspServers) are
// ignored until the folder is trusted (see [TrustStore]).
//
// Package settings imports nothing of Gantry but package tool. Packages
// permission and hook read the merged [Settings] it produces.
package settings

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/gantry-dev/gantry/internal/home"

	"github.com/gantry-dev/gantry/tool"
)

// Scope names where a setting came from.
type Scope string

const (
	ScopePolicy  Scope = "policy"
	ScopeUser    Scope = "user"
	ScopeProject Scope = "project"
	ScopeLocal   Scope = "local"
	ScopeCLI     Scope = "cli"
	ScopeSession Scope = "session"
)

// File is the content of one settings file. Unknown keys are ignored when
// reading and kept when Gantry writes a file (see [Update]).
type File struct {
	Permissions Permissions              `json:"permissions,omitzero"`
	Hooks       map[string][]HookMatcher `json:"hooks,omitempty"`
	Env         map[string]string        `json:"env,omitempty"`
	// Model is the default model of sessions started here ("" = the
	// provider's default).
	Model string `json:"model,omitempty"`
	// LSPServers configure language servers for the LSP tool, by name
	// (see package builtin/lsp for the keys). A project's servers are
	// commands: they are ignored until the folder is trusted.
	LSPServers map[string]json.RawMessage `json:"lspServers,omitempty"`
	// LSPDiagnostics, when false, stops Write and Edit from reporting the
	// language server's new errors.
	LSPDiagnostics *bool `json:"lspDiagnostics,omitempty"`
	// LSPDiagnosticsWaitMs is how long a Write or Edit result waits for a
	// running language server's diagnostics, in milliseconds (see package
	// builtin/lsp; later ones reach the model at its next turn).
	LSPDiagnosticsWaitMs *int `json:"lspDiagnosticsWaitMs,omitempty"`
	// StreamIdleTimeoutMs is how long a model stream may send nothing (no
	// response headers, no bytes; pings count) before the attempt is
	// abandoned and retried once, in milliseconds. Unset or 0 means the
	// default, 60000 (llm.DefaultIdleTimeout); a negative value disables
	// the watchdog. The --stream-idle-timeout flag and the
	// GANTRY_STREAM_IDLE_TIMEOUT variable take precedence.
	StreamIdleTimeoutMs *int `json:"streamIdleTimeoutMs,omitempty"`
	// Sandbox configures the shell sandbox (see [Sandbox]).
	Sandbox *Sandbox `json:"sandbox,omitempty"`
	// EnabledPlugins turns installed plugins on (true) or off (false),
	// keyed "plugin@marketplace" as the reference writes them (see package
	// plugins for where installed plugins are found). A project's are
	// ignored until the folder is trusted.
	EnabledPlugins map[string]bool `json:"enabledPlugins,omitempty"`
}

// Permissions is the "permissions" object of a settings file.
type Permissions struct {
	Allow                 []string  `json:"allow,omitempty"`
	Deny                  []string  `json:"deny,omitempty"`
	Ask                   []string  `json:"ask,omitempty"`
	DefaultMode           tool.Mode `json:"defaultMode,omitempty"`
	AdditionalDirectories []string  `json:"additionalDirectories,omitempty"`
}

// HookMatcher is one entry of a hook event's list: the hooks to run for tool
// names matching Matcher (an anchored regular expression; "" or "*" match
// every tool).
type HookMatcher struct {
	Matcher string        `json:"matcher,omitempty"`
	Hooks   []HookCommand `json:"hooks"`
}

// HookCommand is one configured hook. Type is "command" (the only type
// Gantry runs from settings); Timeout is in seconds (0 means the default, 60).
type HookCommand struct {
	Type    string  `json:"type"`
	Command string  `json:"command"`
	Timeout float64 `json:"timeout,omitempty"`
	// Sandbox runs the command in the session's OS sandbox (a Gantry
	// extension; the session must have sandbox.enabled).
	Sandbox bool `json:"sandbox,omitempty"`
}

// Source is one loaded settings file.
type Source struct {
	Scope Scope `json:"scope"`
	// Path is the file's path ("" for the cli and session scopes).
	Path string `json:"path,omitempty"`
	// Root is the directory that rules starting with a single "/" are
	// relative to: the folder holding the .gantry or .claude directory for
	// user, project and local files, the file's directory for the policy
	// file, the working directory for the cli scope.
	Root string `json:"root"`
	// File is the content, already filtered for trust (see [Load]).
	File File `json:"file"`
	// Ignored lists what was dropped from the file because its folder is not
	// trusted ("allow rules", "hooks", …), for a warning.
	Ignored []string `json:"ignored,omitempty"`
}

// Settings is the result of [Load]: the sources in precedence order (policy
// first, then local, project, user, cli last … see [Load]) and the effective
// values derived from them.
type Settings struct {
	// Sources are the files that exist, in the order policy, local,
	// project, user (each .gantry before .claude).
	Sources []Source `json:"sources"`
	// ProjectDir is the project folder and Trusted whether the user trusts
	// it.
	ProjectDir string `json:"project_dir"`
	Trusted    bool   `json:"trusted"`
	// ConfigChanged reports that the folder was trusted but its project
	// configuration changed since (see [TrustStore]): it is treated as
	// untrusted until the person trusts it again.
	ConfigChanged bool `json:"config_changed,omitempty"`
}

// Options says where [Load] looks. Zero fields get defaults.
type Options struct {
	// ProjectDir is the project (working) directory. Required.
	ProjectDir string
	// GantryHome is the user's Gantry directory; default $GANTRY_HOME, else
	// ~/.gantry.
	GantryHome string
	// UserHome is the user's home directory (for ~/.claude); default
	// os.UserHomeDir.
	UserHome string
	// PolicyPath is the managed policy file; default
	// /etc/gantry/managed-settings.json. "-" disables it.
	PolicyPath string
	// Trusted, if non-nil, overrides the trust store's answer for
	// ProjectDir (the CLI's --trust flag).
	Trusted *bool
	// Getenv looks up environment variables; default os.Getenv.
	Getenv func(string) string
	// Scopes, if not nil, limits the files read to these scopes (user,
	// project, local; the Agent SDKs' settingSources); the managed policy
	// is read whatever Scopes says. An empty, non-nil Scopes reads the
	// policy only.
	Scopes []Scope
}

// DefaultPolicyPath is the managed policy file read when
// [Options.PolicyPath] is empty.
const DefaultPolicyPath = "/etc/gantry/managed-settings.json"

func (o *Options) fill() error {
	if o.ProjectDir == "" {
		return errors.New("settings: ProjectDir is required")
	}
	abs, err := filepath.Abs(o.ProjectDir)
	if err != nil {
		return fmt.Errorf("settings: project dir: %w", err)
	}
	o.ProjectDir = abs
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.UserHome == "" {
		if h := o.Getenv("HOME"); h != "" {
			o.UserHome = h
		} else if h, err := os.UserHomeDir(); err == nil {
			o.UserHome = h
		}
	}
	if o.GantryHome == "" {
		o.GantryHome = GantryHome(o.Getenv, o.UserHome)
	}
	if o.PolicyPath == "" {
		o.PolicyPath = DefaultPolicyPath
	}
	return nil
}

// GantryHome returns the Gantry home, the directory of the user's settings,
// transcripts, checkpoints, memory and durable store. The look-up order is
// Gantry's one rule for it: $GANTRY_HOME when set and not empty; else
// userHome/.gantry when userHome is not ""; else $HOME/.gantry. getenv reads
// the environment (nil: no variable is set). GantryHome returns "" when none
// of these gives a directory.
func GantryHome(getenv func(string) string, userHome string) string {
	return home.Dir(getenv, userHome)
}

// Paths returns the file Gantry writes for a scope (user, project, local,
// policy), for [Update].
func Paths(opts Options) (map[Scope]string, error) {
	if err := opts.fill(); err != nil {
		return nil, err
	}
	return map[Scope]string{
		ScopePolicy:  opts.PolicyPath,
		ScopeUser:    filepath.Join(opts.GantryHome, "settings.json"),
		ScopeProject: filepath.Join(opts.ProjectDir, ".gantry", "settings.json"),
		ScopeLocal:   filepath.Join(opts.ProjectDir, ".gantry", "settings.local.json"),
	}, nil
}

// Load reads every settings file that exists and applies trust. A file
// that does not exist is skipped; a file that cannot be read or parsed is an
// error naming it (a broken policy file must not silently disappear).
func Load(opts Options) (*Settings, error) {
	if err := opts.fill(); err != nil {
		return nil, err
	}
	trusted, changed := false, false
	if opts.Trusted != nil {
		trusted = *opts.Trusted
	} else {
		ts := &TrustStore{Path: filepath.Join(opts.GantryHome, TrustFile)}
		st, err := ts.Check(opts.ProjectDir)
		if err != nil {
			return nil, err
		}
		trusted, changed = st == Trusted, st == ConfigChanged
	}
	s := &Settings{ProjectDir: opts.ProjectDir, Trusted: trusted, ConfigChanged: changed}
	type cand struct {
		scope Scope
		path  string
		root  string
	}
	pd, uh := opts.ProjectDir, opts.UserHome
	cands := []cand{}
	if opts.PolicyPath != "-" {
		cands = append(cands, cand{ScopePolicy, opts.PolicyPath, filepath.Dir(opts.PolicyPath)})
	}
	cands = append(cands,
		cand{ScopeLocal, filepath.Join(pd, ".gantry", "settings.local.json"), pd},
		cand{ScopeLocal, filepath.Join(pd, ".claude", "settings.local.json"), pd},
		cand{ScopeProject, filepath.Join(pd, ".gantry", "settings.json"), pd},
		cand{ScopeProject, filepath.Join(pd, ".claude", "settings.json"), pd},
		cand{ScopeUser, filepath.Join(opts.GantryHome, "settings.json"), filepath.Dir(opts.GantryHome)},
	)
	if uh != "" {
		cands = append(cands, cand{ScopeUser, filepath.Join(uh, ".claude", "settings.json"), uh})
	}
	seen := map[string]bool{}
	for _, c := range cands {
		if opts.Scopes != nil && c.scope != ScopePolicy && !slices.Contains(opts.Scopes, c.scope) {
			continue
		}
		key := c.path
		if r, err := filepath.EvalSymlinks(c.path); err == nil {
			key = r
		}
		if seen[key] {
			continue // the project is the home directory, or a symlinked file
		}
		seen[key] = true
		f, err := ReadFile(c.path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		src := Source{Scope: c.scope, Path: c.path, Root: c.root, File: *f}
		if (c.scope == ScopeProject || c.scope == ScopeLocal) && !trusted {
			src.File, src.Ignored = untrusted(src.File)
		}
		s.Sources = append(s.Sources, src)
	}
	return s, nil
}

// untrusted keeps what an untrusted folder may set: deny and ask rules and a
// mode no more permissive than default.
func untrusted(f File) (File, []string) {
	var out File
	var ignored []string
	out.Permissions.Deny = f.Permissions.Deny
	out.Permissions.Ask = f.Permissions.Ask
	switch f.Permissions.DefaultMode {
	case tool.ModeDefault, tool.ModePlan, tool.ModeDontAsk, "":
		out.Permissions.DefaultMode = f.Permissions.DefaultMode
	default:
		ignored = append(ignored, "defaultMode "+string(f.Permissions.DefaultMode))
	}
	if len(f.Permissions.Allow) > 0 {
		ignored = append(ignored, "allow rules")
	}
	if len(f.Permissions.AdditionalDirectories) > 0 {
		ignored = append(ignored, "additionalDirectories")
	}
	if len(f.Hooks) > 0 {
		ignored = append(ignored, "hooks")
	}
	if len(f.Env) > 0 {
		ignored = append(ignored, "env")
	}
	if len(f.LSPServers) > 0 {
		ignored = append(ignored, "lspServers")
	}
	if len(f.EnabledPlugins) > 0 {
		ignored = append(ignored, "enabledPlugins")
	}
	out.Model = f.Model
	out.LSPDiagnostics = f.LSPDiagnostics
	out.LSPDiagnosticsWaitMs = f.LSPDiagnosticsWaitMs
	out.StreamIdleTimeoutMs = f.StreamIdleTimeoutMs
	if f.Sandbox != nil {
		out.Sandbox, ignored = untrustedSandbox(f.Sandbox, ignored)
	}
	return out, ignored
}

// ReadFile reads and parses one settings file. An empty file is an empty
// File. The error wraps fs.ErrNotExist when the file does not exist.
func ReadFile(path string) (*File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("settings: %w", err)
	}
	var f File
	if len(trimSpace(b)) == 0 {
		return &f, nil
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("settings: %s: %w", path, err)
	}
	if m := f.Permissions.DefaultMode; m != "" && !m.Valid() {
		return nil, fmt.Errorf("settings: %s: unknown permissions.defaultMode %q", path, m)
	}
	return &f, nil
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\n' || b[0] == '\t' || b[0] == '\r') {
		b = b[1:]
	}
	return b
}

// Mode returns the effective default mode: the policy file's if it sets
// one, else the first set by local, project, user (in [Settings.Sources]
// order), else tool.ModeDefault. Bypass requested by an untrusted project
// was already dropped by [Load].
func (s *Settings) Mode() tool.Mode {
	for _, src := range s.Sources {
		if m := src.File.Permissions.DefaultMode; m != "" {
			return m
		}
	}
	return tool.ModeDefault
}

// Env returns the merged env: user, then project, then local, then policy
// (later wins).
func (s *Settings) Env() map[string]string {
	out := map[string]string{}
	for i := len(s.Sources) - 1; i >= 0; i-- {
		for k, v := range s.Sources[i].File.Env {
			out[k] = v
		}
	}
	return out
}

// EnabledPlugins returns the plugins settings turn on or off, keyed
// "plugin@marketplace": the strongest scope that names a plugin decides.
func (s *Settings) EnabledPlugins() map[string]bool {
	out := map[string]bool{}
	for i := len(s.Sources) - 1; i >= 0; i-- {
		for k, v := range s.Sources[i].File.EnabledPlugins {
			out[k] = v
		}
	}
	return out
}

// Hooks returns the configured hooks of every source, policy first, keyed by
// event name. Hooks of all scopes run (they are not overridden).
func (s *Settings) Hooks() map[string][]HookMatcher {
	out := map[string][]HookMatcher{}
	for _, src := range s.Sources {
		for ev, ms := range src.File.Hooks {
			out[ev] = append(out[ev], ms...)
		}
	}
	return out
}

// Ignored lists, per source path, what trust filtering dropped.
func (s *Settings) Ignored() map[string][]string {
	out := map[string][]string{}
	for _, src := range s.Sources {
		if len(src.Ignored) > 0 {
			out[src.Path] = src.Ignored
		}
	}
	return out
}

// Model returns the default model of the strongest scope that sets one
// ("" = none), and that scope.
func (s *Settings) Model() (string, Scope) {
	for _, src := range s.Sources {
		if src.File.Model != "" {
			return src.File.Model, src.Scope
		}
	}
	return "", ""
}

// LSPDiagnosticsWait returns the strongest scope's lspDiagnosticsWaitMs as
// a duration, and the scope ("" when no file sets it).
func (s *Settings) LSPDiagnosticsWait() (time.Duration, Scope) {
	for _, src := range s.Sources {
		if ms := src.File.LSPDiagnosticsWaitMs; ms != nil {
			return time.Duration(*ms) * time.Millisecond, src.Scope
		}
	}
	return 0, ""
}

// StreamIdleTimeout returns the strongest scope's streamIdleTimeoutMs as a
// duration (negative: no watchdog), and the scope; (0, "") when no file
// sets it or the strongest sets 0, which both mean llm.DefaultIdleTimeout.
func (s *Settings) StreamIdleTimeout() (time.Duration, Scope) {
	for _, src := range s.Sources {
		if ms := src.File.StreamIdleTimeoutMs; ms != nil {
			if *ms == 0 {
				return 0, ""
			}
			return time.Duration(*ms) * time.Millisecond, src.Scope
		}
	}
	return 0, ""
}

// LSPDiagnostics reports whether Write and Edit report a language server's
// new errors (the strongest scope's lspDiagnostics; default true), and the
// scope that decided ("" for the default).
func (s *Settings) LSPDiagnostics() (bool, Scope) {
	for _, src := range s.Sources {
		if src.File.LSPDiagnostics != nil {
			return *src.File.LSPDiagnostics, src.Scope
		}
	}
	return true, ""
}
