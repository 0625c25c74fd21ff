// Package local runs the built-in slash commands that a front end runs
// itself rather than sending to the model (/clear, /context, /cost,
// /model, /permissions, /agents, /mcp, /memory): one home for what they
// report and change, used by `gantry -p`, the stream-json sessions of the
// Agent SDK and any other front end. /compact, which every front end
// shows as it goes, stays with the front ends; /init and /review are
// prompts (package slash).
package local

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/gantry-dev/gantry/agent"
	"github.com/gantry-dev/gantry/builtin/agenttool"
	"github.com/gantry-dev/gantry/slash"
	"github.com/gantry-dev/gantry/workspace"
)

// ErrNotHere is wrapped by the error of a command the front end cannot
// run (it gave no [Request.Clear] for /clear).
var ErrNotHere = errors.New("not available here")

// Request is one built-in command to run.
type Request struct {
	// Command and Args are what [slash.Registry.Find] returned.
	Command *slash.Command
	Args    string
	// Agent is the session's agent; Workspace its workspace (nil: the
	// commands that read it say there is nothing to show).
	Agent     *agent.Agent
	Workspace *workspace.Workspace
	// Clear starts a new session in place of Agent's (nil: /clear is not
	// available here, as in a one-prompt `gantry -p` run).
	Clear func(ctx context.Context) error
}

// Handles reports whether [Run] runs c.
func Handles(c *slash.Command) bool {
	if c == nil || !c.Builtin() {
		return false
	}
	return slices.Contains([]string{"clear", "context", "cost", "model", "permissions", "agents", "mcp", "memory"}, c.Name)
}

// Run runs a built-in command and returns the text that reports what it
// did or shows. An error says why it could not run (wrapping
// [ErrNotHere] for a command this front end does not offer).
func Run(ctx context.Context, r Request) (string, error) {
	if !Handles(r.Command) {
		return "", fmt.Errorf("/%s: %w", r.Command.Name, ErrNotHere)
	}
	if r.Agent == nil {
		return "", errors.New("the session is not open")
	}
	switch r.Command.Name {
	case "clear":
		if r.Clear == nil {
			return "", fmt.Errorf("/clear: %w: each `gantry -p` run is a new session already", ErrNotHere)
		}
		if err := r.Clear(ctx); err != nil {
			return "", fmt.Errorf("/clear: %w", err)
		}
		return "Started a new session; the conversation is empty.", nil
	case "context":
		return contextText(r.Agent.Stats()), nil
	case "cost":
		return costText(r.Agent.Stats()), nil
	case "model":
		return model(r.Agent, r.Args), nil
	case "permissions":
		return permissions(r.Agent, r.Workspace), nil
	case "agents":
		return agents(r.Workspace), nil
	case "mcp":
		return mcp(r.Workspace), nil
	case "memory":
		return memory(r.Agent.Stats()), nil
	}
	return "", fmt.Errorf("/%s: %w", r.Command.Name, ErrNotHere)
}

func contextText(s agent.Stats) string {
	pct := 0.0
	if s.ContextWindow > 0 {
		pct = float64(s.ContextTokens) * 100 / float64(s.ContextWindow)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Context: %d of %d tokens (%.1f%%) used by the last model exchange; %d free.", s.ContextTokens, s.ContextWindow, pct, max(s.ContextWindow-s.ContextTokens, 0))
	if s.Turns == 0 {
		b.WriteString("\nNo model call yet in this process: the size is known after the first.")
	}
	return b.String()
}

func costText(s agent.Stats) string {
	u := s.Usage
	var b strings.Builder
	if s.CostUSD > 0 {
		fmt.Fprintf(&b, "Total cost: $%.4f\n", s.CostUSD)
	} else {
		b.WriteString("Total cost: unknown (no price for the model) or none yet\n")
	}
	fmt.Fprintf(&b, "Model calls: %d\n", s.Turns)
	fmt.Fprintf(&b, "Tokens: %d input, %d output, %d cache read, %d cache write", u.InputTokens, u.OutputTokens, u.CacheReadInputTokens, u.CacheCreationInputTokens)
	return b.String()
}

func model(ag *agent.Agent, arg string) string {
	if arg == "" {
		name := ag.Model()
		if name == "" {
			name = "the provider's default"
		}
		return "Model: " + name
	}
	if arg == "default" {
		ag.SetModel("")
		return "Model set to the session's default from the next turn."
	}
	ag.SetModel(arg)
	return "Model set to " + arg + " from the next turn."
}

func permissions(ag *agent.Agent, ws *workspace.Workspace) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Permission mode: %s\n", ag.Env().Mode)
	if ws == nil || ws.Settings() == nil {
		b.WriteString("No settings files in this session.")
		return b.String()
	}
	n := 0
	for _, src := range ws.Settings().Sources {
		p := src.File.Permissions
		if len(p.Allow)+len(p.Deny)+len(p.Ask) == 0 {
			continue
		}
		where := string(src.Scope)
		if src.Path != "" {
			where += " " + src.Path
		}
		b.WriteString(where + ":\n")
		for _, list := range []struct {
			kind  string
			rules []string
		}{{"allow", p.Allow}, {"ask", p.Ask}, {"deny", p.Deny}} {
			for _, r := range list.rules {
				fmt.Fprintf(&b, "  %-5s %s\n", list.kind, r)
				n++
			}
		}
	}
	if n == 0 {
		b.WriteString("No rules in the settings files.\n")
	}
	if !ws.Trusted() {
		b.WriteString("This folder is not trusted: its allow rules, hooks and MCP servers are off.\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

func agents(ws *workspace.Workspace) string {
	if ws == nil || ws.Agents() == nil {
		return "No agent types in this session."
	}
	defs := ws.Agents().List()
	slices.SortFunc(defs, func(a, b agenttool.Definition) int { return strings.Compare(a.Name, b.Name) })
	var b strings.Builder
	b.WriteString("Agent types:")
	for _, d := range defs {
		fmt.Fprintf(&b, "\n  %s — %s", d.Name, oneLine(d.Description))
	}
	return b.String()
}

func mcp(ws *workspace.Workspace) string {
	if ws == nil || ws.MCP() == nil {
		return "No MCP servers are configured (.mcp.json, --mcp-config)."
	}
	list := ws.MCP().Servers()
	if len(list) == 0 {
		return "No MCP servers are configured (.mcp.json, --mcp-config)."
	}
	var b strings.Builder
	b.WriteString("MCP servers:")
	for _, s := range list {
		fmt.Fprintf(&b, "\n  %s  %s  %d tools", s.Name, s.State, s.Tools)
		if s.Err != "" {
			b.WriteString("  " + oneLine(s.Err))
		}
	}
	return b.String()
}

func memory(s agent.Stats) string {
	if len(s.MemoryFiles) == 0 {
		return "No memory files: add a CLAUDE.md, AGENTS.md or GANTRY.md to the project (or run /init)."
	}
	return "Memory files in the system prompt (most specific last):\n  " + strings.Join(s.MemoryFiles, "\n  ")
}

// oneLine is s's first line.
func oneLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}
