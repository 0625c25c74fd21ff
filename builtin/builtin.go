// Package builtin assembles Gantry's built-in tools into a toolset registry
// and provides the per-session services they need.
//
// Tiers: the core tools (Read, Write, Edit, Glob, Grep, Bash, WebFetch,
// WebSearch) are what every coding agent needs; advanced ones (NotebookEdit,
// TaskOutput, TaskStop, TodoWrite, the Task list tools, the interaction
// tools EnterPlanMode, ExitPlanMode and AskUserQuestion, Sleep and
// PushNotification) are for longer sessions; specialist ones (ListMcpResources, ReadMcpResource, LSP;
// TeamCreate, TeamDelete, SendMessage) are needed rarely and are
// deferred to ToolSearch.
package builtin

import (
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/gantry-dev/gantry/builtin/ask"
	"github.com/gantry-dev/gantry/builtin/config"
	"github.com/gantry-dev/gantry/builtin/crontool"
	"github.com/gantry-dev/gantry/builtin/file"
	"github.com/gantry-dev/gantry/builtin/lsp"
	"github.com/gantry-dev/gantry/builtin/mcpres"
	"github.com/gantry-dev/gantry/builtin/memory"
	"github.com/gantry-dev/gantry/builtin/notify"
	"github.com/gantry-dev/gantry/builtin/plan"
	"github.com/gantry-dev/gantry/builtin/search"
	"github.com/gantry-dev/gantry/builtin/shell"
	"github.com/gantry-dev/gantry/builtin/skill"
	"github.com/gantry-dev/gantry/builtin/sleep"
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
	// Sleep configures Sleep (the longest sleep).
	Sleep sleep.Options
	// Only, if not nil, names the built-in tools to build (names or
	// aliases): [Tools] and [Registry] build and hold just those, so a
	// one-shot call (`gantry tools call`) does not pay for building every
	// tool. Tools built together share state (the file tools' write locks,
	// the web tools' cache) as in a full registry. A name that is no
	// built-in's is ignored. Nil means every built-in tool.
	Only []string
}

// Tools returns the built-in tools (every one, or those opts.Only names),
// built once; the tools are safe to share between sessions (per-session
// state travels in tool.Env).
func Tools(opts Options) ([]tool.Tool, error) {
	var out []tool.Tool
	for _, g := range catalog {
		if !opts.wants(g.names) {
			continue
		}
		tools, err := g.build(opts)
		if err != nil {
			return nil, fmt.Errorf("builtin: %w", err)
		}
		for _, t := range tools {
			if opts.wants(t.Spec().Names()) {
				out = append(out, t)
			}
		}
	}
	return out, nil
}

// wants reports whether a tool with one of names is to be built: always
// without Only, else when Only lists one of them.
func (o Options) wants(names []string) bool {
	if o.Only == nil {
		return true
	}
	return slices.ContainsFunc(names, func(n string) bool { return slices.Contains(o.Only, n) })
}

// group is a set of built-in tools built together (they share state, such
// as the file tools' write locks): the names and aliases of its tools and
// its constructor.
type group struct {
	names []string
	build func(Options) ([]tool.Tool, error)
}

func one(t tool.Tool) ([]tool.Tool, error) { return []tool.Tool{t}, nil }

// catalog is every built-in tool in pool order, grouped by what is built
// together; a name or alias listed here and not built (WebSearch without a
// search backend, memory without its options) is simply absent.
// TestCatalogNames checks the names against the built tools.
var catalog = []group{
	{[]string{"Read", "Write", "Edit", "NotebookEdit"}, func(o Options) ([]tool.Tool, error) { return file.Tools(o.File), nil }},
	{[]string{"Glob"}, func(o Options) ([]tool.Tool, error) {
		t, err := search.NewGlob(o.Search)
		if err != nil {
			return nil, fmt.Errorf("search tools: %w", err)
		}
		return one(t)
	}},
	{[]string{"Grep"}, func(o Options) ([]tool.Tool, error) {
		t, err := search.NewGrep(o.Search)
		if err != nil {
			return nil, fmt.Errorf("search tools: %w", err)
		}
		return one(t)
	}},
	{[]string{"Bash", "TaskOutput", "BashOutput", "AgentOutput", "TaskStop", "KillShell"}, func(o Options) ([]tool.Tool, error) { return shell.Tools(o.Shell), nil }},
	{[]string{"ListMcpResources", "ListMcpResourcesTool", "ReadMcpResource", "ReadMcpResourceTool"}, func(Options) ([]tool.Tool, error) { return mcpres.Tools(), nil }},
	{[]string{"WebFetch", "WebSearch"}, func(o Options) ([]tool.Tool, error) { return web.Tools(o.Web), nil }},
	{[]string{"TodoWrite"}, func(Options) ([]tool.Tool, error) { return one(todo.New()) }},
	{[]string{"TaskCreate", "TaskGet", "TaskList", "TaskUpdate"}, func(Options) ([]tool.Tool, error) { return task.Tools(), nil }},
	{[]string{"LSP"}, func(Options) ([]tool.Tool, error) { return one(lsp.New()) }},
	{[]string{"Config"}, func(o Options) ([]tool.Tool, error) { return one(config.New(o.Config)) }},
	{[]string{"memory"}, func(o Options) ([]tool.Tool, error) {
		if o.Memory == nil {
			return nil, nil
		}
		return one(memory.New(*o.Memory))
	}},
	{[]string{"TeamCreate", "TeamDelete", "SendMessage"}, func(Options) ([]tool.Tool, error) { return team.Tools(), nil }},
	{[]string{"EnterPlanMode", "ExitPlanMode"}, func(Options) ([]tool.Tool, error) { return plan.Tools(), nil }},
	{[]string{"AskUserQuestion"}, func(Options) ([]tool.Tool, error) { return ask.Tools(), nil }},
	{[]string{"EnterWorktree", "ExitWorktree"}, func(Options) ([]tool.Tool, error) { return worktree.Tools(), nil }},
	{[]string{"CronCreate", "CronDelete", "CronList"}, func(Options) ([]tool.Tool, error) { return crontool.Tools(), nil }},
	{[]string{"RemoteTrigger"}, func(o Options) ([]tool.Tool, error) { return one(triggertool.New(o.Trigger)) }},
	{[]string{sleep.Name}, func(o Options) ([]tool.Tool, error) { return one(sleep.New(o.Sleep)) }},
	{[]string{notify.Name}, func(Options) ([]tool.Tool, error) { return one(notify.New()) }},
}

// Known reports whether name is the name or an alias of a built-in tool,
// without building any: the names [Options.Only] selects from. Tools that
// need options to exist (WebSearch, memory) are known whether or not they
// would be built.
func Known(name string) bool {
	if name == skillName {
		return true
	}
	for _, g := range catalog {
		if slices.Contains(g.names, name) {
			return true
		}
	}
	return false
}

// skillName is the Skill tool's name: it is built per session (it lists the
// skills of the session's project), through a registry factory.
const skillName = "Skill"

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
	if !opts.wants([]string{skillName}) {
		return nil
	}
	if err := r.Register(toolset.Entry{Name: skillName, Tier: Tier(skillName), Factory: skill.Factory(opts.Skill)}); err != nil {
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
// file.WriteObserver); the [sleep.Waker] a front end calls when the person
// sends a message while the agent works — and returns the closer that ends them with
// the session (every background task is killed and reaped, every language
// server shut down).
func NewSessionServices(s *tool.Services, opts Options) io.Closer {
	tasks := shell.NewJobs()
	tool.Provide(s, tasks)
	ProvideStore(s, new(store.Memory))
	tool.Provide(s, cron.NewSessionJobs(nil))
	servers := lsp.NewManager(opts.LSP)
	tool.Provide(s, servers)
	tool.Provide[file.WriteObserver](s, servers)
	tool.Provide[tool.Reminder](s, servers) // late diagnostics at the next turn
	tool.Provide(s, sleep.NewWaker())       // the front end wakes Sleep when the person writes
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
