package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/gantry-dev/gantry/agent"
	"github.com/gantry-dev/gantry/builtin/file"
	"github.com/gantry-dev/gantry/builtin/web"
	"github.com/gantry-dev/gantry/executor"
	"github.com/gantry-dev/gantry/interaction"
	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/llm/texttools"
	"github.com/gantry-dev/gantry/mcptool"
	"github.com/gantry-dev/gantry/settings"
	"github.com/gantry-dev/gantry/slash"
	"github.com/gantry-dev/gantry/slash/local"
	"github.com/gantry-dev/gantry/streamjson"
	"github.com/gantry-dev/gantry/tool"
	"github.com/gantry-dev/gantry/toolset"
	"github.com/gantry-dev/gantry/workspace"
)

// runFlags are the flags of `gantry -p` and `gantry run`.
type runFlags struct {
	safetyFlags
	print          bool
	outputFormat   string
	inputFormat    string
	verbose        bool
	partial        bool
	model          string
	fallbackModel  string
	provider       string
	maxTurns       int
	maxBudgetUSD   float64
	maxThinking    int
	resume         string
	cont           bool
	fork           bool
	sessionID      string
	appendSystem   string
	systemPrompt   string
	mcpConfig      []string
	strictMCP      bool
	settingSources string
	// pluginDirs are --plugin-dir (and --plugin-dir-no-mcp) values.
	pluginDirs []string
	// settingSourcesSet: --setting-sources was given (its empty value
	// means no settings files).
	settingSourcesSet bool
	addDirs           []string
	allowBypass       bool
	noSessionSaved    bool
	web               webFlags
	promptTool        string
	agents            agentsFlag
	toolProtocol      string
	completion        bool
	jsonSchema        string
	noCheckpoints     bool
	replayUser        bool
	// chat is the interactive terminal's channel (gantry chat): it asks the
	// person (permissions, questions, plans, trust, changed MCP servers);
	// nil for headless runs.
	chat        interaction.Channel
	idleTimeout time.Duration
	tools       string
	toolsSet    bool // --tools was given (empty: no built-in tools)
	debugFile   string
	debug       bool
}

func addRunFlags(cmd *cobra.Command, f *runFlags) {
	fl := cmd.Flags()
	fl.StringVar(&f.outputFormat, "output-format", "text", "output format: text, json (with --verbose: every message) or stream-json (needs --verbose)")
	fl.StringVar(&f.inputFormat, "input-format", "text", "input format: text (the prompt) or stream-json (user messages and control requests on stdin, one JSON object per line, as the Agent SDKs send them)")
	fl.BoolVar(&f.verbose, "verbose", false, "print every message (json, stream-json)")
	fl.BoolVar(&f.partial, "include-partial-messages", false, "with stream-json output, also print the model's raw stream events (stream_event)")
	fl.StringVar(&f.model, "model", "", "model name (default: the provider's default, or GANTRY_MODEL)")
	fl.StringVar(&f.fallbackModel, "fallback-model", "", "model to use when the model is overloaded or unavailable")
	fl.StringVar(&f.provider, "provider", "", "model provider: anthropic or openai (default: from the environment)")
	fl.StringVar(&f.mode, "permission-mode", "", "permission mode: default, acceptEdits, plan, dontAsk, bypassPermissions")
	fl.BoolVar(&f.allowBypass, "allow-dangerously-skip-permissions", false, "let the session switch to bypassPermissions later (an Agent SDK's setPermissionMode)")
	fl.StringArrayVar(&f.allowed, "allowedTools", nil, `permission allow rules, e.g. "Read,Bash(git diff *)"`)
	fl.StringArrayVar(&f.disallowed, "disallowedTools", nil, `permission deny rules; a bare tool name hides the tool`)
	fl.IntVar(&f.maxTurns, "max-turns", 0, "maximum model turns (default 100)")
	fl.Float64Var(&f.maxBudgetUSD, "max-budget-usd", 0, "stop once the session cost reaches this many US dollars")
	fl.IntVar(&f.maxThinking, "max-thinking-tokens", 0, "extended thinking budget in tokens (0 = off)")
	fl.StringVarP(&f.resume, "resume", "r", "", "resume the session with this id")
	fl.BoolVarP(&f.cont, "continue", "c", false, "continue the latest session in the working directory")
	fl.BoolVar(&f.fork, "fork-session", false, "with --resume or --continue, continue in a new session (a copy)")
	fl.StringVar(&f.sessionID, "session-id", "", "the id of the new session (a UUID)")
	fl.StringVar(&f.cwd, "cwd", "", "working directory (default: the current directory)")
	fl.StringArrayVar(&f.addDirs, "add-dir", nil, "another directory the tools may use (repeatable)")
	fl.StringVar(&f.appendSystem, "append-system-prompt", "", "text appended to the system prompt")
	fl.StringVar(&f.systemPrompt, "system-prompt", "", "replace the built-in instructions of the system prompt")
	fl.StringArrayVar(&f.mcpConfig, "mcp-config", nil, "MCP servers: a configuration file (.mcp.json format) or the same as inline JSON (repeatable)")
	fl.BoolVar(&f.strictMCP, "strict-mcp-config", false, "use only the servers of --mcp-config (not the project's .mcp.json)")
	fl.StringVar(&f.settingSources, "setting-sources", "", "settings files to read: a comma-separated subset of user, project, local (default all; empty: none but the managed policy)")
	fl.StringArrayVar(&f.pluginDirs, "plugin-dir", nil, "load the plugin in this directory (.claude-plugin/plugin.json): its commands and skills (repeatable)")
	fl.StringArrayVar(&f.pluginDirs, "plugin-dir-no-mcp", nil, "as --plugin-dir (a plugin's MCP servers are not started either way)")
	fl.BoolVar(&f.trust, "trust", false, "trust the working directory (its settings, hooks and MCP servers take effect) and approve its .mcp.json servers as they are now")
	fl.BoolVar(&f.noSettings, "no-settings", false, "ignore settings files (only flags apply)")
	fl.BoolVar(&f.noSessionSaved, "no-session-persistence", false, "do not write a transcript")
	fl.StringVar(&f.promptTool, "permission-prompt-tool", "", "who answers permission asks, questions and plan approval instead of a person: an MCP tool (mcp__server__tool), or stdio (the Agent SDK program, with --input-format stream-json)")
	fl.StringVar(&f.toolProtocol, "tool-protocol", "native", "how tools reach the model: native, text (described in the prompt, called with XML-style tags; for models without tool calling) or auto")
	fl.BoolVar(&f.completion, "completion-tools", false, "offer attempt_completion (ends the run with its result) and new_task (hands the task to a new session that starts from a hand-off summary)")
	fl.StringVar(&f.jsonSchema, "json-schema", "", "a JSON Schema the final answer must match (inline JSON or @file): the run ends with a StructuredOutput call, printed as structured_output in json and stream-json results")
	fl.BoolVar(&f.noCheckpoints, "no-checkpoints", false, "do not record checkpoints of the project's files (gantry rewind undoes a run's changes with them)")
	fl.BoolVar(&f.replayUser, "replay-user-messages", false, "stream-json: also print the prompt as a user message, with its uuid (the id of the checkpoint before it)")
	fl.StringVar(&f.tools, "tools", "", `the built-in tools the model sees: "Read,Grep,…", "default" for all, "" for none (MCP tools stay)`)
	fl.DurationVar(&f.idleTimeout, "stream-idle-timeout", 0, "give up on a model stream that sends nothing (no headers, no bytes, no ping) for this long; retried once (default 60s, or $GANTRY_STREAM_IDLE_TIMEOUT, or the setting streamIdleTimeoutMs)")
	fl.BoolVar(&f.debug, "debug", false, "accepted for the Agent SDKs; Gantry's notes go to stderr")
	fl.StringVar(&f.debugFile, "debug-file", "", "also write Gantry's notes (warnings, retries) to this file (the Agent SDKs pass it when debugging)")
	f.web.add(fl, true)
	f.agents.add(cmd)
}

// newRunCmd is `gantry run PROMPT`; the root command runs the same with -p.
func newRunCmd(a *app) *cobra.Command {
	f := &runFlags{}
	cmd := &cobra.Command{
		Use:   "run [PROMPT]",
		Short: "Run an agent on a prompt and print the result (headless, like gantry -p)",
		Long: `Run an agent on PROMPT (or standard input when no prompt is given) in the
working directory, with the built-in tools, and print the result.

The model provider comes from the environment: ANTHROPIC_API_KEY selects
Anthropic; otherwise OPENAI_API_KEY or OPENAI_BASE_URL select OpenAI or an
OpenAI-compatible server (for example Ollama at http://localhost:11434/v1).`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f.settingSourcesSet = cmd.Flags().Changed("setting-sources")
			f.toolsSet = cmd.Flags().Changed("tools")
			return runPrompt(cmd.Context(), a, f, args)
		},
	}
	addRunFlags(cmd, f)
	return cmd
}

// attachRootRun makes the root command run a prompt with -p/--print.
func attachRootRun(a *app, root *cobra.Command) {
	f := &runFlags{}
	root.Flags().BoolVarP(&f.print, "print", "p", false, "run the prompt headless and print the result")
	addRunFlags(root, f)
	root.Args = cobra.MaximumNArgs(1)
	root.RunE = func(cmd *cobra.Command, args []string) error {
		// Headless without -p: streaming input (the Agent SDKs pass no
		// -p), or a prompt piped to bare gantry.
		headless := f.print || f.inputFormat == "stream-json" || (len(args) == 0 && !isTerminal(a.stdin))
		// A lone word close to a subcommand (gantry tols) is a typo, not
		// a prompt to pay for.
		if !f.print && len(args) == 1 && !strings.ContainsAny(strings.TrimSpace(args[0]), " \t\n") {
			wholeTree(a, cmd) // built for the command line: without the subcommands it did not name
			if len(suggestions(cmd, args[0])) > 0 {
				return unknownCommand(cmd, args[0])
			}
			// gantry lsit: close to a sub-subcommand (tools list, …).
			if deep := deepSuggestions(cmd, args[0]); len(deep) > 0 {
				return unknownCommand(cmd, args[0], deep...)
			}
		}
		f.settingSourcesSet = cmd.Flags().Changed("setting-sources")
		f.toolsSet = cmd.Flags().Changed("tools")
		if !headless && interactive(a) {
			return runChat(cmd.Context(), a, f, args)
		}
		if !headless && len(args) == 0 {
			return cmd.Help()
		}
		return runPrompt(cmd.Context(), a, f, args)
	}
}

func readPrompt(a *app, args []string) (string, error) {
	if len(args) == 1 && strings.TrimSpace(args[0]) != "" {
		return args[0], nil
	}
	if isTerminal(a.stdin) {
		return "", &exitError{code: 2, err: errors.New("no prompt: give one as an argument or on standard input")}
	}
	b, err := io.ReadAll(io.LimitReader(a.stdin, 10<<20))
	if err != nil {
		return "", err
	}
	if strings.TrimSpace(string(b)) == "" {
		return "", &exitError{code: 2, err: errors.New("no prompt: give one as an argument or on standard input")}
	}
	return string(b), nil
}

// check validates the combination of run flags.
func (f *runFlags) check() error {
	switch f.outputFormat {
	case "text", "json", "stream-json":
	default:
		return fmt.Errorf("unknown --output-format %q (want text, json or stream-json)", f.outputFormat)
	}
	switch f.inputFormat {
	case "text":
	case "stream-json":
		if f.outputFormat != "stream-json" {
			return errors.New("--input-format stream-json needs --output-format stream-json")
		}
	default:
		return fmt.Errorf("unknown --input-format %q (want text or stream-json)", f.inputFormat)
	}
	if f.outputFormat == "stream-json" && !f.verbose {
		return errors.New("--output-format stream-json needs --verbose")
	}
	if f.partial && f.outputFormat != "stream-json" {
		return errors.New("--include-partial-messages needs --output-format stream-json")
	}
	if f.promptTool == "stdio" && f.inputFormat != "stream-json" {
		return errors.New("--permission-prompt-tool stdio needs --input-format stream-json (the program on the other end answers)")
	}
	if f.sessionID != "" {
		if !uuidRE().MatchString(f.sessionID) {
			return fmt.Errorf("--session-id %q: want a UUID", f.sessionID)
		}
		if (f.resume != "" || f.cont) && !f.fork {
			return errors.New("--session-id with --resume or --continue needs --fork-session")
		}
	}
	if _, err := f.scopes(); err != nil {
		return err
	}
	if _, err := readJSONSchema(f.jsonSchema); err != nil {
		return err
	}
	return nil
}

var uuidRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
}) // compiled on first use, not at init

// scopes parses --setting-sources (nil: not given, every scope).
func (f *runFlags) scopes() ([]settings.Scope, error) {
	if f.settingSources == "" && !f.settingSourcesSet {
		return nil, nil
	}
	out := []settings.Scope{}
	for _, s := range strings.Split(f.settingSources, ",") {
		switch s = strings.TrimSpace(s); s {
		case "":
		case "user", "project", "local":
			out = append(out, settings.Scope(s))
		default:
			return nil, fmt.Errorf("--setting-sources: unknown source %q (want user, project or local)", s)
		}
	}
	return out, nil
}

func runPrompt(ctx context.Context, a *app, f *runFlags, args []string) error {
	if err := f.check(); err != nil {
		return &exitError{code: 2, err: err}
	}
	if f.debugFile != "" {
		df, err := os.OpenFile(f.debugFile, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return &exitError{code: 2, err: fmt.Errorf("--debug-file: %w", err)}
		}
		defer df.Close()
		dup := *a
		dup.stderr = io.MultiWriter(a.stderr, df)
		a = &dup
	}
	if f.inputFormat == "stream-json" {
		if len(args) > 0 {
			return &exitError{code: 2, err: errors.New("with --input-format stream-json the prompts come on standard input, not as an argument")}
		}
		return serveStream(ctx, a, f)
	}
	prompt, err := readPrompt(a, args)
	if err != nil {
		return err
	}
	s, err := openSession(ctx, a, f, nil)
	if err != nil {
		return err
	}
	defer s.close()

	out := newPrinter(a, f, s.model, s.ws)
	s.rc.printer.Store(out)
	if c, args := s.ws.Commands().Find(prompt); c != nil && c.Builtin() && c.Name == "compact" {
		return compactRun(ctx, s, out, args)
	} else if local.Handles(c) {
		return localRun(ctx, s, out, c, args)
	} else if c != nil && !c.Builtin() {
		// A custom slash command (package slash): its prompt, model and
		// allowed-tools.
		defer slash.Apply(s.ag, c)()
		if prompt, err = c.Prepare(ctx, s.ag, args); err != nil {
			return &exitError{code: 1, err: err}
		}
	}
	var res *agent.ResultEvent
	var runErr error
	for ev, err := range s.ag.Run(ctx, prompt) {
		if err != nil {
			runErr = err
			continue
		}
		if r, ok := ev.(*agent.ResultEvent); ok {
			res = r
			continue
		}
		out.event(ev)
	}
	out.finish(res, runErr)
	if res == nil {
		if runErr == nil {
			runErr = errors.New("the run ended without a result")
		}
		if f.outputFormat != "text" {
			return &exitError{code: 1, err: errors.New("")} // the result says why
		}
		return &exitError{code: 1, err: runErr}
	}
	if res.IsError {
		// The result (with its reason) was printed (text: on stderr); exit
		// non-zero without repeating it.
		return &exitError{code: 1, err: errors.New("")}
	}
	if out.denials > 0 && f.outputFormat != "stream-json" {
		// The run ended, but a call it made was refused: what was asked
		// may not be done. Each denial was reported on stderr (text) or
		// is in the result's permission_denials (json).
		return &exitError{code: exitDenied, err: errors.New("")}
	}
	return nil
}

// compactRun runs /compact [instructions] as the run (it makes sense
// with --resume or --continue): the session compacts now, and the result
// says so, or why not.
func compactRun(ctx context.Context, s *runSession, out *printer, instructions string) error {
	ev, err := s.ag.Compact(ctx, instructions)
	if err != nil {
		out.finish(nil, err)
		return &exitError{code: 1, err: err}
	}
	res := &agent.ResultEvent{Subtype: agent.SubtypeSuccess, SessionID: s.ag.SessionID(),
		Text: "Compacted the conversation."}
	if ev == nil {
		res.Subtype, res.IsError, res.Text = agent.SubtypeDuringExecution, true, "Not enough messages to compact."
	} else {
		out.w.CompactBoundary("manual", ev)
		res.Text = fmt.Sprintf("Compacted the conversation: %d messages became %d.", ev.Before, ev.After)
	}
	out.finish(res, nil)
	if res.IsError {
		return &exitError{code: 1, err: errors.New("")}
	}
	return nil
}

// localRun runs a built-in command of package slash/local as the run:
// its report is the result. /clear is not available (each -p run is a
// new session unless it resumes one, and its end is the run's end).
func localRun(ctx context.Context, s *runSession, out *printer, c *slash.Command, args string) error {
	text, err := local.Run(ctx, local.Request{Command: c, Args: args, Agent: s.ag, Workspace: s.ws})
	res := &agent.ResultEvent{Subtype: agent.SubtypeSuccess, SessionID: s.ag.SessionID(), Text: text}
	if err != nil {
		res.Subtype, res.IsError, res.Text = agent.SubtypeDuringExecution, true, err.Error()
	}
	out.finish(res, nil)
	if res.IsError {
		return &exitError{code: 1, err: errors.New("")}
	}
	return nil
}

// The exit statuses of a headless run (gantry -p, gantry run); see
// `gantry --help` and docs/agent.md.
const (
	// exitDenied: the run finished, but at least one tool call was
	// denied (a permission rule, the mode, a person, nobody to ask) or
	// blocked by a hook, so it may not have done what was asked. Not for
	// stream-json output, whose program reads the denials.
	exitDenied = 3
)

// serveStream runs a stream-json session (--input-format stream-json):
// the Agent SDKs' protocol on stdin and stdout, until stdin ends.
func serveStream(ctx context.Context, a *app, f *runFlags) error {
	// The Agent SDK's session helpers read the reference's transcripts:
	// mirror the conversation there unless nothing is to be kept.
	claudeConfigDir := ""
	if !f.noSessionSaved {
		claudeConfigDir = streamjson.ClaudeConfigDir(a.getenv)
	}
	err := streamjson.Serve(ctx, streamjson.Options{
		In: a.stdin, Out: a.stdout,
		Open: func(ctx context.Context, init *streamjson.Init) (*agent.Agent, *workspace.Workspace, error) {
			s, err := openSession(ctx, a, f, init)
			if err != nil {
				return nil, nil, err
			}
			return s.ag, s.ws, nil
		},
		Writer:           streamjson.WriterOptions{Partial: f.partial, ToolProgress: f.partial, ReplayUser: f.replayUser},
		PermissionPrompt: f.promptTool == "stdio",
		AllowBypass:      f.allowBypass || f.mode == string(tool.ModeBypassPermissions),
		Version:          buildVersion(),
		APIKeySource:     apiKeySource(a, f.provider),
		APIProvider:      apiProvider(f.provider),
		Getenv:           a.getenv,
		Warn:             func(msg string) { fmt.Fprintln(a.stderr, "gantry:", msg) },
		ClaudeConfigDir:  claudeConfigDir,
	})
	if err != nil {
		var ee *exitError
		if errors.As(err, &ee) {
			return ee
		}
		return &exitError{code: 1, err: err}
	}
	return nil
}

// runSession is what a run needs: the agent, its workspace and interaction
// channel, and the model.
type runSession struct {
	ag    *agent.Agent
	ws    *workspace.Workspace
	rc    *runChannel
	model string
}

// close closes the agent (and with it the workspace, which prunes the
// checkpoints when due).
func (s *runSession) close() { s.ag.Close() }

// mcpFlag splits --mcp-config values into files and the servers of
// inline JSON.
func mcpFlag(a *app, vals []string) (files []string, servers map[string]mcptool.ServerConfig, err error) {
	for _, v := range vals {
		if t := strings.TrimSpace(v); strings.HasPrefix(t, "{") {
			cfg, err := mcptool.ParseConfig([]byte(t), "--mcp-config", a.getenv)
			if err != nil {
				return nil, nil, fmt.Errorf("--mcp-config: %w", err)
			}
			if servers == nil {
				servers = map[string]mcptool.ServerConfig{}
			}
			maps.Copy(servers, cfg.Servers)
			continue
		}
		files = append(files, v)
	}
	return files, servers, nil
}

// openSession assembles the agent of a run; init is what an Agent SDK
// program registered (nil outside stream-json input).
func openSession(ctx context.Context, a *app, f *runFlags, init *streamjson.Init) (*runSession, error) {
	sdk := init != nil
	if init == nil {
		init = &streamjson.Init{}
	}
	protocol, err := texttools.ParseProtocol(f.toolProtocol)
	if err != nil {
		return nil, &exitError{code: 2, err: err}
	}
	dir, err := f.workDir()
	if err != nil {
		return nil, &exitError{code: 2, err: err}
	}
	scopes, err := f.scopes()
	if err != nil {
		return nil, &exitError{code: 2, err: err}
	}
	schema, err := readJSONSchema(f.jsonSchema)
	if err != nil {
		return nil, &exitError{code: 2, err: err}
	}
	if len(schema) == 0 {
		schema = init.JSONSchema
	}
	mcpFiles, mcpServers, err := mcpFlag(a, f.mcpConfig)
	if err != nil {
		return nil, &exitError{code: 2, err: err}
	}
	rs := newRunSettings(a, dir)
	idle, err := settingsIdleTimeout(a, f, rs)
	if err != nil {
		return nil, &exitError{code: 1, err: err}
	}
	prov, model, err := newProviderIdle(a, f.provider, settingsModel(a, f, rs), idle)
	if err != nil {
		return nil, &exitError{code: 1, err: err}
	}
	prov = llm.WithFallbackModel(prov, f.fallbackModel)
	promptTool := f.promptTool
	if promptTool == "stdio" {
		promptTool = "" // the program answers (init.Interaction)
	}
	rc, err := newRunChannel(a, promptTool)
	if err != nil {
		return nil, &exitError{code: 2, err: err}
	}
	if init.Interaction != nil {
		rc.ch, rc.term, rc.person = init.Interaction, nil, nil
	}
	if f.chat != nil {
		rc.ch, rc.term, rc.person = f.chat, nil, f.chat
	}
	if !f.noSettings && !f.trust {
		rc.trust(ctx, a, rs)
	}
	webOpts, err := f.web.options(a, prov, model)
	if err != nil {
		return nil, err
	}
	defs, err := f.agents.definitions()
	if err != nil {
		return nil, &exitError{code: 2, err: err}
	}
	defs = append(defs, init.Agents...)
	for name, sc := range init.MCPServers {
		if mcpServers == nil {
			mcpServers = map[string]mcptool.ServerConfig{}
		}
		mcpServers[name] = sc
	}
	ws, err := openWorkspace(ctx, a, &f.safetyFlags, dir, func(o *workspace.Options) {
		// What keeps the session under $GANTRY_HOME: the durable store
		// (gantry.db, opened when a tool first needs it), the transcript
		// and the checkpoints of the project's files (gantry rewind).
		// Without session persistence, nothing.
		o.Persist, o.NoCheckpoints = !f.noSessionSaved, f.noCheckpoints
		o.ResumeID, o.Continue, o.Fork, o.SessionID = f.resume, f.cont, f.fork, f.sessionID
		o.Builtin.Web = webOpts
		if small := f.web.small(a); small != "" {
			// WebFetch answers its prompt with the small model.
			o.Summarizer = &web.ModelSummarizer{Provider: prov, Model: small}
		}
		// At a terminal, the project's language servers start in the
		// background at once, so that they are warm by the first edit;
		// a headless run starts one only when it edits a file one serves.
		o.Builtin.LSP.Prestart = f.chat != nil
		o.MCPConfigFiles, o.MCPServers, o.StrictMCPConfig, o.Agents = mcpFiles, mcpServers, f.strictMCP, defs
		o.AdditionalDirs = append(o.AdditionalDirs, f.addDirs...)
		o.SettingScopes = scopes
		o.PluginDirs = f.pluginDirs
		if po := f.poolOptions(); po != nil {
			o.Pool = po
		}
		o.ExtraHooks = init.Hooks
		o.CompletionTools = f.completion
		o.Builtin.Trigger = triggerOptions(a)
		o.MCP = &mcptool.Options{Client: &mcp.Implementation{Name: "gantry", Version: buildVersion()}, Hosted: init.Hosted}
		rc.adjust(o)
		// At a terminal, servers of the project's .mcp.json that changed
		// since the user approved them are shown and the user is asked.
		if o.Trusted || f.noSettings || rc.person == nil {
			return
		}
		o.MCPApprove = promptApprover(ctx, mcpApprovals(a), rc.person)
	})
	if err != nil {
		return nil, &exitError{code: 1, err: err}
	}
	if err := rc.opened(ws); err != nil {
		ws.Close()
		return nil, &exitError{code: 2, err: err}
	}
	opts := agent.Options{
		Provider: prov, Model: model, SmallModel: f.web.small(a), Workspace: ws, Closers: []io.Closer{ws},
		ToolProtocol:       protocol,
		SystemPrompt:       cmpOr(init.SystemPrompt, f.systemPrompt),
		AppendSystemPrompt: strings.TrimSpace(f.appendSystem + "\n\n" + init.AppendSystemPrompt),
		MaxTurns:           f.maxTurns, MaxBudgetUSD: f.maxBudgetUSD, ThinkingBudget: f.maxThinking,
		StreamEvents: f.partial, OutputSchema: schema,
		// Headless: background agents report before the run ends (in the
		// terminal they report at the next turn).
		WaitForBackground: f.chat == nil,
		// An SDK program's deny messages and hook reasons reach the model
		// as the program gave them.
		ExecutorOptions: executor.Options{DenialsAsGiven: sdk},
	}
	ag, err := agent.New(ctx, opts)
	if err != nil {
		ws.Close()
		return nil, &exitError{code: 1, err: err}
	}
	return &runSession{ag: ag, ws: ws, rc: rc, model: model}, nil
}

// apiKeySource names where the model key comes from, for system/init.
func apiKeySource(a *app, provider string) string {
	switch {
	case (provider == "" || provider == "anthropic") && a.getenv("ANTHROPIC_API_KEY") != "":
		return "ANTHROPIC_API_KEY"
	case (provider == "" || provider == "openai") && a.getenv("OPENAI_API_KEY") != "":
		return "OPENAI_API_KEY"
	}
	return "none"
}

// apiProvider is the Agent SDK's accountInfo().apiProvider for
// --provider: Anthropic's API is "firstParty"; any other provider is a
// "gateway" to the SDK.
func apiProvider(provider string) string {
	if provider == "" || provider == "anthropic" {
		return "firstParty"
	}
	return "gateway"
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// poolOptions is the pool --tools asks for (nil: the default pool). The
// listed built-ins, and every MCP tool; deferral is off, since ToolSearch
// may not be among them.
func (f *runFlags) poolOptions() *toolset.Options {
	if !f.toolsSet || strings.TrimSpace(f.tools) == "default" {
		return nil
	}
	return &toolset.Options{Allow: append(toolset.SplitNameLists([]string{f.tools}), "mcp__*")}
}

// readJSONSchema reads --json-schema: inline JSON, or @file. Empty is
// no schema; the agent checks the schema itself.
func readJSONSchema(v string) (json.RawMessage, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return nil, nil
	}
	b := []byte(v)
	if name, ok := strings.CutPrefix(v, "@"); ok {
		var err error
		if b, err = os.ReadFile(name); err != nil {
			return nil, fmt.Errorf("--json-schema: %w", err)
		}
	}
	if !json.Valid(b) {
		return nil, errors.New("--json-schema: not valid JSON")
	}
	return b, nil
}

// isTerminal reports whether v is a character device (a terminal).
func isTerminal(v any) bool {
	f, ok := v.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// printer renders run events in one of the output formats: text (the
// result), json (the result, or with --verbose every message) and
// stream-json (every message as a line, in the Agent SDKs' shapes).
type printer struct {
	// denials counts the calls denied or blocked in the run (subagents'
	// too).
	denials  int
	a        *app
	format   string
	verbose  bool
	progress *progress
	enc      *json.Encoder // stream-json lines
	encMu    sync.Mutex    // serialises enc: background commands' ends are written from their goroutines
	unwatch  func()        // stops announcing background commands' ends (nil: none)
	w        *streamjson.Writer
	all      []any // json --verbose
	session  string
}

func newPrinter(a *app, f *runFlags, model string, ws *workspace.Workspace) *printer {
	p := &printer{a: a, format: f.outputFormat, verbose: f.verbose}
	emit := func(v any) error { return nil }
	switch f.outputFormat {
	case "stream-json":
		p.enc = json.NewEncoder(a.stdout)
		emit = p.line
	case "json":
		if f.verbose {
			emit = func(v any) error { p.all = append(p.all, v); return nil }
		}
	}
	info := func() streamjson.Info {
		in := streamjson.Info{Version: buildVersion(), APIKeySource: apiKeySource(a, f.provider)}
		if ws.MCP() != nil {
			for _, st := range ws.MCP().Servers() {
				in.MCPServers = append(in.MCPServers, streamjson.MCPServer{Name: st.Name, Status: string(st.State)})
			}
		}
		if ws.Agents() != nil {
			in.Agents = ws.Agents().Names()
		}
		return in
	}
	p.w = streamjson.NewWriter(emit, streamjson.WriterOptions{Model: model, Partial: f.partial, ToolProgress: f.partial, ReplayUser: f.replayUser, Info: info})
	if p.enc != nil && ws.Tasks() != nil {
		p.unwatch = ws.Tasks().Watch(p.w.JobEnded)
	}
	p.w.Begin()
	if isTerminal(a.stderr) {
		p.progress = newProgress(a.stderr)
	}
	return p
}

func (p *printer) event(ev agent.Event) {
	if p.progress != nil {
		p.progress.event(ev)
	}
	if e, ok := ev.(*agent.InitEvent); ok {
		p.session = e.SessionID
	}
	if e, ok := ev.(*agent.ToolResultEvent); ok {
		p.todos(e)
		p.denied("", e.Outcome)
	}
	if e, ok := ev.(*agent.SubagentEvent); ok {
		if tr, ok := e.Event.(*agent.ToolResultEvent); ok {
			p.denied(e.AgentType, tr.Outcome)
		}
	}
	p.w.Event(ev)
}

// denied counts a call that was denied or blocked and, in text output,
// says so on stderr: which call (its command, file or input) and why.
func (p *printer) denied(agentType string, o *executor.Outcome) {
	if o == nil || (o.Kind != executor.KindDenied && o.Kind != executor.KindBlocked) {
		return
	}
	p.denials++
	if p.format != "text" {
		return
	}
	line := denialLine(agentType, o)
	if p.progress != nil {
		p.progress.line(line)
		return
	}
	fmt.Fprintln(p.a.stderr, line)
}

// denialLine is the stderr line of a denied call: "gantry: denied: Bash
// `rm -rf x` — reason".
func denialLine(agentType string, o *executor.Outcome) string {
	verb := "denied"
	if o.Kind == executor.KindBlocked {
		verb = "blocked by a hook"
	}
	pv := interaction.Preview(o.Name, o.Input)
	var in struct {
		FilePath string `json:"file_path"`
		Path     string `json:"path"`
	}
	if pv.Input != "" && json.Unmarshal(o.Input, &in) == nil && cmpOr(in.FilePath, in.Path) != "" {
		pv.Path = cmpOr(in.FilePath, in.Path) // Read, Glob, …: the file is what a person looks for
	}
	what := cmpOr(pv.Command, cmpOr(pv.Path, cmpOr(pv.URL, pv.Input)))
	line := "gantry: " + verb + ": " + o.Name
	if what != "" {
		line += " `" + oneLine(what, 200) + "`"
	}
	if agentType != "" {
		line += " (subagent " + agentType + ")"
	}
	why := ""
	if d := o.Decision; d != nil && o.Kind == executor.KindDenied {
		why = d.Reason
		if d.Rule != "" && !strings.Contains(why, d.Rule) {
			why = strings.TrimSpace(why + " (rule " + d.Rule + ")")
		}
	}
	if why == "" && o.Result != nil {
		why = firstLine(o.Result.TextContent())
	}
	if why != "" {
		line += " — " + oneLine(why, 300)
	}
	return file.EscapeDisplay(line)
}

func (p *printer) finish(res *agent.ResultEvent, runErr error) {
	if p.progress != nil {
		p.progress.stop()
	}
	switch p.format {
	case "text":
		if res == nil {
			return
		}
		if res.IsError {
			fmt.Fprintln(p.a.stderr, "gantry:", res.Text)
			return
		}
		if len(res.Structured) > 0 {
			fmt.Fprintln(p.a.stdout, string(res.Structured))
			return
		}
		fmt.Fprintln(p.a.stdout, res.Text)
	case "json":
		r := p.w.Result(res, runErr)
		if p.verbose {
			json.NewEncoder(p.a.stdout).Encode(p.all)
			return
		}
		json.NewEncoder(p.a.stdout).Encode(r)
	case "stream-json":
		if p.unwatch != nil {
			// Nothing follows the result: commands the session's end
			// stops are not announced.
			p.unwatch()
		}
		p.w.Result(res, runErr)
	}
}

// line writes v as one stream-json line.
func (p *printer) line(v any) error {
	p.encMu.Lock()
	defer p.encMu.Unlock()
	return p.enc.Encode(v)
}
