// Package workspace assembles the runtime of one Gantry session from
// options, in one call: the settings scopes of the working directory, the
// permission engine and the hooks they configure, the services the tools
// use (the background-task manager, MCP resources), the MCP servers, the
// tool pool and the executor. The CLI (`gantry -p`, `tools call`, `mcp
// serve`, `gantry serve`), the Temporal worker,
// [github.com/gantry-dev/gantry/agent] and subagents build their sessions
// with it — it is the only assembly — so an SDK user gets exactly the
// CLI's session, with its durable store, transcript, checkpoints and
// reminders:
//
//	ws, err := workspace.Open(ctx, workspace.Options{Dir: dir, Persist: true})
//	if err != nil { … }
//	ag, err := agent.New(ctx, agent.Options{Provider: p, Workspace: ws, Closers: []io.Closer{ws}})
//
// A [Workspace] owns what it started (background commands and jobs, MCP
// server processes, the durable store Persist opened, a temporary results
// directory) and releases it on [Workspace.Close].
package workspace

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gantry-dev/gantry/builtin"
	"github.com/gantry-dev/gantry/builtin/agenttool"
	"github.com/gantry-dev/gantry/builtin/completion"
	"github.com/gantry-dev/gantry/builtin/file"
	"github.com/gantry-dev/gantry/builtin/mcpres"
	"github.com/gantry-dev/gantry/builtin/search"
	"github.com/gantry-dev/gantry/builtin/shell"
	"github.com/gantry-dev/gantry/builtin/skill"
	"github.com/gantry-dev/gantry/builtin/team"
	"github.com/gantry-dev/gantry/builtin/todo"
	"github.com/gantry-dev/gantry/builtin/web"
	"github.com/gantry-dev/gantry/builtin/worktree"
	"github.com/gantry-dev/gantry/checkpoint"
	"github.com/gantry-dev/gantry/cron"
	"github.com/gantry-dev/gantry/executor"
	"github.com/gantry-dev/gantry/hook"
	"github.com/gantry-dev/gantry/interaction"
	"github.com/gantry-dev/gantry/mcptool"
	"github.com/gantry-dev/gantry/permission"
	"github.com/gantry-dev/gantry/plugins"
	"github.com/gantry-dev/gantry/sandbox"
	"github.com/gantry-dev/gantry/settings"
	"github.com/gantry-dev/gantry/slash"
	"github.com/gantry-dev/gantry/store"
	"github.com/gantry-dev/gantry/subagent"
	"github.com/gantry-dev/gantry/tool"
	"github.com/gantry-dev/gantry/toolset"
	"github.com/gantry-dev/gantry/transcript"
)

// DeferMCPOver is the default number of MCP tools above which they are sent
// to the model by name only and loaded through ToolSearch.
const DeferMCPOver = 20

// Options configure [Open]. The zero value is the CLI's session in the
// current directory: the settings scopes (user, project when trusted,
// local, managed policy), the built-in tools with deferral, no MCP
// configuration files besides a trusted project's .mcp.json.
type Options struct {
	// Dir is the working directory ("" = the process's). It must exist.
	Dir string
	// Mode is the permission mode ("" = the settings' defaultMode, else
	// [tool.ModeDefault]). bypassPermissions is refused for root outside a
	// sandbox (see [permission.CheckBypass]).
	Mode tool.Mode
	// Allow and Deny are permission rules added on top of the settings, as
	// the CLI's --allowedTools and --disallowedTools. A bare Deny ("Bash")
	// also removes the tool from the pool. A rule that does not parse fails
	// Open.
	Allow, Deny []string
	// Trusted treats Dir as trusted for this session (its project settings,
	// hooks and .mcp.json apply) whatever the trust store says. Recording
	// the trust for later sessions is the caller's business
	// ([settings.TrustStore]).
	Trusted bool
	// NoSettings ignores every settings file: only Mode, Allow and Deny
	// apply, no hooks run and no project MCP server starts.
	NoSettings bool
	// SettingScopes, if not nil, limits the settings files read to these
	// scopes (the managed policy is always read); see
	// [settings.Options.Scopes].
	SettingScopes []settings.Scope
	// PolicyPath is the managed policy file ("" =
	// [settings.DefaultPolicyPath], "-" = none).
	PolicyPath string
	// Getenv looks up environment variables (nil = os.Getenv); UserHome is
	// the user's home directory ("" = Getenv("HOME")).
	Getenv   func(string) string
	UserHome string

	// NoMCP starts no MCP server (neither the project's nor
	// MCPConfigFiles').
	NoMCP bool
	// MCPConfigFiles are MCP configuration files (.mcp.json format) whose
	// servers start whatever the trust (the CLI's --mcp-config).
	MCPConfigFiles []string
	// MCPServers are servers given in code (the CLI's inline --mcp-config
	// JSON, an Agent SDK session's hosted servers); they start whatever
	// the trust and win over files of the same name.
	MCPServers map[string]mcptool.ServerConfig
	// StrictMCPConfig ignores the project's .mcp.json: only
	// MCPConfigFiles and MCPServers start (the CLI's --strict-mcp-config).
	StrictMCPConfig bool
	// MCPApprove decides which servers of a trusted project's .mcp.json may
	// start (nil = those the user approved before, as recorded under the
	// Gantry home; with Trusted, every server, recorded as approved).
	MCPApprove mcptool.Approver
	// MCP configures the MCP client manager (Dir, Getenv and
	// OnToolsChanged are set by Open). Nil means the defaults.
	MCP *mcptool.Options
	// Warn receives what the user should know but does not stop the
	// session: a held-back or unreachable MCP server. Nil discards.
	Warn func(msg string)

	// Agents are agent types added to the built-in ones and to those of
	// the definition files (they win over both).
	Agents []agenttool.Definition
	// NoAgentFiles reads no agent definition files. Otherwise the user's
	// (~/.claude/agents, <Gantry home>/agents) are read, and the project's
	// (.claude/agents, .gantry/agents) in a trusted folder: a definition's
	// body becomes a system prompt, like settings it is the user's choice.
	NoAgentFiles bool
	// NoAgentTool leaves the Agent tool out of the pool (for sessions
	// without an agent loop, such as MCP serving).
	NoAgentTool bool
	// NoCommandFiles reads no custom slash command files. Otherwise the
	// user's (~/.claude/commands, <Gantry home>/commands) are read, and the
	// project's (.claude/commands, .gantry/commands) in a trusted folder
	// (see package slash).
	NoCommandFiles bool
	// PluginDirs are plugin directories to load (the CLI's --plugin-dir,
	// the Agent SDK's plugins): their commands, skills and agent types
	// (named "plugin:agent") join the session's; their hooks and MCP
	// servers are not loaded yet (Warn says so). Named explicitly, they
	// need no trust. A plugin's agent that does not parse is warned about
	// and skipped. The installed plugins settings' enabledPlugins turn on
	// (see [plugins.Installed]) load after these, a plugin already loaded
	// once only; a project's enabledPlugins apply in a trusted folder only.
	PluginDirs []string

	// Tools are extra (user) tools added to the pool.
	Tools []tool.Tool
	// CompletionTools adds attempt_completion and new_task (package
	// builtin/completion) to the pool; the agent loop ends the run, or
	// ends the session and goes on in a new one from the hand-off, when
	// they are called. Off by default.
	CompletionTools bool
	// Builtin configures the built-in tools. Open fills three zero fields:
	// File.JournalDir becomes <Gantry home>/tmp (swept by Open: the
	// temporary files a crashed earlier session left are removed),
	// Shell.Env the settings' "env" (variables the user configured for
	// commands), and Search.Engine $GANTRY_GREP_ENGINE (auto, go or rg).
	Builtin builtin.Options
	// Shared, when set, supplies the built-in tools (see [Shared]): a
	// process that opens many workspaces builds them once per distinct
	// settings instead of once per workspace. Unused when Pool.Registry
	// is given.
	Shared *Shared
	// Pool is the base of the pool's options; nil means the built-in tools
	// with deferral on and MCP tools deferred over [DeferMCPOver]. A nil
	// Pool.Registry means the built-in tools. Env is set by Open; the
	// session's bare denies are added to Deny, and the MCP resource tools
	// are left out when no MCP server is configured.
	Pool *toolset.Options

	// Persist keeps the session as the CLI does, under the Gantry home
	// ($GANTRY_HOME, else ~/.gantry): the durable store gantry.db (opened
	// when a tool first uses it; see [store.LazySQLite]), the
	// transcripts (projects/) and, unless NoCheckpoints, the checkpoints
	// of Dir's files (`gantry rewind`; pruned at most once a day when the
	// workspace closes). Store, Transcripts and Checkpoints, when given,
	// win. False (the default) keeps nothing on disk: an in-memory store,
	// no transcript, no checkpoints.
	Persist bool
	// Transcripts keeps the transcripts of the session and its subagents
	// (see package session). Nil means none, or with Persist the Gantry
	// home's.
	Transcripts *transcript.Store
	// ResumeID resumes that session's transcript; Continue resumes the
	// latest session of Dir; Fork copies the resumed transcript into a new
	// session. Each needs Transcripts (or Persist); the zero values start
	// a new session.
	ResumeID string
	Continue bool
	Fork     bool
	// Checkpoints records Dir's files before every prompt and every
	// writing tool call, so that changes can be undone (see package
	// checkpoint). Nil means none, or with Persist (and not NoCheckpoints)
	// the Gantry home's; the workspace closes neither a given store nor
	// prunes it.
	Checkpoints *checkpoint.Store
	// NoCheckpoints turns off the checkpoints Persist would record.
	NoCheckpoints bool

	// Services are the services handed to tools (nil = new ones holding a
	// background-task manager, [*shell.Tasks]). When given, they are used
	// as they are and Close does not close what they hold.
	Services *tool.Services
	// Store is the durable store: the todo lists, the shared task list,
	// mailboxes and teams (nil = the Gantry home's gantry.db with Persist,
	// else a new in-memory [store.Memory]). It is provided in the
	// services as [store.Tasks], [store.Todos], [store.Mailboxes] and
	// [store.Teams] (given Services that hold a task store keep theirs when
	// Store is nil and Persist is false); the caller closes a given one,
	// Close the one Persist opened.
	Store store.Store
	// Decider and Hooks replace the permission engine and the hook manager
	// built from the settings (for SDK users with their own policy).
	Decider permission.Decider
	Hooks   hook.Runner
	// ExtraHooks run beside the settings' hooks (or Hooks), their outputs
	// merged with [hook.Combine]: an Agent SDK session's hook callbacks.
	// They run also with NoSettings.
	ExtraHooks hook.Runner
	// Interaction is the channel through which a person decides (see
	// package interaction): it is put into Services for the tools and the
	// agents of the workspace, answers the asks of the workspace's executor
	// ("always allow" rules go to the engine and the settings files), and receives the elicitation requests of MCP servers
	// when MCP.Elicit is nil. Nil means nobody: asks are denied, questions
	// and elicitations report that nobody can answer.
	Interaction interaction.Channel
	// ExecutorOptions configure the workspace's executor (limits,
	// tracing); the zero value is the executor's defaults. Decider, Hooks
	// and CanUseTool, when nil, are the workspace's (its permission engine,
	// the settings' hooks, asks through Interaction).
	ExecutorOptions executor.Options

	// Reminders are asked for context before every model request of the
	// agents that run in the workspace. They follow the workspace's own
	// reminders, which are always asked: the team mailboxes (team.Inbox),
	// the due cron jobs (cron.Reminder), the [tool.Reminder] in the
	// services (a language server's late diagnostics) and a todo list
	// left unfinished and unchanged for a while (todo.Reminder). Nil
	// means only those.
	Reminders []tool.Reminder
	// Summarizer answers WebFetch's prompt about a page with a small side
	// model (see [web.Summarizer]; the CLI gives a *web.ModelSummarizer
	// over its --small-model). It is put into the services. Nil means
	// WebFetch returns the page to the main model (unless the given
	// Services hold one).
	Summarizer web.Summarizer

	// SessionID is the id of a new session: its transcript's, and the
	// session's in the tools' environment ("" = a new random id; a resumed
	// session keeps its own). ToolResultsDir is where the workspace's own
	// executor session puts oversized results and background output ("" =
	// a new temporary directory, removed by Close unless a tool kept a
	// file in it); an agent puts them beside its transcript.
	SessionID      string
	ToolResultsDir string
	// AdditionalDirs are directories besides Dir the session may use.
	AdditionalDirs []string

	// Sandbox configures the OS sandbox of the session's Bash commands
	// (and of the hooks and MCP servers that opt in). Nil means the
	// settings' "sandbox" block, with the filesystem policy derived from
	// the permission rules (see [permission.SandboxPaths]).
	Sandbox *sandbox.Options
}

// Workspace is the assembled runtime of one session. Its accessors return
// shared values: the pool, the services and the safety layer are those the
// agent and its subagents use. Create it with [Open]; release it with
// [Workspace.Close]. A Workspace is safe for concurrent use.
type Workspace struct {
	dir      string
	settings *settings.Settings
	engine   *permission.Engine
	decider  permission.Decider
	hooks    hook.Runner
	mode     tool.Mode
	services *tool.Services
	tasks    *shell.Jobs
	sandbox  *sandbox.Sandbox
	mcp      *mcptool.Manager
	agents   *agenttool.Catalog
	commands *slash.Registry
	plugins  []*plugins.Plugin
	pool     *toolset.Pool
	poolOpts toolset.Options
	// reminders are asked by the agent loop between turns (see
	// [Workspace.Reminders]).
	reminders []tool.Reminder
	// What keeps the session: the durable store, the transcripts and
	// which one to open, the checkpoints.
	db          store.Store
	transcripts *transcript.Store
	resume      Resume
	checkpoints *checkpoint.Store
	// The workspace's own executor and session, made on first use (an
	// agent builds its own over the same pool and safety layer).
	env    *tool.Env
	xo     executor.Options
	rtOnce sync.Once
	exec   *executor.Executor
	sess   atomic.Pointer[executor.SharedEnv]

	closers []func() error
}

// Open assembles a workspace. It fails on a working directory that is not a
// directory, an unreadable or invalid settings file, a rule that does not
// parse, an unknown mode, bypassPermissions as root, an invalid MCP
// configuration, or a pool that cannot be built. An MCP server that fails
// to start does not fail Open: it is reported to Options.Warn and the
// session goes on without its tools.
func Open(ctx context.Context, opts Options) (_ *Workspace, err error) {
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	home := opts.UserHome
	if home == "" {
		home = getenv("HOME")
	}
	dir, err := absDir(opts.Dir)
	if err != nil {
		return nil, err
	}
	w := &Workspace{dir: dir}
	defer func() {
		if err != nil {
			w.Close()
		}
	}()

	// Settings → permission engine and hooks.
	cfg := permission.Options{WorkDir: dir, Getenv: getenv, AdditionalDirs: opts.AdditionalDirs}
	var hcfg hook.Options
	if !opts.NoSettings {
		so := settings.Options{ProjectDir: dir, Getenv: getenv, UserHome: home, PolicyPath: opts.PolicyPath, Scopes: opts.SettingScopes}
		if opts.Trusted {
			so.Trusted = &opts.Trusted
		}
		st, err := settings.Load(so)
		if err != nil {
			return nil, fmt.Errorf("workspace: %w", err)
		}
		paths, err := settings.Paths(so)
		if err != nil {
			return nil, fmt.Errorf("workspace: %w", err)
		}
		w.settings = st
		if st.ConfigChanged {
			w.warn(opts, "settings: the project configuration of "+dir+" changed since the folder was trusted "+
				"(a settings file was added, edited or removed outside Gantry); its settings are ignored until you trust it again")
		}
		cfg = permission.ConfigFromSettings(st)
		cfg.WorkDir, cfg.Getenv = dir, getenv
		cfg.SettingsPaths = paths
		cfg.AdditionalDirs = append(cfg.AdditionalDirs, opts.AdditionalDirs...)
		hcfg = hook.Options{Hooks: st.Hooks(), Env: st.Env()}
		w.mode = st.Mode()
	}
	for _, r := range slices.Concat(opts.Allow, opts.Deny) {
		if _, err := permission.ParseRule(r); err != nil {
			return nil, fmt.Errorf("workspace: bad tool rule %q: %w", r, err)
		}
	}
	if len(opts.Allow) > 0 || len(opts.Deny) > 0 {
		cfg.Rules = append(cfg.Rules, permission.RuleSet{Source: string(settings.ScopeCLI), Root: dir, Allow: opts.Allow, Deny: opts.Deny})
	}
	if opts.Mode != "" {
		w.mode = opts.Mode
	}
	if w.mode == "" {
		w.mode = tool.ModeDefault
	}
	if !w.mode.Valid() {
		return nil, fmt.Errorf("workspace: unknown permission mode %q (want one of %v)", w.mode, tool.Modes())
	}
	if err := permission.CheckBypass(w.mode, os.Geteuid(), getenv); err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	cfg.Mode = w.mode
	if w.sandbox, err = w.openSandbox(opts, cfg, dir, home); err != nil {
		return nil, err
	}
	if w.sandbox.Status().Enabled {
		cfg.Sandbox = w.sandbox
	}
	eng, err := permission.NewEngine(cfg)
	if err != nil {
		return nil, fmt.Errorf("workspace: permissions: %w", err)
	}
	w.engine, w.decider = eng, eng
	if opts.Decider != nil {
		w.engine, w.decider = nil, opts.Decider
	}
	switch {
	case opts.Hooks != nil:
		w.hooks = opts.Hooks
	case !opts.NoSettings:
		hcfg.Sandbox = w.sandboxHooks()
		m, err := hook.NewManager(hcfg)
		if err != nil {
			return nil, fmt.Errorf("workspace: hooks: %w", err)
		}
		w.hooks = m
	}
	w.hooks = hook.Join(w.hooks, opts.ExtraHooks)

	// Services: the built-ins' session services (background tasks,
	// language servers).
	w.services = opts.Services
	if w.services == nil {
		w.services = &tool.Services{}
		bo := opts.Builtin
		if bo.LSP.Root == "" {
			bo.LSP.Root = dir
		}
		if bo.LSP.Getenv == nil {
			bo.LSP.Getenv = getenv
		}
		if bo.LSP.Trusted == nil && opts.Trusted {
			bo.LSP.Trusted = &opts.Trusted
		}
		bo.LSP.NoProjectConfig = bo.LSP.NoProjectConfig || opts.NoSettings
		w.closers = append(w.closers, builtin.NewSessionServices(w.services, bo).Close)
		tool.Provide(w.services, w.sandbox)
	}
	if g, ok := w.decider.(tool.ReadGuard); ok {
		// Read deny rules bind the tools that list and search files.
		tool.Provide[tool.ReadGuard](w.services, g)
	}
	if t, err := tool.Use[*shell.Jobs](&tool.Env{Services: w.services}); err == nil {
		w.tasks = t
	}
	if err := w.openPersistence(opts, getenv, home); err != nil {
		return nil, err
	}
	if _, err := tool.Use[store.Tasks](&tool.Env{Services: w.services}); err != nil || opts.Store != nil || opts.Persist {
		if w.db == nil {
			w.db = new(store.Memory)
		}
		builtin.ProvideStore(w.services, w.db)
	} else if st, err := tool.Use[store.Tasks](&tool.Env{Services: w.services}); err == nil {
		w.db, _ = st.(store.Store)
	}
	if opts.Interaction != nil {
		tool.Provide(w.services, opts.Interaction)
	}
	if opts.Summarizer != nil {
		tool.Provide(w.services, opts.Summarizer)
	}
	if _, err := tool.Use[team.Runner](&tool.Env{Services: w.services}); err != nil {
		// Teams: members run as background subagents of the session's
		// lead (the root agent provides itself as subagent.Lead).
		r := team.NewRunner()
		tool.Provide[team.Runner](w.services, r)
		tool.Provide[subagent.Teams](w.services, r)
	}
	// Team mail is always delivered (members and leads need no option
	// for it); the program's reminders follow.
	w.reminders = append([]tool.Reminder{team.Inbox{}, cron.Reminder{}, serviceReminder{}, &todo.Reminder{}}, opts.Reminders...)

	// The environment of the workspace's own executor session.
	resultsDir := opts.ToolResultsDir
	sessionID := opts.SessionID
	if resultsDir == "" {
		tmp, err := os.MkdirTemp("", "gantry-session-")
		if err != nil {
			return nil, fmt.Errorf("workspace: %w", err)
		}
		resultsDir = tmp
		w.closers = append(w.closers, func() error { return removeIfEmpty(tmp) })
		if sessionID == "" {
			sessionID = filepath.Base(tmp)
		}
	}
	if sessionID == "" {
		sessionID = filepath.Base(resultsDir)
	}
	env := &tool.Env{WorkDir: dir, SessionID: sessionID, Mode: w.mode, ToolResultsDir: resultsDir,
		AdditionalDirs: cfg.AdditionalDirs, Files: tool.NewFileCache(0), Services: w.services}

	// MCP servers.
	var mcpTools map[string][]tool.Tool
	if !opts.NoMCP && (!opts.NoSettings || len(opts.MCPConfigFiles) > 0 || len(opts.MCPServers) > 0) {
		if mcpTools, err = w.startMCP(ctx, opts, getenv, home); err != nil {
			return nil, err
		}
	}

	// Agent types.
	if w.agents, err = agenttool.NewCatalog(); err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	if !opts.NoAgentFiles {
		lo := agenttool.LoadOptions{UserHome: home, GantryHome: settings.GantryHome(getenv, home)}
		if w.Trusted() {
			lo.ProjectDir = dir
		}
		defs, err := agenttool.Load(lo)
		if err != nil {
			w.warn(opts, fmt.Sprintf("agent definitions: %v", err))
		}
		if err := w.agents.Add(defs...); err != nil {
			return nil, fmt.Errorf("workspace: %w", err)
		}
	}
	// Plugins: those named, then those settings enable.
	seen := map[string]bool{}
	for _, d := range slices.Concat(opts.PluginDirs, w.enabledPluginDirs(opts, home)) {
		p, err := plugins.Load(d)
		if err != nil {
			w.warn(opts, err.Error())
			continue
		}
		if seen[p.Dir] {
			continue
		}
		seen[p.Dir] = true
		if parts := p.Unloaded(); len(parts) > 0 {
			w.warn(opts, fmt.Sprintf("plugin %s: its %s are not loaded (Gantry loads a plugin's commands, skills and agents only)", p.Name, strings.Join(parts, ", ")))
		}
		defs, err := agenttool.LoadDir(p.AgentsDir(), "plugin")
		if err != nil {
			w.warn(opts, fmt.Sprintf("plugin %s: agent definitions: %v", p.Name, err))
		}
		for i := range defs {
			defs[i].Name = p.Namespaced(defs[i].Name)
		}
		if err := w.agents.Add(defs...); err != nil {
			return nil, fmt.Errorf("workspace: plugin %s: %w", p.Name, err)
		}
		w.plugins = append(w.plugins, p)
	}

	// Slash commands.
	var cmds []*slash.Command
	if !opts.NoCommandFiles || len(w.plugins) > 0 {
		lo := slash.LoadOptions{Plugins: w.plugins}
		if !opts.NoCommandFiles {
			lo.UserHome, lo.GantryHome = home, settings.GantryHome(getenv, home)
		}
		if w.Trusted() && !opts.NoCommandFiles {
			lo.ProjectDir = dir
		}
		var problems []error
		cmds, problems = slash.Load(lo)
		for _, p := range problems {
			w.warn(opts, fmt.Sprintf("slash commands: %v", p))
		}
	}
	w.commands = slash.NewRegistry(cmds...)
	for _, d := range opts.Agents {
		if d.Source == "" {
			d.Source = "sdk"
		}
		if err := w.agents.Add(d); err != nil {
			return nil, fmt.Errorf("workspace: %w", err)
		}
	}

	// The pool.
	var po toolset.Options
	if opts.Pool != nil {
		po = *opts.Pool
	} else {
		po = toolset.Options{Defer: true, DeferMCPOver: DeferMCPOver}
	}
	if po.Registry == nil {
		bo := w.builtinOptions(opts, getenv, home)
		var reg *toolset.Registry
		if opts.Shared != nil {
			reg, err = opts.Shared.registry(bo)
		} else {
			reg, err = builtin.Registry(bo)
		}
		if err != nil {
			return nil, fmt.Errorf("workspace: %w", err)
		}
		po.Registry = reg
	}
	po.Tools = slices.Concat(po.Tools, opts.Tools)
	if opts.CompletionTools {
		po.Tools = completion.Add(po.Tools) // a caller's attempt_completion wins
	}
	if !opts.NoAgentTool && !slices.ContainsFunc(po.Tools, func(t tool.Tool) bool { return slices.Contains(t.Spec().Names(), agenttool.Name) }) {
		po.Tools = append(po.Tools, agenttool.New(w.agents))
	}
	if slices.ContainsFunc(w.commands.List(), (*slash.Command).Invocable) {
		po.Tools = append(po.Tools, slash.NewTool(w.commands))
	}
	po.Deny = slices.Concat(po.Deny, eng.HiddenTools())
	if w.mcp == nil {
		po.Deny = append(po.Deny, "ListMcpResources", "ReadMcpResource")
	}
	po.Env = env
	w.poolOpts = po
	if w.pool, err = toolset.NewPool(ctx, po); err != nil {
		return nil, fmt.Errorf("workspace: tool pool: %w", err)
	}
	// Skills: the turn state over the pool's restriction stack; each new
	// user prompt ends the previous turn's skill restrictions.
	if _, err := tool.Use[*skill.Turn](env); err != nil {
		turn := skill.NewTurn(w.pool)
		tool.Provide(w.services, turn)
		w.hooks = endSkillTurn(turn, w.hooks)
	}
	for _, name := range slices.Sorted(maps.Keys(mcpTools)) {
		if err := w.pool.AddMCP(name, mcpTools[name]...); err != nil {
			return nil, fmt.Errorf("workspace: MCP server %s: %w", name, err)
		}
	}

	// The executor.
	xo := opts.ExecutorOptions
	if xo.Decider == nil {
		xo.Decider = w.decider
	}
	if xo.Hooks == nil && w.hooks != nil {
		xo.Hooks = w.hooks
	}
	if xo.CanUseTool == nil && opts.Interaction != nil {
		up, _ := w.decider.(permission.Updater)
		xo.CanUseTool = permission.AskChannel(opts.Interaction, up, interaction.Who{SessionID: sessionID})
	}
	w.env, w.xo = env, xo
	return w, nil
}

// checkpointPruneEvery is how often Close prunes the checkpoints Persist
// opened.
const checkpointPruneEvery = 24 * time.Hour

// openPersistence opens what keeps the session (see [Options.Persist]).
func (w *Workspace) openPersistence(opts Options, getenv func(string) string, home string) error {
	w.db, w.transcripts, w.checkpoints = opts.Store, opts.Transcripts, opts.Checkpoints
	w.resume = Resume{ID: opts.ResumeID, Continue: opts.Continue, Fork: opts.Fork, NewID: opts.SessionID}
	if opts.Persist {
		gh := settings.GantryHome(getenv, home)
		if w.db == nil {
			db := store.LazySQLite(filepath.Join(gh, store.DefaultFile), store.SQLiteOptions{})
			w.db = db
			w.closers = append(w.closers, db.Close)
		}
		if w.transcripts == nil {
			w.transcripts = transcript.NewStore(gh)
		}
		if w.checkpoints == nil && !opts.NoCheckpoints {
			cp, err := checkpoint.Open(checkpoint.Options{Dir: w.dir, Home: gh})
			if err != nil {
				w.warn(opts, "checkpoints are off: "+err.Error())
			} else {
				w.checkpoints = cp
				ts, dir := w.transcripts, w.dir
				w.closers = append(w.closers, func() error {
					// At most once a day: the checkpoints past their
					// retention and those of sessions whose transcript is
					// gone.
					_, _ = cp.PruneIfDue(context.Background(), checkpointPruneEvery, checkpoint.PruneOptions{SessionGone: func(id string) bool {
						_, err := os.Stat(ts.Path(dir, id))
						return errors.Is(err, os.ErrNotExist)
					}})
					return nil
				})
			}
		}
	}
	if w.transcripts == nil && (w.resume.ID != "" || w.resume.Continue) {
		return errors.New("workspace: resuming a session needs a transcript store (Options.Transcripts or Persist)")
	}
	return nil
}

// Resume says which transcript an agent opening the workspace's session
// starts from (see [Options.ResumeID]).
type Resume struct {
	// ID is the session to resume ("" = none); Continue resumes the
	// latest of the directory; Fork copies the resumed session into a new
	// one.
	ID       string
	Continue bool
	Fork     bool
	// NewID is the id of a new session ("" = a random one).
	NewID string
}

// builtinOptions completes opts.Builtin (see [Options.Builtin]).
func (w *Workspace) builtinOptions(opts Options, getenv func(string) string, home string) builtin.Options {
	bo := opts.Builtin
	for _, p := range w.plugins {
		bo.Skill.Dirs = append(slices.Clip(bo.Skill.Dirs), p.SkillsDir())
	}
	if bo.File.JournalDir == "" {
		bo.File.JournalDir = filepath.Join(settings.GantryHome(getenv, home), "tmp")
		if removed, err := file.SweepTemp(bo.File.JournalDir); err == nil && len(removed) > 0 {
			w.warn(opts, fmt.Sprintf("removed %d temporary file(s) an interrupted earlier write left behind", len(removed)))
		}
	}
	if bo.Shell.Env == nil && w.settings != nil {
		bo.Shell.Env = w.settings.Env()
	}
	if bo.Search.Engine == "" {
		bo.Search.Engine = search.Engine(getenv("GANTRY_GREP_ENGINE")) // checked by the tool's constructor
	}
	return bo
}

// startMCP loads the MCP configuration, starts the servers and provides
// their resources to the tools. It returns each connected server's tools.
func (w *Workspace) startMCP(ctx context.Context, opts Options, getenv func(string) string, home string) (map[string][]tool.Tool, error) {
	trusted := w.settings != nil && w.settings.Trusted
	approve := opts.MCPApprove
	if approve == nil {
		gh := settings.GantryHome(getenv, home)
		approve = mcptool.StoreApprover(&settings.MCPApprovals{Path: filepath.Join(gh, settings.MCPApprovalFile)}, opts.Trusted)
	}
	dir := w.dir
	if opts.StrictMCPConfig {
		dir = "" // no project file
	}
	cfg, err := mcptool.Load(mcptool.LoadOptions{Dir: dir, Trusted: trusted, Files: opts.MCPConfigFiles, Servers: opts.MCPServers, Getenv: getenv, Approve: approve})
	if err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	for _, st := range cfg.HeldStatuses() {
		w.warn(opts, fmt.Sprintf("MCP server %s (%s) not started: %s", st.Name, mcptool.ProjectConfigFile, st.Err))
	}
	if len(cfg.Servers) == 0 {
		return nil, nil
	}
	mo := mcptool.Options{}
	if opts.MCP != nil {
		mo = *opts.MCP
	}
	mo.Dir, mo.Getenv = w.dir, getenv
	if mo.Sandbox == nil {
		mo.Sandbox = w.sandboxMCP(opts.AdditionalDirs)
	}
	if mo.Client == nil {
		mo.Client = &mcp.Implementation{Name: "gantry"}
	}
	if mo.Elicit == nil && opts.Interaction != nil {
		mo.Elicit = mcptool.ElicitThrough(opts.Interaction)
	}
	// Elicitation hooks may answer before the person is asked, and
	// ElicitationResult hooks see (and may replace) the answer.
	mo.Elicit = mcptool.ElicitHooks(w.hooks, func(in *hook.Input) { in.CWD, in.PermissionMode = w.dir, w.mode }, mo.Elicit)
	user := mo.OnToolsChanged
	mo.OnToolsChanged = func(server string) {
		w.refreshMCP(server)
		if user != nil {
			user(server)
		}
	}
	m, err := mcptool.NewManager(cfg, &mo)
	if err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	w.mcp = m
	w.closers = append(w.closers, m.Close)
	if err := m.Start(ctx); err != nil {
		w.warn(opts, fmt.Sprintf("some MCP servers are unavailable: %v", err))
	}
	tool.Provide[mcpres.Resources](w.services, m.Resources())
	out := map[string][]tool.Tool{}
	for _, st := range m.Servers() {
		if tools := m.ServerTools(st.Name); len(tools) > 0 {
			out[st.Name] = tools
		}
	}
	return out, nil
}

// refreshMCP puts a server's current tools in the pool (after
// tools/list_changed, a disconnect or a reconnect).
func (w *Workspace) refreshMCP(server string) {
	if w.pool == nil || w.mcp == nil {
		return
	}
	if tools := w.mcp.ServerTools(server); len(tools) > 0 {
		w.pool.AddMCP(server, tools...)
	} else {
		w.pool.RemoveMCP(server)
	}
}

func (w *Workspace) warn(opts Options, msg string) {
	if opts.Warn != nil {
		opts.Warn(msg)
	}
}

// Dir returns the working directory (absolute).
func (w *Workspace) Dir() string { return w.dir }

// Settings returns the settings read for the session (nil with
// Options.NoSettings).
func (w *Workspace) Settings() *settings.Settings { return w.settings }

// Trusted reports whether the working directory's project settings apply.
func (w *Workspace) Trusted() bool { return w.settings != nil && w.settings.Trusted }

// Engine returns the permission engine built from the settings and rules
// (nil when Options.Decider replaced it).
func (w *Workspace) Engine() *permission.Engine { return w.engine }

// Decider returns the permission decider in force: the engine or
// Options.Decider.
func (w *Workspace) Decider() permission.Decider { return w.decider }

// Hooks returns the hook runner (nil when no settings were read and none
// was given).
func (w *Workspace) Hooks() hook.Runner { return w.hooks }

// Mode returns the session's initial permission mode.
func (w *Workspace) Mode() tool.Mode { return w.mode }

// Services returns the services handed to tools.
func (w *Workspace) Services() *tool.Services { return w.services }

// Tasks returns the session's background-task manager (nil when
// Options.Services were given without one).
func (w *Workspace) Tasks() *shell.Jobs { return w.tasks }

// GoBackground runs fn as a background job of the session's
// background-task manager (the agent loop's background subagents): kind
// names what runs ("agent"), its output goes to a file under dir, TaskOutput
// reads it, TaskStop stops it and Close kills it. onDone (nil = nothing) is
// called once fn returned, with the job's id and final status ("completed",
// "failed" or "killed"). It returns the job's id and output file, or an
// error when the workspace has no background-task manager (Options.Services
// were given without one) or it is closed.
func (w *Workspace) GoBackground(dir, kind, description string, fn func(ctx context.Context, out io.Writer) error, onDone func(id, status string)) (id, outputPath string, err error) {
	if w.tasks == nil {
		return "", "", errors.New("this session has no background-task manager")
	}
	var done func(shell.JobInfo)
	if onDone != nil {
		done = func(info shell.JobInfo) { onDone(info.ID, string(info.Status)) }
	}
	info, err := w.tasks.Go(dir, kind, description, fn, done)
	if err != nil {
		return "", "", err
	}
	return info.ID, info.OutputPath, nil
}

// StopBackground stops the background job id (a command or a job of
// [Workspace.GoBackground]) and waits until it ended or ctx is done.
func (w *Workspace) StopBackground(ctx context.Context, id string) error {
	if w.tasks == nil {
		return errors.New("this session has no background-task manager")
	}
	_, err := w.tasks.Stop(ctx, id)
	return err
}

// CreateWorktree creates a git worktree of the repository holding dir on a
// new branch named after name, for a subagent started with isolation
// "worktree" (see [worktree.Create]; the caller finishes it).
func (w *Workspace) CreateWorktree(ctx context.Context, dir, name string) (*worktree.Worktree, error) {
	return worktree.Create(ctx, dir, name)
}

// Sandbox returns the session's OS sandbox (never nil; see
// [sandbox.Sandbox.Status] for whether it contains anything).
func (w *Workspace) Sandbox() *sandbox.Sandbox { return w.sandbox }

// MCP returns the MCP client manager (nil when no server is configured).
func (w *Workspace) MCP() *mcptool.Manager { return w.mcp }

// Agents returns the session's agent types (the Agent tool's catalog).
func (w *Workspace) Agents() *agenttool.Catalog { return w.agents }

// enabledPluginDirs returns the directories of the installed plugins the
// settings enable ([settings.Settings.EnabledPlugins], found through
// [plugins.Installed]), in key order; it warns about an enabled plugin
// that is not installed.
func (w *Workspace) enabledPluginDirs(opts Options, home string) []string {
	if w.settings == nil || home == "" {
		return nil
	}
	enabled := w.settings.EnabledPlugins()
	var keys []string
	for k, on := range enabled {
		if on {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	slices.Sort(keys)
	installed, err := plugins.Installed(home)
	if err != nil {
		w.warn(opts, fmt.Sprintf("settings enable plugins (%s) but %v", strings.Join(keys, ", "), err))
		return nil
	}
	var dirs []string
	for _, k := range keys {
		d, ok := installed[k]
		if !ok {
			w.warn(opts, fmt.Sprintf("plugin %s: enabled in settings but not installed (Gantry reads %s; it installs no plugin itself)", k, plugins.InstalledFile))
			continue
		}
		dirs = append(dirs, d)
	}
	return dirs
}

// Plugins returns the plugins loaded (see Options.PluginDirs).
func (w *Workspace) Plugins() []*plugins.Plugin { return w.plugins }

// Commands returns the session's slash commands (built-in and custom).
func (w *Workspace) Commands() *slash.Registry { return w.commands }

// Store returns the durable store of the tools (todos, tasks, mailboxes,
// teams); nil when Options.Services were given holding a store that is
// not a [store.Store].
func (w *Workspace) Store() store.Store { return w.db }

// Transcripts returns the transcript store (nil: no transcript is kept).
func (w *Workspace) Transcripts() *transcript.Store { return w.transcripts }

// Resume returns which transcript the session starts from.
func (w *Workspace) Resume() Resume { return w.resume }

// Checkpoints returns the checkpoint store of Dir's files (nil: none).
func (w *Workspace) Checkpoints() *checkpoint.Store { return w.checkpoints }

// Reminders returns what the agent loop asks for context before every
// model request, in order (see [Options.Reminders]). The slice is shared:
// do not modify it.
func (w *Workspace) Reminders() []tool.Reminder { return w.reminders }

// serviceReminder delivers the reminder a session service offers
// ([tool.Reminder] in the calling agent's services): a language server's
// diagnostics that were not ready when a Write or Edit result returned.
type serviceReminder struct{}

func (serviceReminder) Remind(ctx context.Context, env *tool.Env) (string, func(), error) {
	rm, err := tool.Use[tool.Reminder](env)
	if err != nil || rm == nil {
		return "", nil, nil
	}
	return rm.Remind(ctx, env)
}

// Pool returns the session's tool pool.
func (w *Workspace) Pool() *toolset.Pool { return w.pool }

// PoolOptions returns the options the pool was built with.
func (w *Workspace) PoolOptions() toolset.Options { return w.poolOpts }

// Executor returns the executor over the pool with the safety layer; with
// [Workspace.Session] it runs single calls (`gantry tools call`, MCP
// serving). An agent builds its own executor over the same pool and
// safety layer.
func (w *Workspace) Executor() *executor.Executor {
	w.runtime()
	return w.exec
}

// runtime makes the workspace's own executor and session once.
func (w *Workspace) runtime() {
	w.rtOnce.Do(func() {
		w.exec = executor.New(w.pool, w.xo)
		w.sess.Store(executor.NewSharedEnv(w.env))
	})
}

// Session returns the executor session of the workspace's own environment.
func (w *Workspace) Session() *executor.SharedEnv {
	w.runtime()
	return w.sess.Load()
}

// Env returns a copy of the workspace's environment.
func (w *Workspace) Env() *tool.Env {
	if s := w.sess.Load(); s != nil {
		return s.Env()
	}
	return w.env.Clone() // what the session will start from
}

// Close stops what the workspace started: background tasks are killed and
// reaped, MCP servers are closed, a temporary results directory is removed
// when nothing was kept in it. It is idempotent.
func (w *Workspace) Close() error {
	var errs []error
	for i := len(w.closers) - 1; i >= 0; i-- {
		errs = append(errs, w.closers[i]())
	}
	w.closers = nil
	return errors.Join(errs...)
}

// endSkillTurn wraps the hook runner so that a UserPromptSubmit event (a
// new turn) first ends the skills of the previous turn.
func endSkillTurn(turn *skill.Turn, inner hook.Runner) hook.Runner {
	return &skillTurnHooks{turn: turn, inner: inner}
}

type skillTurnHooks struct {
	turn  *skill.Turn
	inner hook.Runner
}

// Handles implements [hook.EventFilter]: UserPromptSubmit, and the events
// of the inner runner.
func (h *skillTurnHooks) Handles(ev hook.Event) bool {
	return ev == hook.UserPromptSubmit || hook.Handles(h.inner, ev)
}

func (h *skillTurnHooks) Run(ctx context.Context, in *hook.Input) (*hook.Output, error) {
	if in != nil && in.Event == hook.UserPromptSubmit {
		h.turn.End()
	}
	if h.inner == nil {
		return nil, nil
	}
	return h.inner.Run(ctx, in)
}

func absDir(dir string) (string, error) {
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", fmt.Errorf("workspace: working directory: %w", err)
		}
		dir = wd
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("workspace: working directory: %w", err)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("workspace: working directory %s is not a directory", dir)
	}
	return dir, nil
}

// removeIfEmpty removes a temporary directory unless a tool kept a file
// there (an oversized result the user may want to read).
func removeIfEmpty(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) > 0 {
		return nil
	}
	return os.Remove(dir)
}
