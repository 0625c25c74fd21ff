package slash

import (
	"context"
	"fmt"
	"strings"

	"github.com/gantry-dev/gantry/tool"
)

// ToolName is the name of the tool through which the model runs a custom
// command.
const ToolName = "SlashCommand"

// ToolInput is the SlashCommand tool's input.
type ToolInput struct {
	Command string `json:"command" jsonschema:"The command and its arguments, as listed: \"/review-pr 123\""`
}

// Invocable reports whether the model may run c through the SlashCommand
// tool: a custom command with a description that does not disable model
// invocation and runs no !`command` and includes no @file (those run as
// calls of the session's pipeline before the prompt, which a tool call
// cannot start).
func (c *Command) Invocable() bool {
	return !c.Builtin() && !c.DisableModelInvocation && c.Description != "" &&
		!bangRE().MatchString(c.Body) && !atRE().MatchString(c.Body)
}

// NewTool returns the SlashCommand tool over r's invocable commands (see
// [Command.Invocable]); it is disabled when there are none. Its result is
// the command's prompt (arguments substituted), which the model then
// follows. A command's allowed-tools and model do not apply to a command
// the model runs (they apply when a person or program runs it).
func NewTool(r *Registry) tool.Tool {
	var cmds []*Command
	for _, c := range r.List() {
		if c.Invocable() {
			cmds = append(cmds, c)
		}
	}
	return tool.Must(tool.New(ToolName, toolDescription(cmds),
		func(ctx context.Context, env *tool.Env, in ToolInput) (*tool.Result, error) {
			line := strings.TrimSpace(in.Command)
			if !strings.HasPrefix(line, "/") {
				line = "/" + line
			}
			c, args := r.Find(line)
			if c == nil || !c.Invocable() {
				var names []string
				for _, c := range cmds {
					names = append(names, "/"+c.Name)
				}
				return nil, fmt.Errorf("%q is not a command you can run; available: %s", in.Command, strings.Join(names, ", "))
			}
			return tool.TextResult(fmt.Sprintf("<command-name>/%s</command-name>\n%s", c.Name, c.Expand(args))), nil
		},
		tool.WithTraits(tool.Traits{ReadOnly: true, NonDestructive: true, ConcurrencySafe: true}),
		tool.EnabledFunc(func(context.Context, *tool.Env) bool { return len(cmds) > 0 }),
		tool.DescribeFunc(func(in ToolInput) string { return "SlashCommand " + in.Command }),
	))
}

func toolDescription(cmds []*Command) string {
	var b strings.Builder
	b.WriteString(`Runs a custom slash command of this project or user: its result is the command's instructions, which you then carry out. Use it when the user asks for one of these commands or a task matches a command's description. Pass the command with its arguments, e.g. "/review-pr 123".

Available commands:`)
	for _, c := range cmds {
		line := "/" + c.Name
		if c.ArgumentHint != "" {
			line += " " + c.ArgumentHint
		}
		fmt.Fprintf(&b, "\n- %s: %s", line, strings.Join(strings.Fields(c.Description), " "))
	}
	return b.String()
}
