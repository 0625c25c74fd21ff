package agent

import (
	"context"

	"github.com/gantry-dev/gantry/llm"
)

// CompactPrompt asks the model for the summary that replaces older turns
// (the last user message of a compaction request, sent with tool use
// off).
const CompactPrompt = `Your conversation is about to be compacted: the messages so far will be replaced by a summary you
write now. Write a detailed summary for yourself to continue the task without the original messages: the user's
requests and intent, decisions made, files read or changed (with paths and the key details), commands run and their
outcomes, errors and how they were fixed, and the pending work and next step. Reply with the summary only.`

// CompactSummaryPrefix starts the user message that holds a compaction
// summary (followed by the summary).
const CompactSummaryPrefix = "This session continues an earlier conversation that was compacted. Summary of the earlier part:\n\n"

// CompactSplit returns the index of the first message compaction keeps
// verbatim: the last assistant message at least keep messages from the
// end, so that every kept tool result keeps its tool use. It returns -1
// when the conversation is too short to compact. Runtimes other than the
// in-process loop (durable runs) use it to compact the same way.
func CompactSplit(history []llm.Message, keep int) int {
	for i := len(history) - keep; i >= 1; i-- {
		if history[i].Role == llm.RoleAssistant {
			return i
		}
	}
	return -1
}

// Compact summarises the older part of the conversation now, as automatic
// compaction does near the context limit (PreCompact hooks run with
// trigger "manual"); instructions, if any, say what the summary should keep.
// It returns the [CompactEvent] of the change, or nil (and no error) when
// the conversation is too short to compact or a hook blocked it. It waits
// for a running Run to end. Its usage and cost count for the session.
func (a *Agent) Compact(ctx context.Context, instructions string) (*CompactEvent, error) {
	a.runMu.Lock()
	defer a.runMu.Unlock()
	var ev *CompactEvent
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r := &run{a: a, cancel: cancel, start: a.now(), yield: func(e Event, _ error) bool {
		if c, ok := e.(*CompactEvent); ok {
			ev = c
		}
		return true
	}}
	if err := r.compact(ctx, "manual", instructions); err != nil {
		return nil, err
	}
	return ev, nil
}
