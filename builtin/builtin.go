// Package builtin assembles Gantry's built-in tools into a toolset registry
// and provides the per-session services they need.
//
// Tiers: the core tools (Read, Write, Edit, Glob, Grep, Bash, WebFetch,
// WebSearch) are what every coding agent needs; advanced ones (NotebookEdit,
// TaskOutput, TaskStop, TodoWrite, the Task list tools, the interaction
// tools EnterPlanMode, ExitPlanMode and AskUserQuestion) are for longer
// sessions; specialist ones (ListMcpResources, ReadMcpResource, LSP;
// TeamCreate, TeamDelete, SendMessage) are needed rarely and are
// deferred to ToolSearch.
package builtin

import (
	"errors"
	"fmt"
	"io"

	"github.com/gantry-dev/gantry/builtin/ask"
	"github.com/gantry-dev/gantry/builtin/config"
	"github.com/gantry-dev/gantry/builtin/crontool"
	"github.com/gantry-dev/gantry/builtin/file"
	"github.com/gantry-dev/gantry/builtin/lsp"
	"github.com/gantry-dev/gantry/builtin/mcpres"
	"github.com/gantry-dev/gantry/builtin/memory"
	"github.com/gantry-dev/gantry/builtin/plan"
	"github.com/gantry-dev/gantry/builtin/search"
	"github.com/gantry-dev/gantry/builtin/shell"
	"github.com/gantry-dev/gantry/builtin/skill"
	"github.com/gantry-dev/gantry/builtin/task"
	"github.com/gantry-dev/gantry/builtin/team"
	"github.com/gantry-dev/gantry/builtin/todo"
	"github.com/gantry-dev/gantry/builtin/triggertool"
	"github.com/gantry-dev/gantry/builtin/web"
	"github.com/gantry-dev/gantry/builtin/worktree"
	"github.com/gantry-dev/gantry/cron"
	"github.com/gantry-dev/gantry/store"
	"github.com/gantry-dev/gantry/tool"
	"github.com/gantry-dev/gantry/toolset"
)

// Options configure the built-in tools. The zero value is ready to use.
type Options struct {
	File   file.Options
	Search search.Options
	Shell  shell.Options
	// Web configures WebFetch and WebSearch (WebSearch only with a
	// search backend).
	Web web.Options
	// LSP configures the language servers of the LSP tool and of the
	// diagnostics appended to Write and Edit results (used by
	// [NewSessionServices]).
	LSP lsp.Options
	// Skill configures where the Skill tool finds skills.
	Skill skill.Options
	// Memory, when set, adds the memory tool (opt-in): files the model
	// keeps across sessions under $GANTRY_HOME/memory/<project>.
	Memory *memory.Options
	// Config configures the Config tool (where the settings files are).
	Config config.Options
	// Trigger configures RemoteTrigger (which gantry serve it talks to).
	Trigger triggertool.Options
}

// Tools returns every built-in tool, built once; the tools are safe to share
// between sessions (per-session state travels in tool.Env).
func Tools(opts Options) ([]tool.Tool, error) {
	searchTools, err := search.Tools(opts.Search)
	if err != nil {
		return nil, fmt.Errorf("builtin: search tools: %w", err)
	}
	var out []tool.Tool
	out = append(out, file.Tools(opts.File)...)
	out = append(out, searchTools...)
	out = append(out, shell.Tools(opts.Shell)...)
	out = append(out, mcpres.Tools()...)
	out = append(out, web.Tools(opts.Web)...)
	out = append(out, todo.New())
	out = append(out, task.Tools()...)
	out = append(out, lsp.New(), config.New(opts.Config))
	if opts.Memory != nil {
		out = append(out, memory.New(*opts.Memory))
	}
	out = append(out, team.Tools()...)
	out = append(out, plan.Tools()...)
	out = append(out, ask.Tools()...)
	out = append(out, worktree.Tools()...)
	out = append(out, crontool.Tools()...)
	out = append(out, triggertool.New(opts.Trigger))
	return out, nil
}

// Tier returns the tier of a built-in tool name: core for Read, Write, Edit,
// Glob, Grep, Bash, WebFetch and WebSearch; specialist for the MCP resource
// tools, LSP and Config; advanced for the rest.
func Tier(name string) toolset.Tier {
	switch name {
	case "Read", "Write", "Edit", "Glob", "Grep", "Bash", "WebFetch", "WebSearch":
		return toolset.TierCore
	case "ListMcpResources", "ReadMcpResource", "LSP", "TeamCreate", "TeamDelete", "SendMessage",
		"CronCreate", "CronDelete", "CronList", "RemoteTrigger":
		return toolset.TierSpecialist
	}
	return toolset.TierAdvanced
}

// Register adds every built-in tool to r.
func Register(r *toolset.Registry, opts Options) error {
	tools, err := Tools(opts)
	if err != nil {
		return err
	}
	for _, t := range tools {
		if err := r.RegisterTool(t, Tier(t.Spec().Name), ""); err != nil {
			return fmt.Errorf("builtin: %w", err)
		}
	}
	// Skill lists the skills of the session's project: built per session.
	if err := r.Register(toolset.Entry{Name: "Skill", Tier: Tier("Skill"), Factory: skill.Factory(opts.Skill)}); err != nil {
		return fmt.Errorf("builtin: %w", err)
	}
	return nil
}

// Registry returns a new registry holding every built-in tool.
func Registry(opts Options) (*toolset.Registry, error) {
	r := toolset.NewRegistry()
	if err := Register(r, opts); err != nil {
		return nil, err
	}
	return r, nil
}

// SessionServices is [NewSessionServices] with the zero Options.
func SessionServices(s *tool.Services) io.Closer {
	return NewSessionServices(s, Options{})
}

// NewSessionServices puts the services the built-ins need for one session
// into s — the background-task manager of Bash; an in-memory [store.Memory]
// for the todo list, the task list, mailboxes and teams, unless
// [ProvideStore] gives a durable one; the language-server manager of the
// LSP tool, which also reports new errors after Write and Edit (a
// file.WriteObserver) — and returns the closer that ends them with
// the session (every background task is killed and reaped, every language
// server shut down).
func NewSessionServices(s *tool.Services, opts Options) io.Closer {
	tasks := shell.NewTasks()
	tool.Provide(s, tasks)
	ProvideStore(s, new(store.Memory))
	tool.Provide(s, cron.NewSession(nil))
	servers := lsp.NewManager(opts.LSP)
	tool.Provide(s, servers)
	tool.Provide[file.WriteObserver](s, servers)
	return closerFunc(func() error {
		return errors.Join(tasks.Close(), servers.Close())
	})
}

// ProvideStore makes st the store of the todo, task and team tools: it is
// provided as each of [store.Tasks], [store.Todos], [store.Mailboxes] and
// [store.Teams]. The caller keeps closing st.
func ProvideStore(s *tool.Services, st store.Store) {
	tool.Provide[store.Tasks](s, st)
	tool.Provide[store.Todos](s, st)
	tool.Provide[store.Mailboxes](s, st)
	tool.Provide[store.Teams](s, st)
	// A durable store also keeps cron jobs, runs and triggers.
	if sc, ok := st.(store.Scheduling); ok {
		tool.Provide[store.CronJobs](s, sc)
		tool.Provide[store.Runs](s, sc)
		tool.Provide[store.Triggers](s, sc)
	}
}

type closerFunc func() error

func (f closerFunc) Close() error { return f() }
