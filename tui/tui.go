// Package tui is Gantry's interactive terminal: a person works with an agent
// in their terminal — the reply streams in as Markdown, each tool call is a
// card with its status, description and elapsed time (an edit as a coloured
// diff, a running command's last lines of output), permission asks,
// questions, plans and MCP forms are focused dialogs, and a status line shows
// the model, the permission mode, tokens and cost.
//
// The UI is a consumer only: it renders the agent's events (package agent)
// and answers the requests of the interaction channel (package
// interaction), which it implements ([UI.Channel]). It holds no agent logic,
// so the same events and requests could drive another front end.
//
//	ui := tui.New(tui.Options{Open: open})
//	// open assembles the session with ui.Channel() as its interaction channel
//	err := ui.Run(ctx)
//
// The UI draws inline, below the shell prompt: finished parts of the
// conversation go to the terminal's scrollback (scroll and copy as usual),
// the live part (streaming reply, running calls, dialogs, the input and the
// status line) is redrawn below them.
package tui

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/gantry-dev/gantry/agent"
	"github.com/gantry-dev/gantry/interaction"
	"github.com/gantry-dev/gantry/tool"
	"github.com/gantry-dev/gantry/workspace"
)

// Options configure a [UI]. Open is required; every other zero value is a
// working default.
type Options struct {
	// Open opens the agent session the UI drives. It is called off the UI's
	// goroutine: first with First, then for /clear (a new session),
	// /resume (an earlier session) and /model (the same session with
	// another model). The assembly it does must use [UI.Channel] as the
	// session's interaction channel. The UI closes the agent it replaces
	// and the last one when it ends (agent.Agent.Close, which closes the
	// agent's Closers).
	Open func(ctx context.Context, req OpenRequest) (*Session, error)
	// First is the request of the first Open (resume a session, continue
	// the latest one, a model, a mode).
	First OpenRequest
	// Sessions lists the sessions /resume offers, newest first; nil means
	// /resume takes a session id only. See [StoreSessions].
	Sessions func() ([]SessionInfo, error)
	// Prompt is sent as soon as the session is open ("" = none).
	Prompt string
	// Model is shown in the status line until the session reports its own.
	Model string
	// HistoryFile keeps the prompts typed, so that ↑ brings back those of
	// earlier sessions ("" = this UI's prompts only). It is created 0600.
	HistoryFile string

	// Input and Output are the terminal (nil = os.Stdin and os.Stdout).
	Input  io.Reader
	Output io.Writer
	// Getenv reads the environment (nil = os.Getenv): NO_COLOR turns
	// colour off, TERM and COLORTERM choose the colour profile.
	Getenv func(string) string
	// NoColor turns colour off regardless of the environment.
	NoColor bool
	// Now is the clock (nil = time.Now).
	Now func() time.Time
}

// OpenRequest says which session [Options.Open] opens.
type OpenRequest struct {
	// SessionID resumes that session ("" = a new one, unless Continue).
	SessionID string
	// Continue resumes the latest session of the working directory.
	Continue bool
	// Fork copies the resumed session into a new one.
	Fork bool
	// Model is the model ("" = the default).
	Model string
	// Mode is the permission mode to start in ("" = the workspace's).
	Mode tool.Mode
}

// Session is an open agent session.
type Session struct {
	// Agent runs the prompts (required).
	Agent *agent.Agent
	// Workspace, when set, answers /permissions, /mcp and /agents and
	// holds the custom slash commands.
	Workspace *workspace.Workspace
	// Model is the model in use, for the status line ("" = Options.Model).
	Model string
}

// SessionInfo is one session /resume offers.
type SessionInfo struct {
	ID    string
	Time  time.Time
	Title string // the first prompt, on one line
}

// UI is an interactive terminal session. Create it with [New], hand
// [UI.Channel] to the session's assembly, then [UI.Run].
type UI struct {
	opts Options
	bus  *bus
	ch   *channel
}

// New returns a UI. Nothing is drawn before [UI.Run].
func New(opts Options) *UI {
	b := newBus(nil)
	return &UI{opts: opts, bus: b, ch: &channel{bus: b}}
}

// Channel returns the UI's interaction channel: each request is shown as a
// focused dialog and Ask returns the person's answer. It keeps the
// [interaction.Channel] contract: Ask may be called from any goroutine, and
// several requests wait in turn; an Ask whose ctx ends withdraws its dialog
// and returns ctx.Err(); once the UI has ended every request gets an
// [interaction.NobodyError].
func (u *UI) Channel() interaction.Channel { return u.ch }

// Run draws the UI and handles input until the person quits (Ctrl-C
// twice, Ctrl-D on an empty input, /exit) or ctx ends. It closes the open
// agent before returning.
func (u *UI) Run(ctx context.Context) error {
	if u.opts.Open == nil {
		return errors.New("tui: Options.Open is nil")
	}
	in, out := u.opts.Input, u.opts.Output
	if in == nil {
		in = os.Stdin
	}
	if out == nil {
		out = os.Stdout
	}
	getenv := u.opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	color := !u.opts.NoColor && getenv("NO_COLOR") == ""
	m := newModel(ctx, &u.opts, u.bus, color)
	popts := []tea.ProgramOption{tea.WithContext(ctx), tea.WithInput(in), tea.WithOutput(out),
		tea.WithEnvironment(environ(getenv)), tea.WithoutSignalHandler()}
	if !color {
		popts = append(popts, tea.WithColorProfile(colorprofile.Ascii))
	}
	p := tea.NewProgram(m, popts...)
	u.bus.setPost(p.Send)
	final, err := p.Run()
	u.bus.close()
	if fm, ok := final.(*model); ok && fm != nil {
		m = fm
	}
	m.shutdown()
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		err = nil
	}
	return err
}

// environ gives bubbletea the variables that choose the colour profile.
func environ(getenv func(string) string) []string {
	var env []string
	for _, k := range []string{"TERM", "COLORTERM", "NO_COLOR", "CLICOLOR", "CLICOLOR_FORCE", "TERM_PROGRAM", "TMUX"} {
		if v := getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// Log returns a writer for log output while the UI runs (a provider's
// retries, warnings, the standard logger): each line it is given is shown
// in the UI's status area — the latest one, until the next prompt starts
// or the turn ends — instead of being written over the screen. Before Run
// draws and after it ends, lines go to fallback (nil: dropped). It is safe
// for concurrent use.
func (u *UI) Log(fallback io.Writer) io.Writer { return &logWriter{bus: u.bus, fallback: fallback} }

// logMsg is one line of log output for the status area.
type logMsg struct{ text string }

type logWriter struct {
	bus      *bus
	fallback io.Writer
	mu       sync.Mutex
	partial  []byte
}

func (w *logWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.partial = append(w.partial, p...)
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			break
		}
		line := string(w.partial[:i+1])
		w.partial = w.partial[i+1:]
		text := strings.TrimSpace(line)
		if text == "" {
			continue
		}
		if !w.bus.send(logMsg{text: text}) && w.fallback != nil {
			w.fallback.Write([]byte(line))
		}
	}
	return len(p), nil
}
