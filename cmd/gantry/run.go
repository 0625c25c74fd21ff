package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/gantry-dev/gantry/agent"
	"github.com/gantry-dev/gantry/builtin/todo"
	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/llm/texttools"
	"github.com/gantry-dev/gantry/mcptool"
	"github.com/gantry-dev/gantry/session"
	"github.com/gantry-dev/gantry/store"
	"github.com/gantry-dev/gantry/tool"
	"github.com/gantry-dev/gantry/workspace"
)

// runFlags are the flags of `gantry -p` and `gantry run`.
type runFlags struct {
	safetyFlags
	print          bool
	outputFormat   string
	model          string
	provider       string
	maxTurns       int
	maxBudgetUSD   float64
	resume         string
	cont           bool
	fork           bool
	appendSystem   string
	systemPrompt   string
	mcpConfig      []string
	noSessionSaved bool
	web            webFlags
	promptTool     string
	agents         agentsFlag
	toolProtocol   string
	completion     bool
	jsonSchema     string
	noCheckpoints  bool
	replayUser     bool
}

func addRunFlags(cmd *cobra.Command, f *runFlags) {
	fl := cmd.Flags()
	fl.StringVar(&f.outputFormat, "output-format", "text", "output format: text, json or stream-json")
	fl.StringVar(&f.model, "model", "", "model name (default: the provider's default, or GANTRY_MODEL)")
	fl.StringVar(&f.provider, "provider", "", "model provider: anthropic or openai (default: from the environment)")
	fl.StringVar(&f.mode, "permission-mode", "", "permission mode: default, acceptEdits, plan, dontAsk, bypassPermissions")
	fl.StringArrayVar(&f.allowed, "allowedTools", nil, `permission allow rules, e.g. "Read,Bash(git diff *)"`)
	fl.StringArrayVar(&f.disallowed, "disallowedTools", nil, `permission deny rules; a bare tool name hides the tool`)
	fl.IntVar(&f.maxTurns, "max-turns", 0, "maximum model turns (default 100)")
	fl.Float64Var(&f.maxBudgetUSD, "max-budget-usd", 0, "stop once the session cost reaches this many US dollars")
	fl.StringVarP(&f.resume, "resume", "r", "", "resume the session with this id")
	fl.BoolVarP(&f.cont, "continue", "c", false, "continue the latest session in the working directory")
	fl.BoolVar(&f.fork, "fork-session", false, "with --resume or --continue, continue in a new session (a copy)")
	fl.StringVar(&f.cwd, "cwd", "", "working directory (default: the current directory)")
	fl.StringVar(&f.appendSystem, "append-system-prompt", "", "text appended to the system prompt")
	fl.StringVar(&f.systemPrompt, "system-prompt", "", "replace the built-in instructions of the system prompt")
	fl.StringSliceVar(&f.mcpConfig, "mcp-config", nil, "MCP server configuration files (.mcp.json format)")
	fl.BoolVar(&f.trust, "trust", false, "trust the working directory (its settings, hooks and MCP servers take effect) and approve its .mcp.json servers as they are now")
	fl.BoolVar(&f.noSettings, "no-settings", false, "ignore settings files (only flags apply)")
	fl.BoolVar(&f.noSessionSaved, "no-session-persistence", false, "do not write a transcript")
	fl.StringVar(&f.promptTool, "permission-prompt-tool", "", "an MCP tool (mcp__server__tool) that answers permission asks, questions and plan approval instead of a person")
	fl.StringVar(&f.toolProtocol, "tool-protocol", "native", "how tools reach the model: native, text (described in the prompt, called with XML-style tags; for models without tool calling) or auto")
	fl.BoolVar(&f.completion, "completion-tools", false, "offer attempt_completion (ends the run with its result) and new_task (restarts the conversation from a hand-off summary)")
	fl.StringVar(&f.jsonSchema, "json-schema", "", "a JSON Schema the final answer must match (inline JSON or @file): the run ends with a StructuredOutput call, printed as structured_output in json and stream-json results")
	fl.BoolVar(&f.noCheckpoints, "no-checkpoints", false, "do not record checkpoints of the project's files (gantry rewind undoes a run's changes with them)")
	fl.BoolVar(&f.replayUser, "replay-user-messages", false, "stream-json: also print the prompt as a user message, with its uuid (the id of the checkpoint before it)")
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
		if !f.print && len(args) == 0 {
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

func runPrompt(ctx context.Context, a *app, f *runFlags, args []string) error {
	switch f.outputFormat {
	case "text", "json", "stream-json":
	default:
		return &exitError{code: 2, err: fmt.Errorf("unknown --output-format %q (want text, json or stream-json)", f.outputFormat)}
	}
	protocol, err := texttools.ParseProtocol(f.toolProtocol)
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	schema, err := readJSONSchema(f.jsonSchema)
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	prompt, err := readPrompt(a, args)
	if err != nil {
		return err
	}
	dir, err := f.workDir()
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	prov, model, err := newProvider(a, f.provider, settingsModel(a, f, dir))
	if err != nil {
		return &exitError{code: 1, err: err}
	}
	rc, err := newRunChannel(a, f.promptTool)
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	if !f.noSettings && !f.trust {
		rc.trust(ctx, a, dir)
	}
	webOpts, err := f.web.options(a, prov, model)
	if err != nil {
		return err
	}
	// The durable store ($GANTRY_HOME/gantry.db), opened only when a tool
	// first needs it; without session persistence, an in-memory one.
	var db store.Store = new(store.Memory)
	if !f.noSessionSaved {
		path, err := storePath(a)
		if err != nil {
			return err
		}
		db = store.LazySQLite(path, store.SQLiteOptions{})
	}
	defs, err := f.agents.definitions()
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	ws, err := openWorkspace(ctx, a, &f.safetyFlags, dir, func(o *workspace.Options) {
		o.Store = db
		o.Builtin.Web = webOpts
		o.MCPConfigFiles, o.Agents = f.mcpConfig, defs
		o.CompletionTools = f.completion
		o.Builtin.Trigger = triggerOptions(a)
		o.MCP = &mcptool.Options{Client: &mcp.Implementation{Name: "gantry", Version: version}}
		rc.adjust(o)
		// At a terminal, servers of the project's .mcp.json that changed
		// since the user approved them are shown and the user is asked.
		if o.Trusted || f.noSettings || rc.term == nil {
			return
		}
		o.MCPApprove = promptApprover(ctx, mcpApprovals(a), rc.term)
	})
	if err != nil {
		db.Close()
		return &exitError{code: 1, err: err}
	}
	if err := rc.opened(ws); err != nil {
		ws.Close()
		db.Close()
		return &exitError{code: 2, err: err}
	}
	opts := agent.Options{
		Provider: prov, Model: model, SmallModel: f.web.small(a), Workspace: ws, Closers: []io.Closer{ws, db},
		ToolProtocol: protocol,
		Reminders:    []agent.Reminder{&todo.Reminder{}},
		SystemPrompt: f.systemPrompt, AppendSystemPrompt: f.appendSystem,
		MaxTurns: f.maxTurns, MaxBudgetUSD: f.maxBudgetUSD,
		OutputSchema: schema,
		SessionID:    f.resume, Continue: f.cont, Fork: f.fork,
		// Headless: background agents report before the run ends.
		WaitForBackground: true,
	}
	if !f.noSessionSaved {
		home, err := session.DefaultHome(a.getenv)
		if err != nil {
			ws.Close()
			db.Close()
			return err
		}
		opts.Store = session.NewStore(home)
		if !f.noCheckpoints {
			// Checkpoints of the project's files: gantry rewind.
			if st, _, err := openCheckpoints(a, dir); err != nil {
				fmt.Fprintln(a.stderr, "gantry: checkpoints are off:", err)
			} else {
				opts.Checkpoints = st
				defer pruneCheckpoints(context.WithoutCancel(ctx), st, opts.Store, dir)
			}
		}
	}
	ag, err := agent.New(ctx, opts)
	if err != nil {
		ws.Close()
		db.Close()
		return &exitError{code: 1, err: err}
	}
	defer ag.Close()

	out := newPrinter(a, f.outputFormat, model)
	out.replayUser = f.replayUser
	rc.printer.Store(out)
	var res *agent.ResultEvent
	var runErr error
	for ev, err := range ag.Run(ctx, prompt) {
		if err != nil {
			runErr = err
			continue
		}
		if r, ok := ev.(*agent.ResultEvent); ok {
			res = r
		}
		out.event(ev)
	}
	out.finish(res)
	if res == nil {
		if runErr == nil {
			runErr = errors.New("the run ended without a result")
		}
		return &exitError{code: 1, err: runErr}
	}
	if res.IsError {
		// The result (with its reason) was printed; exit non-zero without
		// repeating it, except in text mode where it went to stdout only.
		if f.outputFormat == "text" && runErr != nil {
			return &exitError{code: 1, err: runErr}
		}
		return &exitError{code: 1, err: errors.New("")}
	}
	return nil
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

// printer renders run events in one of the output formats.
type printer struct {
	a        *app
	format   string
	model    string
	progress *progress
	enc      *json.Encoder
	start    time.Time
	session  string
	// replayUser prints the prompt's user message too (stream-json).
	replayUser bool
}

func hasToolResult(m llm.Message) bool {
	for _, b := range m.Content {
		if b.Type == llm.TypeToolResult {
			return true
		}
	}
	return false
}

func newPrinter(a *app, format, model string) *printer {
	p := &printer{a: a, format: format, model: model, start: time.Now()}
	if format == "stream-json" {
		p.enc = json.NewEncoder(a.stdout)
	}
	if isTerminal(a.stderr) {
		p.progress = newProgress(a.stderr)
	}
	return p
}

// streamLine is one object of stream-json output, shaped like Claude Code's
// headless output.
type streamLine struct {
	Type           string       `json:"type"`
	Subtype        string       `json:"subtype,omitempty"`
	SessionID      string       `json:"session_id,omitempty"`
	CWD            string       `json:"cwd,omitempty"`
	Tools          []string     `json:"tools,omitempty"`
	Model          string       `json:"model,omitempty"`
	PermissionMode tool.Mode    `json:"permissionMode,omitempty"`
	Message        *llm.Message `json:"message,omitempty"`
	// ParentToolUseID is null for the main agent's messages (a subagent's
	// would name the Agent call), as in Claude Code's output.
	ParentToolUseID *string `json:"parent_tool_use_id"`
	// UUID is a message's id in the transcript; the prompt's is also the
	// id of the checkpoint recorded before it (gantry rewind ID).
	UUID string `json:"uuid,omitempty"`
}

// resultJSON is the json output and the last stream-json line.
type resultJSON struct {
	Type         string    `json:"type"`
	Subtype      string    `json:"subtype"`
	IsError      bool      `json:"is_error"`
	Result       string    `json:"result"`
	SessionID    string    `json:"session_id"`
	NumTurns     int       `json:"num_turns"`
	DurationMS   int64     `json:"duration_ms"`
	TotalCostUSD float64   `json:"total_cost_usd"`
	Usage        llm.Usage `json:"usage"`
	StopReason   string    `json:"stop_reason,omitempty"`
	// StructuredOutput is the final answer of a run with --json-schema.
	StructuredOutput json.RawMessage `json:"structured_output,omitempty"`
}

func (p *printer) event(ev agent.Event) {
	if p.progress != nil {
		p.progress.event(ev)
	}
	if e, ok := ev.(*agent.ToolResultEvent); ok {
		p.todos(e)
	}
	if p.enc == nil {
		return
	}
	switch e := ev.(type) {
	case *agent.InitEvent:
		p.session = e.SessionID
		p.enc.Encode(streamLine{Type: "system", Subtype: "init", SessionID: e.SessionID, CWD: e.WorkDir, Tools: e.Tools, Model: p.model, PermissionMode: e.Mode})
	case *agent.MessageEvent:
		p.message(e.Message, e.UUID, nil)
	case *agent.SubagentEvent:
		if m, ok := e.Event.(*agent.MessageEvent); ok {
			id := e.ParentToolUseID
			p.message(m.Message, m.UUID, &id)
		}
	}
}

// message prints a message line; parent names the Agent call of a
// subagent's message (nil for the main agent's).
func (p *printer) message(m llm.Message, uuid string, parent *string) {
	typ := "user"
	if m.Role == llm.RoleAssistant {
		typ = "assistant"
	} else if !hasToolResult(m) && parent == nil && !p.replayUser {
		return // the prompt itself is echoed only with --replay-user-messages
	}
	p.enc.Encode(streamLine{Type: typ, SessionID: p.session, Message: &m, UUID: uuid, ParentToolUseID: parent})
}

func (p *printer) finish(res *agent.ResultEvent) {
	if p.progress != nil {
		p.progress.stop()
	}
	if res == nil {
		return
	}
	rj := resultJSON{
		Type: "result", Subtype: res.Subtype, IsError: res.IsError, Result: res.Text, SessionID: res.SessionID,
		NumTurns: res.NumTurns, DurationMS: time.Since(p.start).Milliseconds(), TotalCostUSD: res.CostUSD,
		Usage: res.Usage, StopReason: string(res.StopReason), StructuredOutput: res.Structured,
	}
	switch p.format {
	case "text":
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
		json.NewEncoder(p.a.stdout).Encode(rj)
	case "stream-json":
		p.enc.Encode(rj)
	}
}
