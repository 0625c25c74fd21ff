package streamjson

import (
	"context"
	"errors"
	"strings"

	"github.com/gantry-dev/gantry/agent"
	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/slash"
	"github.com/gantry-dev/gantry/slash/local"
)

// SlashCommand is one command a prompt may start with, as the SDK lists
// them (initialize's commands, supportedCommands()).
type SlashCommand struct {
	Name         string `json:"name"`
	Description  string `json:"description"`
	ArgumentHint string `json:"argumentHint"`
}

// commands is the session's slash commands (the built-in ones before the
// session is open).
func (s *server) commands() *slash.Registry {
	if s.ws != nil && s.ws.Commands() != nil {
		return s.ws.Commands()
	}
	return slash.NewRegistry()
}

// slashCommands lists the commands a program may send, in the SDK's shape.
func slashCommands(r *slash.Registry) []SlashCommand {
	var out []SlashCommand
	for _, c := range r.List() {
		out = append(out, SlashCommand{Name: c.Name, Description: c.Description, ArgumentHint: c.ArgumentHint})
	}
	return out
}

// commandNames returns the names of r's commands (system/init's
// slash_commands).
func commandNames(r *slash.Registry) []string {
	var names []string
	for _, c := range r.List() {
		names = append(names, c.Name)
	}
	return names
}

// promptText is the text of a prompt made only of text blocks ("" if it
// has anything else).
func promptText(blocks []llm.Block) string {
	var sb strings.Builder
	for _, b := range blocks {
		if b.Type != llm.TypeText {
			return ""
		}
		sb.WriteString(b.Text)
	}
	return sb.String()
}

// runCommand runs a built-in slash command as a turn and returns true.
// A custom command's prompt is expanded into blocks (with its model and
// allowed-tools applied until undo is called); any other prompt comes
// back as it was.
func (s *server) runCommand(ctx context.Context, ag *agent.Agent, blocks []llm.Block) (_ []llm.Block, undo func(), done bool) {
	c, args := s.commands().Find(promptText(blocks))
	if c == nil {
		return blocks, func() {}, false
	}
	if !c.Builtin() {
		undo := slash.Apply(ag, c)
		text, err := c.Prepare(ctx, ag, args)
		if err != nil {
			undo()
			s.out.Result(nil, err)
			return nil, func() {}, true
		}
		return []llm.Block{llm.Text(text)}, undo, false
	}
	if local.Handles(c) {
		req := local.Request{Command: c, Args: args, Agent: ag, Workspace: s.ws, Clear: func(ctx context.Context) error {
			if err := ag.Clear(ctx); err != nil {
				return err
			}
			s.mu.Lock()
			s.ctxTokens = 0
			s.mu.Unlock()
			return nil
		}}
		text, err := local.Run(ctx, req)
		res := &agent.ResultEvent{Subtype: agent.SubtypeSuccess, SessionID: ag.SessionID(), Text: text}
		if err != nil {
			res.Subtype, res.IsError, res.Text = agent.SubtypeDuringExecution, true, err.Error()
		}
		s.out.Result(res, nil)
		return nil, func() {}, true
	}
	switch c.Name {
	case "compact":
		s.out.Compacting(false, nil)
		ev, err := ag.Compact(ctx, args)
		switch {
		case err != nil:
			s.out.Compacting(true, err)
		case ev == nil:
			s.out.Compacting(true, errors.New("not enough messages to compact"))
		default:
			s.out.Compacting(true, nil)
		}
		res := &agent.ResultEvent{Subtype: agent.SubtypeSuccess, SessionID: ag.SessionID()}
		switch {
		case err != nil:
			s.out.Result(nil, err)
			return nil, func() {}, true
		case ev == nil:
			res.Subtype, res.IsError, res.Text = agent.SubtypeDuringExecution, true, "Not enough messages to compact."
		default:
			s.out.CompactBoundary("manual", ev)
		}
		s.out.Result(res, nil)
		return nil, func() {}, true
	}
	return blocks, func() {}, false
}
