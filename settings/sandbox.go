package settings

// Sandbox is the "sandbox" object of a settings file, with the keys of
// Claude Code's sandbox settings:
//
//	"sandbox": {
//	  "enabled": true,
//	  "autoAllowBashIfSandboxed": true,
//	  "excludedCommands": ["docker"],
//	  "allowUnsandboxedCommands": false,
//	  "network": {"allowedDomains": ["github.com", "*.npmjs.org"], "allowLocalBinding": true,
//	              "allowUnixSockets": ["/run/user/1000/ssh-agent.sock"], "allowAllUnixSockets": false},
//	  "backend": "auto"
//	}
//
// Unset booleans are nil, so that scopes merge key by key ([Settings.Sandbox]).
type Sandbox struct {
	// Enabled runs Bash commands (and the hooks and MCP servers that opt
	// in) in the OS sandbox. Default false.
	Enabled *bool `json:"enabled,omitempty"`
	// AutoAllowBashIfSandboxed lets sandboxed Bash commands run without
	// asking (deny and ask rules still apply). Default true.
	AutoAllowBashIfSandboxed *bool `json:"autoAllowBashIfSandboxed,omitempty"`
	// ExcludedCommands run outside the sandbox ("docker", "git push:*").
	ExcludedCommands []string `json:"excludedCommands,omitempty"`
	// AllowUnsandboxedCommands honours dangerouslyDisableSandbox (after a
	// permission prompt). Default true; false makes every command run
	// sandboxed.
	AllowUnsandboxedCommands *bool `json:"allowUnsandboxedCommands,omitempty"`
	// Network is what sandboxed commands may reach.
	Network SandboxNetwork `json:"network,omitzero"`
	// Backend picks the backend: "auto" (default), "bubblewrap",
	// "landlock" or "none" (a Gantry extension).
	Backend string `json:"backend,omitempty"`
}

// SandboxNetwork is the "network" object of [Sandbox].
type SandboxNetwork struct {
	// AllowedDomains are the hosts reachable through the sandbox's proxy
	// ("example.com", "*.example.com"); empty means no network.
	AllowedDomains []string `json:"allowedDomains,omitempty"`
	// AllowLocalBinding lets sandboxed commands listen on loopback ports.
	AllowLocalBinding *bool `json:"allowLocalBinding,omitempty"`
	// AllowUnixSockets are host Unix sockets sandboxed commands may
	// connect to. The sandbox cannot tell socket paths apart: naming any
	// lets commands create Unix sockets at all (and so reach every socket
	// they can see); the named ones are made visible. Default: none, Unix
	// sockets are refused.
	AllowUnixSockets []string `json:"allowUnixSockets,omitempty"`
	// AllowAllUnixSockets lets sandboxed commands create Unix sockets.
	// Default false.
	AllowAllUnixSockets *bool `json:"allowAllUnixSockets,omitempty"`
}

// untrustedSandbox keeps what an untrusted folder may say about the
// sandbox: only what tightens it (enabled: true, allowUnsandboxedCommands:
// false, autoAllowBashIfSandboxed: false).
func untrustedSandbox(sb *Sandbox, ignored []string) (*Sandbox, []string) {
	out := &Sandbox{}
	if sb.Enabled != nil && *sb.Enabled {
		out.Enabled = sb.Enabled
	} else if sb.Enabled != nil {
		ignored = append(ignored, "sandbox.enabled")
	}
	if sb.AllowUnsandboxedCommands != nil && !*sb.AllowUnsandboxedCommands {
		out.AllowUnsandboxedCommands = sb.AllowUnsandboxedCommands
	} else if sb.AllowUnsandboxedCommands != nil {
		ignored = append(ignored, "sandbox.allowUnsandboxedCommands")
	}
	if sb.AutoAllowBashIfSandboxed != nil && !*sb.AutoAllowBashIfSandboxed {
		out.AutoAllowBashIfSandboxed = sb.AutoAllowBashIfSandboxed
	} else if sb.AutoAllowBashIfSandboxed != nil {
		ignored = append(ignored, "sandbox.autoAllowBashIfSandboxed")
	}
	if len(sb.ExcludedCommands) > 0 {
		ignored = append(ignored, "sandbox.excludedCommands")
	}
	if len(sb.Network.AllowedDomains) > 0 || sb.Network.AllowLocalBinding != nil ||
		len(sb.Network.AllowUnixSockets) > 0 || sb.Network.AllowAllUnixSockets != nil {
		ignored = append(ignored, "sandbox.network")
	}
	if sb.Backend != "" {
		ignored = append(ignored, "sandbox.backend")
	}
	return out, ignored
}

// EffectiveSandbox is the merged sandbox configuration of every scope.
type EffectiveSandbox struct {
	Enabled, AutoAllowBashIfSandboxed, AllowUnsandboxedCommands, AllowLocalBinding bool
	// AllowAllUnixSockets is network.allowAllUnixSockets (default false).
	AllowAllUnixSockets bool
	// ExcludedCommands, AllowedDomains and AllowUnixSockets are the union
	// of every scope's.
	ExcludedCommands, AllowedDomains, AllowUnixSockets []string
	// Backend is the first scope's that sets one ("" = auto).
	Backend string
}

// Sandbox merges the sandbox settings: for each key the first source that
// sets it wins (policy, local, project, user — the [Settings.Sources]
// order, so the managed policy decides what it sets), and lists are the
// union of every scope's. An untrusted project only tightens (see [Load]). Defaults: disabled,
// autoAllowBashIfSandboxed true, allowUnsandboxedCommands true, no network.
func (s *Settings) Sandbox() EffectiveSandbox {
	out := EffectiveSandbox{AutoAllowBashIfSandboxed: true, AllowUnsandboxedCommands: true}
	var enabled, auto, unsandboxed, local, allUnix *bool
	first := func(dst **bool, v *bool) {
		if *dst == nil && v != nil {
			*dst = v
		}
	}
	for _, src := range s.Sources {
		sb := src.File.Sandbox
		if sb == nil {
			continue
		}
		first(&enabled, sb.Enabled)
		first(&auto, sb.AutoAllowBashIfSandboxed)
		first(&unsandboxed, sb.AllowUnsandboxedCommands)
		first(&local, sb.Network.AllowLocalBinding)
		first(&allUnix, sb.Network.AllowAllUnixSockets)
		if out.Backend == "" {
			out.Backend = sb.Backend
		}
		out.ExcludedCommands = append(out.ExcludedCommands, sb.ExcludedCommands...)
		out.AllowedDomains = append(out.AllowedDomains, sb.Network.AllowedDomains...)
		out.AllowUnixSockets = append(out.AllowUnixSockets, sb.Network.AllowUnixSockets...)
	}
	for _, v := range []struct {
		dst *bool
		p   *bool
	}{{&out.Enabled, enabled}, {&out.AutoAllowBashIfSandboxed, auto}, {&out.AllowUnsandboxedCommands, unsandboxed}, {&out.AllowLocalBinding, local}, {&out.AllowAllUnixSockets, allUnix}} {
		if v.p != nil {
			*v.dst = *v.p
		}
	}
	return out
}
