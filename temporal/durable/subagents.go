package durable

import (
	"context"
	"errors"
	"fmt"

	"github.com/gantry-dev/gantry/agent"
	"github.com/gantry-dev/gantry/builtin/agenttool"
	"github.com/gantry-dev/gantry/tool"
	"github.com/gantry-dev/gantry/toolset"
)

// A subagent of a durable run is a child workflow. The Agent tool runs in
// the parent's tool activity like any tool (validation, hooks, the
// permission decision); its runner there does not run the child: it turns
// the request into the child's spec and ends the call (errSpawn). The
// workflow starts the child workflow, waits for it (or, in the background,
// for its start), and runs the call again with what became of the child
// (toolInput.Agent): the runner then returns that, and the Agent tool makes
// its result from it as in-process.

// errSpawn is what the runner returns for a subagent the workflow has not
// started yet: the call is abandoned and its spawn goes to the workflow.
var errSpawn = errors.New("durable: the subagent runs as a child workflow")

// spawnRequest is a subagent for the workflow to run as a child workflow.
type spawnRequest struct {
	// Spec is the child's spec (the workflow sets its budget).
	Spec   Spec   `json:"spec"`
	Prompt string `json:"prompt"`
	// Background starts the child and returns its task at once.
	Background bool `json:"background,omitempty"`
}

// agentReply is what became of a spawned subagent, for the Agent call run
// again: the outcome of a foreground child, the task of a background one.
type agentReply struct {
	Outcome *agenttool.Outcome `json:"outcome,omitempty"`
	Started *agenttool.Started `json:"started,omitempty"`
}

// spawnState is one tool call's subagent bookkeeping on a worker.
type spawnState struct {
	parent Spec
	pool   *toolset.Pool
	getenv func(string) string
	reply  *agentReply
	spawn  *spawnRequest
}

type spawnKey struct{}

func withSpawn(ctx context.Context, st *spawnState) context.Context {
	return context.WithValue(ctx, spawnKey{}, st)
}

// childRunner is the agenttool.Runner of a durable run's tool calls.
type childRunner struct{}

var _ agenttool.Runner = childRunner{}

func (childRunner) RunAgent(ctx context.Context, env *tool.Env, req agenttool.Request) (*agenttool.Outcome, error) {
	st, err := spawnFrom(ctx)
	if err != nil {
		return nil, err
	}
	if st.reply != nil && st.reply.Outcome != nil {
		return st.reply.Outcome, nil
	}
	return nil, st.request(env, req, false)
}

func (childRunner) StartAgent(ctx context.Context, env *tool.Env, req agenttool.Request) (*agenttool.Started, error) {
	st, err := spawnFrom(ctx)
	if err != nil {
		return nil, err
	}
	if st.reply != nil && st.reply.Started != nil {
		return st.reply.Started, nil
	}
	return nil, st.request(env, req, true)
}

func spawnFrom(ctx context.Context) (*spawnState, error) {
	st, _ := ctx.Value(spawnKey{}).(*spawnState)
	if st == nil {
		return nil, errors.New("subagents run only in a tool call of a durable run")
	}
	return st, nil
}

// request builds the child's spec from the parent's and the agent type,
// as the in-process loop builds a child: the type's system prompt, model,
// turn limit and narrowed pool, a mode no wider than the parent's. It
// returns errSpawn, or why the subagent cannot run.
func (st *spawnState) request(env *tool.Env, req agenttool.Request, background bool) error {
	def := req.Definition
	switch {
	case st.parent.Agent != nil:
		return errors.New("subagents may not start subagents here (nesting depth limit 1)")
	case req.Isolation != "":
		return fmt.Errorf("isolation %q is not supported in durable runs yet; run the agent without it", req.Isolation)
	case req.Resume != "":
		return fmt.Errorf("resume is not supported in durable runs yet; start a new agent with the context it needs")
	case len(def.OutputSchema) > 0:
		return fmt.Errorf("agent type %s declares an output schema; structured output is not supported in durable runs yet", def.Name)
	}
	model := agent.SubagentModel(req.Model, def.Model, st.parent.Model, st.getenv("GANTRY_SMALL_MODEL"))
	maxTurns := def.MaxTurns
	if maxTurns <= 0 {
		maxTurns = agent.DefaultSubagentMaxTurns
	}
	spec := st.parent
	spec.Model, spec.MaxTurns = model, maxTurns
	spec.PermissionMode = agent.SubagentMode(def.PermissionMode, env.Mode)
	spec.SystemPrompt, spec.AppendSystemPrompt = def.Prompt, ""
	spec.Tools = agent.SubagentTools(st.pool, def, false)
	if spec.Tools == nil {
		spec.Tools = []string{} // none, not all
	}
	spec.Agent = &AgentInfo{Type: def.Name, Description: req.Description, Name: req.Name,
		ParentToolUseID: req.ToolUseID, Background: background}
	st.spawn = &spawnRequest{Spec: spec, Prompt: req.Prompt, Background: background}
	return errSpawn
}
