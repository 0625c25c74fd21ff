package permission

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gantry-dev/gantry/internal/wildcard"
	"github.com/gantry-dev/gantry/netguard"

	"github.com/gantry-dev/gantry/settings"
	"github.com/gantry-dev/gantry/tool"
)

// RuleSet is the rules of one scope.
type RuleSet struct {
	// Source names the scope ("policy", "user", "project", "local", "cli",
	// "session"); it becomes [Decision.Source].
	Source string
	// Root is the directory that path rules starting with a single "/" are
	// relative to ("" means the working directory).
	Root string
	// Allow, Deny and Ask are rules as written.
	Allow, Deny, Ask []string
}

// Options configures an [Engine]. The zero value of every field is usable.
type Options struct {
	// Mode is the mode used for a call whose Env has none; default
	// tool.ModeDefault. The session's mode normally travels in
	// [tool.Env.Mode].
	Mode tool.Mode
	// Rules are the rules in force, from every scope. Order between scopes
	// does not matter: deny in any scope beats allow in any other.
	Rules []RuleSet
	// WorkDir is the project: the trust boundary. Paths are "inside" when
	// they are within it or an additional directory, wherever the
	// session's current directory ([tool.Env.WorkDir], which only anchors
	// relative paths) has moved. Empty means each call's Env.WorkDir.
	WorkDir string
	// AdditionalDirs are directories besides the working directory that the
	// session may use (added to [tool.Env.AdditionalDirs]).
	AdditionalDirs []string
	// Home is the user's home directory (for ~ in rules and paths and for
	// protected paths). Default $HOME from Getenv.
	Home string
	// Getenv looks up environment variables; default: none.
	Getenv func(string) string
	// GantryHome is Gantry's own directory (settings, sessions, trust),
	// protected wherever it points. Default $GANTRY_HOME from Getenv, else
	// Home/.gantry.
	GantryHome string
	// SettingsPaths are the settings files [Engine.Apply] writes "always
	// allow" rules to, by scope (settings.Paths gives them); nil means no
	// file can be written (only session updates apply).
	SettingsPaths map[settings.Scope]string
	// Sandbox is the session's OS sandbox for Bash (nil = none): see
	// [ShellSandbox] for the rules it adds.
	Sandbox ShellSandbox
	// Start is when the run started: an allow rule approves running a
	// script (./scripts/test.sh, sh greet.sh) only when the script has
	// not changed since (see docs/permissions.md, "Rules for scripts").
	// Zero means 2 s before NewEngine (file systems stamp times from a
	// coarse clock).
	Start time.Time
}

// rule is a parsed rule with where it came from.
type rule struct {
	Rule
	raw   string
	canon string // Bash rules: the canonical text of an exact specifier
	wild  bool   // Bash rules: the specifier has a wildcard
	// host is a domain: specifier's pattern in canonical form
	// (netguard.CanonPattern); hostErr is set when it has none.
	host     string
	hostErr  error
	behavior tool.Behavior
	source   string
	root     string
}

func newRule(r Rule, raw string, b tool.Behavior, source, root string) rule {
	ru := rule{Rule: r, raw: raw, behavior: b, source: source, root: root}
	if r.Specifier != "" {
		ru.wild = hasWildcard(normalizeCommandSpec(r.Specifier))
		ru.canon = canonSpec(r.Specifier)
		if spec, ok := strings.CutPrefix(r.Specifier, "domain:"); ok {
			ru.host, ru.hostErr = netguard.CanonPattern(spec)
		}
	}
	return ru
}

// Engine is the permission [Decider]: modes, rules from settings scopes,
// path policy and shell analysis; an Ask it returns is resolved with
// [ResolveAsk]. It is safe for
// concurrent use; session updates ([Engine.Apply]) take effect for the next
// decision.
type Engine struct {
	cfg Options

	// resolved caches the symlink-resolved form of working directories.
	resolved sync.Map // string → string

	mu      sync.RWMutex
	rules   []rule
	addDirs []string
	mode    tool.Mode
}

var _ Decider = (*Engine)(nil)

// NewEngine returns an Engine for cfg. Every rule must parse: a deny rule
// that is silently dropped would be a hole, so a bad rule is an error
// (joined with the others, each naming its scope).
func NewEngine(cfg Options) (*Engine, error) {
	if cfg.Mode == "" {
		cfg.Mode = tool.ModeDefault
	}
	if !cfg.Mode.Valid() {
		return nil, fmt.Errorf("permission: unknown mode %q", cfg.Mode)
	}
	if cfg.Home == "" && cfg.Getenv != nil {
		cfg.Home = cfg.Getenv("HOME")
	}
	if cfg.GantryHome == "" {
		cfg.GantryHome = settings.GantryHome(cfg.Getenv, cfg.Home)
	}
	if cfg.Home != "" {
		cfg.Home = filepath.Clean(cfg.Home)
	}
	if cfg.GantryHome != "" {
		cfg.GantryHome = filepath.Clean(cfg.GantryHome)
	}
	if cfg.Start.IsZero() {
		cfg.Start = time.Now().Add(-startMargin)
	}
	e := &Engine{cfg: cfg, mode: cfg.Mode}
	var errs []error
	for _, rs := range cfg.Rules {
		for _, list := range []struct {
			b     tool.Behavior
			rules []string
		}{{tool.Deny, rs.Deny}, {tool.Ask, rs.Ask}, {tool.Allow, rs.Allow}} {
			for _, raw := range list.rules {
				r, err := ParseRule(raw)
				if err != nil {
					errs = append(errs, fmt.Errorf("%s %s rule: %w", rs.Source, list.b, err))
					continue
				}
				e.rules = append(e.rules, newRule(r, raw, list.b, rs.Source, rs.Root))
			}
		}
	}
	e.addDirs = append(e.addDirs, cfg.AdditionalDirs...)
	return e, errors.Join(errs...)
}

// Mode returns the engine's default mode (used when a call's Env has none).
func (e *Engine) Mode() tool.Mode {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.mode
}

// Hidden reports whether a bare deny rule in any scope removes the tool
// called name from what the model sees (Bash, Bash(*), mcp__server,
// mcp__server__*).
func (e *Engine) Hidden(name string) bool {
	e.mu.RLock()
	defer e.mu.RUnlock()
	for _, r := range e.rules {
		if r.behavior == tool.Deny && r.Bare() && r.matchesName(name) {
			return true
		}
	}
	return false
}

// HiddenTools returns the tool (or MCP server) names of the bare deny rules,
// sorted, for filtering a pool without instances at hand.
func (e *Engine) HiddenTools() []string {
	e.mu.RLock()
	defer e.mu.RUnlock()
	var out []string
	for _, r := range e.rules {
		if r.behavior == tool.Deny && r.Bare() && !slices.Contains(out, r.Tool) {
			out = append(out, r.Tool)
		}
	}
	slices.Sort(out)
	return out
}

// call is the per-decision view of a request.
type call struct {
	req      *Request
	names    []string
	input    map[string]json.RawMessage
	mode     tool.Mode
	workDir  string   // the session's current directory: relative paths start here
	boundary []string // the project + additional directories, absolute and clean, also resolved: "inside"
	home     string
	gantry   string // Config.GantryHome
	rules    []rule
	kind     toolKind
	paths    []fileAccess // file tools
	pathErr  error
	shell    *shellAnalysis
	host     string // WebFetch

	res      resolver              // symlink resolution memo for this decision
	patterns map[*rule]pathPattern // compiled path rules for this decision
}

type fileAccess struct {
	forms pathForms
	write bool
	raw   string // as the tool declared it (tool.Access)
}

type toolKind int

const (
	kindOther toolKind = iota
	kindRead           // the call reads files (Access.Reads)
	kindWrite          // the call writes files (Access.Writes)
	kindBash           // the call runs a shell command line (Access.Command)
	kindWeb            // the call reaches the network (Access.URL, Access.Network)
)

func (e *Engine) newCall(req *Request) (*call, error) {
	if req == nil {
		return nil, errors.New("permission: nil request")
	}
	c := &call{req: req}
	var env tool.Env
	if req.Env != nil {
		env = *req.Env
	}
	e.mu.RLock()
	c.rules = e.rules
	c.mode = e.mode
	addDirs := append(append([]string(nil), e.addDirs...), env.AdditionalDirs...)
	e.mu.RUnlock()
	if env.Mode != "" {
		c.mode = env.Mode
	}
	if !c.mode.Valid() {
		return nil, fmt.Errorf("permission: unknown mode %q", c.mode)
	}
	c.workDir = env.WorkDir
	if c.workDir == "" {
		c.workDir = e.cfg.WorkDir
	}
	if c.workDir == "" || !filepath.IsAbs(c.workDir) {
		return nil, fmt.Errorf("permission: working directory %q is not absolute", c.workDir)
	}
	c.workDir = filepath.Clean(c.workDir)
	c.home = e.cfg.Home
	c.gantry = e.cfg.GantryHome
	// The trust boundary is the project, not the shell's current
	// directory: a cd (cd -, $OLDPWD, pushd) that moved the session never
	// widens what is inside.
	project := c.workDir
	if e.cfg.WorkDir != "" && filepath.IsAbs(e.cfg.WorkDir) {
		project = filepath.Clean(e.cfg.WorkDir)
	}
	c.boundary = []string{project}
	for _, d := range addDirs {
		a, err := absPath(d, project, c.home)
		if err == nil {
			c.boundary = append(c.boundary, a)
		}
	}
	// Resolved forms of the working directories too, so a path reached
	// through a symlinked working directory is inside in both forms.
	for _, d := range slices.Clone(c.boundary) {
		r, ok := e.resolved.Load(d)
		if !ok {
			r, _ = e.resolved.LoadOrStore(d, resolvePath(d))
		}
		if r := r.(string); r != d {
			c.boundary = append(c.boundary, r)
		}
		c.res.seeds = append(c.res.seeds, [2]string{d, r.(string)})
	}
	if req.Tool != nil {
		c.names = append(c.names, req.Tool.Spec().Names()...)
	}
	if req.Name != "" && !slices.Contains(c.names, req.Name) {
		c.names = append(c.names, req.Name)
	}
	if len(c.names) == 0 {
		return nil, errors.New("permission: request names no tool")
	}
	if len(req.Input) > 0 {
		_ = json.Unmarshal(req.Input, &c.input) // non-objects: no fields
	}
	// What the call acts on comes from the tool ([tool.Accessor]), never
	// from its name.
	var acc tool.Access
	if req.Tool != nil {
		var err error
		if acc, err = tool.AccessOf(req.Tool, req.Input); err != nil {
			c.pathErr = err
			return c, nil
		}
	}
	switch {
	case acc.Command != "":
		if strings.IndexByte(acc.Command, 0) >= 0 {
			c.pathErr = errors.New("command contains a NUL byte")
		}
		c.kind = kindBash
		c.shell = analyseShell(acc.Command)
	case len(acc.Writes) > 0:
		c.kind = kindWrite
	case len(acc.Reads) > 0:
		c.kind = kindRead
	case acc.URL != "" || acc.Network:
		c.kind = kindWeb
		if pu, err := url.Parse(acc.URL); err == nil && pu.Hostname() != "" {
			// Hosts are compared in their one canonical form; a host
			// that has none cannot be checked against a rule.
			h, err := netguard.CanonHost(pu.Hostname())
			if err != nil {
				c.pathErr = fmt.Errorf("url %q: %w", acc.URL, err)
				return c, nil
			}
			c.host = h
		}
	}
	for _, list := range []struct {
		paths []string
		write bool
	}{{acc.Reads, false}, {acc.Writes, true}} {
		for _, p := range list.paths {
			f, err := newPathForms(p, c.workDir, c.home, &c.res)
			if err != nil {
				c.pathErr = fmt.Errorf("path %q: %w", p, err)
				return c, nil
			}
			c.paths = append(c.paths, fileAccess{forms: f, write: list.write, raw: p})
		}
	}
	return c, nil
}

func (c *call) str(field string) (string, bool) {
	raw, ok := c.input[field]
	if !ok {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// protected reports a path no automatic approval writes (see isProtected).
func (c *call) protected(p string) bool { return isProtected(p, c.home, c.gantry) }

func (c *call) inside(p string) bool {
	for _, d := range c.boundary {
		if within(p, d) {
			return true
		}
	}
	return false
}

// Decide implements [Decider]. The order, first verdict wins:
//
//  1. a request that cannot be analysed (NUL byte in a path) → deny;
//  2. deny rules of every scope → deny (in every mode, bypass included);
//  3. ask rules → ask (bypass included);
//  4. the tool's own deny, a hook's deny → deny; a hook's ask → ask;
//     then the OS sandbox's rules for Bash ([ShellSandbox]):
//     dangerouslyDisableSandbox → ask without an allow rule; a sandbox
//     enabled but unavailable → a changing command needs an allow rule;
//  5. safety checks: removal of critical paths and unparseable shell →
//     ask in every mode; writes to protected paths, substitutions, the tool's
//     own ask → ask outside bypass;
//  6. bypassPermissions → allow;
//  7. plan mode: a call that is neither read-only nor planning (by its
//     [tool.Traits]) → deny;
//  8. a hook's allow, the tool's own allow → allow;
//  9. allow rules, read-only calls, reads inside the working directories,
//     acceptEdits edits inside them → allow;
//  10. otherwise ask — or allow for a Bash command that runs in the OS
//     sandbox with autoAllowBashIfSandboxed.
//
// An Ask becomes deny in dontAsk mode; otherwise it is returned for the
// caller to resolve with [ResolveAsk]. MCP tools (mcp__…) are never
// allowed by their read-only traits, which come from an untrusted server's
// annotations; WebFetch and WebSearch neither (they reach the network: a
// host or a search needs a rule).
func (e *Engine) Decide(ctx context.Context, req *Request) (Decision, error) {
	c, err := e.newCall(req)
	if err != nil {
		return Decision{}, err
	}
	d := e.decide(c)
	if d.Behavior == tool.Allow && d.UpdatedInput == nil && req.ToolCheck.Behavior == tool.Allow {
		d.UpdatedInput = req.ToolCheck.UpdatedInput
	}
	if d.Behavior == tool.Ask && c.mode == tool.ModeDontAsk {
		d = dontAsk(d)
	}
	return c.pin(d), nil
}

// pin records in an Allow (or an Ask, which [ResolveAsk] may turn into an
// allow) the file the checked path resolved to, keyed by the path as the
// input wrote it (see [Decision.Checked]).
func (c *call) pin(d Decision) Decision {
	if (d.Behavior != tool.Allow && d.Behavior != tool.Ask) || len(c.paths) == 0 || (c.kind != kindRead && c.kind != kindWrite) {
		return d
	}
	d.Checked = make(map[string]string, len(c.paths))
	for _, p := range c.paths {
		d.Checked[p.raw] = p.forms.resolved
	}
	return d
}

func deny(reason, source, rule string) Decision {
	return Decision{Behavior: tool.Deny, Reason: reason, Source: source, Rule: rule}
}

func ask(reason, source, rule string) Decision {
	return Decision{Behavior: tool.Ask, Reason: reason, Source: source, Rule: rule}
}

func allow(reason, source, rule string) Decision {
	return Decision{Behavior: tool.Allow, Reason: reason, Source: source, Rule: rule}
}

func (e *Engine) decide(c *call) Decision {
	req := c.req
	name := c.names[0]
	if c.pathErr != nil {
		return deny(fmt.Sprintf("%s: %v", name, c.pathErr), "tool", "")
	}
	// 2, 3: deny then ask rules.
	for _, b := range []tool.Behavior{tool.Deny, tool.Ask} {
		for i := range c.rules {
			r := &c.rules[i]
			if r.behavior != b {
				continue
			}
			if why, ok := e.ruleMatches(c, r); ok {
				reason := fmt.Sprintf("%s rule %s (%s settings)%s", b, r.raw, r.source, why)
				return Decision{Behavior: b, Reason: reason, Rule: r.raw, Source: r.source}
			}
		}
	}
	// 4: the tool's and the hooks' objections.
	if req.ToolCheck.Behavior == tool.Deny {
		return deny(orDefault(req.ToolCheck.Reason, name+" refused this input"), "tool", "")
	}
	switch req.HookVerdict {
	case tool.Deny:
		return deny(orDefault(req.HookReason, "blocked by a PreToolUse hook"), "hook", "")
	case tool.Ask:
		return ask(orDefault(req.HookReason, "a PreToolUse hook asks for confirmation"), "hook", "")
	}
	// 4b: the OS sandbox's rules (sandbox.go).
	if d, ok := e.sandboxGate(c); ok {
		return d
	}
	bypass := c.mode == tool.ModeBypassPermissions
	// 5: safety checks.
	if d, ok := e.safety(c, bypass); ok {
		return d
	}
	if req.ToolCheck.Behavior == tool.Ask && !bypass {
		return ask(orDefault(req.ToolCheck.Reason, name+" asks for confirmation"), "tool", "")
	}
	// 6: bypass.
	if bypass {
		return allow("bypassPermissions mode", "mode", "")
	}
	// 7: plan mode.
	readOnly := e.readOnly(c)
	planning := req.Traits.Planning && !strings.HasPrefix(name, "mcp__")
	if c.mode == tool.ModePlan && !readOnly && !planning {
		what := ""
		if c.shell != nil {
			what = " (" + c.shell.model.FirstReason() + ")"
		}
		return deny(fmt.Sprintf("plan mode is read-only: %s would change things%s; present the plan with ExitPlanMode first", name, what), "mode", "")
	}
	// 8: hook and tool allow.
	if req.HookVerdict == tool.Allow {
		return allow(orDefault(req.HookReason, "allowed by a PreToolUse hook"), "hook", "")
	}
	if req.ToolCheck.Behavior == tool.Allow {
		return allow(orDefault(req.ToolCheck.Reason, name+" allows this input"), "tool", "")
	}
	// 9: allow rules and automatic approvals.
	switch c.kind {
	case kindBash:
		return e.sandboxAutoAllow(c, e.decideBash(c, readOnly))
	case kindRead, kindWrite:
		return e.decideFile(c)
	}
	for i := range c.rules {
		r := &c.rules[i]
		if r.behavior != tool.Allow {
			continue
		}
		if _, ok := e.ruleMatches(c, r); ok {
			return allow("allowed by rule "+r.raw, r.source, r.raw)
		}
	}
	// Network reads are not local reads: an unknown host (or any web
	// search) asks until a rule allows it.
	if readOnly && !strings.HasPrefix(name, "mcp__") && c.kind != kindWeb {
		return allow(name+" is read-only", "default", "")
	}
	if c.mode == tool.ModePlan && planning {
		return allow(name+" only plans (allowed in plan mode)", "mode", "")
	}
	return ask(fmt.Sprintf("%s needs permission", name), "default", "")
}

func orDefault(s, def string) string {
	if s != "" {
		return s
	}
	return def
}

// readOnly reports whether the call only reads.
//
// For a command line the command-risk model alone decides: a tool's traits
// cannot make a line read-only that the model does not understand.
func (e *Engine) readOnly(c *call) bool {
	if c.kind == kindBash {
		if c.shell == nil || c.shell.err != nil || len(c.shell.model.Cmds) == 0 {
			return false
		}
		ok, _ := c.shell.model.ReadOnly()
		return ok
	}
	return c.req.Traits.ReadOnly || c.kind == kindRead
}

// ruleMatches reports whether a deny or ask (or allow, for tools other than
// Bash and the file tools) rule covers the call, with a short explanation.
func (e *Engine) ruleMatches(c *call, r *rule) (string, bool) {
	// Path rules reach across tools: Edit covers every write, Read deny
	// blocks writes too.
	if c.kind == kindRead || c.kind == kindWrite {
		if !e.pathRuleApplies(c, r) {
			return "", false
		}
		if r.Bare() {
			return "", true
		}
		for _, fa := range c.paths {
			if e.pathMatches(c, r, fa.forms, r.behavior != tool.Allow) {
				return "", true
			}
		}
		return "", false
	}
	if c.kind == kindBash && (r.Tool == "Edit" || r.Tool == "Read") && r.behavior != tool.Allow {
		// Redirect targets are file accesses.
		return e.bashRedirectRule(c, r)
	}
	if !slices.ContainsFunc(c.names, r.matchesName) {
		return "", false
	}
	if r.Bare() {
		return "", true
	}
	switch c.kind {
	case kindBash:
		return e.bashRuleMatches(c, r)
	case kindWeb:
		if strings.HasPrefix(r.Specifier, "domain:") {
			if r.hostErr != nil {
				// A deny or ask rule that cannot be read binds every
				// host (fail closed); an allow approves none.
				return fmt.Sprintf(" (the rule's host cannot be read: %v)", r.hostErr), r.behavior != tool.Allow
			}
			return "", netguard.MatchCanon(r.host, c.host)
		}
	}
	if m, ok := c.req.Tool.(tool.RuleMatcher); ok && c.req.Tool != nil && m.MatchRule(r.Specifier, c.req.Input) {
		return "", true
	}
	return "", c.paramMatches(r.Specifier)
}

// paramMatches implements Tool(param:value): the input's top-level field
// param is a string equal to value (* is a wildcard), or a non-string
// whose JSON text equals value.
func (c *call) paramMatches(spec string) bool {
	param, value, ok := strings.Cut(spec, ":")
	if !ok || param == "" {
		return false
	}
	raw, ok := c.input[param]
	if !ok {
		return false
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		s = string(raw)
	}
	if hasWildcard(value) {
		return wildcard.Match(value, s, wildcard.Options{Escapes: true})
	}
	return unescapeStars(value) == s
}

// pathRuleApplies reports whether a rule's tool covers this file call.
func (e *Engine) pathRuleApplies(c *call, r *rule) bool {
	if slices.ContainsFunc(c.names, r.matchesName) {
		return true
	}
	switch r.Tool {
	case "Edit":
		return c.kind == kindWrite
	case "Read":
		// Read rules cover every read; a scoped Read deny or ask covers
		// writes too (a file that may not be read may not be
		// overwritten). A bare Read deny only hides the Read tool.
		return c.kind == kindRead || r.behavior != tool.Allow && !r.Bare()
	}
	return false
}

// pathOverlaps reports whether a recursive read of the directory f may
// reach files a path rule matches (either form).
func (e *Engine) pathOverlaps(c *call, r *rule, f pathForms) bool {
	pp := e.pattern(c, r)
	return pp.pat != nil && f.any(pp.overlaps)
}

// pathMatches matches a path rule against a path: for deny/ask either form
// (as written or resolved) matching is enough, for allow both must.
func (e *Engine) pathMatches(c *call, r *rule, f pathForms, either bool) bool {
	pp := e.pattern(c, r)
	if pp.pat == nil {
		return false
	}
	if either {
		return f.any(pp.match)
	}
	return f.both(pp.match)
}

// pattern compiles a path rule once per decision.
func (e *Engine) pattern(c *call, r *rule) pathPattern {
	pp, ok := c.patterns[r]
	if !ok {
		root := r.root
		if root == "" {
			root = c.workDir
		}
		var valid bool
		pp, valid = compilePathPattern(r.Specifier, root, c.workDir, c.home)
		if !valid {
			pp = pathPattern{}
		}
		if c.patterns == nil {
			c.patterns = make(map[*rule]pathPattern)
		}
		c.patterns[r] = pp
	}
	return pp
}

// safety runs the checks no allow rule or hook overrides.
func (e *Engine) safety(c *call, bypass bool) (Decision, bool) {
	switch c.kind {
	case kindWrite:
		for _, fa := range c.paths {
			if !bypass && fa.forms.any(c.protected) {
				return ask(fmt.Sprintf("%s is a protected path (version control, editor, shell or agent configuration)", fa.forms.lexical), "safety", ""), true
			}
		}
	case kindBash:
		return e.shellSafety(c, bypass)
	}
	return Decision{}, false
}

func (e *Engine) decideFile(c *call) Decision {
	name := c.names[0]
	// Allow rules: both forms of every path must match.
	for i := range c.rules {
		r := &c.rules[i]
		if r.behavior != tool.Allow || !e.pathRuleApplies(c, r) {
			continue
		}
		all := true
		for _, fa := range c.paths {
			if !r.Bare() && !e.pathMatches(c, r, fa.forms, false) {
				all = false
			}
		}
		if all {
			return allow("allowed by rule "+r.raw, r.source, r.raw)
		}
	}
	in := true
	for _, fa := range c.paths {
		if !fa.forms.both(c.inside) {
			in = false
		}
	}
	switch {
	case c.kind == kindRead && in:
		return allow("reading inside the working directories", "default", "")
	case c.kind == kindWrite && in && c.mode == tool.ModeAcceptEdits:
		return allow("acceptEdits mode: editing inside the working directories", "mode", "")
	case !in:
		p := c.paths[0].forms
		where := p.lexical
		if p.resolved != p.lexical {
			where += " (resolves to " + p.resolved + ")"
		}
		return ask(fmt.Sprintf("%s outside the working directories: %s", name, where), "default", "")
	}
	return ask(fmt.Sprintf("%s needs permission to change %s", name, c.paths[0].forms.lexical), "default", "")
}

var _ tool.ReadGuard = (*Engine)(nil)

// ReadFilter implements [tool.ReadGuard]: the scoped Read deny rules (both
// the path as written and with symlinks resolved), so that Glob listings
// and Grep output leave out what Read may not show. Nil when there are
// none.
func (e *Engine) ReadFilter(workDir string) func(path string) bool {
	e.mu.RLock()
	var rules []*rule
	for i := range e.rules {
		r := &e.rules[i]
		if r.behavior == tool.Deny && r.Tool == "Read" && !r.Bare() {
			rules = append(rules, r)
		}
	}
	e.mu.RUnlock()
	if len(rules) == 0 || !filepath.IsAbs(workDir) {
		return nil
	}
	c := &call{workDir: filepath.Clean(workDir), home: e.cfg.Home}
	var mu sync.Mutex
	return func(p string) bool {
		mu.Lock()
		defer mu.Unlock()
		f, err := newPathForms(p, c.workDir, c.home, &c.res)
		if err != nil {
			return true
		}
		for _, r := range rules {
			if e.pathMatches(c, r, f, true) {
				return true
			}
		}
		return false
	}
}
