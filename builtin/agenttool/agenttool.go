// Package agenttool is the Agent tool (alias Task): the model hands part of
// its work to a subagent — a child agent with its own conversation, system
// prompt, narrowed tool set and limits — and gets the child's final reply
// as the tool result, or, with run_in_background, a task id at once.
//
// The tool only validates the call and picks the agent type; running the
// child is the job of a [Runner] the agent loop puts in the call's services
// (a built-in tool never imports the agent). Agent types are
// [Definition]s held in a [Catalog]: the built-in general-purpose, Explore
// and Plan types, definition files (.gantry/agents/*.md and
// .claude/agents/*.md at user and project level, see [Load]) and
// definitions given in code.
package agenttool

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/gantry-dev/gantry/builtin/team"
	"github.com/gantry-dev/gantry/store"
	"github.com/gantry-dev/gantry/subagent"
	"github.com/gantry-dev/gantry/tool"
)

// Name is the tool's name; Task is its alias.
const Name = subagent.ToolName

// The contract types live in package subagent (the loop imports it, never
// this package); these aliases keep this package's names.
type (
	Definition = subagent.Definition
	Request    = subagent.Request
	Outcome    = subagent.Outcome
	Worktree   = subagent.Worktree
	Started    = subagent.Started
	Runner     = subagent.Runner
)

// Input is the Agent tool's input (the reference agent's input shape, property for property).
type Input struct {
	Description     string `json:"description" jsonschema:"A short (3-5 word) description of the task."`
	Prompt          string `json:"prompt" jsonschema:"The task for the agent: everything it needs to know, since it does not see this conversation."`
	SubagentType    string `json:"subagent_type,omitempty" jsonschema:"The type of agent to use (default general-purpose)."`
	Model           string `json:"model,omitempty" jsonschema:"A model for this agent (default: the type's model, else yours)."`
	RunInBackground bool   `json:"run_in_background,omitempty" jsonschema:"Start the agent in the background and return its task id at once; you are notified when it finishes."`
	Name            string `json:"name,omitempty" jsonschema:"A name for the agent (shown to the user and in its task)."`
	Isolation       string `json:"isolation,omitempty" enum:"worktree" jsonschema:"worktree: run the agent in a new git worktree of the repository, kept if it changed files."`
	// Mode is a permission mode for the child, no wider than the caller's.
	Mode string `json:"mode,omitempty" enum:"plan,dontAsk,default,acceptEdits,bypassPermissions" jsonschema:"A permission mode for the agent, no wider than yours (plan < dontAsk < default < acceptEdits < bypassPermissions); default: the type's mode, else yours."`
	// MaxTurns bounds the child's turns (never above its type's bound).
	MaxTurns *float64 `json:"max_turns,omitempty" jsonschema:"The most turns the agent may take (default: its type's limit); it stops with error_max_turns when reached."`
	// TeamName spawns the agent as member Name of a team the caller
	// leads (see team.Join) instead of as a subagent.
	TeamName string `json:"team_name,omitempty" jsonschema:"Spawn the agent into this team (one you lead, made with TeamCreate) as a member called name: it works in the background, shares the team's task list and talks with SendMessage."`
	// Resume continues an earlier subagent (see subagent.Request.Resume).
	Resume string `json:"resume,omitempty" jsonschema:"The agent id of an earlier agent of yours to continue: it keeps its conversation so far, runs as the type it was started as, and gets prompt as its next message."`
}

// apply narrows the agent type def by the call's mode and max_turns: a
// mode replaces the type's (it was checked to be no wider than the
// caller's); max_turns bounds the turns, never above the type's own bound.
func (in Input) apply(def Definition) Definition {
	if in.Mode != "" {
		def.PermissionMode = tool.Mode(in.Mode)
	}
	if in.MaxTurns != nil {
		n := int(*in.MaxTurns)
		if def.MaxTurns == 0 || n < def.MaxTurns {
			def.MaxTurns = n
		}
	}
	return def
}

const description = `Launches a subagent to handle a task on its own: a new agent with its own conversation and tools, which works until the task is done and replies with a report. Its reply is the result of this call; you see nothing else of its work, and it sees nothing of this conversation, so give it a complete prompt (goal, context, constraints, what to report back).

Use it for open-ended searches over a large codebase, for independent pieces of work that can run in parallel (send several Agent calls in one message: they run concurrently), or to keep large intermediate output out of your context. Do not use it for a single file read or a simple search — call Read, Glob or Grep directly.

run_in_background starts the agent and returns its task id at once; you are told when it finishes, TaskOutput reads its progress and TaskStop stops it. isolation "worktree" runs it in a fresh git worktree (its changes stay there, on their own branch, for you to review). team_name with name spawns the agent into a team you lead as a new member. resume with an earlier agent id continues that agent with its conversation so far and your prompt.

Available agent types (subagent_type):`

// Tool is the Agent tool over a catalog. Its description lists the
// catalog's types and follows it when types are added.
type Tool struct {
	*tool.FuncTool
	cat *Catalog

	mu      sync.Mutex
	version int
	spec    tool.Spec
}

// DefaultTimeout bounds one foreground subagent run.
const DefaultTimeout = time.Hour

// New returns the Agent tool over cat. It needs a [Runner] in the call's
// services.
func New(cat *Catalog) *Tool {
	t := &Tool{cat: cat, version: -1}
	t.FuncTool = tool.Must(tool.New(Name, description,
		func(ctx context.Context, env *tool.Env, in Input) (*tool.Result, error) { return t.call(ctx, env, in) },
		tool.WithAliases("Task"),
		// The call itself changes nothing: every call of the child goes
		// through the same permission engine and hooks as the parent's.
		tool.WithTraits(tool.Traits{ReadOnly: true, ConcurrencySafe: true, NonDestructive: true}),
		tool.WithTimeout(DefaultTimeout), tool.WithMaxTimeout(DefaultTimeout),
		tool.DescribeFunc(func(in Input) string {
			typ := in.SubagentType
			if typ == "" {
				typ = GeneralPurpose
			}
			return oneLine(typ + ": " + in.Description)
		}),
		tool.ValidateFunc(func(_ context.Context, env *tool.Env, in Input) error {
			switch {
			case strings.TrimSpace(in.Prompt) == "":
				return errors.New("prompt is required: the task for the agent")
			case strings.TrimSpace(in.Description) == "":
				return errors.New("description is required: 3-5 words saying what the agent does")
			case in.Resume != "" && (in.TeamName != "" || in.Isolation != ""):
				return errors.New("resume continues an earlier agent where it ran: team_name and isolation cannot be given with it")
			case in.TeamName != "" && in.Name == "":
				return errors.New("team_name needs name: the member's name in the team")
			case in.TeamName != "" && (in.Isolation != "" || in.Model != "" || in.Mode != "" || in.MaxTurns != nil):
				return errors.New("a team member runs as its type with the team's settings: isolation, model, mode and max_turns cannot be given with team_name")
			case in.MaxTurns != nil && (*in.MaxTurns < 1 || *in.MaxTurns != float64(int(*in.MaxTurns))):
				return errors.New("max_turns must be a whole number of at least 1")
			}
			if in.Mode != "" {
				m := tool.Mode(in.Mode)
				var parent tool.Mode
				if env != nil {
					parent = env.Mode
				}
				if !m.Valid() {
					return fmt.Errorf("unknown mode %q (want plan, dontAsk, default, acceptEdits or bypassPermissions)", in.Mode)
				}
				if m.Wider(parent) {
					return fmt.Errorf("mode %s is wider than this session's %s mode: a subagent may not get more permission than you have", m, cmpOr(parent, tool.ModeDefault))
				}
			}
			if in.SubagentType != "" {
				if _, ok := cat.Get(in.SubagentType); !ok {
					return fmt.Errorf("unknown subagent_type %q; available: %s", in.SubagentType, strings.Join(cat.Names(), ", "))
				}
			}
			return nil
		}),
	))
	return t
}

// Spec returns the tool's spec; its description lists the catalog's types
// as of now.
func (t *Tool) Spec() *tool.Spec {
	defs, v := t.cat.snapshot()
	t.mu.Lock()
	defer t.mu.Unlock()
	if v != t.version {
		t.spec = *t.FuncTool.Spec()
		t.spec.Description = description + "\n" + describeTypes(defs)
		t.version = v
	}
	return &t.spec
}

// Catalog returns the tool's catalog.
func (t *Tool) Catalog() *Catalog { return t.cat }

func (t *Tool) call(ctx context.Context, env *tool.Env, in Input) (*tool.Result, error) {
	typ := in.SubagentType
	if typ == "" {
		typ = GeneralPurpose
	}
	def, ok := t.cat.Get(typ)
	if !ok {
		return tool.Errorf("unknown subagent_type %q; available: %s", typ, strings.Join(t.cat.Names(), ", ")), nil
	}
	if in.TeamName != "" {
		return team.Join(ctx, env, in.TeamName, store.Member{Name: in.Name, AgentType: typ, Role: in.Description}, in.Prompt)
	}
	runner, err := tool.Use[Runner](env)
	if err != nil {
		return tool.Errorf("subagents are not available in this session (%v); do the task yourself", err), nil
	}
	req := Request{Definition: in.apply(def), Description: in.Description, Prompt: in.Prompt, Model: in.Model,
		Name: in.Name, Isolation: in.Isolation, ToolUseID: env.ToolUseID, Resume: in.Resume}
	if in.RunInBackground {
		st, err := runner.StartAgent(ctx, env, req)
		if err != nil {
			return tool.Errorf("could not start the agent: %v", err), nil
		}
		r := tool.TextResult(fmt.Sprintf("Agent %q (%s) is running in the background with task id %s (agent id %s). "+
			"You will be told when it finishes. Read its progress with TaskOutput (task_id %q); stop it with TaskStop.",
			in.Description, typ, st.TaskID, st.AgentID, st.TaskID))
		r.Structured = st
		return r, nil
	}
	out, err := runner.RunAgent(ctx, env, req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		return tool.Errorf("the agent could not run: %v", err), nil
	}
	text := out.Text
	if len(out.Structured) > 0 && !out.IsError {
		text = string(out.Structured)
	}
	if text == "" {
		text = "(the agent ended without a reply)"
	}
	if w := out.Worktree; w != nil && w.Kept {
		text += fmt.Sprintf("\n\nThe agent's changes are in the git worktree %s on branch %s.", w.Path, w.Branch)
	}
	if out.TranscriptPath != "" && out.AgentID != "" && (len(out.Structured) == 0 || out.IsError) {
		// Only an agent with a transcript can be resumed; a structured
		// answer stays bare JSON.
		text += fmt.Sprintf("\n\n(agent id %s: continue this agent with resume)", out.AgentID)
	}
	var r *tool.Result
	if out.IsError {
		r = tool.Errorf("The agent stopped (%s): %s", out.Subtype, text)
	} else {
		r = tool.TextResult(text)
	}
	r = r.WithDisplay(tool.Text(fmt.Sprintf("%s agent %s: %d turns, %d tokens, $%.4f\n\n%s", typ, out.Subtype, out.Turns, out.Tokens, out.CostUSD, text)))
	r.Structured = out
	return r, nil
}

func cmpOr(m, def tool.Mode) tool.Mode {
	if m == "" {
		return def
	}
	return m
}
