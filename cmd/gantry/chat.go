package main

import (
	"context"
	"errors"
	"log"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/gantry-dev/gantry/settings"
	"github.com/gantry-dev/gantry/tool"
	"github.com/gantry-dev/gantry/transcript"
	"github.com/gantry-dev/gantry/tui"
)

// newChatCmd is `gantry chat [PROMPT]`: the interactive terminal. Bare
// `gantry` (and `gantry PROMPT`) on a terminal open it too.
func newChatCmd(a *app) *cobra.Command {
	f := &runFlags{}
	cmd := &cobra.Command{
		Use:   "chat [PROMPT]",
		Short: "Work with an agent in the terminal (the interactive UI; bare gantry opens it too)",
		Long: `Open the interactive terminal: type prompts, watch the reply and each tool
call, approve calls, answer the agent's questions, review its plan, interrupt
it with Esc. PROMPT, if given, is sent first. /help inside lists the keys and
commands.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f.settingSourcesSet = cmd.Flags().Changed("setting-sources")
			return runChat(cmd.Context(), a, f, args)
		},
	}
	addRunFlags(cmd, f)
	return cmd
}

// interactive reports whether the CLI talks to a person: standard input and
// output are a terminal.
func interactive(a *app) bool { return isTerminal(a.stdin) && isTerminal(a.stdout) }

// runChat runs the interactive terminal over the session assembly of a
// headless run (openSession), with the UI as the interaction channel.
func runChat(ctx context.Context, a *app, f *runFlags, args []string) error {
	if !interactive(a) {
		return &exitError{code: 2, err: errors.New("the interactive terminal needs a terminal on standard input and output (use gantry -p for a headless run)")}
	}
	switch {
	case f.promptTool != "":
		return &exitError{code: 2, err: errors.New("--permission-prompt-tool is for headless runs (gantry -p); in the terminal you answer")}
	case f.inputFormat != "text" || f.outputFormat != "text":
		return &exitError{code: 2, err: errors.New("--input-format and --output-format are for headless runs (gantry -p)")}
	}
	if err := f.check(); err != nil {
		return &exitError{code: 2, err: err}
	}
	dir, err := f.workDir()
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	// The provider is checked before the UI starts: without a model there
	// is nothing to do, and the error reads better on a plain terminal.
	if _, _, err := newProvider(a, f.provider, settingsModel(a, f, newRunSettings(a, dir))); err != nil {
		return &exitError{code: 1, err: err}
	}
	var sessions func() ([]tui.SessionInfo, error)
	var history string
	if !f.noSessionSaved {
		home, err := transcript.DefaultHome(a.getenv)
		if err != nil {
			return err
		}
		sessions = tui.StoreSessions(transcript.NewStore(home), dir)
		history = filepath.Join(settings.GantryHome(a.getenv, a.getenv("HOME")), "prompt-history.jsonl")
	}
	var mu sync.Mutex
	var ui *tui.UI
	// While the UI runs it owns the screen: what the session would write
	// on stderr (a provider's retries, warnings) goes to its status area.
	la := *a
	a = &la
	opened := false // --session-id names the first session only
	open := func(ctx context.Context, req tui.OpenRequest) (*tui.Session, error) {
		g := *f
		g.chat = ui.Channel()
		mu.Lock()
		if opened {
			g.sessionID = ""
		}
		opened = true
		mu.Unlock()
		g.resume, g.cont, g.fork = req.SessionID, req.Continue, req.Fork
		if req.Model != "" {
			g.model = req.Model
		}
		if req.Mode != "" {
			g.mode = string(req.Mode)
		}
		s, err := openSession(ctx, a, &g, nil)
		if err != nil {
			var ee *exitError
			if errors.As(err, &ee) {
				err = ee.err
			}
			return nil, err
		}
		return &tui.Session{Agent: s.ag, Workspace: s.ws, Model: s.model}, nil
	}
	in, _ := a.stdin.(*os.File)
	out, _ := a.stdout.(*os.File)
	var prompt string
	if len(args) == 1 {
		prompt = strings.TrimSpace(args[0])
	}
	ui = tui.New(tui.Options{
		Open:        open,
		First:       tui.OpenRequest{SessionID: f.resume, Continue: f.cont, Fork: f.fork, Mode: tool.Mode(f.mode)},
		Sessions:    sessions,
		Prompt:      prompt,
		Model:       f.model,
		HistoryFile: history,
		Input:       in,
		Output:      out,
		Getenv:      a.getenv,
	})
	stderr := la.stderr
	la.stderr = ui.Log(stderr)
	if stderr == os.Stderr {
		log.SetOutput(la.stderr) // slog.Default and the standard logger
		defer log.SetOutput(os.Stderr)
	}
	return ui.Run(ctx)
}
