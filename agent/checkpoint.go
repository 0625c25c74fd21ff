package agent

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/gantry-dev/gantry/checkpoint"
	"github.com/gantry-dev/gantry/hook"
	"github.com/gantry-dev/gantry/tool"
)

// ErrNoCheckpoints is returned by [Agent.RewindFiles] and
// [Agent.Checkpoints] of an agent whose workspace keeps no checkpoints
// (workspace.Options.Checkpoints or Persist).
var ErrNoCheckpoints = errors.New("agent: checkpoints are off (the workspace keeps none)")

// checkpointSession is the session checkpoints are labelled with: a
// subagent's go with its root agent's, so that one list covers a run.
func (a *Agent) checkpointSession() string {
	for a.sub != nil {
		a = a.sub.parent
	}
	return a.id
}

// checkpointTurn names the checkpoint of a user turn, whose id is the
// uuid of the user message that starts it. It is deferred
// (checkpoint.Store.Defer): read-only calls change nothing, so the state
// before the turn is recorded by the checkpoint before the turn's first
// writing call, and a run that writes nothing scans nothing. A failure is
// a notice: the run goes on without that checkpoint.
func (r *run) checkpointTurn(_ context.Context, uuid, prompt string) string {
	st := r.a.checkpoints
	if st == nil {
		return ""
	}
	id, err := st.Defer(checkpoint.Meta{ID: uuid, Session: r.a.checkpointSession(), Kind: checkpoint.KindTurn, Label: prompt})
	if err != nil {
		r.emit(&NoticeEvent{Text: "checkpoint failed (this turn cannot be rewound): " + err.Error()})
		return ""
	}
	return id
}

// recordTip records the project's state when a run ends, so that a later
// rewind tells the agent's last changes from someone else's — only when a
// writing call ran (checkpoint.Store.Settle); otherwise the deferred turn
// checkpoints are written without a scan.
func (r *run) recordTip() {
	if st := r.a.checkpoints; st != nil {
		if err := st.Settle(context.Background()); err != nil {
			r.emit(&NoticeEvent{Text: "checkpoint: recording the final state failed: " + err.Error()})
		}
	}
}

// checkpointHooks wraps the executor's hooks: after the PreToolUse hooks
// let a call through, a call that may write — one whose traits (for Bash,
// the shell analysis of its command) are neither read-only nor planning —
// gets a checkpoint named after its tool use id first.
type checkpointHooks struct {
	inner hook.Runner
	a     *Agent
}

// Run implements hook.Runner.
func (h checkpointHooks) Run(ctx context.Context, in *hook.Input) (*hook.Output, error) {
	var out *hook.Output
	if h.inner != nil {
		var err error
		if out, err = h.inner.Run(ctx, in); err != nil {
			return out, err
		}
	}
	if in.Event != hook.PreToolUse || (out != nil && (out.Block || out.Decision == tool.Deny || (out.Continue != nil && !*out.Continue))) {
		return out, nil
	}
	input := in.ToolInput
	if out != nil && len(out.UpdatedInput) > 0 {
		input = out.UpdatedInput
	}
	t, ok := h.a.resolver.Lookup(in.ToolName)
	if ok {
		if tr := tool.TraitsOf(t, input); tr.ReadOnly || tr.Planning {
			return out, nil
		}
	}
	meta := checkpoint.Meta{
		ID: in.ToolUseID, Session: h.a.checkpointSession(), Kind: checkpoint.KindTool,
		Label: describeCall(t, in.ToolName, input), ToolUseID: in.ToolUseID,
	}
	if !checkpoint.ValidID(meta.ID) {
		meta.ID = "" // a random one
	}
	_, err := h.a.checkpoints.Create(ctx, meta)
	if errors.Is(err, fs.ErrExist) {
		meta.ID = "" // a call id seen before (a resent call): a random one
		_, err = h.a.checkpoints.Create(ctx, meta)
	}
	if err != nil {
		msg := fmt.Sprintf("checkpoint before %s failed (this call cannot be rewound alone): %v", in.ToolName, err)
		if out == nil {
			out = &hook.Output{}
		}
		if out.SystemMessage != "" {
			msg = out.SystemMessage + "\n" + msg
		}
		out.SystemMessage = msg
	}
	return out, nil
}

func describeCall(t tool.Tool, name string, input []byte) string {
	if t == nil {
		return name
	}
	return tool.Describe(t, input)
}

// RewindFiles restores the project's files to checkpoint id — a user
// message's uuid (the state before that turn) or a tool use id (the state
// before that call): files created since are removed, changed and deleted
// ones written back. See [checkpoint.Store.Rewind] for the guarantees: a
// file someone else changed since the agent's last recording is not
// overwritten without opts.Force, a corrupt store changes nothing, the
// state before the rewind is recorded (Report.Before). It waits for a run
// in progress to end. The agent forgets what it read: a file must be
// read again before it is edited.
func (a *Agent) RewindFiles(ctx context.Context, id string, opts checkpoint.RewindOptions) (*checkpoint.Report, error) {
	st := a.checkpoints
	if st == nil {
		return nil, ErrNoCheckpoints
	}
	a.runMu.Lock()
	defer a.runMu.Unlock()
	if opts.Session == "" {
		opts.Session = a.checkpointSession()
	}
	rep, err := st.Rewind(ctx, id, opts)
	if rep != nil && !rep.DryRun {
		a.execSess.Update(func(e *tool.Env) { e.Files = tool.NewFileCache(0) })
	}
	return rep, err
}

// Checkpoints lists the checkpoints of the agent's session, oldest first.
func (a *Agent) Checkpoints() ([]checkpoint.Info, error) {
	st := a.checkpoints
	if st == nil {
		return nil, ErrNoCheckpoints
	}
	return st.List(a.checkpointSession())
}

// ForkBefore copies the agent's session into a new one that ends before
// the user message id — a turn checkpoint's id — so that the conversation
// can go on from before that prompt, as `gantry rewind --conversation`
// does (both use
// [github.com/gantry-dev/gantry/session.Store.ForkBefore]). It returns the new session's
// id: resume it with workspace.Options.ResumeID. The agent's own session is left
// as it is. It waits for a run in progress to end. Without a transcript store (workspace.Options.Transcripts)
// there is no transcript to fork: an error.
func (a *Agent) ForkBefore(id string) (string, error) {
	st := a.transcripts
	if st == nil {
		return "", errors.New("agent: forking the conversation needs a transcript store (workspace.Options.Transcripts)")
	}
	a.runMu.Lock()
	defer a.runMu.Unlock()
	s, err := st.ForkBefore(a.workDir, a.id, id)
	if err != nil {
		return "", fmt.Errorf("agent: fork before %s: %w", id, err)
	}
	return s.ID, s.Close()
}
