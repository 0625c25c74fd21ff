package permission

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gantry-dev/gantry/tool"
)

// ShellSandbox is what the engine needs to know of the session's OS
// sandbox for Bash calls; *sandbox.Sandbox implements it. The engine's
// sandbox rules all live in this file:
//
//   - dangerouslyDisableSandbox: true on a command that would otherwise run
//     sandboxed (and that the sandbox lets out, allowUnsandboxedCommands) is
//     an ask in every mode — a deny in plan and dontAsk — unless an allow
//     rule approves the command; in bypassPermissions too;
//   - a sandbox that the settings enable but no backend provides tightens
//     the rules: a Bash command that is not read-only needs an allow rule in
//     every mode (acceptEdits and bypassPermissions approve nothing on their
//     own);
//   - with autoAllowBashIfSandboxed, a Bash command that would ask only
//     because no rule approves it runs when it runs sandboxed and reads
//     nothing known to be outside the working directories. Deny and ask
//     rules and the safety checks still apply.
type ShellSandbox interface {
	// Runs reports whether command runs inside the sandbox (disable is the
	// call's dangerouslyDisableSandbox).
	Runs(command string, disable bool) bool
	// AutoAllow reports autoAllowBashIfSandboxed with a working sandbox.
	AutoAllow() bool
	// AllowUnsandboxed reports whether dangerouslyDisableSandbox is
	// honoured.
	AllowUnsandboxed() bool
	// Unavailable reports a sandbox enabled in the settings that no
	// backend provides here.
	Unavailable() bool
}

// flag reads a boolean input field (false when absent or not a boolean).
func (c *call) flag(field string) bool {
	var b bool
	raw, ok := c.input[field]
	return ok && json.Unmarshal(raw, &b) == nil && b
}

// ruleApproved reports whether allow rules approve the whole Bash command.
func (e *Engine) ruleApproved(c *call) bool {
	d := e.decideBash(c, false)
	return d.Behavior == tool.Allow && d.Rule != ""
}

// sandboxGate applies the sandbox's rules that come before the mode
// (dangerouslyDisableSandbox; a sandbox that is not there).
func (e *Engine) sandboxGate(c *call) (Decision, bool) {
	sb := e.cfg.Sandbox
	if sb == nil || c.kind != kindBash || c.shell == nil {
		return Decision{}, false
	}
	cmd, _ := c.str("command")
	if c.flag("dangerouslyDisableSandbox") && sb.AllowUnsandboxed() && sb.Runs(cmd, false) {
		if c.mode == tool.ModePlan {
			return deny("plan mode: a command may not run outside the sandbox (dangerouslyDisableSandbox)", "sandbox", ""), true
		}
		if e.ruleApproved(c) {
			return Decision{}, false
		}
		return ask("dangerouslyDisableSandbox: the command asks to run outside the sandbox", "sandbox", ""), true
	}
	if sb.Unavailable() && c.mode != tool.ModePlan && !e.readOnly(c) && !e.ruleApproved(c) {
		return ask("the sandbox is enabled but no sandbox backend works here, so commands run uncontained: a command that changes things needs an allow rule", "sandbox", ""), true
	}
	return Decision{}, false
}

// sandboxAutoAllow turns decideBash's "no rule approves this" into allow
// for a command that runs sandboxed under autoAllowBashIfSandboxed.
func (e *Engine) sandboxAutoAllow(c *call, d Decision) Decision {
	sb := e.cfg.Sandbox
	if d.Behavior != tool.Ask || d.Source != "default" || sb == nil || c.shell == nil || !sb.AutoAllow() {
		return d
	}
	cmd, _ := c.str("command")
	if !sb.Runs(cmd, c.flag("dangerouslyDisableSandbox")) {
		return d
	}
	// The sandbox contains writes and the network, not reads: reading
	// known paths outside the working directories still asks.
	for _, sc := range c.shell.topCmds() {
		bases, basesOK := c.cmdBases(sc)
		if _, ok := e.pathsReadable(c, sc, bases, basesOK); !ok {
			return d
		}
	}
	return allow("runs in the OS sandbox (sandbox.autoAllowBashIfSandboxed): writes stay in the working directories, the network behind the allow-list", "sandbox", "")
}

// SandboxPaths derives the sandbox's filesystem policy from permission
// rules: Read deny rules are paths the sandbox hides, Edit deny rules paths
// it keeps read-only, and Edit allow rules paths it makes writable. A rule
// is taken down to its literal directory part: a deny hides or freezes the
// directory holding its first wildcard (more than the rule says, never
// less); an allow counts only when it names a path exactly or a whole
// directory (`dir/**`), so it never widens. Bare names (matching at any
// depth) cannot be turned into paths and stay with the analysis. workDir
// and home anchor relative and ~ rules.
func SandboxPaths(rules []RuleSet, workDir, home string) (hide, readOnly, write []string) {
	add := func(list *[]string, p string) {
		if p != "" && !slices.Contains(*list, p) {
			*list = append(*list, p)
		}
	}
	for _, rs := range rules {
		for _, raw := range rs.Deny {
			r, err := ParseRule(raw)
			if err != nil || r.Specifier == "" {
				continue
			}
			base, _ := sandboxBase(r.Specifier, rs.Root, workDir, home)
			switch r.Tool {
			case "Read":
				add(&hide, base)
			case "Edit", "Write":
				add(&readOnly, base)
			}
		}
		for _, raw := range rs.Allow {
			r, err := ParseRule(raw)
			if err != nil || r.Specifier == "" || (r.Tool != "Edit" && r.Tool != "Write") {
				continue
			}
			if base, exact := sandboxBase(r.Specifier, rs.Root, workDir, home); exact {
				add(&write, base)
			}
		}
	}
	return hide, readOnly, write
}

// sandboxBase returns the absolute literal part of a path specifier and
// whether it covers exactly what the specifier does (a literal path, or
// dir/**). It returns "" for a bare name and for a root that is unknown.
func sandboxBase(spec, ruleRoot, workDir, home string) (string, bool) {
	var root, pat string
	switch {
	case strings.HasPrefix(spec, "//"):
		root, pat = "/", spec[2:]
	case spec == "~":
		root, pat = home, "**"
	case strings.HasPrefix(spec, "~/"):
		root, pat = home, spec[2:]
	case strings.HasPrefix(spec, "/"):
		root, pat = ruleRoot, spec[1:]
	case strings.HasPrefix(spec, "./"):
		root, pat = workDir, spec[2:]
	case strings.Contains(spec, "/"):
		root, pat = workDir, spec
	default:
		return "", false // a bare name matches at any depth
	}
	if root == "" || strings.IndexByte(spec, 0) >= 0 {
		return "", false
	}
	exact := true
	if s, ok := strings.CutSuffix(pat, "/**"); ok && !strings.ContainsAny(s, "*?[{") {
		pat = s
	} else if pat == "**" {
		pat = ""
	} else if i := strings.IndexAny(pat, "*?[{"); i >= 0 {
		exact = false
		pat = pat[:i]
		if j := strings.LastIndexByte(pat, '/'); j >= 0 {
			pat = pat[:j]
		} else {
			pat = ""
		}
	}
	return filepath.Join(root, strings.TrimSuffix(pat, "/")), exact
}
