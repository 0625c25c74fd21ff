package streamjson

import (
	"context"
	"strings"

	"github.com/gantry-dev/gantry/agent"
	"github.com/gantry-dev/gantry/llm"
)

// SlashCommand is one command a prompt may start with, as the SDK lists
// them (initialize's commands, supportedCommands()).
type SlashCommand struct {
	Name         string `json:"name"`
	Description  string `json:"description"`
	ArgumentHint string `json:"argumentHint"`
}

// builtinCommands are the slash commands Serve runs itself instead of
// sending the prompt to the model.
var builtinCommands = []SlashCommand{
	{Name: "compact", Description: "Summarise the conversation so far to free context (optional: what the summary should keep)", ArgumentHint: "[instructions]"},
}

// commandNames returns the names of cmds (system/init's slash_commands).
func commandNames(cmds []SlashCommand) []string {
	names := make([]string, 0, len(cmds))
	for _, c := range cmds {
		names = append(names, c.Name)
	}
	return names
}

// parseSlash splits a prompt that is a slash command into its name and
// arguments: "/compact keep the names" → "compact", "keep the names". A
// prompt that is not one (no leading slash, a path such as "/etc/hosts
// is …", an empty name) gives ok false.
func parseSlash(prompt string) (name, args string, ok bool) {
	p := strings.TrimSpace(prompt)
	rest, found := strings.CutPrefix(p, "/")
	if !found {
		return "", "", false
	}
	name, args, _ = strings.Cut(rest, " ")
	if name == "" || strings.ContainsAny(name, "/\n\t") {
		return "", "", false
	}
	return name, strings.TrimSpace(args), true
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

// runCommand runs a built-in slash command as a turn; false when the
// prompt is not one of them (it then goes to the model as it is).
func (s *server) runCommand(ctx context.Context, ag *agent.Agent, blocks []llm.Block) bool {
	name, args, ok := parseSlash(promptText(blocks))
	if !ok {
		return false
	}
	switch name {
	case "compact":
		ev, err := ag.Compact(ctx, args)
		res := &agent.ResultEvent{Subtype: agent.SubtypeSuccess, SessionID: ag.SessionID()}
		switch {
		case err != nil:
			s.out.Result(nil, err)
			return true
		case ev == nil:
			res.Subtype, res.IsError, res.Text = agent.SubtypeDuringExecution, true, "Not enough messages to compact."
		default:
			s.out.CompactBoundary("manual", ev)
		}
		s.out.Result(res, nil)
		return true
	}
	return false
}
