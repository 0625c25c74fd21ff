package mcptool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gantry-dev/gantry/toolset"
)

// Transport types of a [ServerConfig].
const (
	TypeStdio = "stdio" // a local process spoken to over stdin/stdout
	TypeHTTP  = "http"  // streamable HTTP
	TypeSSE   = "sse"   // the older HTTP+SSE transport
	// TypeSDK is a server hosted by the program that drives Gantry (an
	// Agent SDK program's createSdkMcpServer); its transport comes from
	// [Options.Hosted].
	TypeSDK = "sdk"
)

// ProjectConfigFile is the name of a project's MCP configuration file, read
// from the working directory.
const ProjectConfigFile = ".mcp.json"

// ServerConfig is one server of an MCP configuration, in the shape of
// `.mcp.json`'s "mcpServers" entries.
type ServerConfig struct {
	// Type is TypeStdio, TypeHTTP or TypeSSE. Empty means TypeStdio when
	// Command is set and TypeHTTP when URL is set.
	Type string `json:"type,omitempty"`
	// Command, Args and Env start a stdio server. Env is added to the
	// environment of the Gantry process.
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	// URL and Headers reach an HTTP or SSE server.
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	// Sandbox runs a stdio server in the session's OS sandbox (a Gantry
	// extension; the session must have sandbox.enabled).
	Sandbox bool `json:"sandbox,omitempty"`
	// Source names where the server was configured ("project", a file path,
	// "options"); informational.
	Source string `json:"-"`
	// Fingerprint identifies the definition as written, before ${VAR}
	// expansion ([Fingerprint]); set by [ParseConfig] and [Load].
	Fingerprint string `json:"-"`
}

// ConfigFile is a set of MCP servers by name.
type ConfigFile struct {
	Servers map[string]ServerConfig `json:"mcpServers"`
	// Held are the servers of the project file that the approval check
	// ([LoadOptions.Approve]) did not approve, with its verdict; they are
	// not in Servers and must not be started.
	Held map[string]HeldServer `json:"-"`
}

// HeldServer is a project server held back by the approval check.
type HeldServer struct {
	Server   ServerConfig
	Approval Approval
}

// Names returns the server names in sorted order.
func (c *ConfigFile) Names() []string {
	if c == nil {
		return nil
	}
	return slices.Sorted(maps.Keys(c.Servers))
}

// ErrConfig is wrapped by every configuration error.
var ErrConfig = errors.New("mcp config")

// ValidServerName reports whether name can name a server: letters, digits,
// '_' and '-' (other characters would be replaced in tool names), and what
// the pool requires of server names ([toolset.CheckServerName]: at most 40
// characters so the server part survives when a long tool name is cut, no
// "__" and no trailing '_', which would make mcp__<server>__<tool>
// ambiguous). A config with a name the pool would refuse is rejected when it
// is read, not when its tools are added.
func ValidServerName(name string) bool {
	return toolset.SanitizeName(name) == name && toolset.CheckServerName(name) == nil
}

// ParseConfig parses an MCP configuration (`{"mcpServers": {...}}`),
// expands ${VAR} and ${VAR:-default} in command, args, env values, url and
// header values with getenv (nil means os.Getenv), infers missing types and
// checks every server. source is recorded in each [ServerConfig.Source].
//
// Errors wrap [ErrConfig] and name the server at fault; a configuration with
// any bad server is rejected whole (a typo must not silently drop a server).
func ParseConfig(data []byte, source string, getenv func(string) string) (*ConfigFile, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	var raw struct {
		Servers map[string]json.RawMessage `json:"mcpServers"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrConfig, source, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: %s: trailing data after the JSON object", ErrConfig, source)
	}
	cfg := &ConfigFile{Servers: make(map[string]ServerConfig, len(raw.Servers))}
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(raw.Servers)) {
		sc, err := parseServer(name, raw.Servers[name], getenv)
		if err != nil {
			errs = append(errs, fmt.Errorf("%w: %s: server %q: %w", ErrConfig, source, name, err))
			continue
		}
		sc.Source = source
		cfg.Servers[name] = sc
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return cfg, nil
}

func parseServer(name string, raw json.RawMessage, getenv func(string) string) (ServerConfig, error) {
	var sc ServerConfig
	if !ValidServerName(name) {
		return sc, errors.New(`invalid name: want 1-40 of [a-zA-Z0-9_-], without "__" and not ending in "_"`)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&sc); err != nil {
		return sc, err
	}
	sc.Fingerprint = Fingerprint(sc) // as written: before expansion
	var err error
	x := func(s string) string {
		v, e := ExpandEnv(s, getenv)
		if e != nil && err == nil {
			err = e
		}
		return v
	}
	sc.Command = x(sc.Command)
	for i := range sc.Args {
		sc.Args[i] = x(sc.Args[i])
	}
	for k, v := range sc.Env {
		sc.Env[k] = x(v)
	}
	sc.URL = x(sc.URL)
	for k, v := range sc.Headers {
		sc.Headers[k] = x(v)
	}
	if err != nil {
		return sc, err
	}
	return sc, sc.check()
}

// check validates a server configuration and fills in its type.
func (sc *ServerConfig) check() error {
	if sc.Type == "" {
		switch {
		case sc.Command != "":
			sc.Type = TypeStdio
		case sc.URL != "":
			sc.Type = TypeHTTP
		default:
			return errors.New(`neither "command" nor "url" is set`)
		}
	}
	switch sc.Type {
	case TypeStdio:
		if sc.Command == "" {
			return errors.New(`stdio server without "command"`)
		}
		if sc.URL != "" || len(sc.Headers) > 0 {
			return errors.New(`stdio server with "url" or "headers"`)
		}
	case TypeHTTP, TypeSSE:
		if sc.URL == "" {
			return fmt.Errorf(`%s server without "url"`, sc.Type)
		}
		u, err := url.Parse(sc.URL)
		if err != nil {
			return fmt.Errorf("bad url: %w", err)
		}
		if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
			return fmt.Errorf("bad url %q: want http:// or https:// with a host", sc.URL)
		}
		if sc.Command != "" || len(sc.Args) > 0 || len(sc.Env) > 0 {
			return fmt.Errorf(`%s server with "command", "args" or "env"`, sc.Type)
		}
	case TypeSDK:
		if sc.Command != "" || sc.URL != "" {
			return errors.New(`sdk server with "command" or "url"`)
		}
	default:
		return fmt.Errorf("unknown type %q (want stdio, http, sse or sdk)", sc.Type)
	}
	return nil
}

// LoadOptions says where [Load] finds servers.
type LoadOptions struct {
	// Dir is the project directory whose ProjectConfigFile is read, if
	// Trusted. Empty means no project file.
	Dir string
	// Trusted must be true for the project's file to be read: a repository
	// must not start processes before the user trusted its folder. The
	// caller (the CLI) makes the trust check.
	Trusted bool
	// Files are configuration files given explicitly (--mcp-config); they
	// are read whatever the trust, and must exist.
	Files []string
	// Servers are servers given in code; they win over files.
	Servers map[string]ServerConfig
	// Getenv expands variables; nil means os.Getenv.
	Getenv func(string) string
	// Approve, if set, is asked which servers of the project file may
	// start (only when the file is read: Trusted; with no servers when the
	// folder has none, so that the approver can record that). A server it
	// does not approve is left out of Config.Servers and listed in
	// Config.Held, unless a server of the same name from Files or Servers
	// replaces it (those are the user's own choice and are never checked).
	// An error fails Load. Nil approves every server of a trusted folder.
	Approve Approver
}

// Load merges the servers of the project file (if trusted and present), the
// explicit files (later files win) and LoadOptions.Servers (win over all).
// A missing project file is not an error; a missing explicit file is.
func Load(opts LoadOptions) (*ConfigFile, error) {
	out := &ConfigFile{Servers: map[string]ServerConfig{}}
	merge := func(c *ConfigFile) {
		maps.Copy(out.Servers, c.Servers)
		for name := range c.Servers {
			delete(out.Held, name) // replaced by the user's own definition
		}
	}
	if opts.Dir != "" && opts.Trusted {
		p := filepath.Join(opts.Dir, ProjectConfigFile)
		data, err := os.ReadFile(p)
		project := &ConfigFile{Servers: map[string]ServerConfig{}}
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return nil, fmt.Errorf("%w: %w", ErrConfig, err)
		default:
			if project, err = ParseConfig(data, p, opts.Getenv); err != nil {
				return nil, err
			}
		}
		if opts.Approve != nil {
			verdicts, err := opts.Approve(opts.Dir, maps.Clone(project.Servers))
			if err != nil {
				return nil, fmt.Errorf("%w: %s: %w", ErrConfig, p, err)
			}
			for name, sc := range project.Servers {
				if v := verdicts[name]; v != Approved {
					if v == "" {
						v = ApprovalNew
					}
					if out.Held == nil {
						out.Held = map[string]HeldServer{}
					}
					out.Held[name] = HeldServer{Server: sc, Approval: v}
					delete(project.Servers, name)
				}
			}
		}
		merge(project)
	}
	for _, p := range opts.Files {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrConfig, err)
		}
		c, err := ParseConfig(data, p, opts.Getenv)
		if err != nil {
			return nil, err
		}
		merge(c)
	}
	for _, name := range slices.Sorted(maps.Keys(opts.Servers)) {
		sc := opts.Servers[name]
		if !ValidServerName(name) {
			return nil, fmt.Errorf("%w: server %q: invalid name", ErrConfig, name)
		}
		if err := sc.check(); err != nil {
			return nil, fmt.Errorf("%w: server %q: %w", ErrConfig, name, err)
		}
		if sc.Source == "" {
			sc.Source = "options"
		}
		sc.Fingerprint = Fingerprint(sc)
		out.Servers[name] = sc
		delete(out.Held, name)
	}
	return out, nil
}

// ExpandEnv replaces ${VAR} with the value of VAR and ${VAR:-default} with
// the value of VAR, or default when VAR is unset or empty. A bare $VAR is
// left as it is. An unset VAR without a default, an unterminated "${" or an
// empty or invalid variable name is an error (wrapping [ErrConfig]) naming
// every such variable, so that a missing secret is not sent as "".
func ExpandEnv(s string, getenv func(string) string) (string, error) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	if getenv == nil {
		getenv = os.Getenv
	}
	var b strings.Builder
	var missing []string
	rest := s
	for {
		i := strings.Index(rest, "${")
		if i < 0 {
			b.WriteString(rest)
			break
		}
		b.WriteString(rest[:i])
		rest = rest[i+2:]
		j := strings.IndexByte(rest, '}')
		if j < 0 {
			return "", fmt.Errorf("%w: unterminated ${ in %q", ErrConfig, s)
		}
		expr := rest[:j]
		rest = rest[j+1:]
		name, def, hasDef := strings.Cut(expr, ":-")
		if !validVarName(name) {
			return "", fmt.Errorf("%w: bad variable name %q in %q", ErrConfig, name, s)
		}
		v := getenv(name)
		switch {
		case v != "":
			b.WriteString(v)
		case hasDef:
			b.WriteString(def)
		default:
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return "", fmt.Errorf("%w: environment variable(s) not set and no default: %s", ErrConfig, strings.Join(missing, ", "))
	}
	return b.String(), nil
}

func validVarName(name string) bool {
	if name == "" {
		return false
	}
	for i, r := range name {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}
