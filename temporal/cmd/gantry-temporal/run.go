package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"

	"github.com/gantry-dev/gantry/interaction"
	"github.com/gantry-dev/gantry/temporal/durable"
	"github.com/gantry-dev/gantry/tool"
	"github.com/gantry-dev/gantry/toolset"
)

// runFlags are gantry -p's run flags with the same meaning; they travel
// with the run in its durable.Spec.
type runFlags struct {
	prompt, cwd, mode, model, outputFormat string
	allowed, disallowed                    []string
	maxTurns                               int
	maxBudgetUSD                           float64
	systemPrompt, appendSystem             string
	noSettings, trust, noSession           bool
	wait                                   bool
	runID                                  string
	resume                                 string
}

func newRunCmd(a *app) *cobra.Command {
	var c conn
	f := &runFlags{}
	cmd := &cobra.Command{
		Use:   "run [-p PROMPT | PROMPT]",
		Short: "Start one run (with --wait: follow its events and print its result)",
		Long: `Start one run of PROMPT (or standard input) on the workers of the task queue.
Without --wait it prints the run id and returns; with --wait it follows the
run's events and prints them as gantry -p does (--output-format), asks
permission questions at a terminal, and exits non-zero if the run failed.

The run flags mean what they mean for gantry -p and travel with the run to
whichever worker executes it. --cwd must exist on the workers.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCmd(cmd.Context(), a, &c, f, args)
		},
	}
	c.add(cmd, a)
	fl := cmd.Flags()
	fl.StringVarP(&f.prompt, "print", "p", "", "the prompt")
	fl.BoolVar(&f.wait, "wait", false, "follow the run's events and wait for its result")
	fl.StringVar(&f.runID, "run-id", "", "the run id (workflow id; default: a new UUID)")
	fl.StringVarP(&f.resume, "resume", "r", "", "continue the conversation of an ended run (its run id) in a new run")
	fl.StringVar(&f.outputFormat, "output-format", "text", "output format: text, json or stream-json")
	fl.StringVar(&f.model, "model", "", "model name (default: the worker's)")
	fl.StringVar(&f.mode, "permission-mode", "", "permission mode: default, acceptEdits, plan, dontAsk, bypassPermissions")
	fl.StringArrayVar(&f.allowed, "allowedTools", nil, `permission allow rules, e.g. "Read,Bash(git diff *)"`)
	fl.StringArrayVar(&f.disallowed, "disallowedTools", nil, "permission deny rules; a bare tool name hides the tool")
	fl.IntVar(&f.maxTurns, "max-turns", 0, "maximum model turns (default 100)")
	fl.Float64Var(&f.maxBudgetUSD, "max-budget-usd", 0, "stop once the run's cost reaches this many US dollars")
	fl.StringVar(&f.cwd, "cwd", "", "working directory on the workers (default: the current directory)")
	fl.StringVar(&f.systemPrompt, "system-prompt", "", "replace the built-in instructions of the system prompt")
	fl.StringVar(&f.appendSystem, "append-system-prompt", "", "text appended to the system prompt")
	fl.BoolVar(&f.noSettings, "no-settings", false, "ignore settings files (only flags apply)")
	fl.BoolVar(&f.trust, "trust", false, "trust the working directory (its settings, hooks and MCP servers take effect)")
	fl.BoolVar(&f.noSession, "no-session-persistence", false, "do not write a transcript")
	return cmd
}

// spec turns the run flags into the run's spec.
func (f *runFlags) spec() (durable.Spec, error) {
	dir := f.cwd
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return durable.Spec{}, err
		}
		dir = wd
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return durable.Spec{}, err
	}
	switch tool.Mode(f.mode) {
	case "", tool.ModeDefault, tool.ModeAcceptEdits, tool.ModePlan, tool.ModeDontAsk, tool.ModeBypassPermissions:
	default:
		return durable.Spec{}, fmt.Errorf("unknown --permission-mode %q", f.mode)
	}
	var allow, deny []string
	for _, v := range f.allowed {
		allow = append(allow, toolset.SplitNames(v)...)
	}
	for _, v := range f.disallowed {
		deny = append(deny, toolset.SplitNames(v)...)
	}
	return durable.Spec{
		WorkDir: dir, Model: f.model, PermissionMode: tool.Mode(f.mode), Allow: allow, Deny: deny,
		NoSettings: f.noSettings, Trusted: f.trust, MaxTurns: f.maxTurns, MaxBudgetUSD: f.maxBudgetUSD,
		SystemPrompt: f.systemPrompt, AppendSystemPrompt: f.appendSystem, NoTranscript: f.noSession,
	}, nil
}

func runCmd(ctx context.Context, a *app, c *conn, f *runFlags, args []string) error {
	switch f.outputFormat {
	case "text", "json", "stream-json":
	default:
		return &exitError{code: 2, err: fmt.Errorf("unknown --output-format %q (want text, json or stream-json)", f.outputFormat)}
	}
	prompt := f.prompt
	if prompt == "" && len(args) == 1 {
		prompt = args[0]
	}
	if strings.TrimSpace(prompt) == "" && !isTerminal(a.stdin) {
		b, err := io.ReadAll(io.LimitReader(a.stdin, 10<<20))
		if err != nil {
			return err
		}
		prompt = string(b)
	}
	if strings.TrimSpace(prompt) == "" {
		return &exitError{code: 2, err: errors.New("no prompt: give one with -p, as an argument or on standard input")}
	}
	spec, err := f.spec()
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	cl, err := c.dial(a)
	if err != nil {
		return err
	}
	defer cl.Close()
	id, err := durable.Start(ctx, cl, spec, prompt, durable.StartOptions{RunID: f.runID, TaskQueue: c.queue, Resume: f.resume})
	if err != nil {
		return err
	}
	if !f.wait {
		if f.outputFormat == "text" {
			fmt.Fprintln(a.stdout, id)
		} else {
			json.NewEncoder(a.stdout).Encode(map[string]string{"type": "started", "run_id": id})
		}
		return nil
	}
	p := &printer{a: a, format: f.outputFormat, runID: id}
	var res *durable.Result
	for ev, err := range durable.Follow(ctx, cl, id, durable.FollowOptions{}) {
		if err != nil {
			return fmt.Errorf("run %s: %w", id, err)
		}
		p.event(ev)
		switch ev.Type {
		case durable.EventAsk:
			if err := p.ask(ctx, cl, id, ev.Ask); err != nil {
				return err
			}
		case durable.EventResult:
			res = ev.Result
		}
	}
	if res == nil {
		return errors.New("the run ended without a result")
	}
	p.finish(res)
	if res.IsError {
		return &exitError{code: 1, err: errors.New("")}
	}
	return nil
}

// isTerminal reports whether v is a character device.
func isTerminal(v any) bool {
	f, ok := v.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// printer writes a run's events in one of gantry -p's formats.
type printer struct {
	a      *app
	format string
	runID  string
}

func (p *printer) event(ev durable.Event) {
	switch p.format {
	case "stream-json":
		out := map[string]any{"type": ev.Type, "seq": ev.Seq, "run_id": p.runID}
		switch ev.Type {
		case durable.EventMessage:
			out["type"] = string(ev.Message.Role)
			out["message"] = ev.Message
		case durable.EventInit:
			out["type"], out["subtype"], out["model"], out["tools"] = "system", "init", ev.Text, ev.Tools
		case durable.EventToolResult:
			out["tool"] = ev.Tool
		case durable.EventAsk, durable.EventAnswered:
			out["ask"] = ev.Ask
		case durable.EventNotice:
			out["text"] = ev.Text
		case durable.EventAgent:
			out["agent"] = ev.Agent
		case durable.EventCompact:
			out["compact"] = ev.Compact
		case durable.EventResult:
			return // finish prints it
		}
		json.NewEncoder(p.a.stdout).Encode(out)
	case "text":
		switch ev.Type {
		case durable.EventToolResult:
			status := "ok"
			if ev.Tool.IsError {
				status = "error"
			}
			if ev.Tool.Recovered != "" {
				status += ", " + ev.Tool.Recovered + " after a worker stopped"
			}
			fmt.Fprintf(p.a.stderr, "• %s (%s)\n", ev.Tool.Name, status)
		case durable.EventNotice:
			fmt.Fprintln(p.a.stderr, "gantry-temporal:", ev.Text)
		case durable.EventAgent:
			fmt.Fprintf(p.a.stderr, "• agent %s %q: %s (run %s)\n", ev.Agent.Type, ev.Agent.Description, ev.Agent.Status, ev.Agent.RunID)
		case durable.EventCompact:
			fmt.Fprintf(p.a.stderr, "gantry-temporal: the conversation was compacted (%d → %d messages)\n", ev.Compact.Before, ev.Compact.After)
		}
	}
}

func (p *printer) finish(res *durable.Result) {
	switch p.format {
	case "text":
		if res.IsError {
			fmt.Fprintln(p.a.stderr, res.Text)
			return
		}
		fmt.Fprintln(p.a.stdout, res.Text)
	default:
		out := map[string]any{
			"type": "result", "subtype": res.Subtype, "is_error": res.IsError, "result": res.Text,
			"session_id": res.RunID, "run_id": res.RunID, "num_turns": res.NumTurns,
			"duration_ms": res.Duration.Milliseconds(), "total_cost_usd": res.CostUSD, "usage": res.Usage,
			"stop_reason": res.StopReason,
		}
		json.NewEncoder(p.a.stdout).Encode(out)
	}
}

// ask answers a permission ask at a terminal; elsewhere it says how to
// answer it (the run waits, durably, until someone does).
func (p *printer) ask(ctx context.Context, cl client.Client, id string, ask *durable.Ask) error {
	var req interaction.PermissionRequest
	_ = json.Unmarshal(ask.Request, &req)
	if ask.Kind != interaction.KindPermission || !isTerminal(p.a.stdin) {
		fmt.Fprintf(p.a.stderr, "gantry-temporal: run %s waits for an answer (%s %s): gantry-temporal answer %s %s allow_once|deny\n",
			id, ask.Kind, req.ToolName, id, ask.ID)
		return nil
	}
	desc := req.Description
	if desc == "" {
		desc = string(req.Input)
	}
	fmt.Fprintf(p.a.stderr, "%s wants to run: %s\n", req.ToolName, desc)
	if req.Reason != "" {
		fmt.Fprintf(p.a.stderr, "  (%s)\n", req.Reason)
	}
	fmt.Fprint(p.a.stderr, "Allow? [y/N] ")
	line, _ := bufio.NewReader(p.a.stdin).ReadString('\n')
	choice := `{"choice":"deny","message":"The user said no."}`
	if s := strings.ToLower(strings.TrimSpace(line)); s == "y" || s == "yes" {
		choice = `{"choice":"allow_once"}`
	}
	return answerRun(ctx, p.a, cl, id, ask.ID, choice)
}
