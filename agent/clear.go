package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/gantry-dev/gantry/hook"
	"github.com/gantry-dev/gantry/tool"
	"github.com/gantry-dev/gantry/transcript"
)

// Clear ends the session and goes on with a new, empty one, as /clear
// does: SessionEnd fires with reason "clear", the old transcript is
// closed (it stays resumable), a new session id and transcript follow,
// the file-state cache and loaded tools are reset and SessionStart fires
// with source "clear". Background commands and teams of the old session
// stop. The usage and cost of [Agent.Stats] keep counting (a budget holds
// for the whole process); its context size starts again at zero. It waits
// for a running run to end; a subagent cannot be cleared.
func (a *Agent) Clear(ctx context.Context) error {
	if a.sub != nil {
		return errors.New("agent: a subagent cannot be cleared")
	}
	a.runMu.Lock()
	defer a.runMu.Unlock()
	bg := context.WithoutCancel(ctx)
	a.stopBackground(bg)
	if a.teams != nil {
		a.teams.StopAll(bg, a.id)
	}
	a.hook(ctx, &hook.Input{Event: hook.SessionEnd, Reason: "clear"})

	var next *transcript.Transcript
	id := transcript.NewUUID()
	sessionDir := filepath.Join(os.TempDir(), "gantry-sessions", id)
	if st := a.transcripts; st != nil {
		s, err := st.Create(a.workDir)
		if err != nil {
			return fmt.Errorf("agent: clear: %w", err)
		}
		next, id = s, s.ID
		sessionDir = filepath.Join(st.Dir(a.workDir), id)
	}
	closeErr := a.closeSession()
	a.sess, a.id = next, id
	a.history, a.notices = nil, nil
	a.lastSize = 0
	a.execSess.Update(func(e *tool.Env) {
		e.SessionID, e.SessionDir, e.ToolResultsDir = id, sessionDir, filepath.Join(sessionDir, "tool-results")
		e.Files = tool.NewFileCache(0)
	})
	a.pool.ResetLoaded()
	a.hook(ctx, &hook.Input{Event: hook.SessionStart, Source: "clear"})
	if closeErr != nil {
		return fmt.Errorf("agent: clear: closing the old transcript: %w", closeErr)
	}
	return nil
}
