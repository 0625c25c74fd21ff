package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gantry-dev/gantry/internal/procenv"
	"github.com/gantry-dev/gantry/settings"
	"github.com/gantry-dev/gantry/tool"
)

// DefaultTimeout bounds one hook when its configuration gives none.
const DefaultTimeout = 60 * time.Second

// maxOutput bounds what is kept of a command hook's stdout and stderr.
const maxOutput = 1 << 20

// ErrNoVerdict is wrapped by the error [Manager.Run] returns when a hook
// could not give a verdict for a PreToolUse call: it timed out, could not
// start (including exit status 126 or 127 from the shell), crashed
// (a callback error or panic), or printed JSON that does not parse. The
// executor blocks the call.
var ErrNoVerdict = errors.New("hook: no verdict")

// Callback is a hook written in Go. It returns the hook's output (nil for
// "nothing to say") or an error, which counts like a command hook that
// failed (see [ErrNoVerdict]).
type Callback func(ctx context.Context, in *Input) (*Output, error)

// Events lists every event in a stable order.
func Events() []Event {
	return []Event{PreToolUse, PostToolUse, PostToolUseFailure, PermissionRequest, UserPromptSubmit, Stop,
		SubagentStart, SubagentStop, SessionStart, SessionEnd, PreCompact, Notification}
}

// Valid reports whether e is one of [Events].
func (e Event) Valid() bool { return slices.Contains(Events(), e) }

// Options configures a [Manager]. The zero value has no hooks.
type Options struct {
	// Hooks are the command hooks from settings (settings.Settings.Hooks),
	// keyed by event name.
	Hooks map[string][]settings.HookMatcher
	// Env is added to the environment of command hooks (settings "env");
	// Gantry's own provider keys ([procenv.Own]) never are.
	Env map[string]string
	// Shell runs a command hook as Shell -c command; default "sh".
	Shell string
	// Timeout is the default per-hook timeout; default [DefaultTimeout].
	Timeout time.Duration
	// Environ is the base environment of command hooks; default
	// os.Environ(). Only the variables AllowEnv names pass, never one that
	// looks like a credential (see [procenv.Build]).
	Environ []string
	// AllowEnv are the variables (path.Match patterns) command hooks get
	// from Environ. Nil means [procenv.DefaultAllow].
	AllowEnv []string
	// Sandbox contains the command hooks that ask for it ("sandbox": true
	// in their settings) before they start: it rewrites cmd for the
	// session's OS sandbox with workDir writable (the Gantry session wires
	// sandbox.Sandbox here) and returns what to call once the hook has
	// exited. Nil means the session has no sandbox: such hooks then fail
	// (a PreToolUse hook that cannot run blocks the call).
	Sandbox func(cmd *exec.Cmd, workDir string) (release func(), err error)
}

// entry is one registered hook.
type entry struct {
	event   Event
	matcher string
	re      *regexp.Regexp // nil: every subject
	name    string
	command string
	timeout time.Duration
	cb      Callback
	sandbox bool // run in Config.Sandbox
}

// Manager is the [Runner] of command hooks from settings and Go callbacks.
// It is safe for concurrent use; hooks added with [Manager.On] apply to
// later runs.
type Manager struct {
	cfg Options

	mu      sync.RWMutex
	entries []*entry
}

var _ Runner = (*Manager)(nil)

// NewManager returns a Manager for cfg. An unknown event name, a matcher
// that is not a valid regular expression, or a hook of a type other than
// "command" is an error (a hook that silently never runs is a hole).
func NewManager(cfg Options) (*Manager, error) {
	if cfg.Shell == "" {
		cfg.Shell = "sh"
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Environ == nil {
		cfg.Environ = os.Environ()
	}
	m := &Manager{cfg: cfg}
	var errs []error
	events := make([]string, 0, len(cfg.Hooks))
	for ev := range cfg.Hooks {
		events = append(events, ev)
	}
	slices.Sort(events)
	for _, ev := range events {
		if !Event(ev).Valid() {
			errs = append(errs, fmt.Errorf("hook: unknown event %q", ev))
			continue
		}
		for _, hm := range cfg.Hooks[ev] {
			re, err := compileMatcher(hm.Matcher)
			if err != nil {
				errs = append(errs, fmt.Errorf("hook: %s matcher %q: %w", ev, hm.Matcher, err))
				continue
			}
			for _, h := range hm.Hooks {
				if h.Type != "command" {
					errs = append(errs, fmt.Errorf("hook: %s: unsupported hook type %q (want \"command\")", ev, h.Type))
					continue
				}
				if strings.TrimSpace(h.Command) == "" {
					errs = append(errs, fmt.Errorf("hook: %s: empty command", ev))
					continue
				}
				to := cfg.Timeout
				if h.Timeout > 0 {
					to = time.Duration(h.Timeout * float64(time.Second))
				}
				m.entries = append(m.entries, &entry{event: Event(ev), matcher: hm.Matcher, re: re, name: h.Command, command: h.Command, timeout: to, sandbox: h.Sandbox})
			}
		}
	}
	return m, errors.Join(errs...)
}

// compileMatcher compiles a matcher: "" and "*" match everything; anything
// else is a regular expression matched against the whole subject
// ("Edit|Write", "mcp__github__.*").
func compileMatcher(s string) (*regexp.Regexp, error) {
	if s == "" || s == "*" {
		return nil, nil
	}
	return regexp.Compile("^(?:" + s + ")$")
}

// On registers a Go callback for event, for subjects matching matcher
// (see [NewManager] for the syntax).
func (m *Manager) On(event Event, matcher string, cb Callback) error {
	if !event.Valid() {
		return fmt.Errorf("hook: unknown event %q", event)
	}
	if cb == nil {
		return errors.New("hook: nil callback")
	}
	re, err := compileMatcher(matcher)
	if err != nil {
		return fmt.Errorf("hook: matcher %q: %w", matcher, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, e := range m.entries {
		if e.cb != nil {
			n++
		}
	}
	m.entries = append(m.entries, &entry{event: event, matcher: matcher, re: re, name: fmt.Sprintf("callback %d (%s %s)", n+1, event, matcher), cb: cb, timeout: m.cfg.Timeout})
	return nil
}

// Has reports whether any hook is registered for event.
func (m *Manager) Has(event Event) bool {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return slices.ContainsFunc(m.entries, func(e *entry) bool { return e.event == event })
}

// Handles implements [EventFilter]: whether any hook is registered for ev.
func (m *Manager) Handles(ev Event) bool { return m.Has(ev) }

// subject is what an event's matchers are matched against: the tool name
// for tool events, the source for SessionStart, the trigger for
// PreCompact, the reason for SessionEnd; other events have none, and every
// hook of theirs runs.
func subject(in *Input) (string, bool) {
	switch in.Event {
	case PreToolUse, PostToolUse, PostToolUseFailure, PermissionRequest:
		return in.ToolName, true
	case SessionStart:
		return in.Source, true
	case PreCompact:
		return in.Trigger, true
	case SessionEnd:
		return in.Reason, true
	case Elicitation, ElicitationResult:
		return in.MCPServerName, true
	}
	return "", false
}

func (m *Manager) match(in *Input) []*entry {
	subj, has := subject(in)
	m.mu.RLock()
	defer m.mu.RUnlock()
	var out []*entry
	for _, e := range m.entries {
		if e.event != in.Event {
			continue
		}
		if has && e.re != nil && !e.re.MatchString(subj) {
			continue
		}
		out = append(out, e)
	}
	return out
}

// result is what one hook produced.
type result struct {
	name string
	out  *Output
	// fail: the hook gave no verdict (timeout, could not start, crash,
	// bad JSON).
	fail error
	// warn: a non-blocking error shown to the user.
	warn string
}

// Run implements [Runner]: every hook matching in runs, in parallel; their
// outputs are combined (see [Combine]). It returns nil, nil when no hook
// matches.
//
// A hook that cannot give a verdict (see [ErrNoVerdict]) makes Run return
// an error for PreToolUse (the executor blocks the call); for every other
// event it is reported in Output.SystemMessage and the others' outputs
// stand. Exit status 2 of a command hook blocks (stderr is the reason);
// any other non-zero status is a non-blocking error shown to the user.
func (m *Manager) Run(ctx context.Context, in *Input) (*Output, error) {
	if in == nil {
		return nil, errors.New("hook: nil input")
	}
	hooks := m.match(in)
	if len(hooks) == 0 {
		return nil, nil
	}
	payload, err := json.Marshal(in)
	if err != nil {
		return nil, fmt.Errorf("hook: encode input: %w", err)
	}
	results := make([]result, len(hooks))
	var wg sync.WaitGroup
	for i, h := range hooks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = m.runOne(ctx, h, in, payload)
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var fails []error
	var warns []string
	outs := make([]named, 0, len(results))
	for _, r := range results {
		switch {
		case r.fail != nil:
			fails = append(fails, r.fail)
		case r.warn != "":
			warns = append(warns, r.warn)
		}
		if r.out != nil {
			outs = append(outs, named{r.name, r.out})
		}
	}
	if len(fails) > 0 && in.Event == PreToolUse {
		return nil, fmt.Errorf("%w: %w", ErrNoVerdict, errors.Join(fails...))
	}
	for _, f := range fails {
		warns = append(warns, f.Error())
	}
	out := combine(in.Event, outs)
	if len(warns) > 0 {
		out.SystemMessage = joinNonEmpty("\n", append([]string{out.SystemMessage}, warns...)...)
	}
	return out, nil
}

type named struct {
	name string
	out  *Output
}

// Combine merges the outputs of several hooks for one event: the stricter
// permission decision wins (deny > ask > allow); any Block blocks (reasons
// joined); any Continue=false stops; texts are joined in order; two hooks
// rewriting the input differently block the call with a reason naming
// both, rather than one silently winning.
func Combine(event Event, outs ...*Output) *Output {
	ns := make([]named, 0, len(outs))
	for i, o := range outs {
		if o != nil {
			ns = append(ns, named{fmt.Sprintf("hook %d", i+1), o})
		}
	}
	return combine(event, ns)
}

func combine(event Event, outs []named) *Output {
	out := &Output{}
	var reasons, ctxs, stops, msgs []string
	var inputFrom string
	for _, n := range outs {
		o := n.out
		out.Decision = tool.Stricter(out.Decision, o.Decision)
		if o.Block {
			out.Block = true
		}
		if o.Block || o.Decision == tool.Deny || o.Decision == tool.Ask {
			reasons = append(reasons, o.Reason)
		}
		if o.UpdatedInput != nil {
			switch {
			case out.UpdatedInput == nil:
				out.UpdatedInput, inputFrom = o.UpdatedInput, n.name
			case !jsonEqual(out.UpdatedInput, o.UpdatedInput):
				out.Block = true
				out.Decision = tool.Deny
				reasons = append(reasons, fmt.Sprintf("hooks disagree on the rewritten input (%s and %s); the call is blocked", inputFrom, n.name))
			}
		}
		ctxs = append(ctxs, o.AdditionalContext)
		if o.ReplaceResult != nil && out.ReplaceResult == nil {
			out.ReplaceResult = o.ReplaceResult
		}
		if o.Continue != nil && !*o.Continue {
			f := false
			out.Continue = &f
			stops = append(stops, o.StopReason)
		}
		out.SuppressOutput = out.SuppressOutput || o.SuppressOutput
		msgs = append(msgs, o.SystemMessage)
		if e := o.Elicitation; e != nil && (out.Elicitation == nil || elicitRank(e.Action) > elicitRank(out.Elicitation.Action)) {
			out.Elicitation = e
		}
	}
	if out.Block && (event == Elicitation || event == ElicitationResult) &&
		(out.Elicitation == nil || elicitRank(out.Elicitation.Action) < elicitRank("decline")) {
		out.Elicitation = &ElicitationAnswer{Action: "decline"}
	}
	if out.Block {
		out.UpdatedInput = nil
		if event == PreToolUse || event == PermissionRequest {
			out.Decision = tool.Deny
		}
	}
	out.Reason = joinNonEmpty("\n", reasons...)
	out.AdditionalContext = joinNonEmpty("\n", ctxs...)
	out.StopReason = joinNonEmpty("\n", stops...)
	out.SystemMessage = joinNonEmpty("\n", msgs...)
	return out
}

// elicitRank orders elicitation answers from the most giving to the most
// refusing: accept, decline, cancel.
func elicitRank(action string) int {
	switch action {
	case "cancel":
		return 2
	case "decline":
		return 1
	}
	return 0
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(a, b)
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

func joinNonEmpty(sep string, xs ...string) string {
	var keep []string
	for _, x := range xs {
		if strings.TrimSpace(x) != "" {
			keep = append(keep, x)
		}
	}
	return strings.Join(keep, sep)
}

func (m *Manager) runOne(ctx context.Context, h *entry, in *Input, payload []byte) (r result) {
	r.name = h.name
	ctx, cancel := context.WithTimeout(ctx, h.timeout)
	defer cancel()
	if h.cb != nil {
		defer func() {
			if p := recover(); p != nil {
				r = result{name: h.name, fail: fmt.Errorf("hook %s panicked: %v", h.name, p)}
			}
		}()
		cp := *in
		out, err := h.cb(ctx, &cp)
		if err != nil {
			return result{name: h.name, fail: fmt.Errorf("hook %s: %w", h.name, err)}
		}
		r.out = out
		return r
	}
	return m.runCommand(ctx, h, in, payload)
}

// limitedBuffer keeps the first max bytes written to it.
type limitedBuffer struct {
	buf bytes.Buffer
	max int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.max - l.buf.Len(); room > 0 {
		l.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

func (m *Manager) runCommand(ctx context.Context, h *entry, in *Input, payload []byte) result {
	r := result{name: h.name}
	cmd := exec.CommandContext(ctx, m.cfg.Shell, "-c", h.command)
	cmd.Dir = in.CWD
	var set []string
	if in.CWD != "" {
		set = []string{"GANTRY_PROJECT_DIR=" + in.CWD, "CLAUDE_PROJECT_DIR=" + in.CWD}
	}
	env := procenv.Build(m.cfg.Environ, procenv.Options{Allow: m.cfg.AllowEnv, Explicit: m.cfg.Env, Set: set})
	cmd.Env = env
	cmd.Stdin = bytes.NewReader(payload)
	stdout := &limitedBuffer{max: maxOutput}
	stderr := &limitedBuffer{max: maxOutput}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	setProcessGroup(cmd)
	cmd.WaitDelay = 2 * time.Second
	if h.sandbox {
		if m.cfg.Sandbox == nil {
			r.fail = fmt.Errorf("hook %q asks for the sandbox (\"sandbox\": true) but the session has none (sandbox.enabled is off)", h.name)
			return r
		}
		release, err := m.cfg.Sandbox(cmd, in.CWD)
		if err != nil {
			r.fail = fmt.Errorf("hook %q: sandbox: %w", h.name, err)
			return r
		}
		defer release()
	}
	err := cmd.Run()
	errText := strings.TrimSpace(stderr.buf.String())
	if ctx.Err() != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			r.fail = fmt.Errorf("hook %q timed out after %s", h.name, h.timeout)
		} else {
			r.fail = fmt.Errorf("hook %q: %w", h.name, ctx.Err())
		}
		return r
	}
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		code := exit.ExitCode()
		switch code {
		case 2:
			r.out = &Output{Block: true, Reason: orDefault(errText, fmt.Sprintf("blocked by hook %q", h.name))}
			if in.Event == PreToolUse || in.Event == PermissionRequest {
				r.out.Decision = tool.Deny
			}
			return r
		case 126, 127:
			r.fail = fmt.Errorf("hook %q could not start (exit %d): %s", h.name, code, errText)
			return r
		case -1:
			r.fail = fmt.Errorf("hook %q was killed: %v", h.name, err)
			return r
		}
		r.warn = fmt.Sprintf("hook %q failed (exit %d): %s", h.name, code, errText)
		return r
	default:
		r.fail = fmt.Errorf("hook %q could not start: %w", h.name, err)
		return r
	}
	out, err := parseStdout(in.Event, stdout.buf.Bytes())
	if err != nil {
		r.fail = fmt.Errorf("hook %q: %w", h.name, err)
		return r
	}
	r.out = out
	return r
}

func orDefault(s, def string) string {
	if s != "" {
		return s
	}
	return def
}

// wireOutput is the JSON a command hook may print on stdout (Claude Code's
// shape).
type wireOutput struct {
	Continue       *bool  `json:"continue"`
	StopReason     string `json:"stopReason"`
	SuppressOutput bool   `json:"suppressOutput"`
	SystemMessage  string `json:"systemMessage"`
	// Decision is "block" (or the older "approve" for PreToolUse).
	Decision string `json:"decision"`
	Reason   string `json:"reason"`

	HookSpecificOutput *struct {
		HookEventName            string          `json:"hookEventName"`
		PermissionDecision       string          `json:"permissionDecision"`
		PermissionDecisionReason string          `json:"permissionDecisionReason"`
		UpdatedInput             json.RawMessage `json:"updatedInput"`
		AdditionalContext        string          `json:"additionalContext"`
		// Elicitation's and ElicitationResult's answer.
		Action  string         `json:"action"`
		Content map[string]any `json:"content"`
		// PermissionRequest's form.
		Decision *struct {
			Behavior     string          `json:"behavior"`
			UpdatedInput json.RawMessage `json:"updatedInput"`
			Message      string          `json:"message"`
		} `json:"decision"`
	} `json:"hookSpecificOutput"`
}

// ParseOutput parses what a command hook printed on stdout after exit
// status 0, for event. Output that is not a JSON object is plain text:
// added to the model's context for UserPromptSubmit and SessionStart,
// ignored otherwise. A JSON object that does not parse, or a permission
// decision other than allow, deny or ask, is an error.
func ParseOutput(event Event, stdout []byte) (*Output, error) { return parseStdout(event, stdout) }

func parseStdout(event Event, stdout []byte) (*Output, error) {
	trimmed := bytes.TrimSpace(stdout)
	if len(trimmed) == 0 {
		return &Output{}, nil
	}
	if trimmed[0] != '{' {
		if event == UserPromptSubmit || event == SessionStart {
			return &Output{AdditionalContext: string(trimmed)}, nil
		}
		return &Output{}, nil
	}
	var w wireOutput
	if err := json.Unmarshal(trimmed, &w); err != nil {
		return nil, fmt.Errorf("stdout is not valid hook JSON: %w", err)
	}
	out := &Output{Continue: w.Continue, StopReason: w.StopReason, SuppressOutput: w.SuppressOutput, SystemMessage: w.SystemMessage}
	switch w.Decision {
	case "":
	case "block":
		out.Block, out.Reason = true, orDefault(w.Reason, "blocked by a hook")
		if event == PreToolUse || event == PermissionRequest {
			out.Decision = tool.Deny
		}
	case "approve":
		if event == PreToolUse {
			out.Decision, out.Reason = tool.Allow, w.Reason
		}
	default:
		return nil, fmt.Errorf("unknown decision %q (want \"block\")", w.Decision)
	}
	if hs := w.HookSpecificOutput; hs != nil {
		if hs.HookEventName != "" && Event(hs.HookEventName) != event {
			return nil, fmt.Errorf("hookSpecificOutput is for %s, not %s", hs.HookEventName, event)
		}
		out.AdditionalContext = hs.AdditionalContext
		if hs.Action != "" {
			switch hs.Action {
			case "accept", "decline", "cancel":
				out.Elicitation = &ElicitationAnswer{Action: hs.Action, Content: hs.Content}
			default:
				return nil, fmt.Errorf("unknown elicitation action %q (want accept, decline or cancel)", hs.Action)
			}
		}
		behavior, reason, upd := hs.PermissionDecision, hs.PermissionDecisionReason, hs.UpdatedInput
		if d := hs.Decision; d != nil {
			behavior, reason = d.Behavior, d.Message
			if d.UpdatedInput != nil {
				upd = d.UpdatedInput
			}
		}
		switch tool.Behavior(behavior) {
		case tool.Passthrough:
		case tool.Allow, tool.Ask, tool.Deny:
			out.Decision = tool.Stricter(out.Decision, tool.Behavior(behavior))
			if reason != "" {
				out.Reason = joinNonEmpty("\n", out.Reason, reason)
			}
		default:
			return nil, fmt.Errorf("unknown permissionDecision %q (want allow, deny or ask)", behavior)
		}
		if len(upd) > 0 && string(upd) != "null" {
			if !bytes.HasPrefix(bytes.TrimSpace(upd), []byte("{")) {
				return nil, errors.New("updatedInput must be a JSON object")
			}
			out.UpdatedInput = upd
		}
	}
	return out, nil
}
