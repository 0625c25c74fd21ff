package toolset

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/gantry-dev/gantry/tool"
)

// This file holds test fixtures: 40 built-in tool definitions with the
// input shapes of the reference coding agent's tools and descriptions of realistic length,
// and generated MCP servers.

// prop is one property of a fixture schema.
type prop struct {
	name, typ, desc string
	required        bool
	enum            []string
	items           string // item type of an array
}

func req(name, typ, desc string, enum ...string) prop {
	return prop{name: name, typ: typ, desc: desc, required: true, enum: enum}
}

func opt(name, typ, desc string, enum ...string) prop {
	return prop{name: name, typ: typ, desc: desc, enum: enum}
}

func arr(name, items, desc string, required bool) prop {
	return prop{name: name, typ: "array", items: items, desc: desc, required: required}
}

// schemaOf builds an object schema with properties in the given order.
func schemaOf(props ...prop) json.RawMessage {
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{`)
	var required []string
	for i, p := range props {
		if i > 0 {
			b.WriteByte(',')
		}
		m := map[string]any{"type": p.typ, "description": p.desc}
		if len(p.enum) > 0 {
			m["enum"] = p.enum
		}
		if p.items != "" {
			m["items"] = map[string]any{"type": p.items}
		}
		v, _ := json.Marshal(m)
		fmt.Fprintf(&b, "%q:%s", p.name, v)
		if p.required {
			required = append(required, p.name)
		}
	}
	b.WriteString("}")
	if len(required) > 0 {
		r, _ := json.Marshal(required)
		fmt.Fprintf(&b, `,"required":%s`, r)
	}
	b.WriteString(`,"additionalProperties":false}`)
	return json.RawMessage(b.String())
}

type fixtureTool struct {
	name, desc, prompt, hint string
	deferred                 bool
	readOnly                 bool
	aliases                  []string
	props                    []prop
}

const usageNotes = `Usage notes:
- Prefer this tool over running the equivalent shell command: its output is structured, bounded and permission-checked.
- Paths must be absolute; relative paths are resolved against the session's working directory and rejected if they escape the allowed directories.
- Large outputs are truncated to the result budget and the full output is written to a file whose path is returned.
- When several independent calls are needed, issue them in one turn so that read-only calls run in parallel.`

var fixtureTools = []fixtureTool{
	{name: "Read", readOnly: true, desc: "Reads a file from the local filesystem. Returns the content with line numbers (cat -n style), images as images, PDFs page by page and notebooks cell by cell.", prompt: usageNotes + "\n- By default up to 2000 lines are read from the start; use offset and limit for long files.\n- Lines longer than 2000 characters are cut.", props: []prop{req("file_path", "string", "The absolute path of the file to read"), opt("offset", "number", "The line number to start reading from (1-based); only for files too large to read at once"), opt("limit", "number", "The number of lines to read"), opt("pages", "string", `Page range of a PDF file, for example "1-5" (at most 20 pages per call)`), opt("allow_large", "boolean", "Read a file larger than the default size limit")}},
	{name: "Write", desc: "Writes a file to the local filesystem, replacing it if it exists. The file must have been read first in this session when it already exists.", prompt: usageNotes + "\n- Prefer Edit for changes to existing files; Write sends the whole content.\n- Never create documentation files unless asked.", props: []prop{req("file_path", "string", "The absolute path of the file to write (must be absolute, not relative)"), req("content", "string", "The content to write to the file")}},
	{name: "Edit", desc: "Performs exact string replacements in a file. The old string must occur exactly once unless replace_all is set; the file must have been read first.", prompt: usageNotes + "\n- Keep the indentation of the lines as they appear after the line-number prefix of Read.\n- Use replace_all to rename a variable across the file.", props: []prop{req("file_path", "string", "The absolute path of the file to modify"), req("old_string", "string", "The text to replace"), req("new_string", "string", "The text to replace it with (must differ from old_string)"), opt("replace_all", "boolean", "Replace every occurrence of old_string (default false)")}},
	{name: "Glob", readOnly: true, desc: "Fast file pattern matching that works with any codebase size. Supports glob patterns like \"**/*.js\" or \"src/**/*.ts\" and returns matching file paths sorted by modification time.", prompt: usageNotes, props: []prop{req("pattern", "string", "The glob pattern to match files against"), opt("path", "string", "The directory to search in; defaults to the working directory. Omit it rather than passing null")}},
	{name: "Grep", readOnly: true, desc: "A powerful search tool built on regular expressions, with ripgrep's syntax. Filters files with glob or type, and shows matching lines, matching files or counts.", prompt: usageNotes + "\n- Literal braces need escaping (interface\\{\\}).\n- Patterns match within single lines unless multiline is true.", props: []prop{req("pattern", "string", "The regular expression pattern to search for in file contents"), opt("path", "string", "File or directory to search in; defaults to the working directory"), opt("glob", "string", `Glob pattern to filter files (e.g. "*.js", "*.{ts,tsx}")`), opt("output_mode", "string", "Output mode: matching lines, matching file paths, or match counts", "content", "files_with_matches", "count"), opt("-B", "number", "Lines to show before each match (content mode)"), opt("-A", "number", "Lines to show after each match (content mode)"), opt("-C", "number", "Lines to show before and after each match (content mode)"), opt("context", "number", "Alias of -C"), opt("-n", "boolean", "Show line numbers (content mode, default true)"), opt("-i", "boolean", "Case-insensitive search"), opt("-o", "boolean", "Print only the matched parts"), opt("type", "string", "File type to search (js, py, rust, go, …)"), opt("head_limit", "number", "Limit output to the first N lines or entries"), opt("offset", "number", "Skip the first N lines or entries"), opt("multiline", "boolean", "Let . match newlines and patterns span lines")}},
	{name: "Bash", desc: "Executes a shell command in a persistent shell session with an optional timeout, and returns its output. Long-running commands can run in the background.", prompt: usageNotes + "\n- Quote paths with spaces.\n- Avoid find, grep, cat, head and tail: use Glob, Grep and Read.\n- The working directory persists between commands; prefer absolute paths over cd.\n- Default timeout 2 minutes, at most 10 minutes.", props: []prop{req("command", "string", "The command to execute"), opt("timeout", "number", "Optional timeout in milliseconds (max 600000)"), opt("description", "string", "Clear, concise description of what the command does in 5-10 words"), opt("run_in_background", "boolean", "Run the command in the background; read its output later with TaskOutput"), opt("dangerouslyDisableSandbox", "boolean", "Run the command outside the sandbox")}},
	{name: "TaskOutput", readOnly: true, aliases: []string{"BashOutput", "AgentOutput"}, desc: "Retrieves output from a running or completed background task (shell command or agent), optionally waiting for it to finish.", props: []prop{req("task_id", "string", "The id of the background task"), opt("block", "boolean", "Wait for the task to finish (default true)"), opt("timeout", "number", "How long to wait in milliseconds")}},
	{name: "TaskStop", aliases: []string{"KillShell"}, desc: "Stops a running background task by its id.", props: []prop{opt("task_id", "string", "The id of the background task to stop"), opt("shell_id", "string", "Deprecated: use task_id")}},
	{name: "NotebookEdit", prompt: `- Read the notebook first: cell ids are shown by Read.
- edit_mode insert adds a cell after cell_id (or at the start without one); delete ignores new_source.
- cell_type is required when inserting.
- Outputs of an edited code cell are cleared.`, deferred: true, hint: "edit jupyter notebook cells ipynb", desc: "Replaces, inserts or deletes a cell of a Jupyter notebook (.ipynb). Cells are addressed by id; insert puts the new cell after the given one.", props: []prop{req("notebook_path", "string", "The absolute path of the notebook"), opt("cell_id", "string", "The id of the cell to edit or to insert after"), req("new_source", "string", "The new source of the cell"), opt("cell_type", "string", "The type of the cell", "code", "markdown"), opt("edit_mode", "string", "The kind of edit (default replace)", "replace", "insert", "delete")}},
	{name: "WebFetch", deferred: true, readOnly: true, hint: "fetch a web page url and read it", desc: "Fetches a URL, converts the HTML to markdown and answers the prompt about the page with a small fast model. HTTP URLs are upgraded to HTTPS; redirects to other hosts are reported, not followed.", prompt: "- The result may be summarised when the page is very large.\n- Read-only; results are cached for 15 minutes.", props: []prop{req("url", "string", "The URL to fetch"), req("prompt", "string", "What to extract from the page"), opt("offset", "number", "Character offset to continue a long page")}},
	{name: "WebSearch", prompt: `- Use it for events and documentation newer than the model's knowledge.
- Cite the sources you use: list their URLs at the end of the answer as markdown links.
- Domain filters apply to the result URLs; do not combine allowed and blocked lists for the same domain.
- Include the current year in queries about recent releases.`, deferred: true, readOnly: true, hint: "search the web for current information", desc: "Searches the web and returns results with titles and URLs, for information beyond the model's knowledge cutoff.", props: []prop{req("query", "string", "The search query"), arr("allowed_domains", "string", "Only include results from these domains", false), arr("blocked_domains", "string", "Never include results from these domains", false)}},
	{name: "TodoWrite", desc: "Creates and updates the session's structured task list, to track progress and show the user what is being done. Keep exactly one task in progress.", prompt: "- Use it for multi-step tasks (three steps or more).\n- Mark tasks completed as soon as they are done; do not batch.", props: []prop{{name: "todos", typ: "array", items: "object", desc: "The updated todo list: each item has content, status (pending, in_progress, completed) and activeForm", required: true}}},
	{name: "AskUserQuestion", prompt: `- Ask only when the answer changes what you do; otherwise pick a sensible default and say so.
- Put the recommended option first and mark it "(Recommended)".
- Users can always answer with free text instead of an option.
- Use multiSelect when options are not mutually exclusive.
- In plan mode, use it to clarify requirements before presenting the plan, not to ask for plan approval.`, deferred: true, hint: "ask the user a multiple choice question", desc: "Asks the user one to four multiple-choice questions during execution, to clarify requirements or choose between approaches.", props: []prop{{name: "questions", typ: "array", items: "object", desc: "1-4 questions, each with question, header, 2-4 options (label, description, optional preview) and multiSelect", required: true}, opt("answers", "object", "Answers collected by the permission layer")}},
	{name: "Agent", aliases: []string{"Task"}, desc: "Launches a subagent to handle a complex, multi-step task autonomously. Each subagent type has its own tools and instructions; the result is a single message.", prompt: "- Launch several agents at once when their tasks are independent.\n- The agent's result is not visible to the user: summarise it.\n- Tell the agent whether to write code or only research.", props: []prop{req("description", "string", "A short (3-5 word) description of the task"), req("prompt", "string", "The task for the agent to perform"), opt("subagent_type", "string", "The type of agent to use"), opt("model", "string", "Model override for the agent"), opt("run_in_background", "boolean", "Run the agent in the background"), opt("name", "string", "A name for the agent, to message it later"), opt("isolation", "string", "Run the agent in its own git worktree", "worktree")}},
	{name: "TaskCreate", prompt: `- Create tasks for multi-step work, work the user asked to track, or work shared with teammates.
- Subjects are imperative ("Run the tests"); activeForm is the present continuous ("Running the tests").
- New tasks start pending without an owner; set dependencies with TaskUpdate.
- Check TaskList first to avoid duplicates.`, deferred: true, hint: "create a task in the shared task list", desc: "Creates a task in the shared task list, to plan work and coordinate with other agents.", props: []prop{req("subject", "string", "A brief title for the task"), req("description", "string", "What needs to be done"), opt("activeForm", "string", "Present-continuous form shown while in progress"), opt("metadata", "object", "Arbitrary metadata to attach")}},
	{name: "TaskGet", deferred: true, readOnly: true, hint: "get a task from the task list by id", desc: "Returns a task of the shared task list with its full details.", props: []prop{req("taskId", "string", "The id of the task")}},
	{name: "TaskUpdate", prompt: `- Mark a task in_progress before starting it and completed only when it is fully done: tests pass, nothing left half-finished.
- Use deleted for tasks that are no longer relevant.
- Read the task with TaskGet before updating it when other agents may have changed it.
- addBlocks and addBlockedBy add dependencies; completed tasks unblock their dependants.`, deferred: true, hint: "update status owner or dependencies of a task", desc: "Updates a task of the shared task list: status, subject, description, owner, blocking relations.", props: []prop{req("taskId", "string", "The id of the task"), opt("subject", "string", "New subject"), opt("description", "string", "New description"), opt("activeForm", "string", "New present-continuous form"), opt("status", "string", "New status", "pending", "in_progress", "completed", "deleted"), arr("addBlocks", "string", "Tasks that cannot start until this one completes", false), arr("addBlockedBy", "string", "Tasks that must complete before this one", false), opt("owner", "string", "New owner"), opt("metadata", "object", "Metadata to merge")}},
	{name: "TaskList", prompt: `- Use it to find available work: pending tasks without an owner and without open blockers.
- Prefer tasks in id order; earlier tasks often set up later ones.`, deferred: true, readOnly: true, hint: "list all tasks in the task list", desc: "Lists the tasks of the shared task list with their status and owner.", props: nil},
	{name: "EnterPlanMode", prompt: `- Use it before non-trivial implementation work: new features, changes touching several files, architectural decisions, unclear requirements.
- Do not use it for single-line fixes or pure research.
- In plan mode only read-only tools run; explore the code base, then present the plan with ExitPlanMode.`, deferred: true, hint: "switch to plan mode before coding", desc: "Switches the session to plan mode, where tools only read, to explore and design an approach before changing anything.", props: nil},
	{name: "ExitPlanMode", desc: "Presents the plan to the user for approval and leaves plan mode when approved.", props: []prop{opt("plan", "string", "The plan to present, in markdown")}},
	{name: "CronCreate", prompt: `- Expressions are evaluated in local time; "0 9 * * 1-5" is 9:00 on weekdays.
- One-shot jobs (recurring false) fire once at the next match and are deleted.
- Recurring jobs expire after 7 days unless renewed.
- Avoid minute 0 and 30 for jobs that do not need an exact time: spread the load.`, deferred: true, hint: "schedule a recurring or one-shot prompt", desc: "Schedules a prompt to run at times given by a 5-field cron expression in local time, once or recurring.", props: []prop{req("cron", "string", "5-field cron expression (minute hour day month weekday), local time"), req("prompt", "string", "The prompt to run"), opt("recurring", "boolean", "Run on every match (default true)"), opt("durable", "boolean", "Survive restarts")}},
	{name: "CronDelete", deferred: true, hint: "delete a scheduled cron job", desc: "Deletes a scheduled job by id.", props: []prop{req("id", "string", "The id of the job")}},
	{name: "CronList", deferred: true, readOnly: true, hint: "list scheduled cron jobs", desc: "Lists the scheduled jobs with their next run time.", props: nil},
	{name: "EnterWorktree", prompt: `- Use it only when the user asks for a worktree or for isolated parallel work.
- The worktree is created under .gantry/worktrees with a new branch from HEAD.
- The session's working directory moves into the worktree; ExitWorktree returns.
- Uncommitted changes of the main checkout are not copied.`, deferred: true, hint: "create and switch to a git worktree", desc: "Creates a git worktree (or uses an existing one) and switches the session into it, to work on an isolated copy of the repository.", props: []prop{opt("name", "string", "Name of the worktree and its branch"), opt("path", "string", "Path of an existing worktree to enter")}},
	{name: "ExitWorktree", prompt: `- keep leaves the worktree and its branch on disk for later; remove deletes both.
- remove refuses when the worktree has uncommitted changes unless discard_changes is true: confirm with the user first.`, deferred: true, hint: "leave the current git worktree", desc: "Leaves the current worktree and returns to the original directory, keeping or removing the worktree.", props: []prop{req("action", "string", "Keep or remove the worktree", "keep", "remove"), opt("discard_changes", "boolean", "Remove even with uncommitted changes")}},
	{name: "RemoteTrigger", prompt: `- Triggers run agent sessions in the cloud on a cron schedule or on demand.
- create and update take the trigger definition in body: name, cron, prompt, repository, environment.
- list_runs pages with cursor; get_run_log returns the transcript of one run.`, deferred: true, hint: "manage remote scheduled agent triggers", desc: "Manages remote triggers that start agent sessions in the cloud: list, inspect, create, update and run them, and read their runs' logs.", props: []prop{req("action", "string", "The operation", "list", "get", "create", "update", "run", "list_runs", "get_run_log"), opt("trigger_id", "string", "The trigger"), opt("session_id", "string", "The run's session"), opt("cursor", "string", "Pagination cursor"), opt("body", "object", "Body of create or update")}},
	{name: "ListMcpResources", prompt: `- Resources are data MCP servers expose (files, records, schemas), addressed by URI.
- Read one with ReadMcpResource.`, deferred: true, readOnly: true, hint: "list resources of MCP servers", desc: "Lists the resources the connected MCP servers offer, optionally of one server.", props: []prop{opt("server", "string", "Only this server's resources")}},
	{name: "ReadMcpResource", deferred: true, readOnly: true, hint: "read an MCP resource by uri", desc: "Reads a resource of an MCP server by URI.", props: []prop{req("server", "string", "The server"), req("uri", "string", "The resource URI")}},
	{name: "LSP", prompt: `- Lines and characters are 1-based, as shown by Read.
- A language server must be configured for the file's language; the error says which one is missing.
- Call hierarchies start with prepareCallHierarchy.`, deferred: true, readOnly: true, hint: "code intelligence definitions references hover symbols", desc: "Asks a language server for code intelligence: definitions, references, hover text, symbols, implementations and call hierarchies.", props: []prop{req("operation", "string", "The LSP operation", "goToDefinition", "findReferences", "hover", "documentSymbol", "workspaceSymbol", "goToImplementation", "prepareCallHierarchy", "incomingCalls", "outgoingCalls"), req("filePath", "string", "The file"), req("line", "number", "1-based line"), req("character", "number", "1-based character offset")}},
	{name: "Skill", desc: "Runs a skill: a packaged set of instructions (and files) for a particular kind of task. The skill's instructions are added to the conversation.", prompt: "- Use a skill when the user's request matches its description.\n- Do not invoke a skill that is already running.", props: []prop{req("skill", "string", "The skill's name"), opt("args", "string", "Arguments for the skill")}},
	{name: "SendMessage", prompt: `- Messages are delivered when the recipient finishes its current turn.
- Use "*" sparingly: every teammate is interrupted.
- Refer to tasks by id so the recipient can read them with TaskGet.
- Plain text only; the recipient does not see your conversation.`, deferred: true, hint: "send a message to a teammate agent", desc: "Sends a message to another agent of the team, or to all of them with \"*\".", props: []prop{req("to", "string", "The recipient's name, or * for everyone"), req("message", "string", "The message")}},
	{name: "MultiEdit", prompt: `- All edits apply in sequence to the result of the previous one; if any fails, none is applied.
- Each old_string must be unique in the file at the time it applies unless replace_all is set.
- Read the file first; keep indentation exact.`, deferred: true, hint: "several edits to one file at once", desc: "Applies several exact string replacements to one file in one atomic operation; all succeed or none is applied.", props: []prop{req("file_path", "string", "The absolute path of the file"), {name: "edits", typ: "array", items: "object", desc: "The edits, applied in order: old_string, new_string, replace_all", required: true}}},
	{name: "MemoryRead", deferred: true, readOnly: true, hint: "read persistent project memory notes", desc: "Reads the persistent memory notes of the project or the user.", props: []prop{opt("scope", "string", "Which memory", "project", "user")}},
	{name: "MemoryWrite", prompt: `- Save facts that stay true across sessions: build commands, conventions, the user's stated preferences.
- Do not save secrets, transient state or anything the repository already documents.
- Keep notes short; one fact per note.`, deferred: true, hint: "save a persistent memory note", desc: "Adds a note to the persistent memory of the project or the user, kept across sessions.", props: []prop{req("note", "string", "The note"), opt("scope", "string", "Which memory", "project", "user")}},
	{name: "ConfigGet", deferred: true, readOnly: true, hint: "read a gantry setting", desc: "Reads a setting of the agent's configuration.", props: []prop{req("key", "string", "The setting's key")}},
	{name: "ConfigSet", prompt: `- Settings apply from the next turn.
- local scope is not committed; project scope is shared through the repository; user scope applies to every project.`, deferred: true, hint: "change a gantry setting", desc: "Changes a setting of the agent's configuration for this project or user.", props: []prop{req("key", "string", "The setting's key"), req("value", "string", "The new value"), opt("scope", "string", "Where to store it", "project", "user", "local")}},
	{name: "TeamCreate", prompt: `- Each member starts as a background agent with the team's shared task list.
- Members talk with SendMessage; the team leader is you.
- Delete the team with TeamDelete when the work is done so the agents stop.`, deferred: true, hint: "create a team of agents", desc: "Creates a team of named agents that share a task list and can message each other.", props: []prop{req("name", "string", "The team's name"), arr("members", "string", "Names of the agents to start", true)}},
	{name: "TeamDelete", deferred: true, hint: "stop and delete a team of agents", desc: "Stops the agents of a team and deletes it.", props: []prop{req("name", "string", "The team's name")}},
	{name: "Sleep", deferred: true, readOnly: true, hint: "wait for a while", desc: "Waits for the given number of milliseconds, for polling loops that need a pause.", props: []prop{req("ms", "number", "How long to wait")}},
	{name: "PowerShell", prompt: `- Quote paths with spaces; use the PowerShell cmdlets (Get-ChildItem, Select-String) rather than Unix names, which are aliases with different options.
- The working directory persists between commands; prefer absolute paths over Set-Location.
- Default timeout 2 minutes, at most 10 minutes.
- Avoid Get-Content and Select-String for reading and searching files: use Read and Grep.`, deferred: true, hint: "run a powershell command on windows", desc: "Executes a PowerShell command, on Windows hosts, with an optional timeout.", props: []prop{req("command", "string", "The command"), opt("timeout", "number", "Timeout in milliseconds")}},
}

// build returns the fixture as a tool.
func (f fixtureTool) build() tool.Tool {
	schema := tool.EmptyObjectSchema
	if len(f.props) > 0 {
		schema = schemaOf(f.props...)
	}
	opts := []tool.Option{tool.WithPrompt(f.prompt), tool.WithAliases(f.aliases...),
		tool.WithDefer(tool.Deferral{ShouldDefer: f.deferred, SearchHint: f.hint})}
	if f.readOnly {
		opts = append(opts, tool.ReadOnly())
	}
	name := f.name
	return tool.Must(tool.NewRaw(f.name, f.desc, schema, func(ctx context.Context, env *tool.Env, in json.RawMessage) (*tool.Result, error) {
		return tool.TextResult(name + " " + string(in)), nil
	}, opts...))
}

// builtinRegistry registers the 40 fixture tools with factories.
func builtinRegistry() *Registry {
	r := NewRegistry()
	for _, f := range fixtureTools {
		f := f
		r.MustRegister(Entry{Name: f.name, Aliases: f.aliases, Factory: func(context.Context, *tool.Env) (tool.Tool, error) {
			return f.build(), nil
		}})
	}
	return r
}

// mcpTools returns n generated tools of an MCP server, with MCP's own names.
func mcpTools(server string, n int) []tool.Tool {
	verbs := []string{"create", "get", "list", "update", "delete", "search"}
	nouns := []string{"issue", "pull_request", "comment", "branch", "release", "label", "milestone", "file", "commit", "workflow"}
	var out []tool.Tool
	for i := range n {
		v, o := verbs[i%len(verbs)], nouns[(i/len(verbs))%len(nouns)]
		name := fmt.Sprintf("%s_%s", v, o)
		if i >= len(verbs)*len(nouns) {
			name = fmt.Sprintf("%s_%d", name, i)
		}
		schema := schemaOf(req("owner", "string", "Repository owner"), req("repo", "string", "Repository name"),
			opt("query", "string", fmt.Sprintf("Filter for the %s", o)), opt("per_page", "number", "Results per page (max 100)"))
		out = append(out, tool.Must(tool.NewRaw(name, fmt.Sprintf("%s a %s of a %s repository.", strings.ToUpper(v[:1])+v[1:], strings.ReplaceAll(o, "_", " "), server), schema,
			func(context.Context, *tool.Env, json.RawMessage) (*tool.Result, error) {
				return tool.TextResult(name), nil
			})))
	}
	return out
}
