package streamjson

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gantry-dev/gantry/agent"
	"github.com/gantry-dev/gantry/builtin/agenttool"
	"github.com/gantry-dev/gantry/builtin/file"
	"github.com/gantry-dev/gantry/checkpoint"
	"github.com/gantry-dev/gantry/hook"
	"github.com/gantry-dev/gantry/interaction"
	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/mcptool"
	"github.com/gantry-dev/gantry/permission"
	"github.com/gantry-dev/gantry/tool"
	"github.com/gantry-dev/gantry/workspace"
)

// Init is what the SDK program registered in its initialize request, in
// the form a session is assembled from. Its zero value (no initialize:
// a plain stream-json pipeline) registers nothing.
type Init struct {
	// Hooks runs the program's hook callbacks (nil: none); put it in
	// workspace.Options.ExtraHooks.
	Hooks hook.Runner
	// MCPServers are the program's in-process MCP servers (type sdk) and
	// Hosted their transport; put them in workspace.Options.MCPServers and
	// mcptool.Options.Hosted.
	MCPServers map[string]mcptool.ServerConfig
	Hosted     func(name string) (mcp.Transport, error)
	// Interaction asks the program's canUseTool callback (set when
	// Options.PermissionPrompt is); put it in workspace.Options.Interaction.
	Interaction interaction.Channel
	// SystemPrompt replaces and AppendSystemPrompt extends the system
	// prompt ("" = unchanged).
	SystemPrompt, AppendSystemPrompt string
	// Agents are agent types the program defined.
	Agents []agenttool.Definition
	// JSONSchema is the program's output schema, if any (as sent).
	JSONSchema json.RawMessage
}

// Options configure [Serve]. Open is required.
type Options struct {
	// In and Out are the protocol's streams (the process's stdin and
	// stdout).
	In  io.Reader
	Out io.Writer
	// Open assembles the session's agent once the program's initialize
	// request (or, without one, the first user message) arrived. The
	// agent should run with Options.StreamEvents when Writer.Partial is
	// set. Serve closes the agent when the session ends; the workspace
	// (used for the MCP servers' status and the agent types) is the
	// agent's to close.
	Open func(ctx context.Context, init *Init) (*agent.Agent, *workspace.Workspace, error)
	// Writer configures the messages (Writer.Info is filled by Serve).
	Writer WriterOptions
	// PermissionPrompt sends permission asks, questions and plan approvals
	// to the program (can_use_tool): --permission-prompt-tool stdio.
	PermissionPrompt bool
	// AllowBypass lets set_permission_mode switch to bypassPermissions
	// (--allow-dangerously-skip-permissions, or a session started in
	// that mode).
	AllowBypass bool
	// Version is Gantry's version; APIKeySource where the model key came
	// from (system/init). APIProvider is accountInfo()'s apiProvider
	// ("firstParty" for Anthropic's API, "gateway" for another provider;
	// "" = not said).
	Version, APIKeySource, APIProvider string
	// Getenv looks up the environment for the root check of
	// bypassPermissions (nil = os.Getenv).
	Getenv func(string) string
	// Warn receives problems with the input that do not end the session
	// (nil discards).
	Warn func(msg string)
	// ClaudeConfigDir, if set, is where the session's conversation is
	// mirrored in the reference agent's transcript format for the SDK's
	// session helpers (see [Mirror]; "" = no mirror).
	ClaudeConfigDir string
}

// initRequest is the initialize control request.
type initRequest struct {
	Hooks              map[string][]HookMatcher `json:"hooks"`
	SDKMCPServers      []string                 `json:"sdkMcpServers"`
	JSONSchema         json.RawMessage          `json:"jsonSchema"`
	SystemPrompt       json.RawMessage          `json:"systemPrompt"`
	AppendSystemPrompt string                   `json:"appendSystemPrompt"`
	Agents             json.RawMessage          `json:"agents"`
}

// server is the state of one Serve.
type server struct {
	opts Options
	conn *Conn
	out  *Writer

	mu       sync.Mutex
	init     *Init
	initErr  error // a bad initialize: reported to it and to every turn
	inits    int
	queue    []*UserInput
	done     bool // the input ended
	wake     chan struct{}
	cancel   context.CancelFunc // of the running turn
	openOnce sync.Once
	opened   chan struct{}
	answered chan struct{} // closed once the first initialize was answered
	ag       *agent.Agent
	ws       *workspace.Workspace
	openErr  error
	mirror   *Mirror // nil: none
	unwatch  func()  // stops announcing background commands' ends (nil: none)
	// ctxTokens is the size of the main agent's last model exchange
	// (prompt and output tokens), for get_context_usage.
	ctxTokens int
}

// Serve runs a stream-json session: it reads the program's messages from
// opts.In until the input ends, answers its control requests, runs each
// user message as a turn of one session (in order; a message that
// arrives during a turn waits for it) and writes every turn's messages
// and its result to opts.Out. It returns nil once the input has ended and
// the last turn finished, or the error that kept the session from
// opening. Cancelling ctx interrupts the running turn and ends Serve.
func Serve(ctx context.Context, opts Options) error {
	if opts.Open == nil {
		return errors.New("streamjson: Options.Open is required")
	}
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	s := &server{opts: opts, wake: make(chan struct{}, 1), opened: make(chan struct{}), answered: make(chan struct{})}
	var answerOnce sync.Once
	s.conn = NewConn(opts.In, opts.Out, ConnOptions{Handle: s.handle, Inspect: s.inspect, User: s.enqueue, Warn: opts.Warn,
		Answered: func(req *ControlRequest) {
			if req.Subtype() == "initialize" {
				answerOnce.Do(func() { close(s.answered) })
			}
		}})
	wo := opts.Writer
	wo.Info = s.info
	s.out = NewWriter(s.conn.Write, wo)

	readErr := make(chan error, 1)
	go func() {
		err := s.conn.Run(ctx)
		s.mu.Lock()
		s.done = true
		s.mu.Unlock()
		s.signal()
		readErr <- err
	}()
	err := s.turns(ctx)
	s.closeAgent()
	if rerr := <-readErr; err == nil {
		err = rerr
	}
	return err
}

func (s *server) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *server) enqueue(u *UserInput) {
	s.mu.Lock()
	s.queue = append(s.queue, u)
	s.mu.Unlock()
	s.signal()
}

// next waits for the next user message; nil when the input ended and
// nothing is queued, or ctx ended.
func (s *server) next(ctx context.Context) *UserInput {
	for {
		s.mu.Lock()
		if len(s.queue) > 0 {
			u := s.queue[0]
			s.queue = s.queue[1:]
			s.mu.Unlock()
			return u
		}
		done := s.done
		s.mu.Unlock()
		if done {
			return nil
		}
		select {
		case <-s.wake:
		case <-ctx.Done():
			return nil
		}
	}
}

// turns runs the user messages one after another.
func (s *server) turns(ctx context.Context) error {
	for {
		u := s.next(ctx)
		if u == nil {
			return nil
		}
		ag, _, err := s.open(ctx)
		if err != nil {
			s.out.Begin()
			s.out.Result(nil, err)
			return err
		}
		s.mu.Lock()
		initialized := s.inits > 0
		s.mu.Unlock()
		if initialized {
			// The program reads the initialize response before the turn's
			// messages.
			select {
			case <-s.answered:
			case <-ctx.Done():
				return nil
			}
		}
		s.turn(ctx, ag, u)
		if err := s.out.Err(); err != nil {
			return fmt.Errorf("streamjson: writing output: %w", err)
		}
	}
}

// turn runs one user message.
func (s *server) turn(ctx context.Context, ag *agent.Agent, u *UserInput) {
	s.out.Begin()
	blocks, err := PromptBlocks(u.Message.Content)
	if err != nil {
		s.out.Result(nil, err)
		return
	}
	tctx, cancel := context.WithCancel(ctx)
	s.mu.Lock()
	s.cancel = cancel
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.cancel = nil
		s.mu.Unlock()
		cancel()
	}()
	blocks, undo, done := s.runCommand(tctx, ag, blocks)
	defer undo()
	if done {
		return
	}
	var res *agent.ResultEvent
	var runErr error
	for ev, err := range ag.RunMessage(tctx, blocks...) {
		if err != nil {
			runErr = err
			continue
		}
		if r, ok := ev.(*agent.ResultEvent); ok {
			res = r
			continue
		}
		if m, ok := ev.(*agent.MessageEvent); ok && m.Reply != nil {
			s.mu.Lock()
			s.ctxTokens = m.Reply.Usage.PromptTokens() + m.Reply.Usage.OutputTokens
			s.mu.Unlock()
		}
		s.mirror.Event(ev)
		s.out.Event(ev)
	}
	s.out.Result(res, runErr)
}

// inspect sees control requests in input order: an initialize is turned
// into the session's Init before any later user message is queued.
func (s *server) inspect(req *ControlRequest) {
	if req.Subtype() != "initialize" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inits++
	if s.inits > 1 || s.init != nil {
		return
	}
	in, err := s.parseInit(req.Request)
	if err != nil {
		s.initErr = err
		return
	}
	s.init = in
}

func (s *server) parseInit(raw json.RawMessage) (*Init, error) {
	var r initRequest
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("initialize: %w", err)
	}
	in := &Init{JSONSchema: r.JSONSchema, AppendSystemPrompt: r.AppendSystemPrompt}
	if len(r.SystemPrompt) > 0 && string(r.SystemPrompt) != "null" {
		var parts []string
		if err := json.Unmarshal(r.SystemPrompt, &parts); err != nil {
			var one string
			if err := json.Unmarshal(r.SystemPrompt, &one); err != nil {
				return nil, fmt.Errorf("initialize: systemPrompt is neither a string nor a list of strings")
			}
			parts = []string{one}
		}
		for i, p := range parts {
			if i > 0 {
				in.SystemPrompt += "\n\n"
			}
			in.SystemPrompt += p
		}
	}
	if len(r.Agents) > 0 && string(r.Agents) != "null" {
		defs, err := agenttool.ParseJSON(r.Agents, "sdk")
		if err != nil {
			return nil, fmt.Errorf("initialize: agents: %w", err)
		}
		in.Agents = defs
	}
	hooks, skipped, err := Hooks(s.conn, r.Hooks)
	if err != nil {
		return nil, fmt.Errorf("initialize: %w", err)
	}
	if len(skipped) > 0 && s.opts.Warn != nil {
		slices.Sort(skipped)
		s.opts.Warn(fmt.Sprintf("hook events Gantry does not have are ignored: %v", skipped))
	}
	in.Hooks = hooks
	hosted := map[string]bool{}
	for _, name := range r.SDKMCPServers {
		if in.MCPServers == nil {
			in.MCPServers = map[string]mcptool.ServerConfig{}
		}
		in.MCPServers[name] = mcptool.ServerConfig{Type: mcptool.TypeSDK, Source: "sdk"}
		hosted[name] = true
	}
	in.Hosted = func(name string) (mcp.Transport, error) {
		if !hosted[name] {
			return nil, fmt.Errorf("the SDK program does not host an MCP server named %q", name)
		}
		return &MCPTransport{Conn: s.conn, Server: name}, nil
	}
	return in, nil
}

// open assembles the session once.
func (s *server) open(ctx context.Context) (*agent.Agent, *workspace.Workspace, error) {
	s.openOnce.Do(func() {
		defer close(s.opened)
		s.mu.Lock()
		in, initErr := s.init, s.initErr
		s.mu.Unlock()
		if initErr != nil {
			s.openErr = initErr
			return
		}
		if in == nil {
			in = &Init{}
		}
		if s.opts.PermissionPrompt {
			// PushNotification's notifications are system/notification
			// messages of the stream.
			in.Interaction = NotifyStream(s.conn, &PermissionChannel{Conn: s.conn, SetMode: s.setMode})
		}
		s.ag, s.ws, s.openErr = s.opts.Open(context.WithoutCancel(ctx), in)
		if s.openErr == nil && s.ws != nil && s.ws.Tasks() != nil {
			s.unwatch = s.ws.Tasks().Watch(s.out.JobEnded)
		}
		if s.openErr == nil && s.opts.ClaudeConfigDir != "" {
			dir := ""
			if s.ws != nil {
				dir = s.ws.Dir()
			} else {
				dir, _ = os.Getwd()
			}
			s.mirror = &Mirror{ConfigDir: s.opts.ClaudeConfigDir, Dir: dir, Version: s.opts.Version, Warn: s.opts.Warn}
		}
	})
	<-s.opened
	return s.ag, s.ws, s.openErr
}

func (s *server) closeAgent() {
	if s.unwatch != nil {
		// Commands the session's end stops are not announced: the
		// program stopped reading.
		s.unwatch()
	}
	if s.ag != nil {
		_ = s.ag.Close()
	}
	_ = s.mirror.Close()
}

// info is system/init's extra facts.
func (s *server) info() Info {
	info := Info{Version: s.opts.Version, APIKeySource: s.opts.APIKeySource, SlashCommands: commandNames(s.commands())}
	if s.ws == nil {
		return info
	}
	info.MCPServers = s.mcpServers()
	for _, p := range s.ws.Plugins() {
		info.Plugins = append(info.Plugins, Plugin{Name: p.Name, Path: p.Dir})
	}
	if c := s.ws.Agents(); c != nil {
		info.Agents = c.Names()
	}
	return info
}

// mcpStatus maps a connection state to the SDK's status words.
func mcpStatus(st mcptool.State) string {
	switch st {
	case mcptool.StateConnected:
		return "connected"
	case mcptool.StateFailed:
		return "failed"
	}
	return "pending"
}

func (s *server) mcpServers() []MCPServer {
	out := []MCPServer{}
	if s.ws == nil || s.ws.MCP() == nil {
		return out
	}
	for _, st := range s.ws.MCP().Servers() {
		out = append(out, MCPServer{Name: st.Name, Status: mcpStatus(st.State)})
	}
	return out
}

func (s *server) setMode(m tool.Mode) error {
	if !m.Valid() {
		return fmt.Errorf("unknown permission mode %q (want one of %v)", m, tool.Modes())
	}
	if m == tool.ModeBypassPermissions && !s.opts.AllowBypass {
		return errors.New("bypassPermissions needs a session started with --allow-dangerously-skip-permissions or --permission-mode bypassPermissions")
	}
	if err := permission.CheckBypass(m, os.Geteuid(), s.opts.Getenv); err != nil {
		return err
	}
	if s.ag == nil {
		return errors.New("the session is not open")
	}
	s.ag.SetMode(m)
	return nil
}

// handle answers the program's control requests.
func (s *server) handle(ctx context.Context, req *ControlRequest) (any, error) {
	switch req.Subtype() {
	case "initialize":
		return s.initialize(ctx)
	case "interrupt":
		s.mu.Lock()
		cancel := s.cancel
		s.mu.Unlock()
		if cancel != nil {
			cancel()
		}
		return map[string]any{"still_queued": []string{}}, nil
	case "set_permission_mode":
		var r struct {
			Mode tool.Mode `json:"mode"`
		}
		if err := json.Unmarshal(req.Request, &r); err != nil {
			return nil, err
		}
		if _, _, err := s.open(ctx); err != nil {
			return nil, err
		}
		if err := s.setMode(r.Mode); err != nil {
			return nil, err
		}
		return map[string]any{"mode": r.Mode}, nil
	case "set_model":
		var r struct {
			Model *string `json:"model"`
		}
		if err := json.Unmarshal(req.Request, &r); err != nil {
			return nil, err
		}
		ag, _, err := s.open(ctx)
		if err != nil {
			return nil, err
		}
		model := ""
		if r.Model != nil && *r.Model != "default" {
			model = *r.Model
		}
		ag.SetModel(model)
		return map[string]any{}, nil
	case "set_max_thinking_tokens":
		var r struct {
			Max *int `json:"max_thinking_tokens"`
		}
		if err := json.Unmarshal(req.Request, &r); err != nil {
			return nil, err
		}
		ag, _, err := s.open(ctx)
		if err != nil {
			return nil, err
		}
		n := -1 // null: the session's own budget
		if r.Max != nil {
			if *r.Max < 0 {
				return nil, fmt.Errorf("max_thinking_tokens must not be negative (got %d)", *r.Max)
			}
			n = *r.Max
		}
		ag.SetThinkingBudget(n)
		return map[string]any{}, nil
	case "get_context_usage":
		ag, _, err := s.open(ctx)
		if err != nil {
			return nil, err
		}
		return s.contextUsage(ag), nil
	case "mcp_status":
		if _, _, err := s.open(ctx); err != nil {
			return nil, err
		}
		return s.mcpStatusResponse(), nil
	case "rewind_files":
		var r struct {
			UserMessageID string `json:"user_message_id"`
			DryRun        bool   `json:"dry_run"`
		}
		if err := json.Unmarshal(req.Request, &r); err != nil {
			return nil, err
		}
		ag, _, err := s.open(ctx)
		if err != nil {
			return nil, err
		}
		return rewindFiles(ctx, ag, r.UserMessageID, r.DryRun), nil
	}
	return nil, fmt.Errorf("unsupported control request %q", req.Subtype())
}

// contextUsage answers get_context_usage in the SDK's shape. Gantry knows
// the size of the last model exchange as the provider counted it (system
// prompt, tools and messages together), not a breakdown: one "used"
// category and the free space of the context window.
func (s *server) contextUsage(ag *agent.Agent) map[string]any {
	s.mu.Lock()
	used := s.ctxTokens
	s.mu.Unlock()
	window := agent.DefaultContextWindow
	free := max(window-used, 0)
	pct := 0.0
	if window > 0 {
		pct = float64(used) * 100 / float64(window)
	}
	type category struct {
		ID     string `json:"id"`
		Name   string `json:"name"`
		Tokens int    `json:"tokens"`
		Color  string `json:"color"`
		Kind   string `json:"kind"`
	}
	agents := []map[string]any{}
	if s.ws != nil && s.ws.Agents() != nil {
		for _, d := range s.ws.Agents().List() {
			agents = append(agents, map[string]any{"agentType": d.Name, "source": d.Source, "tokens": 0})
		}
	}
	return map[string]any{
		"categories": []category{
			{ID: "messages", Name: "Conversation (system prompt, tools and messages)", Tokens: used, Color: "purple", Kind: "used"},
			{ID: "free_space", Name: "Free space", Tokens: free, Color: "promptBorder", Kind: "free"},
		},
		"totalTokens":  used,
		"maxTokens":    window,
		"rawMaxTokens": window,
		"percentage":   pct,
		"gridRows":     [][]any{},
		"model":        ag.Model(),
		"memoryFiles":  []any{},
		"mcpTools":     []any{},
		"agents":       agents,
	}
}

// rewindFiles answers rewind_files through Agent.RewindFiles (the one
// rewind of every front end), in the SDK's RewindFilesResult shape.
func rewindFiles(ctx context.Context, ag *agent.Agent, id string, dryRun bool) map[string]any {
	rep, err := ag.RewindFiles(ctx, id, checkpoint.RewindOptions{DryRun: dryRun, CountLines: file.LineChanges})
	if err != nil {
		return map[string]any{"canRewind": false, "error": err.Error()}
	}
	changed := slices.Concat(rep.Restored, rep.Removed, rep.ModeChanged)
	for i, p := range changed {
		if !filepath.IsAbs(p) {
			changed[i] = filepath.Join(ag.Env().WorkDir, p) // the SDK's paths are absolute
		}
	}
	slices.Sort(changed)
	if changed == nil {
		changed = []string{}
	}
	return map[string]any{"canRewind": true, "filesChanged": changed, "insertions": rep.Insertions, "deletions": rep.Deletions}
}

// initialize answers the initialize request once the session is open.
func (s *server) initialize(ctx context.Context) (any, error) {
	s.mu.Lock()
	n, initErr := s.inits, s.initErr
	hooks := s.init != nil && s.init.Hooks != nil
	s.mu.Unlock()
	if n > 1 {
		return nil, errors.New("already initialized")
	}
	if initErr != nil {
		return nil, initErr
	}
	ag, ws, err := s.open(ctx)
	if err != nil {
		return nil, err
	}
	type agentInfo struct {
		Name        string `json:"name"`
		Description string `json:"description"`
		Model       string `json:"model,omitempty"`
	}
	agents := []agentInfo{}
	if ws != nil && ws.Agents() != nil {
		for _, d := range ws.Agents().List() {
			agents = append(agents, agentInfo{Name: d.Name, Description: d.Description, Model: d.Model})
		}
	}
	resp := map[string]any{
		"commands":                slashCommands(s.commands()),
		"agents":                  agents,
		"output_style":            "default",
		"available_output_styles": []string{"default"},
		"models":                  supportedModels(ctx, ag),
		"account":                 s.account(),
		"claude_code_version":     s.opts.Version,
		"pid":                     os.Getpid(),
	}
	if hooks {
		resp["hooks_applied"] = true
	}
	return resp, nil
}

// modelListTimeout bounds the provider's model list in initialize.
const modelListTimeout = 10 * time.Second

// supportedModels is initialize's models (the SDK's supportedModels()):
// the provider's model list when it serves one (llm.ModelLister), else —
// or when listing fails or lists none — the session's model alone.
func supportedModels(ctx context.Context, ag *agent.Agent) []map[string]string {
	current := ag.Model()
	ctx, cancel := context.WithTimeout(ctx, modelListTimeout)
	defer cancel()
	list, err := llm.ListModels(ctx, ag.Provider())
	if err != nil || len(list) == 0 {
		return []map[string]string{{"value": current, "displayName": current, "description": "the session's model"}}
	}
	out := make([]map[string]string, 0, len(list))
	for _, m := range list {
		name := cmp.Or(m.DisplayName, m.ID)
		desc := "a model of the provider"
		if m.ID == current {
			desc = "the session's model"
		}
		out = append(out, map[string]string{"value": m.ID, "displayName": name, "description": desc})
	}
	return out
}

// account is initialize's account (the SDK's accountInfo()): where the
// key came from and which kind of provider serves the session.
func (s *server) account() map[string]string {
	acc := map[string]string{"apiKeySource": s.opts.APIKeySource}
	if p := s.opts.APIProvider; p != "" {
		acc["apiProvider"] = p
	}
	return acc
}

func (s *server) mcpStatusResponse() any {
	type info struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	}
	type entry struct {
		Name       string `json:"name"`
		Status     string `json:"status"`
		ServerInfo *info  `json:"serverInfo,omitempty"`
		Error      string `json:"error,omitempty"`
		Scope      string `json:"scope,omitempty"`
	}
	out := []entry{}
	if s.ws != nil && s.ws.MCP() != nil {
		for _, st := range s.ws.MCP().Servers() {
			e := entry{Name: st.Name, Status: mcpStatus(st.State), Error: st.Err, Scope: st.Source}
			if st.ServerName != "" {
				e.ServerInfo = &info{Name: st.ServerName, Version: st.ServerVersion}
			}
			out = append(out, e)
		}
	}
	return map[string]any{"mcpServers": out}
}
