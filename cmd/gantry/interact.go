package main

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/gantry-dev/gantry/interaction"
	"github.com/gantry-dev/gantry/tool"
	"github.com/gantry-dev/gantry/workspace"
)

// runChannel is the interaction channel of a run: the --permission-prompt-tool
// (an MCP tool answers, for CI), else the terminal when stdin and stderr are
// one, else nil (nobody: asks are denied, questions report that nobody can
// answer).
type runChannel struct {
	ch   interaction.Channel
	term *interaction.Terminal
	// person asks the person at the terminal (folder trust, changed MCP
	// servers): the line terminal of a headless run, or the interactive
	// UI; nil when nobody is there.
	person  interaction.Channel
	ws      atomic.Pointer[workspace.Workspace]
	printer atomic.Pointer[printer]
	name    string // --permission-prompt-tool
}

func newRunChannel(a *app, promptTool string) (*runChannel, error) {
	rc := &runChannel{name: promptTool}
	switch {
	case promptTool != "":
		if !strings.HasPrefix(promptTool, "mcp__") {
			return nil, fmt.Errorf("--permission-prompt-tool %q: name an MCP tool (mcp__server__tool)", promptTool)
		}
		rc.ch = &interaction.PromptTool{Tool: rc.lookup}
	case isTerminal(a.stdin) && isTerminal(a.stderr):
		rc.term = interaction.NewTerminal(a.stdin, a.stderr)
		rc.term.Pause = rc.pause
		rc.ch, rc.person = rc.term, rc.term
	}
	return rc, nil
}

// lookup finds the prompt tool among the MCP servers' tools (it is not in
// the model's pool).
func (rc *runChannel) lookup() (tool.Tool, error) {
	ws := rc.ws.Load()
	if ws == nil || ws.MCP() == nil {
		return nil, fmt.Errorf("%s: no MCP server is configured (give its server with --mcp-config)", rc.name)
	}
	for _, t := range ws.MCP().Tools() {
		if t.Spec().Name == rc.name {
			return t, nil
		}
	}
	return nil, fmt.Errorf("%s: no such MCP tool (is its server running?)", rc.name)
}

// adjust puts the channel into the workspace options; the prompt tool is
// hidden from the model (it answers for the user, the model does not call
// it).
func (rc *runChannel) adjust(o *workspace.Options) {
	if rc.ch != nil {
		o.Interaction = rc.ch
	}
	if rc.name != "" {
		o.Deny = append(o.Deny, rc.name)
	}
}

// opened records the workspace and checks the prompt tool exists.
func (rc *runChannel) opened(ws *workspace.Workspace) error {
	rc.ws.Store(ws)
	if rc.name == "" {
		return nil
	}
	_, err := rc.lookup()
	return err
}

// pause stops the progress spinner while the terminal asks.
func (rc *runChannel) pause() func() {
	if p := rc.printer.Load(); p != nil && p.progress != nil {
		return p.progress.hold()
	}
	return func() {}
}

// trust asks the terminal whether to trust the run's directory (when its settings hold
// something that only applies once trusted) and records the answer.
func (rc *runChannel) trust(ctx context.Context, a *app, rs *runSettings) {
	if rc.person == nil {
		return
	}
	dir := rs.dir
	st, err := rs.load()
	if err != nil || st.Trusted || len(st.Ignored()) == 0 {
		return
	}
	ans, err := interaction.AskTrust(ctx, rc.person, &interaction.TrustRequest{Dir: dir, Ignored: st.Ignored(), Changed: st.ConfigChanged})
	if err != nil || !ans.Trust {
		return
	}
	if err := trustStore(a).Trust(dir); err != nil {
		fmt.Fprintln(a.stderr, "gantry: recording trust:", err)
	}
}
