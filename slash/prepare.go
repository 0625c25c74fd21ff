package slash

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/gantry-dev/gantry/executor"
	"github.com/gantry-dev/gantry/tool"
)

// Caller runs tool calls through a session's pipeline (validation, hooks,
// permission, sandbox): *agent.Agent.
type Caller interface {
	Executor() *executor.Executor
	Env() *tool.Env
}

// bangRE matches a !`command` to run before the prompt is sent; atRE an
// @path to include (at the start or after a space; the path ends at
// white space).
var (
	bangRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("!`([^`\n]+)`") })
	atRE   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(^|\s)@([^\s@` + "`" + `]+)`) })
)

// Prepare returns the prompt a custom command gives the model for args,
// as [Command.Expand] does, and then runs each !`command` of it with the
// Bash tool and includes each @path with the Read tool — both through
// call's pipeline, so that the session's permission rules, mode, hooks
// and sandbox decide them like any call the model makes (never around
// them; apply the command's allowed-tools with [Apply] first). The
// output of a command replaces its !`…`; a file's content follows its
// @path. A call that is denied or fails makes Prepare fail with what the
// tool said. A nil call expands only.
func (c *Command) Prepare(ctx context.Context, call Caller, args string) (string, error) {
	text := c.Expand(args)
	if call == nil {
		return text, nil
	}
	// The calls get their own file-state cache: what they read is in the
	// prompt, not in a result the model saw (and a failed command's reads
	// never reach it), so a later Read by the model reads again.
	env := *call.Env()
	env.Files = tool.NewFileCache(0)
	n := 0
	run := func(name string, input map[string]any) (string, error) {
		n++
		in, err := json.Marshal(input)
		if err != nil {
			return "", err
		}
		b, err := call.Executor().Run(ctx, executor.NewSharedEnv(&env), []executor.Call{{ID: fmt.Sprintf("slash_%s_%d", c.Name, n), Name: name, Input: in}})
		if err != nil {
			return "", err
		}
		o := b.Outcomes[0]
		out := ""
		if o.Result != nil {
			out = o.Result.TextContent()
		}
		if o.Kind != executor.KindOK {
			return "", fmt.Errorf("/%s: %s %s: %s", c.Name, name, in, out)
		}
		return out, nil
	}
	var firstErr error
	text = bangRE().ReplaceAllStringFunc(text, func(m string) string {
		if firstErr != nil {
			return m
		}
		cmd := bangRE().FindStringSubmatch(m)[1]
		out, err := run("Bash", map[string]any{"command": cmd, "description": "run by the /" + c.Name + " command"})
		if err != nil {
			firstErr = err
		}
		return strings.TrimRight(out, "\n")
	})
	if firstErr != nil {
		return "", firstErr
	}
	text = atRE().ReplaceAllStringFunc(text, func(m string) string {
		if firstErr != nil {
			return m
		}
		sub := atRE().FindStringSubmatch(m)
		lead, path := sub[1], sub[2]
		// "see @notes.txt." : sentence punctuation is not the path's.
		trimmed := strings.TrimRight(path, ".,;:!?)]'\"")
		tail := path[len(trimmed):]
		if path = trimmed; path == "" {
			return m
		}
		abs := path
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(call.Env().WorkDir, path)
		}
		out, err := run("Read", map[string]any{"file_path": abs})
		if err != nil {
			firstErr = err
			return m
		}
		return lead + "@" + path + tail + "\n\n<file path=\"" + path + "\">\n" + strings.TrimRight(out, "\n") + "\n</file>\n"
	})
	if firstErr != nil {
		return "", firstErr
	}
	return text, nil
}
