package agent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/gantry-dev/gantry/hook"
	"github.com/gantry-dev/gantry/llm"
	"github.com/gantry-dev/gantry/tool"
	"github.com/gantry-dev/gantry/transcript"
)

// handOff acts on a successful new_task (schoober's semantics): the
// current session ends — its background work and teams stop, SessionEnd
// fires with reason "new_task", its transcript gets a "handoff" record
// naming the next session and is closed — and a new session with a fresh
// context goes on in the same run: a new id and transcript (linked back by
// a "handoff_from" record), whose first user message is the handed-over
// context, SessionStart with source "new_task". A subagent hands over the
// same way; its new transcript keeps its parent link, so resume finds it.
func (r *run) handOff(ctx context.Context, handed string) error {
	a := r.a
	bg := context.WithoutCancel(ctx)
	a.stopBackground(bg)
	old := a.id
	if a.teams != nil && a.sub == nil {
		a.teams.StopAll(bg, old)
	}
	a.hook(ctx, &hook.Input{Event: hook.SessionEnd, Reason: "new_task"})

	var next *transcript.Transcript
	id := transcript.NewUUID()
	sessionDir := filepath.Join(os.TempDir(), "gantry-sessions", id)
	if st := a.transcripts; st != nil {
		s, err := st.Create(a.workDir)
		if err != nil {
			return fmt.Errorf("agent: new_task: %w", err)
		}
		next, id = s, s.ID
		sessionDir = filepath.Join(st.Dir(a.workDir), id)
		a.recordSystem("handoff", map[string]any{"next_session_id": id, "transcript_path": s.Path})
	}
	if err := a.closeSession(); err != nil {
		r.emit(&NoticeEvent{Text: "new_task: closing the old transcript: " + err.Error()})
	}
	a.sess, a.id = next, id
	if p := a.subParent(); p != nil {
		p.markLive(id)
		a.recordSystem("subagent", map[string]any{
			"parent_session_id": p.id, "parent_tool_use_id": a.sub.toolUseID, "agent_type": a.sub.def.Name,
			"cwd": a.execSess.Env().WorkDir,
		})
	}
	a.recordSystem("handoff_from", map[string]any{"previous_session_id": old})
	first := llm.UserText(handed)
	a.history = []llm.Message{first}
	if err := a.record(transcript.TypeUser, first); err != nil {
		return err
	}
	a.execSess.Update(func(e *tool.Env) {
		e.SessionID, e.SessionDir, e.ToolResultsDir = id, sessionDir, filepath.Join(sessionDir, "tool-results")
		// The new context has read nothing yet.
		e.Files = tool.NewFileCache(0)
	})
	a.pool.ResetLoaded()
	a.hook(ctx, &hook.Input{Event: hook.SessionStart, Source: "new_task"})
	return nil
}

func (a *Agent) subParent() *Agent {
	if a.sub == nil {
		return nil
	}
	return a.sub.parent
}

// markLive records that subagent id's transcript is open.
func (a *Agent) markLive(id string) {
	a.kids.mu.Lock()
	defer a.kids.mu.Unlock()
	if a.kids.live == nil {
		a.kids.live = map[string]bool{}
	}
	a.kids.live[id] = true
}
